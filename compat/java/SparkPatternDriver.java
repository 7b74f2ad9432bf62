import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.ListIterator;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * What Spark 4.0's Kafka connector (connector/kafka-0-10-sql) does against a broker, without Spark:
 * the driver's KafkaOffsetReaderAdmin (describeTopics, listOffsets earliest/latest with
 * ListOffsetsOptions(isolation)) and the executors' InternalKafkaConsumer / KafkaDataConsumer
 * (assign + seek + poll, getAvailableOffsetRange = seekToBeginning/seekToEnd + position, invisible
 * gaps skipped, failOnDataLoss=true), ported line by line from KafkaDataConsumer.scala.
 *
 * Scenario "spark.pattern" writes this layout to a 3-partition topic, then reads it under both
 * isolation levels, commits the open transaction and reads the next micro-batch:
 * <pre>
 *   p0: 0 p-0 | 1 a-1, 2 a-2 (A, aborted), 3 ABORT | 4 p-1 | 5 b-1, 6 b-2 (B), 7 COMMIT | 8 p-2 |
 *       9 c-1 (C, open) | 10 p-3            [then 11 COMMIT of C]
 *   p1: 0 a-3 (A), 1 ABORT | 2 p-4 | 3 b-3 (B), 4 COMMIT      (ends on a marker)
 *   p2: 0 a-4 (A), 1 ABORT                                    (nothing but an aborted txn)
 * </pre>
 */
public final class SparkPatternDriver {
    static final long UNKNOWN_OFFSET = -2L;
    static final long POLL_TIMEOUT_MS = 10_000;   // Spark's default is spark.network.timeout (120 s)

    public static void main(String[] args) {
        Map<String, Support.Scenario> all = new LinkedHashMap<>();
        all.put("spark.pattern", SparkPatternDriver::pattern);
        Support.main("SparkPatternDriver", all, args);
    }

    static void pattern(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("spark");
        s.createTopic(topic, 3);
        KafkaProducer<byte[], byte[]> c = s.txnProducer(s.name("spark-C"), "compression.type", "zstd");
        try {
            long t0 = System.currentTimeMillis();
            Map<String, Object> timing = new LinkedHashMap<>();
            obs.put("timing_ms", timing);
            obs.put("layout", writeLayout(s, topic, c));
            timing.put("layout", System.currentTimeMillis() - t0);
            Map<String, Object> first = new LinkedHashMap<>();
            Map<String, Map<Integer, Long>> latest = new LinkedHashMap<>();
            for (String iso : List.of("read_committed", "read_uncommitted")) {
                Map<String, Object> r = new LinkedHashMap<>();
                Map<Integer, long[]> ranges = driverOffsets(s, topic, iso, r);
                executorRead(s, topic, iso, ranges, true, r);
                Map<Integer, Long> l = new LinkedHashMap<>();
                for (Map.Entry<Integer, long[]> e : ranges.entrySet()) l.put(e.getKey(), e.getValue()[1]);
                latest.put(iso, l);
                first.put(iso, r);
                timing.put("batch1_" + iso, System.currentTimeMillis() - t0);
            }
            obs.put("batch1", first);
            c.commitTransaction();                                   // p0: 11 COMMIT
            Map<String, Object> second = new LinkedHashMap<>();
            for (String iso : List.of("read_committed", "read_uncommitted")) {
                Map<String, Object> r = new LinkedHashMap<>();
                Map<Integer, long[]> now = driverOffsets(s, topic, iso, r);
                Map<Integer, long[]> ranges = new LinkedHashMap<>();
                for (Map.Entry<Integer, long[]> e : now.entrySet()) {
                    ranges.put(e.getKey(), new long[] {latest.get(iso).get(e.getKey()), e.getValue()[1]});
                }
                r.put("ranges", rangesJson(ranges));
                executorRead(s, topic, iso, ranges, false, r);
                second.put(iso, r);
                timing.put("batch2_" + iso, System.currentTimeMillis() - t0);
            }
            obs.put("batch2", second);
        } finally {
            c.close(Duration.ofSeconds(2));
        }
    }

