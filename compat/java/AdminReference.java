import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.AlterConsumerGroupOffsetsResult;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DeleteConsumerGroupOffsetsResult;
import org.apache.kafka.clients.admin.DeleteConsumerGroupsResult;
import org.apache.kafka.clients.admin.MemberToRemove;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.RemoveMembersFromConsumerGroupOptions;
import org.apache.kafka.clients.admin.RemoveMembersFromConsumerGroupResult;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;

/**
 * Admin scenarios after Apache Kafka's PlaintextAdminIntegrationTest (testConsumerGroups' member
 * and offset calls, testDeleteConsumerGroupOffsets, testInvalidIncrementalAlterConfigs,
 * testAppendAlreadyExistsConfigsAndSubtractNotExistsConfigs), on one broker. Each scenario only
 * observes; compat/test_java_reference.py holds the expectations.
 */
final class AdminReference {
    private AdminReference() {
    }

    /**
     * A classic group with one member that committed: what deleteConsumerGroupOffsets,
     * alterConsumerGroupOffsets, removeMembersFromConsumerGroup and deleteConsumerGroups answer
     * while it is in the group, then once the Admin removed it.
     */
    static void groupAdmin(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("group-admin");
        String group = s.name("group-admin-G");
        String fake = s.name("group-admin-fake");
        TopicPartition tp = new TopicPartition(topic, 0);
        TopicPartition foo = new TopicPartition(s.name("group-admin-none"), 0);
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, topic, 1);
            try (KafkaProducer<byte[], byte[]> p = s.producer()) {
                p.send(new ProducerRecord<>(topic, 0, null, null)).get(20, TimeUnit.SECONDS);
            }
            try (KafkaConsumer<byte[], byte[]> c = s.consumer("read_uncommitted", "group.id", group,
                    "max.poll.interval.ms", String.valueOf(Integer.MAX_VALUE), "session.timeout.ms", "45000")) {
                c.subscribe(List.of(topic));
                Support.await(() -> !c.poll(Duration.ofMillis(200)).isEmpty(), 20_000);
                c.commitSync();
                obs.put("active_delete_offsets", deleteOffsets(admin, group, tp, foo));
                obs.put("fake_delete_offsets", deleteOffsets(admin, fake, tp, foo));
                AlterConsumerGroupOffsetsResult alter = admin.alterConsumerGroupOffsets(group, Map.of(tp, new OffsetAndMetadata(0)));
                obs.put("active_alter", java.util.Arrays.asList(error(alter.all()), error(alter.partitionResult(tp))));
                MemberToRemove unknown = new MemberToRemove("invalid-instance-id");
                RemoveMembersFromConsumerGroupResult bad = admin.removeMembersFromConsumerGroup(group,
                        new RemoveMembersFromConsumerGroupOptions(Set.of(unknown)));
                obs.put("remove_unknown", java.util.Arrays.asList(error(bad.all()), error(bad.memberResult(unknown))));
                DeleteConsumerGroupsResult del = admin.deleteConsumerGroups(List.of(group, fake));
                obs.put("delete_active", java.util.Arrays.asList(error(del.deletedGroups().get(group)), error(del.deletedGroups().get(fake))));
                // every member (the consumer stops polling, so it does not join again meanwhile)
                obs.put("remove_all", error(admin.removeMembersFromConsumerGroup(group, new RemoveMembersFromConsumerGroupOptions()).all()));
                obs.put("members_after", admin.describeConsumerGroups(List.of(group)).describedGroups().get(group)
                        .get(20, TimeUnit.SECONDS).members().size());
                obs.put("empty_delete_offsets", deleteOffsets(admin, group, tp, foo));
                obs.put("offsets_after_delete", admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
                        .get(20, TimeUnit.SECONDS).keySet().stream().map(TopicPartition::toString).toList());
                alter = admin.alterConsumerGroupOffsets(group, Map.of(tp, new OffsetAndMetadata(0)));
                obs.put("empty_alter", java.util.Arrays.asList(error(alter.all()), error(alter.partitionResult(tp))));
                OffsetAndMetadata m = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
                        .get(20, TimeUnit.SECONDS).get(tp);
                obs.put("altered_offset", m == null ? null : m.offset());
                obs.put("delete_empty", error(admin.deleteConsumerGroups(List.of(group)).all()));
                obs.put("groups_after", admin.listConsumerGroups().all().get(20, TimeUnit.SECONDS).stream()
                        .filter(l -> l.groupId().equals(group)).count());
            }
        }
    }

    /**
     * testConsumerGroups' listing and describing: a classic group of two static members and a
     * dynamic one, each subscribed to its own topic, listed by type and state, described with its
     * members and authorized operations; an unknown group is described DEAD (GroupIdNotFoundException
     * with kafka-clients 4 and DescribeGroups v6); removing a static
     * member by instance id leaves two.
     */
    static void groupListing(Support s, Map<String, Object> obs) throws Exception {
        String group = s.name("listing-G");
        String fake = s.name("listing-fake");
        List<String> topics = List.of(s.name("listing-0"), s.name("listing-1"), s.name("listing-2"));
        List<String> instances = java.util.Arrays.asList(s.name("instance-1"), s.name("instance-2"), null);
        List<KafkaConsumer<byte[], byte[]>> consumers = new ArrayList<>();
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.CountDownLatch assigned = new java.util.concurrent.CountDownLatch(3);
        List<Thread> threads = new ArrayList<>();
        try (Admin admin = s.admin()) {
            for (String t : topics) Support.createTopic(admin, t, 2);
            for (int i = 0; i < 3; i++) {
                List<String> kv = new ArrayList<>(List.of("group.id", group, "client.id", s.name("listing-client"),
                        "session.timeout.ms", "30000", "heartbeat.interval.ms", "500"));
                if (instances.get(i) != null) kv.addAll(List.of("group.instance.id", instances.get(i)));
                KafkaConsumer<byte[], byte[]> c = s.consumer("read_uncommitted", kv.toArray(new String[0]));
                consumers.add(c);
                String topic = topics.get(i);
                Thread th = new Thread(() -> Support.pollUntilStopped(c, topic, stop, assigned, false));
                th.setDaemon(true);
                th.start();
                threads.add(th);
            }
            obs.put("all_assigned", assigned.await(60, TimeUnit.SECONDS));
            obs.put("listed_stable", Support.eventually(() -> listed(admin, group, null, null).equals(List.of("Stable")), 30_000));
            obs.put("listed_classic_stable", listed(admin, group, org.apache.kafka.common.GroupType.CLASSIC,
                    org.apache.kafka.common.ConsumerGroupState.STABLE));
            obs.put("listed_empty", listed(admin, group, null, org.apache.kafka.common.ConsumerGroupState.EMPTY));
            stop.set(true);
            for (Thread th : threads) th.join(10_000);
            var described = admin.describeConsumerGroups(List.of(group, fake),
                    new org.apache.kafka.clients.admin.DescribeConsumerGroupsOptions().includeAuthorizedOperations(true)).describedGroups();
            var d = described.get(group).get(20, TimeUnit.SECONDS);
            List<String> assignment = new ArrayList<>();
            Set<String> clients = new java.util.TreeSet<>(), statics = new java.util.TreeSet<>();
            for (var m : d.members()) {
                m.assignment().topicPartitions().forEach(tp -> assignment.add(tp.toString()));
                clients.add(m.clientId());
                m.groupInstanceId().ifPresent(statics::add);
            }
            java.util.Collections.sort(assignment);
            obs.put("described", Support.map("simple", d.isSimpleConsumerGroup(), "state", d.state().name(),
                    "members", d.members().size(), "assignor", d.partitionAssignor(), "assignment", assignment,
                    "clients", new ArrayList<>(clients), "statics", new ArrayList<>(statics),
                    "operations", AdminDriver.names(d.authorizedOperations())));
            Object fakeError = errorAndMessage(described.get(fake));
            if (fakeError != null) {  // DescribeGroups v6 (Kafka 4): GROUP_ID_NOT_FOUND
                obs.put("fake", Support.map("error", fakeError));
            } else {
                var f = described.get(fake).get(20, TimeUnit.SECONDS);
                obs.put("fake", Support.map("state", f.state().name(), "members", f.members().size(), "assignor",
                        f.partitionAssignor(), "operations", AdminDriver.names(f.authorizedOperations())));
            }
            RemoveMembersFromConsumerGroupOptions one = new RemoveMembersFromConsumerGroupOptions(
                    Set.of(new MemberToRemove(instances.get(0))));
            one.reason("test remove");
            obs.put("remove_static", error(admin.removeMembersFromConsumerGroup(group, one).all()));
            obs.put("members_after", admin.describeConsumerGroups(List.of(group)).describedGroups().get(group)
                    .get(20, TimeUnit.SECONDS).members().size());
        } finally {
            stop.set(true);
            for (Thread th : threads) th.join(10_000);
            for (KafkaConsumer<byte[], byte[]> c : consumers) c.close(Duration.ofSeconds(5));
        }
    }

    /** The states the group is listed with, given a type and a state filter (null: none). */
    private static List<String> listed(Admin admin, String group, org.apache.kafka.common.GroupType type,
                                       org.apache.kafka.common.ConsumerGroupState state) throws Exception {
        var options = new org.apache.kafka.clients.admin.ListConsumerGroupsOptions();
        if (type != null) options.withTypes(Set.of(type));
        if (state != null) options.inStates(Set.of(state));
        List<String> out = new ArrayList<>();
        for (var l : admin.listConsumerGroups(options).all().get(20, TimeUnit.SECONDS)) {
            if (l.groupId().equals(group)) out.add(l.state().map(Enum::name).map(n -> n.charAt(0) + n.substring(1).toLowerCase()).orElse("?"));
        }
        return out;
    }

    /**
     * testListTransactions: three transactional ids (committed, aborted, committed) listed by
     * state, producer id and duration (KIP-994, ListTransactions v1); an open transaction younger
     * than the duration is left out.
     */
    static void listTransactions(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("list-txn");
        List<String> tids = List.of(s.name("list-txn-1"), s.name("list-txn-2"), s.name("list-txn-3"));
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, topic, 1);
            for (int i = 0; i < 3; i++) {
                try (KafkaProducer<byte[], byte[]> p = s.txnProducer(tids.get(i))) {
                    p.beginTransaction();
                    p.send(new ProducerRecord<>(topic, 0, Support.b("k1"), Support.b("v1")));
                    p.flush();
                    if (i == 1) p.abortTransaction(); else p.commitTransaction();
                }
            }
            String tid = tids.get(2);
            Support.eventually(() -> admin.describeTransactions(List.of(tid)).description(tid).get().state()
                    == org.apache.kafka.clients.admin.TransactionState.COMPLETE_COMMIT, 20_000);
            long pid = admin.describeTransactions(List.of(tids.get(0))).description(tids.get(0)).get().producerId();
            var none = new org.apache.kafka.clients.admin.ListTransactionsOptions();
            obs.put("all", mine(admin, none, tids));
            obs.put("committed", mine(admin, new org.apache.kafka.clients.admin.ListTransactionsOptions()
                    .filterStates(List.of(org.apache.kafka.clients.admin.TransactionState.COMPLETE_COMMIT)), tids));
            obs.put("aborted", mine(admin, new org.apache.kafka.clients.admin.ListTransactionsOptions()
                    .filterStates(List.of(org.apache.kafka.clients.admin.TransactionState.COMPLETE_ABORT)), tids));
            obs.put("by_producer", mine(admin, new org.apache.kafka.clients.admin.ListTransactionsOptions()
                    .filterProducerIds(List.of(pid)), tids));
            String open = s.name("list-txn-open");
            List<String> withOpen = new ArrayList<>(tids);
            withOpen.add(open);
            try (KafkaProducer<byte[], byte[]> p = s.txnProducer(open)) {
                p.beginTransaction();
                p.send(new ProducerRecord<>(topic, 0, Support.b("k1"), Support.b("v1"))).get(20, TimeUnit.SECONDS);
                // the first three started more than 500 ms before this listing once this holds
                obs.put("old_enough", Support.eventually(() -> mine(admin, new org.apache.kafka.clients.admin
                        .ListTransactionsOptions().filterOnDuration(500), withOpen).size() == 3, 20_000));
                obs.put("by_duration", mine(admin, new org.apache.kafka.clients.admin.ListTransactionsOptions()
                        .filterOnDuration(500), withOpen));
                obs.put("open_by_duration_0", mine(admin, new org.apache.kafka.clients.admin.ListTransactionsOptions()
                        .filterOnDuration(0), List.of(open)));
                p.abortTransaction();
            }
        }
    }

    /** The listed transactions among {@code tids}, as "index:state", sorted. */
    private static List<String> mine(Admin admin, org.apache.kafka.clients.admin.ListTransactionsOptions o,
                                     List<String> tids) throws Exception {
        List<String> out = new ArrayList<>();
        for (var l : admin.listTransactions(o).all().get(20, TimeUnit.SECONDS)) {
            int i = tids.indexOf(l.transactionalId());
            if (i >= 0) out.add(i + ":" + l.state().name());
        }
        java.util.Collections.sort(out);
        return out;
    }

    /** [all(), tp, foo] of deleteConsumerGroupOffsets(group, {tp, foo}), by exception class name. */
    static List<Object> deleteOffsetsOf(Admin admin, String group, TopicPartition tp, TopicPartition foo) {
        return deleteOffsets(admin, group, tp, foo);
    }

    private static List<Object> deleteOffsets(Admin admin, String group, TopicPartition tp, TopicPartition foo) {
        // in this order: all() fails with the first partition's error (DeleteConsumerGroupOffsetsResult)
        DeleteConsumerGroupOffsetsResult r = admin.deleteConsumerGroupOffsets(group, new java.util.LinkedHashSet<>(List.of(tp, foo)));
        return java.util.Arrays.asList(error(r.all()), error(r.partitionResult(tp)), error(r.partitionResult(foo)));
    }

    /** The simple class name of the exception a future completed with, or null. */
    static String error(org.apache.kafka.common.KafkaFuture<?> f) {
        Object o = Support.outcome(f);
        if (o == null) return null;
        @SuppressWarnings("unchecked")
        List<String> chain = (List<String>) ((Map<String, Object>) o).get("chain");
        String name = chain.get(0);
        return name.substring(name.lastIndexOf('.') + 1);
    }

    /** The exception and message a future completed with, or null. */
    static Object errorAndMessage(org.apache.kafka.common.KafkaFuture<?> f) {
        Object o = Support.outcome(f);
        if (o == null) return null;
        @SuppressWarnings("unchecked")
        Map<String, Object> m = (Map<String, Object>) o;
        return java.util.Arrays.asList(error(f), m.get("message"));
    }

    // ------------------------------------------------------------------ topics

    /**
     * testCreateTopicsReturnsConfigs (without the cluster-wide config changes), testLongTopicNames,
     * testNullConfigs, testDescribeTopicsWithIds, testDeleteTopicsWithIds,
     * and testCreateExistingTopicsThrowTopicExistsException.
     */
    static void topicEdgeCases(Support s, Map<String, Object> obs) throws Exception {
        String foo = s.name("edge-foo"), bar = s.name("edge-bar"), baz = s.name("edge-baz");
        try (Admin admin = s.admin()) {
            int node = admin.describeCluster().nodes().get(20, TimeUnit.SECONDS).iterator().next().id();
            var created = admin.createTopics(List.of(
                    new NewTopic(foo, Map.of(0, List.of(node), 1, List.of(node))).configs(Map.of("index.interval.bytes", "9999999")),
                    new NewTopic(bar, 3, (short) 1),
                    new NewTopic(baz, java.util.Optional.empty(), java.util.Optional.empty())));
            created.all().get(20, TimeUnit.SECONDS);
            Map<String, Object> shapes = new LinkedHashMap<>();
            for (String t : List.of(foo, bar, baz)) {
                shapes.put(t.substring(t.length() - 3), List.of(created.numPartitions(t).get(), created.replicationFactor(t).get()));
            }
            obs.put("created", shapes);
            Config fooConfig = created.config(foo).get();
            for (String name : List.of("cleanup.policy", "index.interval.bytes")) {
                ConfigEntry e = fooConfig.get(name);
                obs.put("config_" + name, e == null ? null : List.of(e.value(), e.source().name(), e.isReadOnly(), e.isSensitive()));
            }
            // s.name(x) is prefix + "-" + x: names of 249 (Kafka's longest) and 250 characters
            String longest = "x".repeat(248 - s.prefix.length()), tooLong = "x".repeat(249 - s.prefix.length());
            var longResults = admin.createTopics(List.of(new NewTopic(s.name(tooLong), 1, (short) 1),
                    new NewTopic(s.name(longest), 1, (short) 1))).values();
            obs.put("name_lengths", List.of(s.name(longest).length(), s.name(tooLong).length()));
            obs.put("long_names", java.util.Arrays.asList(error(longResults.get(s.name(longest))), error(longResults.get(s.name(tooLong)))));
            Map<String, String> nullRetention = new java.util.HashMap<>();
            nullRetention.put("retention.bytes", null);
            nullRetention.put("compression.type", "producer");
            obs.put("create_null_config", errorAndMessage(admin.createTopics(List.of(
                    new NewTopic(s.name("edge-null"), 1, (short) 1).configs(nullRetention))).all()));
            ConfigResource fooResource = new ConfigResource(ConfigResource.Type.TOPIC, foo);
            obs.put("alter_null_config", errorAndMessage(admin.incrementalAlterConfigs(Map.of(fooResource, List.of(
                    op("retention.bytes", null, AlterConfigOp.OpType.SET),
                    op("compression.type", "lz4", AlterConfigOp.OpType.SET)))).all()));
            obs.put("after_null_config", values(admin, List.of(fooResource), "compression.type", "retention.bytes"));
            obs.put("exists_validate_only", error(admin.createTopics(List.of(new NewTopic(foo, 1, (short) 2)),
                    new org.apache.kafka.clients.admin.CreateTopicsOptions().validateOnly(true)).all()));
            org.apache.kafka.common.Uuid fooId = admin.describeTopics(List.of(foo)).allTopicNames().get(20, TimeUnit.SECONDS)
                    .get(foo).topicId();
            org.apache.kafka.common.Uuid randomId = org.apache.kafka.common.Uuid.randomUuid();
            var byId = admin.describeTopics(org.apache.kafka.common.TopicCollection.ofTopicIds(List.of(fooId, randomId))).topicIdValues();
            obs.put("describe_by_id", java.util.Arrays.asList(
                    byId.get(fooId).get(20, TimeUnit.SECONDS).name().equals(foo), error(byId.get(randomId))));
            List<org.apache.kafka.common.Uuid> ids = new ArrayList<>();
            admin.describeTopics(List.of(bar, baz)).allTopicNames().get(20, TimeUnit.SECONDS).values()
                    .forEach(d -> ids.add(d.topicId()));
            obs.put("delete_by_id", error(admin.deleteTopics(org.apache.kafka.common.TopicCollection.ofTopicIds(ids)).all()));
            obs.put("deleted_gone", Support.eventually(() -> {
                Set<String> names = admin.listTopics().names().get();
                return !names.contains(bar) && !names.contains(baz) && names.contains(foo);
            }, 20_000));
        }
    }

    // ------------------------------------------------------------------ IncrementalAlterConfigs

    private static AlterConfigOp op(String name, String value, AlterConfigOp.OpType type) {
        return new AlterConfigOp(new ConfigEntry(name, value), type);
    }

    /**
     * testInvalidIncrementalAlterConfigs: duplicate keys refuse their resource alone, APPEND and
     * SUBTRACT need a LIST, values are range-checked; testAppendAlreadyExistsConfigsAndSubtract...:
     * appending a present value or subtracting an absent one changes nothing.
     */
    static void incrementalAlterInvalid(Support s, Map<String, Object> obs) throws Exception {
        String t1 = s.name("iac-1"), t2 = s.name("iac-2");
        ConfigResource r1 = new ConfigResource(ConfigResource.Type.TOPIC, t1);
        ConfigResource r2 = new ConfigResource(ConfigResource.Type.TOPIC, t2);
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, t1, 1);
            Support.createTopic(admin, t2, 1);
            var first = admin.incrementalAlterConfigs(Map.of(
                    r1, List.of(op("min.cleanable.dirty.ratio", "0.75", AlterConfigOp.OpType.SET),
                            op("min.cleanable.dirty.ratio", "0.65", AlterConfigOp.OpType.SET),
                            op("compression.type", "gzip", AlterConfigOp.OpType.SET)),
                    r2, List.of(op("min.cleanable.dirty.ratio", "0.9", AlterConfigOp.OpType.SET)))).values();
            obs.put("duplicate", java.util.Arrays.asList(errorAndMessage(first.get(r1)), errorAndMessage(first.get(r2))));
            obs.put("after_duplicate", values(admin, List.of(r1, r2), "min.cleanable.dirty.ratio", "compression.type"));
            var second = admin.incrementalAlterConfigs(Map.of(
                    r1, List.of(op("compression.type", "gzip", AlterConfigOp.OpType.APPEND)),
                    r2, List.of(op("compression.type", "snappy", AlterConfigOp.OpType.SUBTRACT)))).values();
            obs.put("not_list", java.util.Arrays.asList(errorAndMessage(second.get(r1)), errorAndMessage(second.get(r2))));
            obs.put("out_of_range", errorAndMessage(admin.incrementalAlterConfigs(Map.of(
                    r1, List.of(op("min.cleanable.dirty.ratio", "1.1", AlterConfigOp.OpType.SET)))).values().get(r1)));
            obs.put("after_invalid", values(admin, List.of(r1, r2), "min.cleanable.dirty.ratio", "compression.type"));
            // LIST configs: leader.replication.throttled.replicas and cleanup.policy
            String throttled = "leader.replication.throttled.replicas";
            admin.incrementalAlterConfigs(Map.of(r1, List.of(op(throttled, "0:1", AlterConfigOp.OpType.SET)))).all().get();
            obs.put("append_present", error(admin.incrementalAlterConfigs(Map.of(
                    r1, List.of(op(throttled, "0:1", AlterConfigOp.OpType.APPEND)))).all()));
            obs.put("subtract_absent", error(admin.incrementalAlterConfigs(Map.of(
                    r1, List.of(op(throttled, "0:99", AlterConfigOp.OpType.SUBTRACT)))).all()));
            admin.incrementalAlterConfigs(Map.of(r2, List.of(op("cleanup.policy", "compact", AlterConfigOp.OpType.APPEND)))).all().get();
            obs.put("appended", values(admin, List.of(r1, r2), throttled, "cleanup.policy"));
            admin.incrementalAlterConfigs(Map.of(r2, List.of(op("cleanup.policy", "delete", AlterConfigOp.OpType.SUBTRACT)))).all().get();
            obs.put("subtracted", values(admin, List.of(r2), "cleanup.policy"));
        }
    }

    private static Map<String, Object> values(Admin admin, Collection<ConfigResource> rs, String... names) throws Exception {
        Map<ConfigResource, Config> got = admin.describeConfigs(rs).all().get(20, TimeUnit.SECONDS);
        Map<String, Object> out = new LinkedHashMap<>();
        for (ConfigResource r : rs) {
            List<Object> vs = new ArrayList<>();
            for (String n : names) {
                ConfigEntry e = got.get(r).get(n);
                vs.add(e == null ? null : e.value());
            }
            out.put(r.name().substring(r.name().length() - 1), vs);
        }
        return out;
    }
}
