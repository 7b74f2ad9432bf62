import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * Consumer and producer scenarios after Apache Kafka's integration tests (PlaintextConsumerFetchTest,
 * PlaintextConsumerCommitTest, PlaintextAdminIntegrationTest's DeleteRecords tests,
 * PlaintextProducerSendTest, BaseProducerSendTest), on one broker. Each scenario only observes;
 * compat/test_java_reference.py holds the expectations.
 */
final class ClientReference {
    static final String RU = "read_uncommitted";

    private ClientReference() {
    }

    static void send(KafkaProducer<byte[], byte[]> p, String topic, int partition, int from, int to) throws Exception {
        for (int i = from; i < to; i++) p.send(new ProducerRecord<>(topic, partition, (long) i, null, Support.b("v" + i)));
        p.flush();
    }

    // ------------------------------------------------------------------ out-of-range fetches

    /**
     * testFetchInvalidOffset: auto.offset.reset=none, a group without a committed offset
     * (NoOffsetForPartitionException), then a seek past the high watermark (OffsetOutOfRangeException
     * naming that offset); a seek to the high watermark itself is in range.
     */
    static void invalidOffset(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("invalid-offset");
        TopicPartition tp = new TopicPartition(topic, 0);
        s.createTopic(topic, 1);
        try (KafkaProducer<byte[], byte[]> p = s.producer()) {
            send(p, topic, 0, 0, 2);
        }
        try (KafkaConsumer<byte[], byte[]> c = s.consumer(RU, "group.id", s.name("invalid-offset-G"),
                "auto.offset.reset", "none")) {
            c.assign(List.of(tp));
            obs.put("no_offset", Support.failureOf(() -> c.poll(Duration.ofSeconds(15))));
            c.seek(tp, 2);
            obs.put("at_end", Support.failureOf(() -> c.poll(Duration.ofMillis(500))));
            obs.put("position_at_end", c.position(tp));
            c.seek(tp, 3);
            try {
                long deadline = System.currentTimeMillis() + 20_000;
                while (System.currentTimeMillis() < deadline) c.poll(Duration.ofMillis(200));
                obs.put("out_of_range", null);
            } catch (OffsetOutOfRangeException e) {
                obs.put("out_of_range", Support.failure(e));
                Map<String, Object> parts = new HashMap<>();
                e.offsetOutOfRangePartitions().forEach((k, v) -> parts.put(k.toString(), v));
                obs.put("out_of_range_partitions", parts);
                obs.put("topic_partition", tp.toString());
            }
        }
    }

    /** testFetchOutOfRangeOffsetResetConfigEarliest / Latest: a seek past the end is reset by the policy. */
    static void outOfRangeReset(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("oor-reset");
        TopicPartition tp = new TopicPartition(topic, 0);
        s.createTopic(topic, 1);
        try (KafkaProducer<byte[], byte[]> p = s.producer()) {
            send(p, topic, 0, 0, 10);
            try (KafkaConsumer<byte[], byte[]> c = s.consumer(RU, "fetch.max.wait.ms", "0")) {
                c.assign(List.of(tp));
                Support.readOn(c, tp, 10, 20_000);
                c.seek(tp, 11);
                obs.put("earliest_next", firstOffset(c));
            }
            try (KafkaConsumer<byte[], byte[]> c = s.consumer(RU, "fetch.max.wait.ms", "0", "auto.offset.reset", "latest")) {
                c.assign(List.of(tp));
                c.seek(tp, 0);
                c.seek(tp, 27);
                // until the consumer has met OFFSET_OUT_OF_RANGE and reset to the log end
                obs.put("latest_reset_to", Support.await(() -> {
                    c.poll(Duration.ofMillis(100));
                    return c.position(tp) != 27;
                }, 20_000) ? c.position(tp) : null);
                send(p, topic, 0, 10, 20);
                obs.put("latest_next", firstOffset(c));
            }
        }
    }

    private static Long firstOffset(KafkaConsumer<byte[], byte[]> c) {
        long deadline = System.currentTimeMillis() + 20_000;
        while (System.currentTimeMillis() < deadline) {
            ConsumerRecords<byte[], byte[]> rs = c.poll(Duration.ofMillis(200));
            if (!rs.isEmpty()) return rs.iterator().next().offset();
        }
        return null;
    }

    // ------------------------------------------------------------------ topic names

