import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;

/**
 * Group scenarios after Apache Kafka 3.9's PlaintextConsumerPollTest (testMaxPollIntervalMs,
 * testMaxPollIntervalMsDelayInRevocation, testMaxPollIntervalMsDelayInAssignment,
 * testMaxPollIntervalMsShorterThanPollTimeout, testMultiConsumerSessionTimeoutOnStopPolling and
 * ...OnClose), PlaintextConsumerSubscriptionTest.testUnsubscribeTopic and
 * GroupCoordinatorIntegrationTest, with the classic protocol
 * against a broker set up as AbstractConsumerTest sets its brokers (group.min.session.timeout.ms=100,
 * group.max.session.timeout.ms=60000, group.initial.rebalance.delay.ms=10). Each scenario only
 * observes; compat/test_java_reference_groups.py holds the expectations.
 */
final class GroupReplay {
    private GroupReplay() {
    }

    /** Kafka's TestConsumerReassignmentListener: counts the calls (onPartitionsLost counts as a revocation). */
    static class Listener implements ConsumerRebalanceListener {
        volatile int assigned;
        volatile int revoked;

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            assigned++;
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            revoked++;
        }
    }

    /** AbstractConsumerTest's consumer: group.id, earliest, no auto-commit, metadata.max.age.ms=100, max.poll.interval.ms=6000. */
    static KafkaConsumer<byte[], byte[]> consumer(Support s, String group, String... kv) {
        String[] base = {"group.id", group, "metadata.max.age.ms", "100", "max.poll.interval.ms", "6000"};
        String[] all = new String[base.length + kv.length];
        System.arraycopy(base, 0, all, 0, base.length);
        System.arraycopy(kv, 0, all, base.length, kv.length);
        return s.consumer("read_uncommitted", all);
    }

    /**
     * subscribe(topics, listener), and with the consumer group protocol (KIP-848, the drivers'
     * client.group.protocol=consumer) {@link #awaitKnown} before the first poll, which is what
     * makes the member send its first ConsumerGroupHeartbeat. The classic protocol has no such
     * step: its assignment names the topics.
     */
    static void subscribeKnown(Support s, KafkaConsumer<byte[], byte[]> c, List<String> topics,
                               ConsumerRebalanceListener listener) throws Exception {
        c.subscribe(topics, listener);
        if ("consumer".equalsIgnoreCase(s.option("client.group.protocol", "classic"))) awaitKnown(c, topics);
    }

    /**
     * Until the consumer's own metadata names every topic. A KIP-848 consumer resolves the topic
     * ids of an assignment through that metadata and reconciles the part it can name
     * (AbstractMembershipManager.maybeReconcile): an assignment that comes first is taken in two
     * steps, onPartitionsAssigned([]) and then the rest. The client itself can send the first
     * heartbeat before its Metadata request for the subscribed topics: an answer to a Metadata
     * request made before subscribe() that lands after it restarts the refresh backoff
     * (retry.backoff.ms), while the heartbeat leaves at the next poll. Any broker that answers
     * within that backoff, Kafka too, gets the two calls; Kafka's PlaintextConsumerTest does not
     * guard against it. partitionsFor with a zero timeout only reads that metadata (a miss is a
     * TimeoutException and sends nothing).
     */
    static void awaitKnown(KafkaConsumer<byte[], byte[]> c, List<String> topics) throws Exception {
        boolean known = Support.eventually(() -> {
            for (String topic : topics) c.partitionsFor(topic, Duration.ZERO);
            return true;
        }, 30_000);
        if (!known) throw new java.util.concurrent.TimeoutException("the consumer's metadata never named " + topics);
    }

    /** awaitRebalance: polls until the listener saw one more assignment (false after 30 s). */
    static boolean awaitRebalance(KafkaConsumer<byte[], byte[]> c, Listener l) throws Exception {
        int before = l.assigned;
        return Support.await(() -> {
            c.poll(Duration.ofMillis(100));
            return l.assigned > before;
        }, 30_000);
    }

    /** testMaxPollIntervalMs: a member that stops polling for longer than max.poll.interval.ms rejoins. */
    static void maxPollInterval(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("max-poll-interval");
        s.createTopic(topic, 2);
        try (KafkaConsumer<byte[], byte[]> c = consumer(s, s.name("max-poll-interval-G"), "max.poll.interval.ms", "1000",
                "heartbeat.interval.ms", "500", "session.timeout.ms", "2000")) {
            Listener l = new Listener();
            c.subscribe(List.of(topic), l);
            obs.put("first", List.of(awaitRebalance(c, l), l.assigned, l.revoked));
            Thread.sleep(3000);  // the Kafka test's own wait: longer than max.poll.interval.ms
            obs.put("second", List.of(awaitRebalance(c, l), l.assigned, l.revoked));
        }
    }

    /** testMaxPollIntervalMsDelayInRevocation: a revocation callback longer than the session timeout still commits. */
    static void delayInRevocation(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("delay-revocation");
        s.createTopic(topic, 2);
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaConsumer<byte[], byte[]> c = consumer(s, s.name("delay-revocation-G"), "max.poll.interval.ms", "5000",
                "heartbeat.interval.ms", "500", "session.timeout.ms", "1000")) {
            AtomicReference<Object> committed = new AtomicReference<>(-1L);
            AtomicBoolean completed = new AtomicBoolean();
            Listener l = new Listener() {
                @Override
                public void onPartitionsLost(Collection<TopicPartition> partitions) {
                }

                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                    if (!partitions.isEmpty() && partitions.contains(tp)) {
                        try {
                            Thread.sleep(1500);
                            long position = c.position(tp);
                            committed.set(position);
                            c.commitSync(Map.of(tp, new OffsetAndMetadata(position)));
                            completed.set(true);
                        } catch (Exception e) {
                            committed.set(String.valueOf(e));
                        }
                    }
                    super.onPartitionsRevoked(partitions);
                }
            };
            c.subscribe(List.of(topic), l);
            obs.put("first", awaitRebalance(c, l));
            c.subscribe(List.of(s.name("otherTopic")), l);
            obs.put("second", awaitRebalance(c, l));
            obs.put("committed_position", committed.get());
            obs.put("commit_completed", completed.get());
        }
    }

    /** ensureNoRebalance: an async commit succeeds and no revocation happened meanwhile. */
    static List<Object> ensureNoRebalance(KafkaConsumer<byte[], byte[]> c, Listener l) throws Exception {
        int revoked = l.revoked;
        CompletableFuture<Exception> done = new CompletableFuture<>();
        c.commitAsync((offsets, e) -> done.complete(e));
        Support.await(() -> {
            c.poll(Duration.ofMillis(50));
            return done.isDone();
        }, 20_000);
        return java.util.Arrays.asList(done.isDone() ? String.valueOf(done.getNow(null)) : "no callback", l.revoked - revoked);
    }

    /** testMaxPollIntervalMsDelayInAssignment: an assignment callback longer than the session timeout keeps the member. */
    static void delayInAssignment(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("delay-assignment");
        s.createTopic(topic, 2);
        try (KafkaConsumer<byte[], byte[]> c = consumer(s, s.name("delay-assignment-G"), "max.poll.interval.ms", "5000",
                "heartbeat.interval.ms", "500", "session.timeout.ms", "1000")) {
            Listener l = new Listener() {
                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                    try {
                        Thread.sleep(1500);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    super.onPartitionsAssigned(partitions);
                }
            };
            c.subscribe(List.of(topic), l);
            obs.put("first", awaitRebalance(c, l));
            obs.put("no_rebalance", ensureNoRebalance(c, l));
        }
    }

    /** testMaxPollIntervalMsShorterThanPollTimeout: a long poll does not make the member exceed max.poll.interval.ms. */
    static void pollTimeoutOverInterval(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("long-poll");
        s.createTopic(topic, 2);
        try (KafkaConsumer<byte[], byte[]> c = consumer(s, s.name("long-poll-G"), "max.poll.interval.ms", "1000",
                "heartbeat.interval.ms", "500")) {
            Listener l = new Listener();
            c.subscribe(List.of(topic), l);
            obs.put("first", awaitRebalance(c, l));
            int assigned = l.assigned;
            c.poll(Duration.ofMillis(2000));
            c.poll(Duration.ofMillis(500));
            c.poll(Duration.ofMillis(500));
            obs.put("assigned_since", l.assigned - assigned);
        }
    }

    /** testUnsubscribeTopic (session.timeout.ms=100, heartbeat.interval.ms=30). */
    static void unsubscribeTopic(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("unsubscribe");
        s.createTopic(topic, 2);
        try (KafkaConsumer<byte[], byte[]> c = consumer(s, s.name("unsubscribe-G"), "session.timeout.ms", "100",
                "heartbeat.interval.ms", "30")) {
            Listener l = new Listener();
            c.subscribe(List.of(topic), l);
            obs.put("first", awaitRebalance(c, l));
            c.subscribe(List.of());
            obs.put("assignment_after", c.assignment().size());
        }
    }

    /**
     * runMultiConsumerSessionTimeoutTest: three members share 8 partitions of two topics; one stops
     * polling (and is closed, or not): the two others end up owning every partition.
     */
    static void sessionTimeout(Support s, Map<String, Object> obs, boolean close) throws Exception {
        String key = close ? "close" : "stop";
        String topic = s.name("session-" + key), topic1 = s.name("session-" + key + "-1");
        String group = s.name("session-" + key + "-G");
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, topic, 2);
            Support.createTopic(admin, topic1, 6);
        }
        Set<TopicPartition> every = new HashSet<>();
        try (KafkaProducer<byte[], byte[]> p = s.producer()) {
            for (int i = 0; i < 2; i++) ClientReplay.sendRecords(p, new TopicPartition(topic, i), 100, 0);
            for (int i = 0; i < 6; i++) ClientReplay.sendRecords(p, new TopicPartition(topic1, i), 100, 0);
        }
        for (int i = 0; i < 2; i++) every.add(new TopicPartition(topic, i));
        for (int i = 0; i < 6; i++) every.add(new TopicPartition(topic1, i));
        List<KafkaConsumer<byte[], byte[]>> members = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                KafkaConsumer<byte[], byte[]> c = consumer(s, group);
                c.subscribe(List.of(topic, topic1));
                members.add(c);
            }
            obs.put("three", sizes(Support.settleAnyOrder(members, List.of(2, 3, 3), every, false)));
            KafkaConsumer<byte[], byte[]> stopped = members.remove(2);
            if (close) stopped.close();
            long start = System.currentTimeMillis();
            obs.put("two", sizes(Support.settleAnyOrder(members, List.of(4, 4), every, false)));
            obs.put("two_within_ms", System.currentTimeMillis() - start);
            if (!close) stopped.close();
        } finally {
            for (KafkaConsumer<byte[], byte[]> c : members) c.close(Duration.ofSeconds(5));
        }
    }

    /**
     * GroupCoordinatorIntegrationTest.testGroupCoordinatorPropagatesOffsetsTopicCompressionCodec: a
     * commit of offset 10 for __consumer_offsets-0 itself (the broker's offsets.topic.compression.codec
     * decides how the coordinator writes it; compat/test_java_reference_groups.py reads the log).
     */
    static void offsetsCompression(Support s, Map<String, Object> obs) throws Exception {
        TopicPartition offsets = new TopicPartition("__consumer_offsets", 0);
        try (KafkaConsumer<byte[], byte[]> c = s.consumer("read_uncommitted", "group.id", s.name("compression-G"))) {
            c.commitSync(Map.of(offsets, new OffsetAndMetadata(10, "")));
            OffsetAndMetadata m = c.committed(Set.of(offsets)).get(offsets);
            obs.put("committed", m == null ? null : m.offset());
        }
    }

    static List<Integer> sizes(List<Set<TopicPartition>> owned) {
        return owned.stream().map(Set::size).sorted().toList();
    }
}
