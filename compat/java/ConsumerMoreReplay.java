import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiFunction;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;

/**
 * More consumer scenarios after Apache Kafka 3.9's tests, on the shared broker, with
 * AbstractConsumerTest's consumers ({@link GroupReplay#consumer}): PlaintextConsumerAssignTest,
 * PlaintextConsumerCallbackTest, PlaintextConsumerFetchTest's testFetchOutOfRangeOffsetResetConfigLatest,
 * testFetchRecordLargerThanMaxPartitionFetchBytes and testFetchHonours*IfLargeRecordNotFirst, and
 * PlaintextConsumerTest's per-partition lag and lead metrics (which the client computes from each
 * Fetch answer's high watermark, last stable offset and log start offset), testAutoOffsetReset,
 * testGroupConsumption, testPartitionsFor, testPauseStateNotPreservedByRebalance and
 * testPositionRespectsTimeout. Each scenario only observes; compat/test_java_reference_replay.py
 * holds the expectations.
 */
final class ConsumerMoreReplay {
    private ConsumerMoreReplay() {
    }

    /** A topic of AbstractConsumerTest's shape (two partitions) holding {@code n} records on partition 0 from timestamp 0. */
    static TopicPartition topicWith(Support s, String name, int n) throws Exception {
        TopicPartition tp = new TopicPartition(s.name(name), 0);
        s.createTopic(tp.topic(), 2);
        if (n > 0) {
            try (KafkaProducer<byte[], byte[]> p = s.producer()) {
                ClientReplay.sendRecords(p, tp, n, 0);
            }
        }
        return tp;
    }

    static boolean consumed(KafkaConsumer<byte[], byte[]> c, int n, long from, int index) {
        return ClientReplay.verify(ClientReplay.consume(c, n, null), n, from, 0, index);
    }

    static Long committed(KafkaConsumer<byte[], byte[]> c, TopicPartition tp) {
        OffsetAndMetadata o = c.committed(Set.of(tp)).get(tp);
        return o == null ? null : o.offset();
    }

    // ------------------------------------------------------------------ PlaintextConsumerAssignTest

    /** Every case of PlaintextConsumerAssignTest: [what each asserts, in its order]. */
    static void assignAndCommit(Support s, Map<String, Object> obs) throws Exception {
        TopicPartition big = topicWith(s, "assign-10000", 10000);
        TopicPartition ten = topicWith(s, "assign-10", 10);
        TopicPartition hundred = topicWith(s, "assign-100", 100);
        String g = s.name("assign-G");
        try (KafkaConsumer<byte[], byte[]> c = GroupReplay.consumer(s, g + "-async")) {
            c.assign(List.of(big));
            AtomicReference<Object> done = new AtomicReference<>();
            c.commitAsync((offsets, e) -> done.set(e == null ? "ok" : e.getClass().getSimpleName()));
            Support.await(() -> {
                c.poll(Duration.ofMillis(100));
                return done.get() != null;
            }, 10_000);
            obs.put("commit_async_not_committed", Arrays.asList(done.get(), committed(c, big), c.assignment().contains(big)));
        }
        try (KafkaConsumer<byte[], byte[]> c = GroupReplay.consumer(s, g + "-sync")) {
            c.assign(List.of(big));
            c.commitSync();
            obs.put("commit_sync_not_committed", Arrays.asList(committed(c, big), c.assignment().contains(big)));
        }
        try (KafkaConsumer<byte[], byte[]> c = GroupReplay.consumer(s, g + "-all")) {
            c.assign(List.of(big));
            c.seek(big, 0);
            boolean ok = consumed(c, 10000, 0, 0);
            c.commitSync();
            obs.put("commit_sync_all_consumed", Arrays.asList(ok, committed(c, big)));
        }
        try (KafkaConsumer<byte[], byte[]> c = s.consumer("read_uncommitted", "metadata.max.age.ms", "100")) {
            c.assign(List.of(ten));
            obs.put("assign_and_consume", Arrays.asList(consumed(c, 10, 0, 0), c.position(ten)));
        }
        try (KafkaConsumer<byte[], byte[]> c = s.consumer("read_uncommitted", "metadata.max.age.ms", "100")) {
            c.assign(List.of(ten));
            c.seek(ten, 1);
            obs.put("skipping_position", Arrays.asList(consumed(c, 9, 1, 1), c.position(ten)));
        }
        try (KafkaConsumer<byte[], byte[]> c = GroupReplay.consumer(s, g + "-fetch");
             KafkaConsumer<byte[], byte[]> other = GroupReplay.consumer(s, g + "-fetch")) {
            c.assign(List.of(hundred));
            c.seek(hundred, 0);
            boolean ok = consumed(c, 100, 0, 0);
            c.commitSync();
            Long mine = committed(c, hundred);
            other.assign(List.of(hundred));
            obs.put("fetch_committed", Arrays.asList(ok, mine, committed(other, hundred)));
            obs.put("committed_twice", Arrays.asList(committed(c, hundred), committed(c, hundred)));
        }
        try (KafkaConsumer<byte[], byte[]> c = GroupReplay.consumer(s, g + "-group1")) {
            c.assign(List.of(hundred));
            c.commitSync(Map.of(hundred, new OffsetAndMetadata(10)));
            obs.put("commit_ten", committed(c, hundred));
        }
        try (KafkaConsumer<byte[], byte[]> c = GroupReplay.consumer(s, g + "-group1")) {
            Long before = committed(c, hundred);
            c.assign(List.of(hundred));
            obs.put("consume_from_committed", Arrays.asList(before, consumed(c, 90, 10, 10)));
        }
    }