    /** Writes the layout of the class comment; leaves transaction C open on {@code c}. */
    static Map<String, Object> writeLayout(Support s, String topic, KafkaProducer<byte[], byte[]> c) throws Exception {
        Map<String, Object> written = new LinkedHashMap<>();
        // Compressed transactional batches too: aborted ones must still be recognised as such.
        try (KafkaProducer<byte[], byte[]> plain = s.producer("compression.type", "lz4");
             KafkaProducer<byte[], byte[]> a = s.txnProducer(s.name("spark-A"), "compression.type", "gzip");
             KafkaProducer<byte[], byte[]> b = s.txnProducer(s.name("spark-B"), "compression.type", "snappy")) {
            put(written, plain.send(Support.rec(topic, 0, "p", "p-0")).get(), "p-0");
            a.beginTransaction();
            put(written, a.send(Support.rec(topic, 0, "a", "a-1")).get(), "a-1");
            put(written, a.send(Support.rec(topic, 0, "a", "a-2")).get(), "a-2");
            put(written, a.send(Support.rec(topic, 1, "a", "a-3")).get(), "a-3");
            put(written, a.send(Support.rec(topic, 2, "a", "a-4")).get(), "a-4");
            a.abortTransaction();
            put(written, plain.send(Support.rec(topic, 0, "p", "p-1")).get(), "p-1");
            put(written, plain.send(Support.rec(topic, 1, "p", "p-4")).get(), "p-4");
            b.beginTransaction();
            put(written, b.send(Support.rec(topic, 0, "b", "b-1")).get(), "b-1");
            put(written, b.send(Support.rec(topic, 0, "b", "b-2")).get(), "b-2");
            put(written, b.send(Support.rec(topic, 1, "b", "b-3")).get(), "b-3");
            b.commitTransaction();
            put(written, plain.send(Support.rec(topic, 0, "p", "p-2")).get(), "p-2");
            c.beginTransaction();
            put(written, c.send(Support.rec(topic, 0, "c", "c-1")).get(), "c-1");
            put(written, plain.send(Support.rec(topic, 0, "p", "p-3")).get(), "p-3");
        }
        return written;
    }

    private static void put(Map<String, Object> written, RecordMetadata m, String value) {
        written.put(value, List.of(m.partition(), m.offset()));
    }

    // ------------------------------------------------------------------ driver side

    /** KafkaOffsetReaderAdmin: partitions from describeTopics, earliest/latest from listOffsets. */
    static Map<Integer, long[]> driverOffsets(Support s, String topic, String iso, Map<String, Object> r) throws Exception {
        IsolationLevel level = IsolationLevel.valueOf(iso.toUpperCase());
        Map<Integer, long[]> ranges = new LinkedHashMap<>();
        try (Admin admin = s.admin()) {
            TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get(20, TimeUnit.SECONDS).get(topic);
            List<TopicPartition> tps = new ArrayList<>();
            for (TopicPartitionInfo p : d.partitions()) tps.add(new TopicPartition(topic, p.partition()));
            Map<TopicPartition, OffsetSpec> earliest = new LinkedHashMap<>();
            Map<TopicPartition, OffsetSpec> latest = new LinkedHashMap<>();
            for (TopicPartition tp : tps) {
                earliest.put(tp, OffsetSpec.earliest());
                latest.put(tp, OffsetSpec.latest());
            }
            ListOffsetsOptions options = new ListOffsetsOptions(level);
            Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> e =
                    admin.listOffsets(earliest, options).all().get(20, TimeUnit.SECONDS);
            Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> l =
                    admin.listOffsets(latest, options).all().get(20, TimeUnit.SECONDS);
            for (TopicPartition tp : tps) ranges.put(tp.partition(), new long[] {e.get(tp).offset(), l.get(tp).offset()});
        }
        r.put("admin", rangesJson(ranges));
        return ranges;
    }

