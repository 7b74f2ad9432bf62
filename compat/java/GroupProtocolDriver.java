import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;

/**
 * The consumer group protocol (KIP-848) with kafka-clients 4.x's {@code group.protocol=consumer}.
 *
 * {@code consumer_protocol.rebalance}: one member owns a 6-partition topic, two more join and the
 * broker splits it 2/2/2, two leave and the first owns all six again, then subscribes to a second
 * topic as well; each record reaches its partition's owner once; after all commit and close, a new
 * member resumes at the committed offsets. {@code consumer_protocol.eos}: consume-transform-produce
 * with sendOffsetsToTransaction(offsets, consumer.groupMetadata()), whose member epoch the broker
 * checks; a committed round moves the group's offset, an aborted one does not. The members are
 * polled in turn from one thread (each consumer is only touched by it); the protocol's heartbeats
 * run in the clients' background threads. Synchronised on observed assignments.
 */
final class GroupProtocolDriver {
    static final int PARTITIONS = 6;
    static final String RC = "read_committed";

    public static void main(String[] args) {
        Map<String, Support.Scenario> all = new LinkedHashMap<>();
        all.put("consumer_protocol.rebalance", GroupProtocolDriver::rebalance);
        all.put("consumer_protocol.eos", GroupProtocolDriver::eos);
        all.put("consumer_protocol.regex", GroupProtocolDriver::regex);
        all.put("consumer_protocol.migration", GroupProtocolDriver::migration);
        all.put("consumer_protocol.group_configs", GroupProtocolDriver::groupConfigs);
        all.put("consumer_protocol.late_metadata", GroupProtocolDriver::lateMetadata);
        Support.main("GroupProtocolDriver", all, args);
    }

    static KafkaConsumer<byte[], byte[]> member(Support s, String group) {
        return s.consumer(RC, "group.id", group, "group.protocol", "consumer");
    }

    /** Polls every member until their assignments have these sizes and split {@code every}. */
    static List<Set<TopicPartition>> settle(List<KafkaConsumer<byte[], byte[]>> members, List<Integer> sizes,
                                            Set<TopicPartition> every) throws Exception {
        long deadline = System.currentTimeMillis() + 60_000;
        while (System.currentTimeMillis() < deadline) {
            List<Set<TopicPartition>> owned = new ArrayList<>();
            int total = 0;
            Set<TopicPartition> union = new HashSet<>();
            List<Integer> got = new ArrayList<>();
            for (KafkaConsumer<byte[], byte[]> c : members) {
                if (!c.poll(Duration.ofMillis(100)).isEmpty()) throw new IllegalStateException("records while settling");
                Set<TopicPartition> a = new HashSet<>(c.assignment());
                owned.add(a);
                total += a.size();
                union.addAll(a);
                got.add(a.size());
            }
            if (total == every.size() && union.equals(every) && got.equals(sizes)) return owned;
        }
        throw new IllegalStateException("assignments never reached sizes " + sizes);
    }

    /** Every value of {@code expected} (partition -> values) once, at the member owning its partition. */
    static void consume(List<KafkaConsumer<byte[], byte[]>> members, List<Set<TopicPartition>> owned,
                        Map<TopicPartition, List<String>> expected) {
        int want = expected.values().stream().mapToInt(List::size).sum();
        Map<TopicPartition, List<String>> got = new HashMap<>();
        int n = 0;
        long deadline = System.currentTimeMillis() + 60_000;
        while (n < want && System.currentTimeMillis() < deadline) {
            for (int i = 0; i < members.size(); i++) {
                for (ConsumerRecord<byte[], byte[]> r : members.get(i).poll(Duration.ofMillis(100))) {
                    TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                    if (!owned.get(i).contains(tp)) throw new IllegalStateException(tp + " read by a non-owner");
                    got.computeIfAbsent(tp, k -> new ArrayList<>()).add(new String(r.value()));
                    n++;
                }
            }
        }
        if (!got.equals(expected)) throw new IllegalStateException("read " + got + ", expected " + expected);
    }

    static Map<TopicPartition, List<String>> produce(Support s, String tag, String... topics) {
        Map<TopicPartition, List<String>> sent = new HashMap<>();
        try (KafkaProducer<byte[], byte[]> p = s.producer()) {
            for (String t : topics) {
                for (int part = 0; part < PARTITIONS; part++) {
                    for (int i = 0; i < 3; i++) {
                        String v = tag + "-" + t + "-" + part + "-" + i;
                        p.send(Support.rec(t, part, null, v));
                        sent.computeIfAbsent(new TopicPartition(t, part), k -> new ArrayList<>()).add(v);
                    }
                }
            }
            p.flush();
        }
        return sent;
    }

