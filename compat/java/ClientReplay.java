import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.NoOffsetForPartitionException;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * Consumer and producer scenarios after Apache Kafka 3.9's PlaintextConsumerTest (testSeek,
 * testHeaders, testConsumeMessagesWithCreateTime, testFetchOffsetsForTime, testEndOffsets,
 * testPartitionPauseAndResume, testListTopics, testConsumingWithNullGroupId,
 * testConsumingWithEmptyGroupId, testStaticConsumerDetectsNewPartitionCreatedAfterRestart),
 * PlaintextConsumerPollTest, PlaintextConsumerCommitTest, PlaintextConsumerSubscriptionTest,
 * BaseProducerSendTest and PlaintextProducerSendTest, with the classic group protocol on one broker.
 * Each scenario only observes; compat/test_java_reference_replay.py holds the expectations.
 */
final class ClientReplay {
    static final String RU = "read_uncommitted";

    private ClientReplay() {
    }

    /** sendRecords of the Kafka tests: key "key i", value "value i", timestamp start + i. */
    static void sendRecords(KafkaProducer<byte[], byte[]> p, TopicPartition tp, int n, long start) throws Exception {
        List<Future<RecordMetadata>> fs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            fs.add(p.send(new ProducerRecord<>(tp.topic(), tp.partition(), start + i, Support.b("key " + i), Support.b("value " + i))));
        }
        for (Future<RecordMetadata> f : fs) f.get(30, TimeUnit.SECONDS);
    }

    static void sendCompressed(Support s, TopicPartition tp, int n) throws Exception {
        try (KafkaProducer<byte[], byte[]> p = s.producer("compression.type", "gzip", "linger.ms", String.valueOf(Integer.MAX_VALUE),
                "delivery.timeout.ms", String.valueOf(Integer.MAX_VALUE))) {
            for (int i = 0; i < n; i++) {
                p.send(new ProducerRecord<>(tp.topic(), tp.partition(), (long) i, Support.b("key " + i), Support.b("value " + i)));
            }
        }
    }

    /** The first record polled: [offset, key, value, timestamp, timestamp type]. */
    static List<Object> next(KafkaConsumer<byte[], byte[]> c) {
        long deadline = System.currentTimeMillis() + 20_000;
        while (System.currentTimeMillis() < deadline) {
            ConsumerRecords<byte[], byte[]> rs = c.poll(Duration.ofMillis(200));
            if (!rs.isEmpty()) return brief(rs.iterator().next());
        }
        return null;
    }

    static List<Object> brief(ConsumerRecord<byte[], byte[]> r) {
        return Arrays.asList(r.offset(), r.key() == null ? null : new String(r.key()),
                r.value() == null ? null : new String(r.value()), r.timestamp(), r.timestampType().name);
    }

    /** Polls until n records came; returns how many records each poll answered at most and the records' check. */
    static List<ConsumerRecord<byte[], byte[]>> consume(KafkaConsumer<byte[], byte[]> c, int n, int[] maxPerPoll) {
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        long deadline = System.currentTimeMillis() + 30_000;
        while (out.size() < n && System.currentTimeMillis() < deadline) {
            ConsumerRecords<byte[], byte[]> rs = c.poll(Duration.ofMillis(200));
            if (maxPerPoll != null) maxPerPoll[0] = Math.max(maxPerPoll[0], rs.count());
            rs.forEach(out::add);
        }
        return out;
    }

    /** consumeAndVerifyRecords: offsets from..from+n-1, keys and values by index, CreateTime start + index. */
    static boolean verify(List<ConsumerRecord<byte[], byte[]>> rs, int n, long from, long start, int index) {
        if (rs.size() != n) return false;
        for (int i = 0; i < n; i++) {
            ConsumerRecord<byte[], byte[]> r = rs.get(i);
            int k = index + i;
            if (r.offset() != from + i || !new String(r.key()).equals("key " + k) || !new String(r.value()).equals("value " + k)
                    || r.timestamp() != start + k || !r.timestampType().name.equals("CreateTime")) {
                return false;
            }
        }
        return true;
    }

    // ------------------------------------------------------------------ PlaintextConsumerTest

    /** testSeek: seekToEnd, seekToBeginning and seek on uncompressed and gzip batches. */
    static void seek(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("seek");
        s.createTopic(topic, 2);
        TopicPartition tp = new TopicPartition(topic, 0), tp2 = new TopicPartition(topic, 1);
        try (KafkaProducer<byte[], byte[]> p = s.producer()) {
            sendRecords(p, tp, 50, 0);
        }
        sendCompressed(s, tp2, 50);
        try (KafkaConsumer<byte[], byte[]> c = s.consumer(RU)) {
            for (TopicPartition t : List.of(tp, tp2)) {
                List<Object> seen = new ArrayList<>();
                c.assign(List.of(t));
                c.seekToEnd(List.of(t));
                seen.add(c.position(t));
                seen.add(c.poll(Duration.ofMillis(50)).count());
                c.seekToBeginning(List.of(t));
                seen.add(c.position(t));
                seen.add(next(c));
                c.seek(t, 25);
                seen.add(c.position(t));
                seen.add(next(c));
                obs.put(t.partition() == 0 ? "plain" : "gzip", seen);
            }
        }
    }

    /** testHeaders, testConsumeMessagesWithCreateTime, testFetchOffsetsForTime and testEndOffsets. */
    static void recordsAndTimes(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("times"), headers = s.name("headers"), end = s.name("end-offsets");
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, topic, 2);
            Support.createTopic(admin, headers, 1);
            Support.createTopic(admin, end, 1);
        }
        TopicPartition tp = new TopicPartition(topic, 0), tp2 = new TopicPartition(topic, 1);
        TopicPartition h = new TopicPartition(headers, 0), e = new TopicPartition(end, 0);
        long start = System.currentTimeMillis();
        try (KafkaProducer<byte[], byte[]> p = s.producer()) {
            ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(headers, 0, null, Support.b("key"), Support.b("value"));
            r.headers().add("headerKey", Support.b("headerValue"));
            p.send(r).get(20, TimeUnit.SECONDS);
            sendRecords(p, tp, 50, start);
            sendRecords(p, e, 10000, start);
        }
        sendCompressed(s, tp2, 50);
        try (KafkaConsumer<byte[], byte[]> c = s.consumer(RU)) {
            c.assign(List.of(h));
            c.seek(h, 0);
            ConsumerRecord<byte[], byte[]> got = consume(c, 1, null).get(0);
            var header = got.headers().lastHeader("headerKey");
            obs.put("header", header == null ? null : new String(header.value()));
            c.assign(List.of(tp));
            obs.put("create_time_plain", verify(consume(c, 50, null), 50, 0, start, 0));
            c.assign(List.of(tp2));
            obs.put("create_time_gzip", verify(consume(c, 50, null), 50, 0, 0, 0));
            obs.put("negative_time", Support.failureOf(() -> c.offsetsForTimes(Map.of(tp, -1L))));
            Map<TopicPartition, Long> search = new HashMap<>();
            search.put(tp, start);
            search.put(tp2, 20L);
            Map<TopicPartition, OffsetAndTimestamp> found = c.offsetsForTimes(search);
            List<Object> listed = new ArrayList<>();
            for (TopicPartition t : List.of(tp, tp2)) {
                OffsetAndTimestamp o = found.get(t);
                listed.add(o == null ? null : Arrays.asList(o.offset(), o.timestamp() - (t == tp ? start : 0), o.leaderEpoch().orElse(-1)));
            }
            obs.put("offsets_for_times", listed);
            obs.put("end_offsets", c.endOffsets(Set.of(e)).get(e));
        }
    }

    /** testPartitionPauseAndResume, PlaintextConsumerPollTest's testMaxPollRecords and poll(0) tests. */
    static void pauseAndPoll(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("pause");
        s.createTopic(topic, 2);
        TopicPartition tp = new TopicPartition(topic, 0), tp2 = new TopicPartition(topic, 1);
        try (KafkaProducer<byte[], byte[]> p = s.producer()) {
            sendRecords(p, tp, 5, 0);
            try (KafkaConsumer<byte[], byte[]> c = s.consumer(RU)) {
                c.assign(List.of(tp));
                obs.put("before_pause", verify(consume(c, 5, null), 5, 0, 0, 0));
                c.pause(List.of(tp));
                sendRecords(p, tp, 5, 5);
                obs.put("paused_poll", c.poll(Duration.ofMillis(100)).count());
                c.resume(List.of(tp));
                obs.put("after_resume", verify(consume(c, 5, null), 5, 5, 5, 0));
            }
            sendRecords(p, tp2, 10000, 0);
        }
        try (KafkaConsumer<byte[], byte[]> c = s.consumer(RU, "max.poll.records", "2")) {
            c.assign(List.of(tp2));
            int[] most = {0};
            obs.put("max_poll_records", Arrays.asList(verify(consume(c, 10000, most), 10000, 0, 0, 0), most[0]));
        }
        try (KafkaConsumer<byte[], byte[]> c = s.consumer(RU, "group.id", s.name("pause-zero-G"))) {
            c.subscribe(List.of(topic));
            int first = 0;
            long deadline = System.currentTimeMillis() + 30_000;
            while (first == 0 && System.currentTimeMillis() < deadline) first = c.poll(Duration.ZERO).records(tp).size();
            obs.put("poll_zero_first", first);
        }
        try (KafkaConsumer<byte[], byte[]> c = s.consumer(RU, "group.id", s.name("pause-none-G"), "auto.offset.reset", "none")) {
            c.assign(List.of(tp));
            Object failure = null;
            long deadline = System.currentTimeMillis() + 20_000;
            while (failure == null && System.currentTimeMillis() < deadline) {
                try {
                    c.poll(Duration.ZERO);
                    Thread.sleep(20);
                } catch (NoOffsetForPartitionException ex) {
                    failure = ex.getClass().getSimpleName();
                }
            }
            obs.put("poll_zero_no_offset", failure);
        }
    }

    /** testPositionAndCommit, testCommitSpecifiedOffsets and testAutoCommitOnClose (PlaintextConsumerCommitTest). */
    static void commits(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("commits");
        s.createTopic(topic, 2);
        TopicPartition tp = new TopicPartition(topic, 0), tp2 = new TopicPartition(topic, 1), tp15 = new TopicPartition(topic, 15);
        String group = s.name("commits-G"), specified = s.name("commits-specified-G"), auto = s.name("commits-auto-G");
        try (KafkaProducer<byte[], byte[]> p = s.producer()) {
            sendRecords(p, tp, 5, 0);
            try (KafkaConsumer<byte[], byte[]> c = s.consumer(RU, "group.id", group)) {
                obs.put("unassigned_committed", c.committed(Set.of(tp15)).get(tp15));
                obs.put("unassigned_position", Support.failureOf(() -> c.position(tp15)));
                c.assign(List.of(tp));
                List<Object> steps = new ArrayList<>();
                steps.add(c.position(tp));
                c.commitSync();
                steps.add(c.committed(Set.of(tp)).get(tp).offset());
                steps.add(verify(consume(c, 5, null), 5, 0, 0, 0));
                steps.add(c.position(tp));
                c.commitSync();
                steps.add(c.committed(Set.of(tp)).get(tp).offset());
                obs.put("position_and_commit", steps);
            }
            sendRecords(p, tp, 1, 5);
            try (KafkaConsumer<byte[], byte[]> other = s.consumer(RU, "group.id", group)) {
                other.assign(List.of(tp));
                obs.put("other_member_next", next(other));
            }
            sendRecords(p, tp2, 7, 0);
        }
        try (KafkaConsumer<byte[], byte[]> c = s.consumer(RU, "group.id", specified)) {
            c.assign(List.of(tp, tp2));
            long pos1 = c.position(tp), pos2 = c.position(tp2);
            List<Object> steps = new ArrayList<>();
            c.commitSync(Map.of(tp, new OffsetAndMetadata(3L)));
            steps.add(offsets(c, tp, tp2));
            steps.add(c.position(tp) == pos1 && c.position(tp2) == pos2);
            c.commitSync(Map.of(tp2, new OffsetAndMetadata(5L)));
            steps.add(offsets(c, tp, tp2));
            java.util.concurrent.CompletableFuture<Exception> done = new java.util.concurrent.CompletableFuture<>();
            c.commitAsync(Map.of(tp2, new OffsetAndMetadata(7L)), (o, ex) -> done.complete(ex));
            Support.await(() -> {
                c.poll(Duration.ofMillis(50));
                return done.isDone();
            }, 20_000);
            steps.add(done.isDone() ? String.valueOf(done.getNow(null)) : "no callback");
            steps.add(offsets(c, tp, tp2));
            obs.put("specified", steps);
        }
        try (KafkaConsumer<byte[], byte[]> c = s.consumer(RU, "group.id", auto, "enable.auto.commit", "true")) {
            c.subscribe(List.of(topic));
            Support.await(() -> {
                c.poll(Duration.ofMillis(100));
                return c.assignment().size() == 2;
            }, 30_000);
            c.seek(tp, 300);
            c.seek(tp2, 500);
        }
        try (KafkaConsumer<byte[], byte[]> c = s.consumer(RU, "group.id", auto)) {
            obs.put("auto_commit_on_close", offsets(c, tp, tp2));
        }
    }

    static List<Object> offsets(KafkaConsumer<byte[], byte[]> c, TopicPartition... tps) {
        Map<TopicPartition, OffsetAndMetadata> m = c.committed(Set.of(tps));
        List<Object> out = new ArrayList<>();
        for (TopicPartition t : tps) out.add(m.get(t) == null ? null : m.get(t).offset());
        return out;
    }

    /** testConsumingWithNullGroupId and testConsumingWithEmptyGroupId (classic protocol). */
    static void groupIds(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("group-ids"), empty = s.name("empty-group-id");
        TopicPartition tp = new TopicPartition(topic, 0), te = new TopicPartition(empty, 0);
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, topic, 1);
            Support.createTopic(admin, empty, 1);
        }
        try (KafkaProducer<byte[], byte[]> p = s.producer()) {
            for (int i = 1; i <= 3; i++) p.send(new ProducerRecord<>(topic, 0, Support.b("k" + i), Support.b("v" + i))).get();
            for (int i = 1; i <= 2; i++) p.send(new ProducerRecord<>(empty, 0, Support.b("k" + i), Support.b("v" + i))).get();
        }
        try (KafkaConsumer<byte[], byte[]> c1 = s.consumer(RU, "client.id", "consumer1");
             KafkaConsumer<byte[], byte[]> c2 = s.consumer(RU, "client.id", "consumer2", "auto.offset.reset", "latest");
             KafkaConsumer<byte[], byte[]> c3 = s.consumer(RU, "client.id", "consumer3")) {
            c1.assign(List.of(tp));
            c2.assign(List.of(tp));
            c3.assign(List.of(tp));
            c3.seek(tp, 1);
            int n1 = c1.poll(Duration.ofMillis(5000)).count();
            obs.put("null_commit", Support.failureOf(c1::commitSync));
            obs.put("null_committed", Support.failureOf(() -> c2.committed(Set.of(tp))));
            int n2 = c2.poll(Duration.ofMillis(5000)).count();
            int n3 = c3.poll(Duration.ofMillis(5000)).count();
            obs.put("null_counts", List.of(n1, n2, n3));
        }
        List<Object> seen = new ArrayList<>();
        for (String reset : List.of("earliest", "latest")) {
            KafkaConsumer<byte[], byte[]> made;
            try {
                made = s.consumer(RU, "group.id", "", "max.poll.records", "1", "auto.offset.reset", reset);
            } catch (org.apache.kafka.common.KafkaException e) {
                // testEmptyGroupIdNotSupported: the consumer protocol refuses group.id "" at construction
                obs.put("empty_group_refused", Support.failure(e));
                return;
            }
            try (KafkaConsumer<byte[], byte[]> c = made) {
                c.assign(List.of(te));
                ConsumerRecords<byte[], byte[]> rs = c.poll(Duration.ofMillis(5000));
                seen.add(Arrays.asList(rs.count(), rs.isEmpty() ? null : rs.iterator().next().offset()));
                seen.add(Support.failureOf(c::commitSync));
            }
        }
        obs.put("empty_group", seen);
    }

    /** The assignment's partitions as name-partition, without {@code base}. */
    static Set<String> names(Set<TopicPartition> tps, String base) {
        Set<String> out = new TreeSet<>();
        for (TopicPartition t : tps) out.add(t.topic().substring(base.length()) + "-" + t.partition());
        return out;
    }

    static Set<String> awaitAssignment(KafkaConsumer<byte[], byte[]> c, String base, Set<String> want) throws Exception {
        Support.await(() -> {
            c.poll(Duration.ofMillis(100));
            return names(c.assignment(), base).equals(want);
        }, 30_000);
        return names(c.assignment(), base);
    }

    static Set<String> parts(String... topics) {
        Set<String> out = new TreeSet<>();
        for (String t : topics) {
            out.add(t + "-0");
            out.add(t + "-1");
        }
        return out;
    }

    /**
     * PlaintextConsumerSubscriptionTest's testPatternSubscription, testSubsequentPatternSubscription,
     * testExpandingTopicSubscriptions and testShrinkingTopicSubscriptions; PlaintextConsumerTest's
     * testListTopics. Topic names carry the scenario's prefix, which the patterns quote.
     */
    static void subscriptions(Support s, Map<String, Object> obs) throws Exception {
        String base = s.name("subs-");
        String q = Pattern.quote(base);
        try (Admin admin = s.admin()) {
            for (String t : List.of("topic", "tblablac", "tblablak", "tblab1", "foo")) Support.createTopic(admin, base + t, 2);
            try (KafkaConsumer<byte[], byte[]> c = s.consumer(RU, "group.id", s.name("pattern-G"), "metadata.max.age.ms", "500")) {
                c.subscribe(Pattern.compile(q + "t.*c"));
                obs.put("pattern", awaitAssignment(c, base, parts("topic", "tblablac")));
                Support.createTopic(admin, base + "tsomec", 2);
                obs.put("pattern_new_topic", awaitAssignment(c, base, parts("topic", "tblablac", "tsomec")));
                c.unsubscribe();
                obs.put("pattern_unsubscribed", c.assignment().size());
            }
            String next = s.name("subq-");  // a pattern of its own: ".*o.*" would match tsomec
            for (String t : List.of("topic", "foo")) Support.createTopic(admin, next + t, 2);
            try (KafkaConsumer<byte[], byte[]> c = s.consumer(RU, "group.id", s.name("subsequent-G"), "metadata.max.age.ms", "30000")) {
                c.subscribe(Pattern.compile(Pattern.quote(next) + ".*o.*"));
                obs.put("subsequent_first", awaitAssignment(c, next, parts("topic", "foo")));
                Support.createTopic(admin, next + "bar", 2);
                c.subscribe(Pattern.compile(Pattern.quote(next) + "..."));
                obs.put("subsequent_second", awaitAssignment(c, next, parts("foo", "bar")));
            }
            try (KafkaConsumer<byte[], byte[]> c = s.consumer(RU, "group.id", s.name("expanding-G"))) {
                c.subscribe(List.of(base + "topic"));
                obs.put("expanding_first", awaitAssignment(c, base, parts("topic")));
                Support.createTopic(admin, base + "other", 2);
                c.subscribe(List.of(base + "topic", base + "other"));
                obs.put("expanding_second", awaitAssignment(c, base, parts("topic", "other")));
                c.subscribe(List.of(base + "topic"));
                obs.put("shrinking", awaitAssignment(c, base, parts("topic")));
            }
            try (KafkaConsumer<byte[], byte[]> c = s.consumer(RU)) {
                Map<String, Integer> counts = new java.util.TreeMap<>();
                c.listTopics().forEach((t, ps) -> {
                    if (t.startsWith(base + "t")) counts.put(t.substring(base.length()), ps.size());
                });
                obs.put("list_topics", counts);
            }
        }
    }

    /** testStaticConsumerDetectsNewPartitionCreatedAfterRestart. */
    static void staticNewPartition(Support s, Map<String, Object> obs) throws Exception {
        String foo = s.name("static-foo");
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, foo, 1);
            String[] kv = {"group.id", s.name("static-G"), "group.instance.id", "my-instance-id", "metadata.max.age.ms", "500"};
            String base = s.name("");
            Set<String> one = Set.of("static-foo-0");
            try (KafkaConsumer<byte[], byte[]> c1 = s.consumer(RU, kv)) {
                c1.subscribe(List.of(foo));
                obs.put("first", awaitAssignment(c1, base, one));
            }
            try (KafkaConsumer<byte[], byte[]> c2 = s.consumer(RU, kv)) {
                c2.subscribe(List.of(foo));
                obs.put("restarted", awaitAssignment(c2, base, one));
                admin.createPartitions(Map.of(foo, NewPartitions.increaseTo(2))).all().get(20, TimeUnit.SECONDS);
                obs.put("grown", awaitAssignment(c2, base, Set.of("static-foo-0", "static-foo-1")));
            }
        }
    }

    // ------------------------------------------------------------------ producers

    /** PlaintextProducerSendTest: testSendWithInvalidBeforeAndAfterTimestamp and the two valid-timestamp tests. */
    static void timestampBounds(Support s, Map<String, Object> obs) throws Exception {
        long now = System.currentTimeMillis(), fiveHours = 5 * 60 * 60 * 1000L, oneHour = 60 * 60 * 1000L;
        Map<String, Long> cases = new java.util.LinkedHashMap<>();
        cases.put("message.timestamp.difference.max.ms", now - fiveHours);
        cases.put("message.timestamp.before.max.ms", now - fiveHours);
        cases.put("message.timestamp.after.max.ms", now + fiveHours);
        int i = 0;
        try (Admin admin = s.admin()) {
            for (Map.Entry<String, Long> c : cases.entrySet()) {
                Map<String, Object> got = new java.util.LinkedHashMap<>();
                for (Map.Entry<String, Long> bound : Map.of("invalid", oneHour, "at_threshold", c.getValue(),
                        "within", 10 * oneHour).entrySet()) {
                    String topic = s.name("ts-bounds-" + i++);
                    admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1).configs(Map.of(c.getKey(),
                            String.valueOf(bound.getValue()))))).all().get(20, TimeUnit.SECONDS);
                    Support.awaitTopic(admin, topic, 1);
                    List<Object> outcomes = new ArrayList<>();
                    for (String codec : List.of("none", "gzip")) {
                        try (KafkaProducer<byte[], byte[]> p = s.producer("compression.type", codec)) {
                            Map<String, Object> f = Support.failureOf(() -> p.send(new ProducerRecord<>(topic, 0, c.getValue(),
                                    Support.b("key"), Support.b("value"))).get(20, TimeUnit.SECONDS));
                            outcomes.add(f == null ? null : ((List<?>) f.get("chain")).get(1));
                        }
                    }
                    got.put(bound.getKey(), outcomes);
                }
                obs.put(c.getKey(), got);
            }
        }
    }

    /**
     * BaseProducerSendTest: testSendOffset, testSendToPartition, testSendCompressedMessageWithCreateTime,
     * testSendNonCompressedMessageWithCreateTime, testClose, testFlush, testBatchSizeZero and
     * PlaintextProducerSendTest.testAutoCreateTopic.
     */
    static void sends(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("send-offset"), parts = s.name("send-partition");
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, topic, 1);
            Support.createTopic(admin, parts, 2);
        }
        List<Object> sizes = new ArrayList<>();
        long now = System.currentTimeMillis();
        try (KafkaProducer<byte[], byte[]> p = s.producer()) {
            List<ProducerRecord<byte[], byte[]>> rs = List.of(new ProducerRecord<>(topic, 0, Support.b("key"), Support.b("value")),
                    new ProducerRecord<>(topic, 0, Support.b("key"), null), new ProducerRecord<>(topic, 0, null, Support.b("value")),
                    new ProducerRecord<>(topic, null, Support.b("key"), Support.b("value")));
            for (ProducerRecord<byte[], byte[]> r : rs) {
                RecordMetadata m = p.send(r).get(20, TimeUnit.SECONDS);
                sizes.add(Arrays.asList(m.offset(), m.partition(), m.serializedKeySize(), m.serializedValueSize()));
            }
            for (int i = 0; i < 100; i++) p.send(rs.get(0));
            sizes.add(p.send(rs.get(0)).get(20, TimeUnit.SECONDS).offset());
            obs.put("send_offset", sizes);
            List<Future<RecordMetadata>> fs = new ArrayList<>();
            for (int i = 1; i <= 100; i++) fs.add(p.send(new ProducerRecord<>(parts, 1, now, null, Support.b("value" + i))));
            boolean inOrder = true;
            for (int i = 0; i < 100; i++) {
                RecordMetadata m = fs.get(i).get(20, TimeUnit.SECONDS);
                inOrder &= m.offset() == i && m.partition() == 1;
            }
            obs.put("to_partition_acks", inOrder);
        }
        try (KafkaConsumer<byte[], byte[]> c = s.consumer(RU)) {
            TopicPartition tp = new TopicPartition(parts, 1);
            c.assign(List.of(tp));
            boolean ok = true;
            List<ConsumerRecord<byte[], byte[]>> rs = consume(c, 100, null);
            for (int i = 0; i < rs.size(); i++) {
                ConsumerRecord<byte[], byte[]> r = rs.get(i);
                ok &= r.partition() == 1 && r.offset() == i && r.key() == null && new String(r.value()).equals("value" + (i + 1))
                        && r.timestamp() == now;
            }
            obs.put("to_partition_read", Arrays.asList(rs.size(), ok));
        }
        for (String codec : List.of("none", "gzip")) obs.put("create_time_" + codec, createTime(s, codec));
        obs.put("close", closeAcks(s));
        obs.put("flush", flush(s));
        obs.put("batch_size_zero", batchSizeZero(s));
        try (KafkaProducer<byte[], byte[]> p = s.producer()) {
            obs.put("auto_create", p.send(new ProducerRecord<>(s.name("auto-create-send"), null, Support.b("key"), Support.b("value")))
                    .get(30, TimeUnit.SECONDS).offset());
        }
    }

    /** sendAndVerifyTimestamp with CREATE_TIME: RecordMetadata carries each record's own timestamp. */
    static List<Object> createTime(Support s, String codec) throws Exception {
        String topic = s.name("create-time-" + codec);
        try (Admin admin = s.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1).configs(Map.of("message.timestamp.type", "CreateTime"))))
                    .all().get(20, TimeUnit.SECONDS);
            Support.awaitTopic(admin, topic, 1);
        }
        KafkaProducer<byte[], byte[]> p = s.producer("compression.type", codec, "linger.ms", String.valueOf(Integer.MAX_VALUE),
                "delivery.timeout.ms", String.valueOf(Integer.MAX_VALUE), "request.timeout.ms", "15000");
        List<Future<RecordMetadata>> fs = new ArrayList<>();
        for (int i = 1; i <= 100; i++) {
            fs.add(p.send(new ProducerRecord<>(topic, 0, 123456L + i, Support.b("key" + i), Support.b("value" + i))));
        }
        p.close(Duration.ofSeconds(20));
        int matching = 0;
        for (int i = 0; i < 100; i++) {
            RecordMetadata m = fs.get(i).get(1, TimeUnit.SECONDS);
            if (m.offset() == i && m.timestamp() == 123456L + i + 1) matching++;
        }
        return List.of(matching);
    }

    static List<Object> closeAcks(Support s) throws Exception {
        String topic = s.name("close");
        s.createTopic(topic, 1);
        KafkaProducer<byte[], byte[]> p = s.producer();
        ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(topic, null, Support.b("key"), Support.b("value"));
        for (int i = 0; i < 100; i++) p.send(r);
        Future<RecordMetadata> last = p.send(r);
        p.close();
        return Arrays.asList(last.isDone(), last.get(1, TimeUnit.SECONDS).offset());
    }

    static List<Object> flush(Support s) throws Exception {
        String topic = s.name("flush");
        s.createTopic(topic, 2);
        boolean noneDoneBefore = true, allDoneAfter = true;
        try (KafkaProducer<byte[], byte[]> p = s.producer("linger.ms", String.valueOf(Integer.MAX_VALUE),
                "delivery.timeout.ms", String.valueOf(Integer.MAX_VALUE))) {
            ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(topic, Support.b("value"));
            for (int round = 0; round < 50; round++) {
                List<Future<RecordMetadata>> fs = new ArrayList<>();
                for (int i = 0; i < 100; i++) fs.add(p.send(r));
                noneDoneBefore &= fs.stream().noneMatch(Future::isDone);
                p.flush();
                allDoneAfter &= fs.stream().allMatch(Future::isDone);
            }
        }
        return Arrays.asList(noneDoneBefore, allDoneAfter);
    }

    static List<Object> batchSizeZero(Support s) throws Exception {
        String topic = s.name("batch-size-zero");
        s.createTopic(topic, 1);
        KafkaProducer<byte[], byte[]> p = s.producer("batch.size", "0", "linger.ms", String.valueOf(Integer.MAX_VALUE),
                "delivery.timeout.ms", String.valueOf(Integer.MAX_VALUE));
        List<Future<RecordMetadata>> fs = new ArrayList<>();
        for (int i = 1; i <= 100; i++) fs.add(p.send(new ProducerRecord<>(topic, 0, Support.b("key" + i), Support.b("value" + i))));
        p.close(Duration.ofSeconds(20));
        int inOrder = 0;
        for (int i = 0; i < 100; i++) if (fs.get(i).get(1, TimeUnit.SECONDS).offset() == i) inOrder++;
        return List.of(inOrder);
    }
}