    private static Map<String, Object> rangesJson(Map<Integer, long[]> ranges) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (Map.Entry<Integer, long[]> e : ranges.entrySet()) out.put(String.valueOf(e.getKey()), List.of(e.getValue()[0], e.getValue()[1]));
        return out;
    }

    // ------------------------------------------------------------------ executor side

    /**
     * One executor task per partition: a fresh KafkaDataConsumer reads [from, until) record by
     * record (KafkaBatchPartitionReader.next). With {@code lateBinding} the range is also resolved
     * the way batch queries do (getAvailableOffsetRange) and every offset is probed with fetch().
     */
    static void executorRead(Support s, String topic, String iso, Map<Integer, long[]> ranges, boolean lateBinding,
                             Map<String, Object> r) throws Exception {
        String groupId = "spark-kafka-source-" + UUID.randomUUID() + "-executor";
        // One task per partition, run concurrently as Spark's executors would.
        ExecutorService tasks = Executors.newFixedThreadPool(ranges.size());
        Map<String, Future<Map<String, Object>>> futures = new LinkedHashMap<>();
        try {
            for (Map.Entry<Integer, long[]> e : ranges.entrySet()) {
                TopicPartition tp = new TopicPartition(topic, e.getKey());
                long from = e.getValue()[0];
                long until = e.getValue()[1];
                futures.put(String.valueOf(e.getKey()),
                        tasks.submit(() -> partitionTask(s, tp, iso, groupId, from, until, lateBinding)));
            }
            Map<String, Object> rows = new LinkedHashMap<>();
            Map<String, Object> late = new LinkedHashMap<>();
            Map<String, Object> probes = new LinkedHashMap<>();
            Map<String, Object> gaps = new LinkedHashMap<>();
            for (Map.Entry<String, Future<Map<String, Object>>> f : futures.entrySet()) {
                Map<String, Object> t;
                try {
                    t = f.getValue().get(120, TimeUnit.SECONDS);
                } catch (java.util.concurrent.ExecutionException ex) {
                    throw ex.getCause() instanceof Exception cause ? cause : ex;
                }
                rows.put(f.getKey(), t.get("rows"));
                gaps.put(f.getKey(), t.get("gaps"));
                late.put(f.getKey(), t.get("late"));
                probes.put(f.getKey(), t.get("probes"));
            }
            r.put("rows", rows);
            r.put("invisible_gaps", gaps);
            if (lateBinding) {
                r.put("late_binding", late);
                r.put("probes", probes);
            }
        } finally {
            tasks.shutdownNow();
        }
    }

    /** KafkaBatchPartitionReader over [from, until) of one partition (plus the probes). */
    static Map<String, Object> partitionTask(Support s, TopicPartition tp, String iso, String groupId, long from,
                                             long until, boolean lateBinding) throws Exception {
        Map<String, Object> t = new LinkedHashMap<>();
        try (InternalKafkaConsumer ic = new InternalKafkaConsumer(tp, executorParams(s, iso, groupId))) {
            DataConsumer dc = new DataConsumer(ic);
            if (lateBinding) {
                long[] avail = ic.getAvailableOffsetRange();
                t.put("late", List.of(avail[0], avail[1]));
            }
            List<Object> out = new ArrayList<>();
            long next = from;
            while (next < until) {
                ConsumerRecord<byte[], byte[]> rec = dc.get(next, until, POLL_TIMEOUT_MS, true);
                if (rec == null) break;
                out.add(List.of(rec.offset(), new String(rec.value())));
                next = rec.offset() + 1;
            }
            t.put("rows", out);
            t.put("gaps", dc.skipped);
        }
        if (lateBinding) {
            // Same calls, but fetch.max.wait.ms=100: after each poll the Java consumer leaves a
            // fetch parked at the end of the log, which the next seek+poll waits out (500 ms default).
            Properties quick = executorParams(s, iso, groupId);
            quick.put("fetch.max.wait.ms", "100");
            try (InternalKafkaConsumer ic = new InternalKafkaConsumer(tp, quick)) {
                List<Object> ps = new ArrayList<>();
                for (long o = from; o < until; o++) ps.add(probe(ic, o));
                t.put("probes", ps);
            }
        }
        return t;
    }

    /** InternalKafkaConsumer.fetch at one offset: what came back, where the position went, or the error. */
    private static Map<String, Object> probe(InternalKafkaConsumer ic, long offset) {
        long t0 = System.currentTimeMillis();
        try {
            Fetched f = ic.fetch(offset, POLL_TIMEOUT_MS);
            List<Long> offs = new ArrayList<>();
            for (ConsumerRecord<byte[], byte[]> rec : f.records) offs.add(rec.offset());
            return Support.map("offset", offset, "first", offs.isEmpty() ? null : offs.get(0), "count", offs.size(),
                    "after", f.offsetAfterPoll, "ms", System.currentTimeMillis() - t0);
        } catch (Exception ex) {
            return Support.map("offset", offset, "error", ex.getClass().getSimpleName() + ": " + ex.getMessage(),
                    "ms", System.currentTimeMillis() - t0);
        }
    }

    /** KafkaSourceProvider.kafkaParamsForExecutors plus kafka.isolation.level. */
    static Properties executorParams(Support s, String iso, String groupId) {
        Properties p = new Properties();
        p.put("bootstrap.servers", s.bootstrap);
        p.put("isolation.level", iso);
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        p.put("auto.offset.reset", "none");
        p.put("group.id", groupId);
        p.put("enable.auto.commit", "false");
        p.put("receive.buffer.bytes", 65536);
        return p;
    }

    record Fetched(List<ConsumerRecord<byte[], byte[]>> records, long offsetAfterPoll, long[] range) {}

    /** org.apache.spark.sql.kafka010.consumer.InternalKafkaConsumer. */
    static final class InternalKafkaConsumer implements AutoCloseable {
        final TopicPartition tp;
        final KafkaConsumer<byte[], byte[]> consumer;

        InternalKafkaConsumer(TopicPartition tp, Properties params) {
            this.tp = tp;
            this.consumer = new KafkaConsumer<>(params);
            consumer.assign(List.of(tp));
        }

        Fetched fetch(long offset, long pollTimeoutMs) throws TimeoutException {
            consumer.seek(tp, offset);
            List<ConsumerRecord<byte[], byte[]>> r = consumer.poll(Duration.ofMillis(pollTimeoutMs)).records(tp);
            long offsetAfterPoll = consumer.position(tp);
            long[] range = getAvailableOffsetRange();
            if (r.isEmpty()) {
                if (offset < range[0] || offset >= range[1]) {
                    throw new OffsetOutOfRangeException("offset " + offset + " outside " + range[0] + ".." + range[1],
                            Map.of(tp, offset));
                } else if (offset == offsetAfterPoll) {
                    throw new TimeoutException("Cannot fetch record for offset " + offset + " in " + pollTimeoutMs + " milliseconds");
                }
            }
            return new Fetched(r, offsetAfterPoll, range);
        }

        long[] getAvailableOffsetRange() {
            consumer.seekToBeginning(List.of(tp));
            long earliest = consumer.position(tp);
            consumer.seekToEnd(List.of(tp));
            long latest = consumer.position(tp);
            return new long[] {earliest, latest};
        }

        @Override
        public void close() {
            consumer.close(Duration.ofSeconds(2));
        }
    }

    /** KafkaDataConsumer.FetchedData. */
    static final class FetchedData {
        ListIterator<ConsumerRecord<byte[], byte[]>> records = Collections.emptyListIterator();
        long nextOffsetInFetchedData = UNKNOWN_OFFSET;
        long offsetAfterPoll = UNKNOWN_OFFSET;
        long[] range = {UNKNOWN_OFFSET, UNKNOWN_OFFSET};

        void withNewPoll(Fetched f) {
            records = f.records.listIterator();
            nextOffsetInFetchedData = UNKNOWN_OFFSET;
            offsetAfterPoll = f.offsetAfterPoll;
            range = f.range;
        }

        ConsumerRecord<byte[], byte[]> next() {
            ConsumerRecord<byte[], byte[]> r = records.next();
            nextOffsetInFetchedData = r.offset() + 1;
            return r;
        }

        ConsumerRecord<byte[], byte[]> previous() {
            ConsumerRecord<byte[], byte[]> r = records.previous();
            nextOffsetInFetchedData = r.offset();
            return r;
        }

        void reset() {
            records = Collections.emptyListIterator();
            nextOffsetInFetchedData = UNKNOWN_OFFSET;
            offsetAfterPoll = UNKNOWN_OFFSET;
            range = new long[] {UNKNOWN_OFFSET, UNKNOWN_OFFSET};
        }
    }

    /** The data-loss failure Spark raises with failOnDataLoss=true (couldNotReadOffsetRangeInKafkaError). */
    static final class DataLossException extends RuntimeException {
        DataLossException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** KafkaDataConsumer.get / fetchRecord / fetchData. */
    static final class DataConsumer {
        final InternalKafkaConsumer consumer;
        final FetchedData fetchedData = new FetchedData();
        final List<Object> skipped = new ArrayList<>();

        DataConsumer(InternalKafkaConsumer consumer) {
            this.consumer = consumer;
        }

        ConsumerRecord<byte[], byte[]> get(long offset, long untilOffset, long pollTimeoutMs, boolean failOnDataLoss)
                throws TimeoutException {
            if (offset >= untilOffset) throw new IllegalArgumentException("offset must always be less than untilOffset");
            long toFetchOffset = offset;
            ConsumerRecord<byte[], byte[]> found = null;
            boolean complete = false;
            while (toFetchOffset != UNKNOWN_OFFSET && !complete) {
                try {
                    Object[] fr = fetchRecord(toFetchOffset, untilOffset, pollTimeoutMs, failOnDataLoss);
                    if (fr[0] != null) {
                        @SuppressWarnings("unchecked")
                        ConsumerRecord<byte[], byte[]> rec = (ConsumerRecord<byte[], byte[]>) fr[0];
                        found = rec;
                        complete = true;
                    } else {
                        long next = (Long) fr[1];
                        skipped.add(List.of(toFetchOffset, next));
                        toFetchOffset = next;
                        if (toFetchOffset >= untilOffset) {
                            fetchedData.reset();
                            toFetchOffset = UNKNOWN_OFFSET;
                        }
                    }
                } catch (OffsetOutOfRangeException e) {
                    fetchedData.reset();
                    // failOnDataLoss=true is the only mode reproduced here
                    throw new DataLossException("Cannot fetch offsets " + toFetchOffset + " until " + untilOffset
                            + " of " + consumer.tp + ": out of range", e);
                }
            }
            if (complete) return found;
            fetchedData.reset();
            return null;
        }

        /** Returns {record, nextOffsetToFetch}; a null record means [offset, next) is invisible. */
        private Object[] fetchRecord(long offset, long untilOffset, long pollTimeoutMs, boolean failOnDataLoss)
                throws TimeoutException {
            if (offset != fetchedData.nextOffsetInFetchedData) {
                fetchedData.withNewPoll(consumer.fetch(offset, pollTimeoutMs));
            } else if (!fetchedData.records.hasNext()) {
                if (offset < fetchedData.offsetAfterPoll) {
                    long next = fetchedData.offsetAfterPoll;
                    fetchedData.reset();
                    return new Object[] {null, next};
                } else {
                    fetchedData.withNewPoll(consumer.fetch(offset, pollTimeoutMs));
                }
            }
            if (!fetchedData.records.hasNext()) {
                if (offset > fetchedData.offsetAfterPoll) {
                    throw new IllegalStateException("seek to " + offset + " and poll but the offset was reset to "
                            + fetchedData.offsetAfterPoll);
                }
                return new Object[] {null, fetchedData.offsetAfterPoll};
            }
            ConsumerRecord<byte[], byte[]> record = fetchedData.next();
            if (record.offset() > offset) {
                long earliest = fetchedData.range[0];
                if (earliest <= offset) {
                    fetchedData.previous();
                    return new Object[] {null, record.offset()};
                }
                if (failOnDataLoss) {
                    throw new DataLossException("Cannot fetch offsets " + offset + " until " + record.offset()
                            + " of " + consumer.tp + ": earliest moved to " + earliest, null);
                }
                return new Object[] {record, fetchedData.nextOffsetInFetchedData};
            } else if (record.offset() < offset) {
                throw new IllegalStateException("Tried to fetch " + offset + " but the returned record offset was "
                        + record.offset());
            }
            return new Object[] {record, fetchedData.nextOffsetInFetchedData};
        }
    }

    private SparkPatternDriver() {}
}
