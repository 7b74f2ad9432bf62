import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;
import java.util.LinkedHashMap;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Share groups (KIP-932) with kafka-clients 4.x's {@code KafkaShareConsumer} in explicit
 * acknowledgement mode ({@code share.acknowledgement.mode=explicit}).
 *
 * <p>{@code share.acks}: records a0..a8 of a one-partition topic: a0, a3, a6 are accepted, a1, a4, a7
 * rejected, a2, a5 released once and accepted when they come back, a8 released every time. When a8
 * has been delivered {@code group.share.delivery.count.limit} (5) times a record "end" is produced and
 * the consumer polls until it arrives. Reported: each value's delivery counts, in order.
 *
 * <p>{@code share.durable}: the consumer accepts every record of {@code records} (60) and commits after
 * each poll, until every one has been acknowledged (commitSync answered no error for it) or 150 s
 * pass. After {@code pause_after} (20) it stops polling (its share session and membership stay)
 * until the topic {@code resume_topic} exists: the test kills the broker then, restarts it and creates
 * that topic. Reported: each delivery (value, delivery
 * count, when received) and each acknowledgement (value, when its commit returned), wall clock ms.
 *
 * <p>{@code share.close_count}: records "released" and "held" of a one-partition topic; an explicit
 * member polls both, acknowledges "released" with RELEASE, commits and closes without a word about
 * "held"; a second member (implicit mode) then polls both. Reported: each value's delivery counts.
 *
 * <p>{@code share.hold}: an explicit member polls until it has records, writes "value:count" lines of
 * them to the file {@code held_file} (complete when it appears) and then neither polls nor closes: the
 * test kills the JVM. {@code share.take}: an implicit member polls until it has seen {@code records}
 * values. Reported: each value's delivery counts.
 *
 * <p>{@code share.idle}: an explicit member polls until it has records, writes them to {@code held_file}
 * as {@code share.hold} does, then neither polls nor closes until the file {@code go_file} exists (the
 * test creates it once longer than {@code group.share.session.timeout.ms} has passed); then it accepts
 * every record it holds and commits. Reported: the delivery counts and each partition's commit result
 * ("none" or the exception's class).
 */
final class ShareAckDriver {
    public static void main(String[] args) {
        Map<String, Support.Scenario> all = new LinkedHashMap<>();
        all.put("share.acks", ShareAckDriver::acks);
        all.put("share.durable", ShareAckDriver::durable);
        all.put("share.close_count", ShareAckDriver::closeCount);
        all.put("share.hold", ShareAckDriver::hold);
        all.put("share.take", ShareAckDriver::take);
        all.put("share.idle", ShareAckDriver::idle);
        Support.main("ShareAckDriver", all, args);
    }

    static KafkaShareConsumer<byte[], byte[]> explicitMember(Support s, String group) {
        Properties p = s.common("group.id", group, "share.acknowledgement.mode", "explicit",
                "max.poll.records", s.option("max_poll_records", "500"));
        return new KafkaShareConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    static String text(ConsumerRecord<byte[], byte[]> r) {
        return new String(r.value(), StandardCharsets.UTF_8);
    }

    static void produce(Support s, String topic, List<String> values) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = s.producer()) {
            for (String v : values) producer.send(new ProducerRecord<>(topic, 0, null, v.getBytes(StandardCharsets.UTF_8))).get();
        }
    }

    static void acks(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.option("topic", "share-acks");
        String group = s.option("group", "share-acks-G");
        try (Admin admin = s.admin()) {
            Support.awaitTopic(admin, topic, 1);
        }
        List<String> values = new ArrayList<>();
        for (int i = 0; i < 9; i++) values.add("a" + i);
        produce(s, topic, values);
        Map<String, List<Integer>> deliveries = new TreeMap<>();
        boolean endProduced = false;
        try (KafkaShareConsumer<byte[], byte[]> c = explicitMember(s, group)) {
            c.subscribe(List.of(topic));
            long deadline = System.currentTimeMillis() + 90_000;
            while (!deliveries.containsKey("end") && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    String v = text(r);
                    List<Integer> counts = deliveries.computeIfAbsent(v, k -> new ArrayList<>());
                    counts.add((int) r.deliveryCount().orElse((short) -1));
                    c.acknowledge(r, decide(v, counts.size()));
                }
                c.commitSync();
                if (!endProduced && deliveries.getOrDefault("a8", List.of()).size() >= 5) {
                    produce(s, topic, List.of("end"));
                    endProduced = true;
                }
            }
        }
        obs.put("deliveries", deliveries);
    }

    /** commitSync of what is pending; acknowledged if the broker answered no error for it. */
    static void commit(KafkaShareConsumer<byte[], byte[]> c, List<String> pending, Map<String, Long> acknowledged) {
        try {
            Map<TopicIdPartition, Optional<KafkaException>> result = c.commitSync(Duration.ofSeconds(10));
            long now = System.currentTimeMillis();
            if (!result.isEmpty() && result.values().stream().allMatch(Optional::isEmpty)) {
                for (String v : pending) acknowledged.putIfAbsent(v, now);
            }
        } finally {
            pending.clear();
        }
    }

    static boolean topicExists(Admin admin, String topic) {
        try {
            return admin.listTopics().names().get(5, java.util.concurrent.TimeUnit.SECONDS).contains(topic);
        } catch (Exception e) {
            return false;  // the broker is down or restarting
        }
    }

    static AcknowledgeType decide(String value, int delivery) {
        int i = value.equals("end") ? 0 : Integer.parseInt(value.substring(1));
        if (i == 8) return AcknowledgeType.RELEASE;
        if (i % 3 == 1) return AcknowledgeType.REJECT;
        if (i % 3 == 2 && delivery == 1) return AcknowledgeType.RELEASE;
        return AcknowledgeType.ACCEPT;
    }

    static void durable(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.option("topic", "share-durable");
        String group = s.option("group", "share-durable-G");
        int records = Integer.parseInt(s.option("records", "60"));
        int pauseAfter = Integer.parseInt(s.option("pause_after", "20"));
        String resume = s.option("resume_topic", "share-durable-go");
        List<List<Object>> delivered = new ArrayList<>();
        Map<String, Long> acknowledged = new TreeMap<>();
        boolean paused = false;
        try (KafkaShareConsumer<byte[], byte[]> c = explicitMember(s, group); Admin admin = s.admin()) {
            c.subscribe(List.of(topic));
            long deadline = System.currentTimeMillis() + 150_000;
            while (acknowledged.size() < records && System.currentTimeMillis() < deadline) {
                List<String> pending = new ArrayList<>();
                try {
                    for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(300))) {
                        delivered.add(List.of(text(r), (int) r.deliveryCount().orElse((short) -1), System.currentTimeMillis()));
                        pending.add(text(r));
                        c.acknowledge(r, AcknowledgeType.ACCEPT);
                        if (pending.size() == 5) {  // commit in fives, within a poll's records too
                            commit(c, pending, acknowledged);
                            if (!paused && acknowledged.size() >= pauseAfter) {
                                // the test kills and restarts the broker now, then creates the resume topic
                                paused = true;
                                obs.put("paused_with", acknowledged.size());
                                while (System.currentTimeMillis() < deadline && !topicExists(admin, resume)) Thread.sleep(100);
                            }
                        }
                    }
                    if (!pending.isEmpty()) commit(c, pending, acknowledged);
                } catch (KafkaException e) {
                    // the broker went away mid-request: those records were not acknowledged
                }
            }
        }
        obs.put("delivered", delivered);
        obs.put("acknowledged", acknowledged);
    }

    static void closeCount(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.option("topic", "share-close-count");
        String group = s.option("group", "share-close-count-G");
        try (Admin admin = s.admin()) {
            Support.awaitTopic(admin, topic, 1);
        }
        produce(s, topic, List.of("released", "held"));
        Map<String, List<Integer>> deliveries = new TreeMap<>();
        try (KafkaShareConsumer<byte[], byte[]> c = explicitMember(s, group)) {
            c.subscribe(List.of(topic));
            pollInto(c, deliveries, 2, r -> {
                if (text(r).equals("released")) c.acknowledge(r, AcknowledgeType.RELEASE);
            });
            c.commitSync();
        }
        Properties p = s.common("group.id", group);
        try (KafkaShareConsumer<byte[], byte[]> c = new KafkaShareConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            c.subscribe(List.of(topic));
            pollInto(c, deliveries, 4, r -> { });
        }
        obs.put("deliveries", deliveries);
    }

    static void hold(Support s, Map<String, Object> obs) throws Exception {
        KafkaShareConsumer<byte[], byte[]> c = explicitMember(s, s.option("group", "share-killed-G"));
        c.subscribe(List.of(s.option("topic", "share-killed")));
        Map<String, List<Integer>> deliveries = new TreeMap<>();
        pollInto(c, deliveries, 1, r -> { });
        writeHeld(s, deliveries);
        Thread.sleep(Long.MAX_VALUE);  // holding the records, its connections open, until killed
    }

    /** "value:count" lines of the records held, in {@code held_file}, complete when it appears. */
    static void writeHeld(Support s, Map<String, List<Integer>> deliveries) throws Exception {
        StringBuilder lines = new StringBuilder();
        deliveries.forEach((v, counts) -> lines.append(v).append(':').append(counts.get(0)).append('\n'));
        Path file = Path.of(s.option("held_file", "held"));
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.writeString(tmp, lines.toString());
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
    }

    static void idle(Support s, Map<String, Object> obs) throws Exception {
        Path go = Path.of(s.option("go_file", "go"));
        try (KafkaShareConsumer<byte[], byte[]> c = explicitMember(s, s.option("group", "share-idle-G"))) {
            c.subscribe(List.of(s.option("topic", "share-idle")));
            Map<String, List<Integer>> deliveries = new TreeMap<>();
            List<ConsumerRecord<byte[], byte[]>> held = new ArrayList<>();
            pollInto(c, deliveries, 1, held::add);
            writeHeld(s, deliveries);
            long deadline = System.currentTimeMillis() + 120_000;
            while (!Files.exists(go) && System.currentTimeMillis() < deadline) Thread.sleep(50);  // idle: no poll
            for (ConsumerRecord<byte[], byte[]> r : held) c.acknowledge(r, AcknowledgeType.ACCEPT);
            Map<String, String> committed = new TreeMap<>();
            c.commitSync(Duration.ofSeconds(30)).forEach((tip, error) -> committed.put(
                    tip.topic() + "-" + tip.partition(), error.map(e -> e.getClass().getSimpleName()).orElse("none")));
            obs.put("deliveries", deliveries);
            obs.put("committed", committed);
        }
    }

    static void take(Support s, Map<String, Object> obs) throws Exception {
        Properties p = s.common("group.id", s.option("group", "share-killed-G"));
        Map<String, List<Integer>> deliveries = new TreeMap<>();
        int records = Integer.parseInt(s.option("records", "1"));
        try (KafkaShareConsumer<byte[], byte[]> c = new KafkaShareConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            c.subscribe(List.of(s.option("topic", "share-killed")));
            long deadline = System.currentTimeMillis() + 60_000;
            while (deliveries.size() < records && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    deliveries.computeIfAbsent(text(r), k -> new ArrayList<>()).add((int) r.deliveryCount().orElse((short) -1));
                }
            }
        }
        obs.put("deliveries", deliveries);
    }

    /** Polls until {@code total} deliveries are recorded (or 60 s); {@code each} sees every record. */
    static void pollInto(KafkaShareConsumer<byte[], byte[]> c, Map<String, List<Integer>> deliveries, int total,
                         java.util.function.Consumer<ConsumerRecord<byte[], byte[]>> each) {
        long deadline = System.currentTimeMillis() + 60_000;
        while (deliveries.values().stream().mapToInt(List::size).sum() < total && System.currentTimeMillis() < deadline) {
            for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                deliveries.computeIfAbsent(text(r), k -> new ArrayList<>()).add((int) r.deliveryCount().orElse((short) -1));
                each.accept(r);
            }
        }
    }
}