    /**
     * testPartitionsForInvalidTopic, testSubscribeInvalidTopicCanUnsubscribe and
     * testPartitionsForAutoCreate: Metadata answers INVALID_TOPIC_EXCEPTION for a name Kafka
     * refuses (the consumer and the producer raise InvalidTopicException) and creates an unknown
     * topic a consumer asks about.
     */
    static void topicNames(Support s, Map<String, Object> obs) throws Exception {
        String invalid = ";3# ads,{234";
        String auto = s.name("auto-created");
        try (KafkaConsumer<byte[], byte[]> c = s.consumer(RU, "group.id", s.name("invalid-topic-G"))) {
            obs.put("partitions_for_invalid", Support.failureOf(() -> c.partitionsFor(invalid)));
            c.subscribe(List.of(invalid));
            obs.put("poll_invalid", Support.failureOf(() -> {
                long deadline = System.currentTimeMillis() + 20_000;
                while (System.currentTimeMillis() < deadline) c.poll(Duration.ofMillis(200));
            }));
            obs.put("unsubscribe", Support.failureOf(c::unsubscribe));
            c.partitionsFor(auto);
            obs.put("auto_created", Support.await(() -> !c.partitionsFor(auto).isEmpty(), 20_000));
        }
        try (KafkaProducer<byte[], byte[]> p = s.producer("max.block.ms", "5000")) {
            obs.put("send_invalid", Support.failureOf(() -> p.send(new ProducerRecord<>(invalid, Support.b("x"))).get(20, TimeUnit.SECONDS)));
        }
    }

    // ------------------------------------------------------------------ group.max.size

    /**
     * ConsumerBounceTest.testConsumerReceivesFatalExceptionWhenGroupPassesMaxSize, against a broker
     * started with group.max.size=2: two members share a two-partition topic, a third one's poll
     * fails with GroupMaxSizeReachedException, and the two go on consuming.
     */
    static void groupMaxSize(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("max-size");
        String group = s.name("max-size-G");
        s.createTopic(topic, 2);
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicIntegerArray received = new java.util.concurrent.atomic.AtomicIntegerArray(2);
        java.util.concurrent.atomic.AtomicIntegerArray assigned = new java.util.concurrent.atomic.AtomicIntegerArray(2);
        List<Thread> threads = new ArrayList<>();
        Map<String, Object> pollerErrors = java.util.Collections.synchronizedMap(new java.util.LinkedHashMap<>());
        try {
            for (int i = 0; i < 2; i++) {
                int index = i;
                Thread th = new Thread(() -> {
                    try (KafkaConsumer<byte[], byte[]> c = s.consumer(RU, "group.id", group, "heartbeat.interval.ms", "1000",
                            "max.poll.interval.ms", "60000")) {
                        c.subscribe(List.of(topic));
                        while (!stop.get()) {
                            received.addAndGet(index, c.poll(Duration.ofMillis(100)).count());
                            assigned.set(index, c.assignment().size());
                        }
                    } catch (Exception e) {
                        pollerErrors.put(String.valueOf(index), Support.failure(e));
                    }
                });
                th.setDaemon(true);
                th.start();
                threads.add(th);
            }
            obs.put("two_assigned", Support.await(() -> assigned.get(0) == 1 && assigned.get(1) == 1, 60_000));
            try (KafkaConsumer<byte[], byte[]> third = s.consumer(RU, "group.id", group)) {
                third.subscribe(List.of(topic));
                obs.put("third_error", Support.failureOf(() -> {
                    long deadline = System.currentTimeMillis() + 30_000;
                    while (System.currentTimeMillis() < deadline) third.poll(Duration.ofMillis(200));
                }));
            }
            try (KafkaProducer<byte[], byte[]> p = s.producer()) {
                for (int partition = 0; partition < 2; partition++) send(p, topic, partition, 0, 100);
            }
            obs.put("both_consumed", Support.await(() -> received.get(0) >= 100 && received.get(1) >= 100, 30_000));
            obs.put("received", List.of(received.get(0), received.get(1)));
        } finally {
            stop.set(true);
            for (Thread th : threads) th.join(15_000);
        }
        obs.put("poller_errors", pollerErrors);
    }

    // ------------------------------------------------------------------ fetch sizes (KIP-74)

