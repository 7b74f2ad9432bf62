import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * Producer scenarios after Apache Kafka 3.9's ProducerCompressionTest, ProducerFailureHandlingTest
 * (testTooLargeRecordWithAckOne, testInvalidPartition, testSendAfterClosed,
 * testCannotSendToInternalTopic), ProducerSendWhileDeletionTest and ConsumerTopicCreationTest (the
 * broker's auto.create.topics.enable=true cases), on the shared broker. Each scenario only observes;
 * compat/test_java_reference_replay.py holds the expectations.
 */
final class ProducerReplay {
    private ProducerReplay() {
    }

    /** messageValue of ProducerCompressionTest: {@code length} alphanumeric characters. */
    static String messageValue(Random random, int length) {
        String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        StringBuilder b = new StringBuilder(length);
        for (int i = 0; i < length; i++) b.append(alphabet.charAt(random.nextInt(alphabet.length())));
        return b.toString();
    }

    /**
     * testCompression for one codec: 2000 values of length 0..1999, each sent without key, with a
     * key, and with a key and a header, batch.size 66000, linger 200 ms; every send's offset is its
     * index and the consumer reads each record back as sent. The mismatches found (none expected).
     */
    static List<Object> compression(Support s, String codec) throws Exception {
        int n = 2000;
        TopicPartition tp = new TopicPartition(s.name("compression-" + codec), 0);
        s.createTopic(tp.topic(), 1);
        Random random = new Random(0);
        List<String> values = new ArrayList<>();
        for (int i = 0; i < n; i++) values.add(messageValue(random, i));
        Header header = new RecordHeader("key", Support.b("value"));
        long now = System.currentTimeMillis();
        List<Object> mismatches = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> p = s.producer("compression.type", codec, "batch.size", "66000",
                "linger.ms", "200")) {
            List<Future<RecordMetadata>> fs = new ArrayList<>();
            for (String v : values) {
                byte[] key = Support.b(String.valueOf(v.length()));
                fs.add(p.send(new ProducerRecord<>(tp.topic(), null, now, null, Support.b(v))));
                fs.add(p.send(new ProducerRecord<>(tp.topic(), null, now, key, Support.b(v))));
                fs.add(p.send(new ProducerRecord<>(tp.topic(), null, now, key, Support.b(v), new RecordHeaders(new Header[]{header}))));
            }
            for (int i = 0; i < fs.size(); i++) {
                long offset = fs.get(i).get(30, TimeUnit.SECONDS).offset();
                if (offset != i && mismatches.size() < 5) mismatches.add(List.of("send", i, offset));
            }
        }
        List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = s.consumer("read_uncommitted")) {
            c.assign(List.of(tp));
            c.seek(tp, 0);
            long deadline = System.currentTimeMillis() + 30_000;
            while (records.size() < 3 * n && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) records.add(r);
            }
        }
        if (records.size() != 3 * n) return List.of("count", records.size());
        for (int i = 0; i < 3 * n && mismatches.size() < 5; i++) {
            ConsumerRecord<byte[], byte[]> r = records.get(i);
            String v = values.get(i / 3);
            int kind = i % 3;
            String key = r.key() == null ? null : new String(r.key());
            Header[] hs = r.headers().toArray();
            boolean ok = r.offset() == i && r.timestamp() == now && v.equals(new String(r.value()))
                    && (kind == 0 ? key == null : String.valueOf(v.length()).equals(key))
                    && hs.length == (kind == 2 ? 1 : 0) && (kind != 2 || hs[0].equals(header));
            if (!ok) mismatches.add(List.of(i, r.offset(), String.valueOf(key), hs.length));
        }
        return mismatches;
    }

    static void compressions(Support s, Map<String, Object> obs) throws Exception {
        for (String codec : List.of("none", "gzip", "snappy", "lz4", "zstd")) obs.put(codec, compression(s, codec));
    }

    static String errorOf(Future<?> f) {
        try {
            f.get(30, TimeUnit.SECONDS);
            return null;
        } catch (java.util.concurrent.ExecutionException e) {
            return e.getCause().getClass().getSimpleName();
        } catch (Exception e) {
            return e.getClass().getSimpleName();
        }
    }

    /**
     * ProducerFailureHandlingTest with acks 0, 1 and -1 producers without retries: a record over the
     * topic's max.message.bytes (acks=1: RecordTooLargeException), a partition the topic does not
     * have (TimeoutException once max.block.ms passes), sends after close (IllegalStateException),
     * and sends to the internal topics (InvalidTopicException).
     */
    static void failureHandling(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("failure-handling");
        int maxBytes = 15_000;
        try (Admin admin = s.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1).configs(Map.of("max.message.bytes",
                    String.valueOf(maxBytes))))).all().get(20, TimeUnit.SECONDS);
            Support.awaitTopic(admin, topic, 1);
        }
        List<KafkaProducer<byte[], byte[]>> producers = new ArrayList<>();
        for (String acks : List.of("0", "1", "-1")) {
            producers.add(s.producer("acks", acks, "retries", "0", "enable.idempotence", "false",
                    "max.block.ms", "3000", "request.timeout.ms", "30000", "delivery.timeout.ms", "120000",
                    "buffer.memory", "30000"));
        }
        try {
            KafkaProducer<byte[], byte[]> acks0 = producers.get(0), acks1 = producers.get(1);
            obs.put("too_large_acks1", errorOf(acks1.send(new ProducerRecord<>(topic, null, Support.b("key"),
                    new byte[maxBytes + 1]))));
            obs.put("invalid_partition", errorOf(acks0.send(new ProducerRecord<>(topic, 1, Support.b("key"),
                    Support.b("value")))));
            ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, null, Support.b("key"), Support.b("value"));
            List<Object> sends = new ArrayList<>();
            for (KafkaProducer<byte[], byte[]> p : producers) sends.add(errorOf(p.send(record)));
            obs.put("sends", sends);
            // the group coordinator's topic exists once a coordinator was looked up (createOffsetsTopic)
            try (KafkaConsumer<byte[], byte[]> c = s.consumer("read_uncommitted", "group.id", s.name("failure-handling-G"))) {
                c.committed(java.util.Set.of(new TopicPartition(topic, 0)));
            }
            obs.put("internal_offsets", errorOf(acks1.send(new ProducerRecord<>("__consumer_offsets", Support.b("test"),
                    Support.b("test")))));
            List<Object> closed = new ArrayList<>();
            for (KafkaProducer<byte[], byte[]> p : producers) {
                p.close();
                closed.add(Support.failureOf(() -> p.send(record)));
            }
            obs.put("after_close", closed);
        } finally {
            for (KafkaProducer<byte[], byte[]> p : producers) p.close(Duration.ZERO);
        }
    }

    /**
     * ProducerSendWhileDeletionTest.testSendWithTopicDeletionMidWay on one broker (without its
     * reassignment): ten sends, the topic deleted, and the same producer's next send succeeds on
     * the topic Metadata creates again (with num.partitions, here 1, as the topic had).
     */
    static void sendWhileDeletion(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("send-while-deletion");
        try (Admin admin = s.admin(); KafkaProducer<byte[], byte[]> p = s.producer("max.block.ms", "5000",
                "request.timeout.ms", "10000", "delivery.timeout.ms", "10000", "linger.ms", "0")) {
            // as many partitions as the topic Metadata creates again (Kafka's test: num.partitions=2 and 2), else a
            // record the producer put on a partition the new topic lacks waits for it until delivery.timeout.ms
            Support.createTopic(admin, topic, 1);
            List<Object> before = new ArrayList<>();
            for (int i = 1; i <= 10; i++) before.add(p.send(new ProducerRecord<>(topic, null, Support.b("value" + i))).get().topic());
            obs.put("before", before.stream().allMatch(topic::equals));
            var oldId = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).topicId();
            admin.deleteTopics(List.of(topic)).all().get(20, TimeUnit.SECONDS);
            obs.put("deleted", Support.eventually(() -> !admin.listTopics().names().get().contains(topic), 20_000));
            obs.put("after", Support.failureOf(() -> p.send(new ProducerRecord<>(topic, null, Support.b("value"))).get()));
            var newId = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).topicId();
            obs.put("recreated", !newId.equals(oldId));
        }
    }

    /**
     * ConsumerTopicCreationTest with the broker's auto.create.topics.enable=true: a consumer
     * subscribed to an existing and a missing topic creates the missing one only with
     * allow.auto.create.topics=true; [created with true, created with false].
     */
    static void consumerTopicCreation(Support s, Map<String, Object> obs) throws Exception {
        List<Object> created = new ArrayList<>();
        for (String allow : List.of("true", "false")) {
            String topic1 = s.name("ctc-" + allow + "-1"), topic2 = s.name("ctc-" + allow + "-2");
            try (Admin admin = s.admin(); KafkaProducer<byte[], byte[]> p = s.producer();
                 KafkaConsumer<byte[], byte[]> c = s.consumer("read_uncommitted", "group.id", s.name("ctc-" + allow),
                         "metadata.max.age.ms", "100", "allow.auto.create.topics", allow)) {
                Support.createTopic(admin, topic1, 1);
                p.send(Support.rec(topic1, 0, "key", "value")).get(20, TimeUnit.SECONDS);
                c.subscribe(Arrays.asList(topic1, topic2));
                boolean consumed = Support.await(() -> c.poll(Duration.ofMillis(100)).count() > 0, 30_000);
                created.add(consumed ? admin.listTopics().names().get(20, TimeUnit.SECONDS).contains(topic2) : "not consumed");
            }
        }
        obs.put("created", created);
    }
}
