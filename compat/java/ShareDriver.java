import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Share groups (KIP-932) with kafka-clients 4.x's {@code KafkaShareConsumer} (implicit
 * acknowledgement). {@code share.queue}: two members of one share group poll a 3-partition topic in
 * turn until every record has arrived; records it saw more than once and how many each member got
 * are reported. The group's share.auto.offset.reset=earliest and share.version=1 are set by the
 * test before the driver runs. Synchronised on the records received.
 */
final class ShareDriver {
    public static void main(String[] args) {
        Map<String, Support.Scenario> all = new LinkedHashMap<>();
        all.put("share.queue", ShareDriver::queue);
        Support.main("ShareDriver", all, args);
    }

    static KafkaShareConsumer<byte[], byte[]> member(Support s, String group) {
        Properties p = s.common("group.id", group);
        return new KafkaShareConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    static void queue(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.option("topic", "share-queue");
        String group = s.option("group", "share-queue-G");
        int records = 60;
        try (Admin admin = s.admin()) {
            Support.awaitTopic(admin, topic, 3);
        }
        try (KafkaProducer<byte[], byte[]> producer = s.producer()) {
            for (int i = 0; i < records; i++) {
                producer.send(new ProducerRecord<>(topic, i % 3, null, ("q" + i).getBytes(StandardCharsets.UTF_8))).get();
            }
        }
        List<KafkaShareConsumer<byte[], byte[]>> members = new ArrayList<>();
        Map<String, Integer> seen = new HashMap<>();
        List<Integer> perMember = new ArrayList<>();
        try {
            for (int i = 0; i < 2; i++) {
                KafkaShareConsumer<byte[], byte[]> c = member(s, group);
                c.subscribe(List.of(topic));
                members.add(c);
                perMember.add(0);
            }
            long deadline = System.currentTimeMillis() + 60_000;
            while (seen.size() < records && System.currentTimeMillis() < deadline) {
                for (int i = 0; i < members.size(); i++) {
                    for (ConsumerRecord<byte[], byte[]> r : members.get(i).poll(Duration.ofMillis(200))) {
                        seen.merge(new String(r.value(), StandardCharsets.UTF_8), 1, Integer::sum);
                        perMember.set(i, perMember.get(i) + 1);
                    }
                }
            }
        } finally {
            for (KafkaShareConsumer<byte[], byte[]> c : members) c.close(Duration.ofSeconds(10));
        }
        obs.put("distinct", seen.size());
        obs.put("duplicates", seen.values().stream().filter(n -> n > 1).count());
        obs.put("per_member", perMember);
    }
}
