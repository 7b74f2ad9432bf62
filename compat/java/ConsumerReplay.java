import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * More consumer scenarios after Apache Kafka 3.9's tests, on the shared broker:
 * PlaintextConsumerFetchTest.testLowMaxFetchSizeForRequestAndPartition, PlaintextConsumerCommitTest's
 * testAsyncCommit, testAutoCommitOnRebalance and testSubscribeAndCommitSync,
 * PlaintextConsumerTest.testConsumeMessagesWithLogAppendTime, and ConsumerBounceTest's
 * testCloseDuringRebalance and testSubscribeWhenTopicUnavailable up to their broker restarts.
 * Consumers are configured as AbstractConsumerTest's (metadata.max.age.ms=100,
 * max.poll.interval.ms=6000 unless the test sets it). Each scenario only observes;
 * compat/test_java_reference_replay.py holds the expectations.
 */
final class ConsumerReplay {
    private ConsumerReplay() {
    }

    /** testLowMaxFetchSizeForRequestAndPartition: 3 topics x 30 partitions x 30 records read with fetch.max.bytes=500, max.partition.fetch.bytes=100. */
    static void lowFetchSizes(Support s, Map<String, Object> obs) throws Exception {
        List<String> topics = List.of(s.name("low-fetch-1"), s.name("low-fetch-2"), s.name("low-fetch-3"));
        Set<TopicPartition> partitions = new HashSet<>();
        try (Admin admin = s.admin()) {
            for (String t : topics) {
                Support.createTopic(admin, t, 30);
                for (int p = 0; p < 30; p++) partitions.add(new TopicPartition(t, p));
            }
        }
        try (KafkaConsumer<byte[], byte[]> c = GroupReplay.consumer(s, s.name("low-fetch-G"), "fetch.max.bytes", "500",
                "max.partition.fetch.bytes", "100", "max.poll.interval.ms", "20000")) {
            c.subscribe(topics);
            obs.put("assigned", Support.await(() -> {
                c.poll(Duration.ofMillis(100));
                return c.assignment().equals(partitions);
            }, 30_000));
            Set<String> expected = new HashSet<>();
            try (KafkaProducer<byte[], byte[]> p = s.producer()) {
                for (TopicPartition tp : partitions) {
                    ClientReplay.sendRecords(p, tp, 30, 0);
                    for (int i = 0; i < 30; i++) expected.add(tp + "/key " + i + "/value " + i + "/" + i);
                }
            }
            Set<String> actual = new HashSet<>();
            int received = 0;
            long deadline = System.currentTimeMillis() + 60_000;
            while (received < expected.size() && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    received++;
                    actual.add(new TopicPartition(r.topic(), r.partition()) + "/" + new String(r.key()) + "/"
                            + new String(r.value()) + "/" + r.timestamp());
                }
            }
            obs.put("received", received);
            obs.put("expected", expected.size());
            obs.put("same_records", actual.equals(expected));
        }
    }

    /** testAsyncCommit, testSubscribeAndCommitSync and testAutoCommitOnRebalance. */
    static void commits(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("commit-more"), topic2 = s.name("commit-more-2");
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, topic, 2);
            Support.createTopic(admin, topic2, 2);
            // Kafka's IntegrationTestHarness creates __consumer_offsets before each test; until it
            // exists FindCoordinator answers COORDINATOR_NOT_AVAILABLE (and the first commitAsync
            // fails with RetriableCommitFailedException). The Admin's lookup retries until it exists.
            admin.listConsumerGroupOffsets(s.name("async-G")).partitionsToOffsetAndMetadata().get(20, TimeUnit.SECONDS);
        }
        TopicPartition tp = new TopicPartition(topic, 0), tp2 = new TopicPartition(topic, 1);
        try (KafkaConsumer<byte[], byte[]> c = GroupReplay.consumer(s, s.name("async-G"))) {
            c.assign(List.of(tp));
            AtomicInteger successes = new AtomicInteger();
            AtomicReference<String> lastError = new AtomicReference<>();
            for (int i = 1; i <= 5; i++) {
                c.commitAsync(Map.of(tp, new OffsetAndMetadata(i)), (offsets, e) -> {
                    if (e == null) successes.incrementAndGet();
                    else lastError.set(String.valueOf(e));
                });
            }
            Support.await(() -> {
                c.poll(Duration.ofMillis(100));
                return successes.get() >= 5 || lastError.get() != null;
            }, 10_000);
            OffsetAndMetadata m = c.committed(Set.of(tp)).get(tp);
            obs.put("async", java.util.Arrays.asList(successes.get(), lastError.get(), m == null ? null : m.offset()));
        }
        try (KafkaConsumer<byte[], byte[]> c = GroupReplay.consumer(s, s.name("subscribe-commit-G"))) {
            c.subscribe(List.of(topic));
            obs.put("subscribe_assigned", Support.await(() -> {
                c.poll(Duration.ofMillis(100));
                return c.assignment().equals(Set.of(tp, tp2));
            }, 30_000));
            c.seek(tp, 0);
            obs.put("subscribe_commit_sync", Support.failureOf(c::commitSync));
        }
        try (KafkaProducer<byte[], byte[]> p = s.producer()) {
            ClientReplay.sendRecords(p, tp, 10000, 0);
        }
        String group = s.name("auto-rebalance-G");
        try (KafkaConsumer<byte[], byte[]> c = GroupReplay.consumer(s, group, "enable.auto.commit", "true")) {
            ConsumerRebalanceListener pauseAll = new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsAssigned(java.util.Collection<TopicPartition> partitions) {
                    c.pause(partitions);  // the Kafka test keeps them paused to check commits of its seeks
                }

                @Override
                public void onPartitionsRevoked(java.util.Collection<TopicPartition> partitions) {
                }
            };
            c.subscribe(List.of(topic), pauseAll);
            Support.await(() -> {
                c.poll(Duration.ofMillis(100));
                return c.assignment().equals(Set.of(tp, tp2));
            }, 30_000);
            c.seek(tp, 300);
            c.seek(tp2, 500);
            c.subscribe(List.of(topic, topic2), pauseAll);
            Set<TopicPartition> all = Set.of(tp, tp2, new TopicPartition(topic2, 0), new TopicPartition(topic2, 1));
            obs.put("rebalanced", Support.await(() -> {
                c.poll(Duration.ofMillis(100));
                return c.assignment().equals(all);
            }, 30_000));
            obs.put("auto_commit_on_rebalance", ClientReplay.offsets(c, tp, tp2));
        }
    }

    /** testConsumeMessagesWithLogAppendTime: uncompressed and gzip records on a LogAppendTime topic. */
    static void logAppendTime(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("consume-append-time");
        try (Admin admin = s.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1).configs(Map.of("message.timestamp.type", "LogAppendTime"))))
                    .all().get(20, TimeUnit.SECONDS);
            Support.awaitTopic(admin, topic, 2);
        }
        long start = System.currentTimeMillis();
        TopicPartition tp1 = new TopicPartition(topic, 0), tp2 = new TopicPartition(topic, 1);
        try (KafkaProducer<byte[], byte[]> p = s.producer()) {
            ClientReplay.sendRecords(p, tp1, 50, 0);
        }
        ClientReplay.sendCompressed(s, tp2, 50);
        try (KafkaConsumer<byte[], byte[]> c = s.consumer("read_uncommitted")) {
            for (TopicPartition t : List.of(tp1, tp2)) {
                c.assign(List.of(t));
                List<ConsumerRecord<byte[], byte[]>> rs = ClientReplay.consume(c, 50, null);
                long now = System.currentTimeMillis();
                boolean ok = rs.size() == 50;
                for (int i = 0; i < rs.size(); i++) {
                    ConsumerRecord<byte[], byte[]> r = rs.get(i);
                    ok &= r.offset() == i && new String(r.key()).equals("key " + i) && r.timestampType().name.equals("LogAppendTime")
                            && r.timestamp() >= start && r.timestamp() <= now;
                }
                obs.put(t.partition() == 0 ? "plain" : "gzip", ok);
            }
        }
    }

    /**
     * ConsumerBounceTest.testCloseDuringRebalance while the broker is up: a member that closes during
     * a rebalance leaves at once, and the rebalance completes without waiting for it.
     */
    @SuppressWarnings("deprecation")
    static void closeDuringRebalance(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("closetest"), group = s.name("closetest-G");
        s.createTopic(topic, 10);
        String[] kv = {"max.poll.interval.ms", "60000", "heartbeat.interval.ms", "1000"};
        ExecutorService executor = Executors.newFixedThreadPool(3);
        List<KafkaConsumer<byte[], byte[]>> consumers = new ArrayList<>();
        try {
            KafkaConsumer<byte[], byte[]> c1 = GroupReplay.consumer(s, group, kv), c2 = GroupReplay.consumer(s, group, kv),
                    c3 = GroupReplay.consumer(s, group, kv);
            consumers.addAll(List.of(c1, c2, c3));
            obs.put("first", waitFor(subscribeAndPoll(executor, c1, topic), 10_000));
            obs.put("second", waitFor(subscribeAndPoll(executor, c2, topic), 10_000, c1));
            Future<?> third = subscribeAndPoll(executor, c3, topic);
            Thread.sleep(2000);  // the Kafka test's wait: the others do not poll, so the rebalance waits for them
            obs.put("third_blocked", !third.isDone());
            long closing = System.currentTimeMillis();
            Future<?> closed = executor.submit(() -> c1.close());
            closed.get(30, TimeUnit.SECONDS);
            obs.put("close_ms", System.currentTimeMillis() - closing);
            consumers.remove(c1);
            obs.put("third_done", waitFor(third, 2000, c2));
        } finally {
            executor.shutdownNow();
            for (KafkaConsumer<byte[], byte[]> c : consumers) c.close(Duration.ofSeconds(5));
        }
    }

    static Future<?> subscribeAndPoll(ExecutorService executor, KafkaConsumer<byte[], byte[]> c, String topic) {
        return executor.submit(() -> {
            c.subscribe(List.of(topic));
            // the deprecated poll(long) waits for the group, as the Kafka test uses it; kafka-clients 4.x removed
            // it, so it is called by reflection and the drivers still compile against 4.x (which never runs this)
            KafkaConsumer.class.getMethod("poll", long.class).invoke(c, 0L);
            return null;
        });
    }

    /** waitForRebalance: polls the others until the future is done; whether it was within timeoutMs. */
    static boolean waitFor(Future<?> f, long timeoutMs, KafkaConsumer<?, ?>... others) {
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (System.currentTimeMillis() < deadline && !f.isDone()) {
            for (KafkaConsumer<?, ?> o : others) o.poll(Duration.ofMillis(100));
            if (others.length == 0) Thread.onSpinWait();
        }
        return f.isDone();
    }

    /** ConsumerBounceTest.testSubscribeWhenTopicUnavailable up to its restart: a subscription made before the topic exists. */
    static void topicUnavailable(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("newtopic");
        ExecutorService executor = Executors.newSingleThreadExecutor();
        try (KafkaConsumer<byte[], byte[]> c = GroupReplay.consumer(s, s.name("newtopic-G"))) {
            c.subscribe(List.of(topic));
            Future<?> created = executor.submit(() -> {
                Thread.sleep(2000);
                try {
                    s.createTopic(topic, 1);
                } catch (java.util.concurrent.ExecutionException e) {
                    // the consumer's Metadata (allow.auto.create.topics) may have created it first;
                    // Kafka's TestUtils.createTopicWithAdmin accepts an existing topic of that shape too
                    if (!(e.getCause() instanceof org.apache.kafka.common.errors.TopicExistsException)) throw e;
                    obs.put("auto_created_first", true);
                }
                return null;
            });
            c.poll(Duration.ZERO);
            AtomicInteger unacked = new AtomicInteger(1000);
            Future<?> sent = executor.submit(() -> {
                try (KafkaProducer<byte[], byte[]> p = s.producer()) {
                    long end = System.currentTimeMillis() + 20_000;
                    while (unacked.get() > 0 && System.currentTimeMillis() < end) {
                        List<Future<?>> fs = new ArrayList<>();
                        for (int i = 0; i < unacked.get(); i++) {
                            fs.add(p.send(new ProducerRecord<>(topic, 0, Support.b(String.valueOf(i)), Support.b(String.valueOf(i)))));
                        }
                        for (Future<?> f : fs) {
                            try {
                                f.get();
                                unacked.decrementAndGet();
                            } catch (Exception e) {
                                // the Kafka test sends the failed ones again
                            }
                        }
                    }
                }
                return null;
            });
            int received = 0;
            long deadline = System.currentTimeMillis() + 40_000;
            while (received < 1000 && System.currentTimeMillis() < deadline) received += c.poll(Duration.ofMillis(100)).count();
            created.get(20, TimeUnit.SECONDS);
            sent.get(30, TimeUnit.SECONDS);
            received += c.poll(Duration.ofMillis(500)).count();
            obs.put("unacked", unacked.get());
            obs.put("received", received);
        } finally {
            executor.shutdownNow();
        }
    }
}