    static Set<TopicPartition> partitions(String... topics) {
        Set<TopicPartition> out = new HashSet<>();
        for (String t : topics) for (int p = 0; p < PARTITIONS; p++) out.add(new TopicPartition(t, p));
        return out;
    }

    static void rebalance(Support s, Map<String, Object> obs) throws Exception {
        String a = s.name("cp-a"), b = s.name("cp-b"), group = s.name("cp-G");
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, a, PARTITIONS);
            Support.createTopic(admin, b, PARTITIONS);
        }
        List<KafkaConsumer<byte[], byte[]>> members = new ArrayList<>(List.of(member(s, group)));
        members.get(0).subscribe(List.of(a));
        List<Set<TopicPartition>> owned = settle(members, List.of(6), partitions(a));
        consume(members, owned, produce(s, "one", a));
        members.get(0).commitSync(Duration.ofSeconds(15));
        for (int i = 0; i < 2; i++) {
            KafkaConsumer<byte[], byte[]> c = member(s, group);
            c.subscribe(List.of(a));
            members.add(c);
        }
        owned = settle(members, List.of(2, 2, 2), partitions(a));
        obs.put("three_members", List.of(owned.get(0).size(), owned.get(1).size(), owned.get(2).size()));
        consume(members, owned, produce(s, "three", a));
        for (KafkaConsumer<byte[], byte[]> c : members) c.commitSync(Duration.ofSeconds(15));
        try (Admin admin = s.admin()) {
            ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all()
                    .get(20, TimeUnit.SECONDS).get(group);
            obs.put("group_type", d.type().toString());
            obs.put("described_members", d.members().size());
        }
        members.get(1).close();
        members.get(2).close();
        members = new ArrayList<>(List.of(members.get(0)));
        owned = settle(members, List.of(6), partitions(a));
        consume(members, owned, produce(s, "back-to-one", a));
        members.get(0).subscribe(List.of(a, b));
        owned = settle(members, List.of(12), partitions(a, b));
        obs.put("after_subscription_change", owned.get(0).size());
        consume(members, owned, produce(s, "both", a, b));
        members.get(0).commitSync(Duration.ofSeconds(15));
        members.get(0).close();
        try (KafkaConsumer<byte[], byte[]> c = member(s, group)) {
            c.subscribe(List.of(a, b));
            List<KafkaConsumer<byte[], byte[]>> resumed = List.of(c);
            owned = settle(resumed, List.of(12), partitions(a, b));  // nothing committed is read again
            consume(resumed, owned, produce(s, "later", a, b));
        }
        obs.put("resumed", true);
    }

    /**
     * subscribe(SubscriptionPattern): the broker resolves the RE2 pattern (KIP-848); a matching topic
     * created later joins the assignment, a topic that does not match never does.
     */
    static void regex(Support s, Map<String, Object> obs) throws Exception {
        String one = s.name("rx-1"), two = s.name("rx-2"), other = s.name("other"), group = s.name("rx-G");
        try (Admin admin = s.admin(); KafkaConsumer<byte[], byte[]> c = member(s, group)) {
            Support.createTopic(admin, one, 2);
            Support.createTopic(admin, other, 2);
            subscribePattern(c, s.prefix + "-rx-.*");
            Set<TopicPartition> first = Set.of(new TopicPartition(one, 0), new TopicPartition(one, 1));
            if (!Support.await(() -> { c.poll(Duration.ofMillis(100)); return c.assignment().equals(first); }, 60_000)) {
                throw new IllegalStateException("assignment " + c.assignment() + ", expected " + first);
            }
            Support.createTopic(admin, two, 1);
            Set<TopicPartition> both = new HashSet<>(first);
            both.add(new TopicPartition(two, 0));
            if (!Support.await(() -> { c.poll(Duration.ofMillis(100)); return c.assignment().equals(both); }, 60_000)) {
                throw new IllegalStateException("assignment " + c.assignment() + ", expected " + both);
            }
            obs.put("assigned", c.assignment().size());
        }
    }

    /**
     * A member whose own metadata does not name its topic yet when its first assignment comes: the
     * test holds back the broker's Metadata answers naming the topic to these two clients (a delay
     * armed through the control plane), and each client found its coordinator before subscribing
     * (committed() of another topic), so its first heartbeat is answered first. subscribe, then
     * poll ("plain"): the client reconciles the part of the assignment its metadata names, nothing,
     * then the partitions once the Metadata answer comes, two onPartitionsAssigned calls for one
     * assignment of the broker; GroupReplay.awaitKnown between subscribe and the first poll
     * ("known"): one call, with the partitions. Each client's calls, in order.
     */
    static void lateMetadata(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("late-meta"), other = s.name("late-meta-other");
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, topic, 2);
            Support.createTopic(admin, other, 1);
        }
        for (String mode : List.of("plain", "known")) {
            String id = s.name("late-meta-" + mode);
            List<List<String>> calls = new ArrayList<>();
            try (KafkaConsumer<byte[], byte[]> c = s.consumer(RC, "group.id", id, "client.id", id,
                    "group.protocol", "consumer")) {
                c.committed(Set.of(new TopicPartition(other, 0)), Duration.ofSeconds(20));
                c.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                    @Override
                    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                        calls.add(partitions.stream().map(TopicPartition::toString).sorted().toList());
                    }

                    @Override
                    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                    }
                });
                if (mode.equals("known")) GroupReplay.awaitKnown(c, List.of(topic));
                if (!Support.await(() -> { c.poll(Duration.ofMillis(100)); return c.assignment().size() == 2; }, 60_000)) {
                    throw new IllegalStateException(mode + ": assignment " + c.assignment() + " after 60 s");
                }
            }
            obs.put(mode, calls);
        }
    }

    /**
     * Two classic members (range) split a topic 3/3; a consumer-protocol member joins and the group
     * becomes a consumer group (the Admin client describes it so) that assigns 2/2/2; it leaves and
     * the group is classic again, 3/3. Records reach their partition's owner throughout.
     */
    static void migration(Support s, Map<String, Object> obs) throws Exception {
        String a = s.name("mig-a"), group = s.name("mig-G");
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, a, PARTITIONS);
            List<KafkaConsumer<byte[], byte[]>> members = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                KafkaConsumer<byte[], byte[]> c = s.consumer(RC, "group.id", group, "group.protocol", "classic",
                        "partition.assignment.strategy", "org.apache.kafka.clients.consumer.RangeAssignor",
                        "session.timeout.ms", "10000", "heartbeat.interval.ms", "200");
                c.subscribe(List.of(a));
                members.add(c);
            }
            List<Set<TopicPartition>> owned = settle(members, List.of(3, 3), partitions(a));
            obs.put("classic_type", groupType(admin, group));
            consume(members, owned, produce(s, "classic", a));
            for (KafkaConsumer<byte[], byte[]> c : members) c.commitSync(Duration.ofSeconds(15));
            KafkaConsumer<byte[], byte[]> modern = member(s, group);
            modern.subscribe(List.of(a));
            members.add(modern);
            owned = Support.settleAnyOrder(members, List.of(2, 2, 2), partitions(a), true);
            obs.put("mixed_type", groupType(admin, group));
            consume(members, owned, produce(s, "mixed", a));
            for (KafkaConsumer<byte[], byte[]> c : members) c.commitSync(Duration.ofSeconds(15));
            modern.close();
            members.remove(modern);
            owned = Support.settleAnyOrder(members, List.of(3, 3), partitions(a), true);
            obs.put("back_type", groupType(admin, group));
            consume(members, owned, produce(s, "classic-again", a));
            for (KafkaConsumer<byte[], byte[]> c : members) c.close();
        }
    }

    /**
     * KIP-848 GROUP configs through Admin: incrementalAlterConfigs on a GROUP resource (type id 32:
     * the enum constant is not in every kafka-clients this is compiled against), describeConfigs
     * before and after, and a value outside the broker's bounds refused.
     */
    static void groupConfigs(Support s, Map<String, Object> obs) throws Exception {
        String group = s.name("cfg-G");
        org.apache.kafka.common.config.ConfigResource res = new org.apache.kafka.common.config.ConfigResource(
                org.apache.kafka.common.config.ConfigResource.Type.forId((byte) 32), group);
        try (Admin admin = s.admin()) {
            obs.put("before", groupEntries(admin, res));
            org.apache.kafka.clients.admin.AlterConfigOp.OpType set = org.apache.kafka.clients.admin.AlterConfigOp.OpType.SET;
            admin.incrementalAlterConfigs(Map.of(res, List.of(
                    new org.apache.kafka.clients.admin.AlterConfigOp(
                            new org.apache.kafka.clients.admin.ConfigEntry("consumer.session.timeout.ms", "50000"), set),
                    new org.apache.kafka.clients.admin.AlterConfigOp(
                            new org.apache.kafka.clients.admin.ConfigEntry("consumer.heartbeat.interval.ms", "6000"), set))))
                    .all().get(20, TimeUnit.SECONDS);
            obs.put("after", groupEntries(admin, res));
            try {
                admin.incrementalAlterConfigs(Map.of(res, List.of(new org.apache.kafka.clients.admin.AlterConfigOp(
                        new org.apache.kafka.clients.admin.ConfigEntry("consumer.session.timeout.ms", "1000"), set))))
                        .all().get(20, TimeUnit.SECONDS);
                obs.put("too_short", "accepted");
            } catch (java.util.concurrent.ExecutionException e) {
                obs.put("too_short", e.getCause().getClass().getSimpleName() + ": " + e.getCause().getMessage());
            }
        }
    }

    /** The consumer.* entries of a GROUP resource as "value/source". */
    static Map<String, Object> groupEntries(Admin admin, org.apache.kafka.common.config.ConfigResource res)
            throws Exception {
        Map<String, Object> out = new java.util.TreeMap<>();
        for (org.apache.kafka.clients.admin.ConfigEntry e
                : admin.describeConfigs(List.of(res)).all().get(20, TimeUnit.SECONDS).get(res).entries()) {
            if (e.name().startsWith("consumer.")) out.put(e.name(), e.value() + "/" + e.source().name());
        }
        return out;
    }

    static String groupType(Admin admin, String group) throws Exception {
        return admin.describeConsumerGroups(List.of(group)).all().get(20, TimeUnit.SECONDS).get(group).type().toString();
    }

    /**
     * {@code consumer.subscribe(new SubscriptionPattern(regex))}, by reflection: the class is
     * kafka-clients 4's, and every driver is compiled against 3.9.1 as well.
     */
    static void subscribePattern(KafkaConsumer<byte[], byte[]> c, String regex) throws Exception {
        Class<?> pattern = Class.forName("org.apache.kafka.clients.consumer.SubscriptionPattern");
        Object p = pattern.getConstructor(String.class).newInstance(regex);
        KafkaConsumer.class.getMethod("subscribe", pattern).invoke(c, p);
    }

    static void eos(Support s, Map<String, Object> obs) throws Exception {
        String in = s.name("cp-eos-in"), out = s.name("cp-eos-out"), group = s.name("cp-eos-G");
        TopicPartition inTp = new TopicPartition(in, 0);
        try (Admin admin = s.admin();
             KafkaProducer<byte[], byte[]> plain = s.producer();
             KafkaProducer<byte[], byte[]> tx = s.txnProducer(s.name("cp-eos-T"));
             KafkaConsumer<byte[], byte[]> c = member(s, group)) {
            Support.createTopic(admin, in, 1);
            Support.createTopic(admin, out, 1);
            for (int i = 0; i < 5; i++) plain.send(Support.rec(in, 0, null, "in-" + i));
            plain.flush();
            c.subscribe(List.of(in));
            obs.put("committed_round", round(c, tx, inTp, out, 3, true));
            obs.put("member_epoch_positive", c.groupMetadata().generationId() > 0);
            obs.put("aborted_round", round(c, tx, inTp, out, 2, false));
            Map<TopicPartition, OffsetAndMetadata> offsets =
                    admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(20, TimeUnit.SECONDS);
            obs.put("group_offset", offsets.get(inTp) == null ? null : offsets.get(inTp).offset());
        }
    }

    static long round(KafkaConsumer<byte[], byte[]> c, KafkaProducer<byte[], byte[]> tx, TopicPartition inTp,
                      String out, int take, boolean commit) {
        long next = -1;
        int got = 0;
        long deadline = System.currentTimeMillis() + 30_000;
        tx.beginTransaction();
        while (got < take && System.currentTimeMillis() < deadline) {
            for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                if (got == take) break;
                tx.send(Support.rec(out, 0, null, "out-" + new String(r.value())));
                next = r.offset() + 1;
                got++;
            }
        }
        if (got < take) throw new IllegalStateException("only " + got + " records");
        tx.sendOffsetsToTransaction(Map.of(inTp, new OffsetAndMetadata(next)), c.groupMetadata());
        if (commit) tx.commitTransaction(); else tx.abortTransaction();
        c.seek(inTp, next);
        return next;
    }
}