    /**
     * testFetchRecordLargerThanFetchMaxBytes / ...MaxPartitionFetchBytes: a record larger than the
     * limit still comes back when it is first; testFetchHonours...IfLargeRecordNotFirst: behind a
     * small record, the first poll returns the small one alone.
     */
    static void largeRecords(Support s, Map<String, Object> obs) throws Exception {
        int limit = 10 * 1024;
        for (String setting : List.of("fetch.max.bytes", "max.partition.fetch.bytes")) {
            String key = setting.replace('.', '_');
            String alone = s.name("large-first-" + key), behind = s.name("large-behind-" + key);
            try (Admin admin = s.admin()) {
                Support.createTopic(admin, alone, 1);
                Support.createTopic(admin, behind, 1);
            }
            try (KafkaProducer<byte[], byte[]> p = s.producer()) {
                p.send(new ProducerRecord<>(alone, 0, Support.b("key"), new byte[limit + 1])).get();
                p.send(new ProducerRecord<>(behind, 0, Support.b("small"), Support.b("value"))).get();
                p.send(new ProducerRecord<>(behind, 0, Support.b("large"), new byte[limit])).get();
            }
            for (String topic : List.of(alone, behind)) {
                try (KafkaConsumer<byte[], byte[]> c = s.consumer(RU, setting, String.valueOf(limit))) {
                    TopicPartition tp = new TopicPartition(topic, 0);
                    c.assign(List.of(tp));
                    List<Object> first = new ArrayList<>();
                    for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofSeconds(20))) {
                        first.add(List.of(r.offset(), new String(r.key()), r.value().length));
                    }
                    obs.put(key + (topic.equals(alone) ? "_alone" : "_behind"), first);
                }
            }
        }
    }

    // ------------------------------------------------------------------ commits

    /**
     * testCommitMetadata, plus what it implies: metadata over offset.metadata.max.bytes (4096) is
     * refused (OffsetMetadataTooLargeException), and committed() of a 30-partition topic answers
     * every partition, null for the one never committed.
     */
    static void commitMetadata(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("commit-meta");
        String many = s.name("commit-many");
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, topic, 1);
            Support.createTopic(admin, many, 30);
        }
        try (KafkaConsumer<byte[], byte[]> c = s.consumer(RU, "group.id", s.name("commit-meta-G"))) {
            c.assign(List.of(tp));
            c.commitSync(Map.of(tp, new OffsetAndMetadata(5, Optional.of(15), "foo")));
            obs.put("sync", committed(c, tp));
            CompletableFuture<Exception> done = new CompletableFuture<>();
            c.commitAsync(Map.of(tp, new OffsetAndMetadata(10, "bar")), (offsets, e) -> done.complete(e));
            Support.await(() -> {
                c.poll(Duration.ofMillis(50));
                return done.isDone();
            }, 20_000);
            obs.put("async_error", done.isDone() ? Support.failure(done.getNow(null)) : "no callback");
            obs.put("async", committed(c, tp));
            c.commitSync(Map.of(tp, new OffsetAndMetadata(5, null)));
            obs.put("null_metadata", committed(c, tp));
            obs.put("too_large", Support.failureOf(() -> c.commitSync(Map.of(tp, new OffsetAndMetadata(7, "m".repeat(4097))))));
            obs.put("after_too_large", committed(c, tp));
            obs.put("at_limit", Support.failureOf(() -> c.commitSync(Map.of(tp, new OffsetAndMetadata(8, "m".repeat(4096))))));
            List<TopicPartition> tps = TxnReference.partitions(many, 30);
            Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
            for (TopicPartition t : tps.subList(1, 30)) offsets.put(t, new OffsetAndMetadata(t.partition() * 10L, "p" + t.partition()));
            c.commitSync(offsets);
            Map<TopicPartition, OffsetAndMetadata> got = c.committed(Set.copyOf(tps));
            List<Object> listed = new ArrayList<>();
            for (TopicPartition t : tps) {
                OffsetAndMetadata m = got.get(t);
                listed.add(m == null ? null : m.offset() + ":" + m.metadata());
            }
            obs.put("many_keys", got.size());
            obs.put("many", listed);
        }
    }

    private static Object committed(KafkaConsumer<byte[], byte[]> c, TopicPartition tp) {
        OffsetAndMetadata m = c.committed(Set.of(tp)).get(tp);
        return m == null ? null : Support.map("offset", m.offset(), "leader_epoch", m.leaderEpoch().orElse(-1),
                "metadata", m.metadata());
    }

    // ------------------------------------------------------------------ DeleteRecords and the consumer

    /**
     * testSeekAfterDeleteRecords, testOffsetsForTimesAfterDeleteRecords, testConsumeAfterDeleteRecords
     * and testDeleteRecordsWithException, on one partition of ten records (timestamps 0..9).
     */
    static void deleteRecords(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("delete-seek");
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Admin admin = s.admin();
             KafkaProducer<byte[], byte[]> p = s.producer();
             KafkaConsumer<byte[], byte[]> c = s.consumer(RU);
             KafkaConsumer<byte[], byte[]> none = s.consumer(RU, "auto.offset.reset", "none")) {
            Support.createTopic(admin, topic, 2);
            send(p, topic, 0, 0, 10);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            obs.put("position_start", c.position(tp));
            obs.put("ts0_before", offsetForTime(c, tp, 0));
            obs.put("low_watermark_5", lowWatermark(admin, tp, 5));
            c.seekToBeginning(List.of(tp));
            obs.put("position_after_5", c.position(tp));
            obs.put("ts0_after_5", offsetForTime(c, tp, 0));
            c.seek(tp, 1);
            obs.put("read_from_1", Support.readOn(c, tp, 10, 20_000).stream().map(r -> r.get("o")).toList());
            none.assign(List.of(tp));
            none.seek(tp, 1);
            obs.put("none_from_1", Support.failureOf(() -> {
                long deadline = System.currentTimeMillis() + 20_000;
                while (System.currentTimeMillis() < deadline) none.poll(Duration.ofMillis(200));
            }));
            c.seek(tp, 7);
            obs.put("position_7", c.position(tp));
            obs.put("beyond_hw", Support.failureOf(() -> lowWatermark(admin, tp, 20)));
            obs.put("low_watermark_hw", lowWatermark(admin, tp, -1));
            c.seekToBeginning(List.of(tp));
            obs.put("position_after_hw", c.position(tp));
            obs.put("ts0_after_hw", offsetForTime(c, tp, 0));
            obs.put("beginning_end", List.of(c.beginningOffsets(List.of(tp)).get(tp), c.endOffsets(List.of(tp)).get(tp)));
        }
    }

    private static Long offsetForTime(KafkaConsumer<byte[], byte[]> c, TopicPartition tp, long ts) {
        OffsetAndTimestamp o = c.offsetsForTimes(Map.of(tp, ts)).get(tp);
        return o == null ? null : o.offset();
    }

    private static long lowWatermark(Admin admin, TopicPartition tp, long before) throws Exception {
        try {
            return admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(before))).lowWatermarks().get(tp)
                    .get(20, TimeUnit.SECONDS).lowWatermark();
        } catch (ExecutionException e) {
            throw (Exception) e.getCause();
        }
    }

    // ------------------------------------------------------------------ producer limits

    /**
     * testSendRecordBatchWithMaxRequestSizeAndHigher: a record filling the default message.max.bytes
     * (1048588) exactly is accepted, one byte more is RecordTooLargeException; a topic's
     * max.message.bytes is the broker's to enforce (MESSAGE_TOO_LARGE) and writes nothing.
     */
    static void recordTooLarge(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("too-large");
        String small = s.name("too-large-topic");
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, topic, 1);
            admin.createTopics(List.of(new NewTopic(small, 1, (short) 1).configs(Map.of("max.message.bytes", "2048"))))
                    .all().get(20, TimeUnit.SECONDS);
            Support.awaitTopic(admin, small, 1);
        }
        // Kafka's arithmetic: log overhead 12, batch header 61, the most a record's framing takes 21,
        // and the varints of a 0-byte key (1), 0 headers (1) and this value's length (3).
        int valueSize = 1048588 - (12 + 61 + 21 + 1 + 1 + 3);
        try (KafkaProducer<byte[], byte[]> p = s.producer("linger.ms", "0")) {
            RecordMetadata m = p.send(new ProducerRecord<>(topic, 0, new byte[0], new byte[valueSize])).get(30, TimeUnit.SECONDS);
            obs.put("fits", List.of(m.offset(), m.serializedValueSize()));
            obs.put("one_more", Support.failureOf(() -> p.send(new ProducerRecord<>(topic, 0, new byte[0], new byte[valueSize + 1]))
                    .get(30, TimeUnit.SECONDS)));
            obs.put("topic_limit", Support.failureOf(() -> p.send(new ProducerRecord<>(small, 0, null, new byte[4000]))
                    .get(30, TimeUnit.SECONDS)));
            obs.put("topic_small_offset", p.send(new ProducerRecord<>(small, 0, null, new byte[100])).get(30, TimeUnit.SECONDS).offset());
        }
    }

    /**
     * ProducerFailureHandlingTest.testTooLargeRecordWithAckZero: with acks=0 a record the broker
     * refuses is acknowledged with offset -1, and the broker closes the connection (Kafka's only
     * way to tell such a producer); the producer reconnects and its next records arrive.
     */
    static void acksZeroErrors(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("acks0");
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Admin admin = s.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1).configs(Map.of("max.message.bytes", "2048"))))
                    .all().get(20, TimeUnit.SECONDS);
            Support.awaitTopic(admin, topic, 1);
        }
        try (KafkaProducer<byte[], byte[]> p = s.producer("acks", "0", "enable.idempotence", "false", "linger.ms", "0",
                "retries", "0")) {
            RecordMetadata m = p.send(new ProducerRecord<>(topic, 0, Support.b("key"), new byte[4000])).get(20, TimeUnit.SECONDS);
            obs.put("too_large", List.of(m.hasOffset(), m.offset()));
            obs.put("connection_closed", Support.await(() -> metric(p, "connection-close-total") >= 1, 15_000));
            for (int i = 0; i < 3; i++) p.send(new ProducerRecord<>(topic, 0, null, Support.b("small-" + i))).get(20, TimeUnit.SECONDS);
        }
        try (KafkaConsumer<byte[], byte[]> c = s.consumer(RU)) {
            obs.put("read", Support.readFromStart(c, tp, 3, 20_000).stream().map(r -> new String((byte[]) r.get("v"))).toList());
        }
    }

    private static double metric(KafkaProducer<byte[], byte[]> p, String name) {
        for (var e : p.metrics().entrySet()) {
            if (e.getKey().name().equals(name) && e.getKey().group().equals("producer-metrics")) {
                return ((Number) e.getValue().metricValue()).doubleValue();
            }
        }
        return Double.NaN;
    }

    /**
     * testSendCompressedMessageWithLogAppendTime / ...NonCompressed...: on a LogAppendTime topic the
     * broker stamps each batch; the producer's RecordMetadata and the consumer see that time.
     */
    static void logAppendTime(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("append-time");
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Admin admin = s.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1).configs(Map.of("message.timestamp.type", "LogAppendTime"))))
                    .all().get(20, TimeUnit.SECONDS);
            Support.awaitTopic(admin, topic, 1);
        }
        long before = System.currentTimeMillis();
        List<Long> acked = new ArrayList<>();
        for (String codec : List.of("none", "gzip")) {
            try (KafkaProducer<byte[], byte[]> p = s.producer("compression.type", codec, "linger.ms", "50")) {
                List<java.util.concurrent.Future<RecordMetadata>> fs = new ArrayList<>();
                for (int i = 0; i < 3; i++) fs.add(p.send(new ProducerRecord<>(topic, 0, 1000L + i, null, Support.b(codec + i))));
                for (java.util.concurrent.Future<RecordMetadata> f : fs) acked.add(f.get(20, TimeUnit.SECONDS).timestamp());
            }
        }
        long after = System.currentTimeMillis();
        List<Object> read = new ArrayList<>();
        boolean within = true;
        try (KafkaConsumer<byte[], byte[]> c = s.consumer(RU)) {
            List<Map<String, Object>> records = Support.readFromStart(c, tp, 6, 20_000);
            for (int i = 0; i < records.size(); i++) {
                Map<String, Object> r = records.get(i);
                long ts = (Long) r.get("ts");
                within &= ts >= before && ts <= after;
                read.add(List.of(r.get("tt"), i < acked.size() && acked.get(i) == ts));
            }
        }
        obs.put("read", read);
        obs.put("within_send_window", within);
    }

    /**
     * testSendBeforeAndAfterPartitionExpansion: a send to a partition the topic does not have yet
     * times out after max.block.ms; once CreatePartitions adds it, sends to it and to the old one go on.
     */
    static void partitionExpansion(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("expand");
        try (Admin admin = s.admin();
             KafkaProducer<byte[], byte[]> p = s.producer("max.block.ms", "3000", "linger.ms", "0")) {
            Support.createTopic(admin, topic, 1);
            obs.put("p0_first", offsets(p, topic, 0, 5));
            obs.put("p1_missing", Support.failureOf(() -> p.send(new ProducerRecord<>(topic, 1, null, Support.b("x")))
                    .get(20, TimeUnit.SECONDS)));
            admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(2))).all().get(20, TimeUnit.SECONDS);
            Support.awaitTopic(admin, topic, 2);
            obs.put("p1_after", offsets(p, topic, 1, 5));
            obs.put("p0_after", offsets(p, topic, 0, 5));
        }
    }

    private static List<Long> offsets(KafkaProducer<byte[], byte[]> p, String topic, int partition, int n) throws Exception {
        List<java.util.concurrent.Future<RecordMetadata>> fs = new ArrayList<>();
        for (int i = 0; i < n; i++) fs.add(p.send(new ProducerRecord<>(topic, partition, null, Support.b("value" + i))));
        List<Long> out = new ArrayList<>();
        for (java.util.concurrent.Future<RecordMetadata> f : fs) out.add(f.get(30, TimeUnit.SECONDS).offset());
        return out;
    }
}
