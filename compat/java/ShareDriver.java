import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Share groups (KIP-932) with kafka-clients 4.x's {@code KafkaShareConsumer} (implicit
 * acknowledgement). {@code share.queue}: two members of one share group poll a 3-partition topic in
 * turn until every record has arrived; records it saw more than once and how many each member got
 * are reported. The group's share.auto.offset.reset=earliest and share.version=1 are set by the
 * test before the driver runs. Synchronised on the records received.
 *
 * <p>{@code share.admin}: the Admin side. A member reads and accepts 10 records of partition 0, then
 * leaves; the group is listed and described, its start offsets listed, altered back to 4 (a new
 * member then gets offsets 4-9), deleted (the next member gets all 10 again, from
 * share.auto.offset.reset=earliest), refused while a member is in the group, and the group deleted.
 */
final class ShareDriver {
    public static void main(String[] args) {
        Map<String, Support.Scenario> all = new LinkedHashMap<>();
        all.put("share.queue", ShareDriver::queue);
        all.put("share.admin", ShareDriver::admin);
        all.put("share.initialized.list", ShareDriver::initializedList);
        all.put("share.initialized.consume", ShareDriver::initializedConsume);
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

    /** Polls {@code c} until it has {@code want} records of {@code topic} (or 60 s), accepts them. */
    static Set<Long> drain(KafkaShareConsumer<byte[], byte[]> c, int want) {
        Set<Long> offsets = new TreeSet<>();
        long deadline = System.currentTimeMillis() + 60_000;
        while (offsets.size() < want && System.currentTimeMillis() < deadline) {
            for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) offsets.add(r.offset());
        }
        c.commitSync();
        return offsets;
    }

    static Map<String, Object> startOffsets(Admin admin, String group) throws Exception {
        Map<TopicPartition, SharePartitionOffsetInfo> got = admin.listShareGroupOffsets(
                Map.of(group, new ListShareGroupOffsetsSpec())).partitionsToOffsetInfo(group).get(20, TimeUnit.SECONDS);
        Map<String, Object> out = new TreeMap<>();
        got.forEach((tp, info) -> out.put(tp.toString(), info == null ? null : info.startOffset()));
        return out;
    }

    static List<String> shareGroups(Admin admin) throws Exception {
        List<String> out = new ArrayList<>();
        for (GroupListing g : admin.listGroups(ListGroupsOptions.forShareGroups()).all().get(20, TimeUnit.SECONDS)) {
            out.add(g.groupId() + ":" + g.type().map(Object::toString).orElse("?") + ":"
                    + g.groupState().map(Object::toString).orElse("?"));
        }
        return out;
    }

    static String failure(Runnable call) {
        try {
            call.run();
            return "none";
        } catch (RuntimeException e) {
            Throwable cause = e.getCause() instanceof ExecutionException ? e.getCause().getCause() : e.getCause();
            return (cause != null ? cause : e).getClass().getSimpleName();
        }
    }

    static void admin(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.option("topic", "share-admin");
        String group = s.option("group", "share-admin-G");
        TopicPartition p0 = new TopicPartition(topic, 0);
        try (Admin admin = s.admin()) {
            Support.awaitTopic(admin, topic, 2);
            try (KafkaProducer<byte[], byte[]> producer = s.producer()) {
                for (int i = 0; i < 10; i++) {
                    producer.send(new ProducerRecord<>(topic, 0, null, ("a" + i).getBytes(StandardCharsets.UTF_8))).get();
                }
            }
            try (KafkaShareConsumer<byte[], byte[]> c = member(s, group)) {
                c.subscribe(List.of(topic));
                obs.put("first", new ArrayList<>(drain(c, 10)));
            }
            obs.put("listed", shareGroups(admin));
            obs.put("state", admin.describeShareGroups(List.of(group)).describedGroups().get(group)
                    .get(20, TimeUnit.SECONDS).groupState().toString());
            obs.put("offsets", startOffsets(admin, group));
            admin.alterShareGroupOffsets(group, Map.of(p0, 4L)).all().get(20, TimeUnit.SECONDS);
            obs.put("altered", startOffsets(admin, group));
            try (KafkaShareConsumer<byte[], byte[]> c = member(s, group)) {
                c.subscribe(List.of(topic));
                obs.put("after_alter", new ArrayList<>(drain(c, 6)));
            }
            admin.deleteShareGroupOffsets(group, Set.of(topic)).all().get(20, TimeUnit.SECONDS);
            obs.put("deleted", startOffsets(admin, group));
            try (KafkaShareConsumer<byte[], byte[]> c = member(s, group)) {
                c.subscribe(List.of(topic));
                obs.put("after_delete", new ArrayList<>(drain(c, 10)));
                obs.put("alter_with_member", failure(() -> get(admin.alterShareGroupOffsets(group, Map.of(p0, 0L)).all())));
                obs.put("delete_with_member", failure(() -> get(admin.deleteShareGroups(List.of(group)).all())));
            }
            obs.put("delete_group", failure(() -> get(admin.deleteShareGroups(List.of(group)).all())));
            obs.put("listed_after", shareGroups(admin));
            obs.put("delete_again", failure(() -> get(admin.deleteShareGroups(List.of(group)).all())));
        }
    }

    /**
     * {@code share.initialized.list}: the group's start offsets as Admin.listShareGroupOffsets gives
     * them (a partition with share state but no start offset maps to null) and how many partitions
     * its members are assigned.
     */
    static void initializedList(Support s, Map<String, Object> obs) throws Exception {
        String group = s.option("group", "share-init-G");
        try (Admin admin = s.admin()) {
            obs.put("offsets", startOffsets(admin, group));
            obs.put("assigned", admin.describeShareGroups(List.of(group)).describedGroups().get(group)
                    .get(20, TimeUnit.SECONDS).members().stream()
                    .mapToInt(m -> m.assignment().topicPartitions().size()).sum());
        }
    }

    /**
     * {@code share.initialized.consume}: a member joins and polls; until a record arrives, each
     * round produces one more ({@code new-<n>}) to partition 0, so some are produced after its first
     * ShareFetch. Every value received is reported; the group's start offsets after acknowledging.
     */
    static void initializedConsume(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.option("topic", "share-init");
        String group = s.option("group", "share-init-G");
        List<String> got = new ArrayList<>();
        int produced = 0;
        try (KafkaProducer<byte[], byte[]> producer = s.producer();
             KafkaShareConsumer<byte[], byte[]> c = member(s, group)) {
            c.subscribe(List.of(topic));
            long deadline = System.currentTimeMillis() + 60_000;
            while (got.isEmpty() && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    got.add(new String(r.value(), StandardCharsets.UTF_8));
                }
                if (got.isEmpty()) {
                    producer.send(new ProducerRecord<>(topic, 0, null, ("new-" + produced++).getBytes(StandardCharsets.UTF_8))).get();
                }
            }
            c.commitSync();
        }
        obs.put("received", got);
        obs.put("produced", produced);
        try (Admin admin = s.admin()) {
            obs.put("offsets", startOffsets(admin, group));
        }
    }

    static <T> T get(org.apache.kafka.common.KafkaFuture<T> f) {
        try {
            return f.get(20, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }
}
