import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.GroupIdNotFoundException;

/**
 * {@code share.by_duration} (KIP-1106) with kafka-clients 4.x: the Admin sets
 * share.auto.offset.reset=by_duration:PT1H on two share groups (by_duration:-PT1H refused first, the
 * value described), the producer stamps records hours apart, and a {@code KafkaShareConsumer} reads
 * {@code aged} (3 h, 2 h, 30 min and 0 old: it gets the last two) and {@code stale} (3 h and 2 h
 * old: once its member is assigned the partition, five more polls get nothing, then one record
 * stamped now is produced and it is the first it gets). The outcome does not depend on when the
 * fetches happen; the polls after the assignment make the not-yet-initialized answer likely seen.
 */
final class ShareDurationDriver {
    static final long HOUR = 3_600_000L;

    public static void main(String[] args) {
        Map<String, Support.Scenario> all = new LinkedHashMap<>();
        all.put("share.by_duration", ShareDurationDriver::byDuration);
        Support.main("ShareDurationDriver", all, args);
    }

    static void byDuration(Support s, Map<String, Object> obs) throws Exception {
        try (Admin admin = s.admin()) {
            Support.awaitTopic(admin, "aged", 1);
            Support.awaitTopic(admin, "stale", 1);
            obs.put("refused", refusal(admin, "aged-G", "by_duration:-PT1H"));
            for (String g : List.of("aged-G", "stale-G")) setReset(admin, g, "by_duration:PT1H");
            ConfigResource r = new ConfigResource(ConfigResource.Type.GROUP, "aged-G");
            ConfigEntry e = admin.describeConfigs(List.of(r)).all().get(20, TimeUnit.SECONDS).get(r)
                    .get("share.auto.offset.reset");
            obs.put("described", e.value() + " " + e.source());
            long now = System.currentTimeMillis();
            try (KafkaProducer<byte[], byte[]> producer = s.producer()) {
                for (long age : new long[] {3 * HOUR, 2 * HOUR, HOUR / 2, 0}) send(producer, "aged", now - age);
                for (long age : new long[] {3 * HOUR, 2 * HOUR}) send(producer, "stale", now - age);
            }
            try (KafkaShareConsumer<byte[], byte[]> c = ShareDriver.member(s, "aged-G")) {
                c.subscribe(List.of("aged"));
                obs.put("aged", new ArrayList<>(ShareDriver.drain(c, 2)));
            }
            obs.put("aged_offsets", ShareDriver.startOffsets(admin, "aged-G"));
            stale(s, admin, obs);
            obs.put("stale_offsets", ShareDriver.startOffsets(admin, "stale-G"));
        }
    }

    static void stale(Support s, Admin admin, Map<String, Object> obs) throws Exception {
        List<Long> got = new ArrayList<>();
        long deadline = System.currentTimeMillis() + 60_000;
        try (KafkaProducer<byte[], byte[]> producer = s.producer();
             KafkaShareConsumer<byte[], byte[]> c = ShareDriver.member(s, "stale-G")) {
            c.subscribe(List.of("stale"));
            while (!assigned(admin, "stale-G") && System.currentTimeMillis() < deadline) poll(c, got);
            for (int i = 0; i < 5; i++) poll(c, got);
            obs.put("stale_before", new ArrayList<>(got));
            send(producer, "stale", System.currentTimeMillis());
            while (got.isEmpty() && System.currentTimeMillis() < deadline) poll(c, got);
            c.commitSync();
        }
        obs.put("stale", got);
    }

    static void poll(KafkaShareConsumer<byte[], byte[]> c, List<Long> got) {
        for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) got.add(r.offset());
    }

    static boolean assigned(Admin admin, String group) throws Exception {
        try {
            return admin.describeShareGroups(List.of(group)).describedGroups().get(group).get(20, TimeUnit.SECONDS)
                    .members().stream().anyMatch(m -> !m.assignment().topicPartitions().isEmpty());
        } catch (ExecutionException e) {
            if (e.getCause() instanceof GroupIdNotFoundException) return false;  // before its first heartbeat
            throw e;
        }
    }

    static void send(KafkaProducer<byte[], byte[]> producer, String topic, long timestamp) throws Exception {
        producer.send(new ProducerRecord<>(topic, 0, timestamp, null, "v".getBytes(StandardCharsets.UTF_8))).get();
    }

    static void setReset(Admin admin, String group, String value) throws Exception {
        admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group), List.of(
                new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", value), AlterConfigOp.OpType.SET))))
                .all().get(20, TimeUnit.SECONDS);
    }

    static String refusal(Admin admin, String group, String value) throws Exception {
        try {
            setReset(admin, group, value);
            return "none";
        } catch (ExecutionException e) {
            return e.getCause().getClass().getSimpleName() + ": " + e.getCause().getMessage();
        }
    }
}