    // ------------------------------------------------------------------ PlaintextConsumerCallbackTest

    interface Callback {
        Object run(KafkaConsumer<byte[], byte[]> c, Collection<TopicPartition> partitions);
    }

    static Object attempt(java.util.concurrent.Callable<Object> f) {
        try {
            return f.call();
        } catch (Exception e) {
            return Arrays.asList(e.getClass().getSimpleName(), e.getMessage());
        }
    }

    /** triggerOnPartitionsAssigned / ...Revoked: what {@code cb} returned inside the callback (revoked: on close). */
    static Object trigger(Support s, String group, String topic, boolean onRevoked, Callback cb) throws Exception {
        AtomicReference<Object> seen = new AtomicReference<>("not called");
        AtomicBoolean assigned = new AtomicBoolean();
        KafkaConsumer<byte[], byte[]> c = GroupReplay.consumer(s, group);
        try {
            GroupReplay.subscribeKnown(s, c, List.of(topic), new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                    if (!onRevoked) seen.set(cb.run(c, partitions));
                    assigned.set(true);
                }

                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                    if (onRevoked) seen.set(cb.run(c, partitions));
                }
            });
            if (!Support.await(() -> {
                c.poll(Duration.ofMillis(100));
                return assigned.get();
            }, 30_000)) return "never assigned";
        } finally {
            c.close();
        }
        return seen.get();
    }

    static void callbacks(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("callbacks");
        s.createTopic(topic, 2);
        TopicPartition tp = new TopicPartition(topic, 0);
        Map<String, Callback> cases = new LinkedHashMap<>();
        cases.put("assign", (c, ps) -> attempt(() -> {
            c.assign(List.of(tp));
            return "assigned";
        }));
        cases.put("assignment", (c, ps) -> c.assignment().contains(tp));
        cases.put("beginning_offsets", (c, ps) -> attempt(() -> c.beginningOffsets(List.of(tp)).get(tp)));
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            Map<String, Future<Object>> runs = new LinkedHashMap<>();
            for (boolean revoked : List.of(false, true)) {
                for (Map.Entry<String, Callback> e : cases.entrySet()) {
                    String key = e.getKey() + (revoked ? "_on_revoked" : "_on_assigned");
                    runs.put(key, pool.submit(() -> trigger(s, s.name("cb-" + key), topic, revoked, e.getValue())));
                }
            }
            runs.put("position_on_assigned", pool.submit(() -> trigger(s, s.name("cb-position"), topic, false,
                    (c, ps) -> attempt(() -> c.position(tp)))));
            for (Map.Entry<String, Future<Object>> e : runs.entrySet()) obs.put(e.getKey(), e.getValue().get(90, TimeUnit.SECONDS));
        } finally {
            pool.shutdownNow();
        }
        // testSeekPositionAndPauseNewlyAssignedPartitionOnPartitionsAssignedCallback
        TopicPartition seekTp = topicWith(s, "callbacks-seek", 120);
        try (KafkaConsumer<byte[], byte[]> c = GroupReplay.consumer(s, s.name("cb-seek"))) {
            AtomicBoolean assigned = new AtomicBoolean();
            GroupReplay.subscribeKnown(s, c, List.of(seekTp.topic()), new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                    c.seek(seekTp, 100);
                    c.pause(List.of(seekTp));
                    assigned.set(true);
                }

                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                }
            });
            Support.await(() -> {
                c.poll(Duration.ofMillis(100));
                return assigned.get();
            }, 30_000);
            boolean paused = c.paused().contains(seekTp);
            c.resume(List.of(seekTp));
            obs.put("seek_and_pause", Arrays.asList(paused, consumed(c, 20, 100, 100)));
        }
    }

    // ------------------------------------------------------------------ PlaintextConsumerFetchTest

    static void fetchMore(Support s, Map<String, Object> obs) throws Exception {
        // testFetchOutOfRangeOffsetResetConfigLatest
        TopicPartition tp = topicWith(s, "fetch-latest", 10);
        try (KafkaConsumer<byte[], byte[]> c = GroupReplay.consumer(s, s.name("fetch-latest-G"),
                "auto.offset.reset", "latest", "fetch.max.wait.ms", "0");
             KafkaProducer<byte[], byte[]> p = s.producer()) {
            c.assign(List.of(tp));
            c.seek(tp, 0);
            boolean first = ClientReplay.verify(ClientReplay.consume(c, 5, null).subList(0, 5), 5, 0, 0, 0);
            c.seek(tp, 27);
            int polled = c.poll(Duration.ofMillis(50)).count();
            // the reset to latest ends before more records come (Kafka's poll(50) leaves that to timing:
            // on a busy machine the OFFSET_OUT_OF_RANGE answer came after it, and position() was still 27)
            long until = System.currentTimeMillis() + 30_000;
            while (c.position(tp) == 27 && System.currentTimeMillis() < until) polled += c.poll(Duration.ofMillis(50)).count();
            long reset = c.position(tp);
            ClientReplay.sendRecords(p, tp, 10, 10);
            List<ConsumerRecord<byte[], byte[]>> next = ClientReplay.consume(c, 1, null);
            obs.put("out_of_range_latest", Arrays.asList(first, polled, reset, next.isEmpty() ? null : next.get(0).offset()));
        }
        obs.put("larger_than_max_partition_fetch_bytes", largeRecord(s, 10 * 1024 + 1));
        obs.put("fetch_size_large_not_first", largeNotFirst(s, "fetch.max.bytes"));
        obs.put("partition_fetch_bytes_large_not_first", largeNotFirst(s, "max.partition.fetch.bytes"));
    }

    /** checkLargeRecord: a record over max.partition.fetch.bytes (10 KiB) comes whole in the first poll. */
    static List<Object> largeRecord(Support s, int size) throws Exception {
        TopicPartition tp = topicWith(s, "fetch-large-record", 0);
        try (KafkaConsumer<byte[], byte[]> c = GroupReplay.consumer(s, s.name("fetch-large-G"),
                "max.partition.fetch.bytes", String.valueOf(10 * 1024));
             KafkaProducer<byte[], byte[]> p = s.producer()) {
            p.send(new org.apache.kafka.clients.producer.ProducerRecord<>(tp.topic(), 0, Support.b("key"), new byte[size]));
            c.assign(List.of(tp));
            ConsumerRecords<byte[], byte[]> rs = c.poll(Duration.ofMillis(20000));
            if (rs.isEmpty()) return List.of(0);
            ConsumerRecord<byte[], byte[]> r = rs.iterator().next();
            return Arrays.asList(rs.count(), r.offset(), new String(r.key()), r.value().length);
        }
    }

    /** checkFetchHonoursSizeIfLargeRecordNotFirst: with {@code limit} at 10 KiB, the first poll has the small record alone. */
    static List<Object> largeNotFirst(Support s, String limit) throws Exception {
        TopicPartition tp = topicWith(s, "fetch-not-first-" + limit.replace('.', '-'), 0);
        try (KafkaConsumer<byte[], byte[]> c = GroupReplay.consumer(s, s.name("fetch-not-first-G"), limit,
                String.valueOf(10 * 1024));
             KafkaProducer<byte[], byte[]> p = s.producer()) {
            p.send(Support.rec(tp.topic(), 0, "small", "value")).get(20, TimeUnit.SECONDS);
            p.send(new org.apache.kafka.clients.producer.ProducerRecord<>(tp.topic(), 0, Support.b("large"),
                    new byte[10 * 1024])).get(20, TimeUnit.SECONDS);
            c.assign(List.of(tp));
            ConsumerRecords<byte[], byte[]> rs = c.poll(Duration.ofMillis(20000));
            if (rs.isEmpty()) return List.of(0);
            ConsumerRecord<byte[], byte[]> r = rs.iterator().next();
            return Arrays.asList(rs.count(), r.offset(), new String(r.key()), new String(r.value()));
        }
    }

    // ------------------------------------------------------------------ lag and lead metrics

    static Object metric(KafkaConsumer<byte[], byte[]> c, String name, String clientId, TopicPartition tp) {
        Map<String, String> tags = new LinkedHashMap<>();
        tags.put("client-id", clientId);
        tags.put("topic", tp.topic());
        tags.put("partition", String.valueOf(tp.partition()));
        Metric m = c.metrics().get(new MetricName(name, "consumer-fetch-manager-metrics", "", tags));
        return m == null ? null : m.metricValue();
    }

    /**
     * The lag and lead of {@code tp} once the client has dropped them, or as they stand after 20 s of
     * polls if it never does. The client drops a partition's metrics when it next prepares a fetch
     * without it (the 4.x consumer on its background thread, after the callbacks the app thread saw),
     * so a single read right after the rebalance races the client's own threads.
     */
    static List<Object> metricsOnceGone(KafkaConsumer<byte[], byte[]> c, String clientId, TopicPartition tp)
            throws Exception {
        Support.await(() -> {
            if (metric(c, "records-lag", clientId, tp) == null && metric(c, "records-lead", clientId, tp) == null) {
                return true;
            }
            c.poll(Duration.ofMillis(100));
            return false;
        }, 20_000);
        return Arrays.asList(metric(c, "records-lag", clientId, tp), metric(c, "records-lead", clientId, tp));
    }

    /** awaitNonEmptyRecords: the first poll with records of {@code tp}, up to max.poll.records. */
    static int awaitNonEmpty(KafkaConsumer<byte[], byte[]> c, TopicPartition tp) throws Exception {
        int[] n = {0};
        Support.await(() -> {
            n[0] = c.poll(Duration.ofMillis(100)).records(tp).size();
            return n[0] > 0;
        }, 30_000);
        return n[0];
    }

    /**
     * testPerPartitionLag/LeadMetricsCleanUpWithAssign and ...WithSubscribe (1000 records, max.poll.records
     * 100 as AbstractConsumerTest: lag 1000 - polled, lead = polled), then the log start moved by
     * DeleteRecords (lead = position - log start) and testPerPartitionLagMetricsWhenReadCommitted
     * with an open transaction behind the records (lag = last stable offset - position).
     */
    static void lagAndLead(Support s, Map<String, Object> obs) throws Exception {
        TopicPartition tp = topicWith(s, "lag-lead", 1000);
        TopicPartition tp2 = new TopicPartition(tp.topic(), 1);
        try (KafkaProducer<byte[], byte[]> p = s.producer()) {
            ClientReplay.sendRecords(p, tp2, 1000, 0);
        }
        String assignId = s.name("lag-assign");
        try (KafkaConsumer<byte[], byte[]> c = GroupReplay.consumer(s, assignId, "client.id", assignId, "max.poll.records", "100")) {
            c.assign(List.of(tp));
            int polled = awaitNonEmpty(c, tp);
            obs.put("assign", Arrays.asList(polled, metric(c, "records-lag", assignId, tp), metric(c, "records-lead", assignId, tp)));
            try (Admin admin = s.admin()) {
                admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(50))).all().get(20, TimeUnit.SECONDS);
            }
            long position = c.position(tp);
            Support.await(() -> {
                c.poll(Duration.ofMillis(100));
                return Double.valueOf(c.position(tp) - 50).equals(metric(c, "records-lead", assignId, tp));
            }, 20_000);
            obs.put("lead_after_delete_records", Arrays.asList(position > 50,
                    c.position(tp) - 50 == (Double) metric(c, "records-lead", assignId, tp)));
            c.assign(List.of(tp2));
            awaitNonEmpty(c, tp2);
            obs.put("assign_moved", metricsOnceGone(c, assignId, tp));
        }
        String subscribeId = s.name("lag-subscribe");
        TopicPartition other = new TopicPartition(s.name("lag-lead-2"), 0);
        s.createTopic(other.topic(), 2);
        try (KafkaConsumer<byte[], byte[]> c = GroupReplay.consumer(s, subscribeId, "client.id", subscribeId, "max.poll.records", "100")) {
            GroupReplay.Listener l = new GroupReplay.Listener();
            GroupReplay.subscribeKnown(s, c, List.of(tp.topic(), other.topic()), l);
            int polled = awaitNonEmpty(c, tp);
            obs.put("subscribe", Arrays.asList(l.assigned, polled, metric(c, "records-lag", subscribeId, tp),
                    metric(c, "records-lead", subscribeId, tp)));
            c.subscribe(List.of(other.topic()), l);
            GroupReplay.awaitRebalance(c, l);
            obs.put("subscribe_moved", metricsOnceGone(c, subscribeId, tp));
        }
        TopicPartition txnTp = topicWith(s, "lag-committed", 10);
        String committedId = s.name("lag-committed");
        try (KafkaProducer<byte[], byte[]> txn = s.txnProducer(s.name("lag-committed-txn"));
             KafkaConsumer<byte[], byte[]> c = GroupReplay.consumer(s, committedId, "client.id", committedId,
                     "isolation.level", "read_committed")) {
            txn.beginTransaction();
            txn.send(Support.rec(txnTp.topic(), 0, "open", "open")).get(20, TimeUnit.SECONDS);
            try (KafkaProducer<byte[], byte[]> p = s.producer()) {
                ClientReplay.sendRecords(p, txnTp, 5, 10);
            }
            c.assign(List.of(txnTp));
            List<ConsumerRecord<byte[], byte[]>> got = ClientReplay.consume(c, 10, null);
            c.poll(Duration.ofMillis(200));
            obs.put("read_committed", Arrays.asList(got.size(), c.position(txnTp),
                    metric(c, "records-lag", committedId, txnTp), metric(c, "records-lead", committedId, txnTp)));
            txn.abortTransaction();
        }
    }

    // ------------------------------------------------------------------ PlaintextConsumerTest, small cases

    static void basics(Support s, Map<String, Object> obs) throws Exception {
        TopicPartition tp = topicWith(s, "basics", 10);
        try (KafkaConsumer<byte[], byte[]> c = GroupReplay.consumer(s, s.name("basics-reset"))) {
            c.assign(List.of(tp));
            obs.put("auto_offset_reset", ClientReplay.verify(ClientReplay.consume(c, 1, null).subList(0, 1), 1, 0, 0, 0));
            obs.put("partitions_for", c.partitionsFor(tp.topic()).size());
            TopicPartition missing = new TopicPartition(tp.topic(), 15);
            c.assign(List.of(missing));
            obs.put("position_timeout", attempt(() -> c.position(missing, Duration.ofSeconds(3))));
        }
        try (KafkaConsumer<byte[], byte[]> c = GroupReplay.consumer(s, s.name("basics-group"))) {
            c.subscribe(List.of(tp.topic()));
            obs.put("group_consumption", ClientReplay.consume(c, 1, null).get(0).offset());
        }
        // testPauseStateNotPreservedByRebalance
        TopicPartition paused = topicWith(s, "pause-rebalance", 5);
        try (KafkaConsumer<byte[], byte[]> c = GroupReplay.consumer(s, s.name("pause-rebalance-G"))) {
            c.subscribe(List.of(paused.topic()));
            boolean first = consumed(c, 5, 0, 0);
            c.pause(List.of(paused));
            TopicPartition next = new TopicPartition(s.name("pause-rebalance-2"), 0);
            s.createTopic(next.topic(), 2);
            c.subscribe(List.of(next.topic()));
            int[] polled = {0};
            Support.await(() -> {
                polled[0] += c.poll(Duration.ofMillis(100)).count();
                return c.assignment().contains(next);
            }, 30_000);
            boolean unpaused = c.paused().isEmpty();
            c.subscribe(List.of(paused.topic()));
            // no offsets were committed: the partition comes back at earliest, not paused
            obs.put("pause_not_preserved", Arrays.asList(first, polled[0], unpaused, consumed(c, 5, 0, 0)));
        }
    }
}
