import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.AlterConfigsOptions;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.CreatePartitionsOptions;
import org.apache.kafka.clients.admin.DescribeConfigsOptions;
import org.apache.kafka.clients.admin.DescribeReplicaLogDirsResult;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionReplica;
import org.apache.kafka.common.config.ConfigResource;

/**
 * Admin scenarios after Apache Kafka 3.9's PlaintextAdminIntegrationTest (testCreatePartitions,
 * testDescribeNonExistingTopic, testDescribeConfigsForTopic, testDescribeConfigsNonexistent,
 * testIncludeDocumentation, testDescribeAndAlterConfigs with checkValidAlterConfigs,
 * testInvalidAlterConfigs, testValidIncrementalAlterConfigs, testAppendConfigTo*, testDescribeLogDirs,
 * testDescribeReplicaLogDirs, testAlterReplicaLogDirs' first step, testInvalidAlterPartitionReassignments,
 * testListReassignmentsDoesNotShow*, testElectUncleanLeadersForUnknownPartitions), on one broker.
 * Each scenario only observes; compat/test_java_reference_replay.py holds the expectations.
 */
final class AdminReplay {
    private AdminReplay() {
    }

    /** null when {@code f} succeeded, else [simple class name, message] of what it failed with. */
    static List<Object> err(KafkaFuture<?> f) {
        try {
            f.get(30, TimeUnit.SECONDS);
            return null;
        } catch (ExecutionException e) {
            return Arrays.asList(e.getCause().getClass().getSimpleName(), e.getCause().getMessage());
        } catch (Exception e) {
            return Arrays.asList(e.getClass().getSimpleName(), e.getMessage());
        }
    }

    static int node(Admin admin) throws Exception {
        return admin.describeCluster().nodes().get(20, TimeUnit.SECONDS).iterator().next().id();
    }

    static int partitionCount(Admin admin, String topic) throws Exception {
        return admin.describeTopics(List.of(topic)).allTopicNames().get(20, TimeUnit.SECONDS).get(topic).partitions().size();
    }

    static List<List<Integer>> lists(Integer[]... replicas) {
        List<List<Integer>> out = new ArrayList<>();
        for (Integer[] r : replicas) out.add(Arrays.asList(r));
        return out;
    }

    // ------------------------------------------------------------------ testCreatePartitions

    static List<Object> grow(Admin admin, String topic, NewPartitions np, boolean validateOnly) {
        return err(admin.createPartitions(Map.of(topic, np), new CreatePartitionsOptions().validateOnly(validateOnly))
                .values().get(topic));
    }

    /**
     * testCreatePartitions on one broker (node n): the Kafka test's brokers 0, 1 and 2 become n, and a
     * broker that does not exist is n+1 or n+12.
     */
    static void createPartitionsErrors(Support s, Map<String, Object> obs) throws Exception {
        String t1 = s.name("cp-topic-1"), t2 = s.name("cp-topic-2"), unknown = s.name("cp-unknown");
        try (Admin admin = s.admin()) {
            int n = node(admin);
            Support.createTopic(admin, t1, 1);
            Support.createTopic(admin, t2, 1);
            obs.put("t1_validate_only", grow(admin, t1, NewPartitions.increaseTo(3), true));
            obs.put("t1_after_validate_only", partitionCount(admin, t1));
            obs.put("t1_grow", grow(admin, t1, NewPartitions.increaseTo(3), false));
            Support.awaitTopic(admin, t1, 3);
            List<List<Integer>> assignments = lists(new Integer[]{n}, new Integer[]{n});
            obs.put("t2_validate_only", grow(admin, t2, NewPartitions.increaseTo(3, assignments), true));
            obs.put("t2_after_validate_only", partitionCount(admin, t2));
            obs.put("t2_grow", grow(admin, t2, NewPartitions.increaseTo(3, assignments), false));
            Support.awaitTopic(admin, t2, 3);
            obs.put("t2_replicas", admin.describeTopics(List.of(t2)).allTopicNames().get(20, TimeUnit.SECONDS).get(t2)
                    .partitions().stream().map(p -> p.replicas().stream().map(r -> r.id() - n).toList()).toList());
            for (boolean validateOnly : List.of(true, false)) {
                Map<String, Object> cases = new LinkedHashMap<>();
                cases.put("decrease", grow(admin, t1, NewPartitions.increaseTo(1), validateOnly));
                cases.put("noop", grow(admin, t2, NewPartitions.increaseTo(3), validateOnly));
                cases.put("noop_same_assignment", grow(admin, t2, NewPartitions.increaseTo(3, assignments), validateOnly));
                cases.put("unknown_topic", grow(admin, unknown, NewPartitions.increaseTo(2), validateOnly));
                cases.put("negative", grow(admin, t1, NewPartitions.increaseTo(-22), validateOnly));
                cases.put("unregistered_second_replica", grow(admin, t1,
                        NewPartitions.increaseTo(4, lists(new Integer[]{n, n + 1})), validateOnly));
                cases.put("too_few_assignments", grow(admin, t1, NewPartitions.increaseTo(6, lists(new Integer[]{n})), validateOnly));
                cases.put("too_many_assignments", grow(admin, t1,
                        NewPartitions.increaseTo(4, lists(new Integer[]{n}, new Integer[]{n})), validateOnly));
                cases.put("duplicate_brokers", grow(admin, t1, NewPartitions.increaseTo(4, lists(new Integer[]{n, n})), validateOnly));
                cases.put("unknown_broker", grow(admin, t1, NewPartitions.increaseTo(4, lists(new Integer[]{n + 12})), validateOnly));
                cases.put("empty_assignments", grow(admin, t1, NewPartitions.increaseTo(4, Collections.emptyList()), validateOnly));
                cases.put("t1_partitions", partitionCount(admin, t1));
                cases.put("t2_partitions", partitionCount(admin, t2));
                obs.put(validateOnly ? "validate_only" : "for_real", cases);
            }
            Map<String, KafkaFuture<Void>> mixed = admin.createPartitions(Map.of(t1, NewPartitions.increaseTo(4),
                    t2, NewPartitions.increaseTo(2))).values();
            obs.put("mixed", Arrays.asList(err(mixed.get(t1)), err(mixed.get(t2))));
            Support.awaitTopic(admin, t1, 4);
            obs.put("mixed_t2_partitions", partitionCount(admin, t2));
            admin.deleteTopics(List.of(t1)).all().get(20, TimeUnit.SECONDS);
            obs.put("deleted", grow(admin, t1, NewPartitions.increaseTo(4), true));
            obs.put("node", n);
        }
    }

    // ------------------------------------------------------------------ describing topics and configs

    /** testDescribeNonExistingTopic, testDescribeConfigsForTopic, testDescribeConfigsNonexistent, testIncludeDocumentation. */
    static void describeErrors(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("describe-existing");
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, topic, 2);
            String missing = s.name("describe-missing");
            var described = admin.describeTopics(List.of(missing, topic)).topicNameValues();
            obs.put("existing_name", described.get(topic).get(20, TimeUnit.SECONDS).name().equals(topic));
            obs.put("missing", err(described.get(missing)));
            ConfigResource existing = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            obs.put("configs_existing", err(admin.describeConfigs(List.of(existing)).values().get(existing)));
            for (String name : List.of(s.name("describe-unknown"), "(invalid topic)")) {
                ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, name);
                obs.put(name.startsWith("(") ? "configs_invalid" : "configs_unknown",
                        err(admin.describeConfigs(List.of(r)).values().get(r)));
            }
            // Kafka's controller validates the name first too (ControllerConfigurationValidator.validateTopicName)
            ConfigResource invalid = new ConfigResource(ConfigResource.Type.TOPIC, "(invalid topic)");
            obs.put("alter_invalid", Arrays.asList(
                    err(admin.incrementalAlterConfigs(Map.of(invalid, List.of(op("retention.ms", "1000", AlterConfigOp.OpType.SET))))
                            .values().get(invalid)),
                    err(legacyAlter(admin, Map.of(invalid, new Config(List.of(new ConfigEntry("retention.ms", "1000")))),
                            new AlterConfigsOptions()).get(invalid))));
            // ... and the new configs before it looks for the topic (ConfigurationControlManager.validateAlterConfig)
            ConfigResource unknown = new ConfigResource(ConfigResource.Type.TOPIC, s.name("describe-unknown"));
            obs.put("alter_unknown", Arrays.asList(
                    first(err(admin.incrementalAlterConfigs(Map.of(unknown, List.of(op("retention.ms", "1000", AlterConfigOp.OpType.SET))))
                            .values().get(unknown))),
                    err(admin.incrementalAlterConfigs(Map.of(unknown, List.of(op("min.cleanable.dirty.ratio", "1.5", AlterConfigOp.OpType.SET))))
                            .values().get(unknown)),
                    err(admin.incrementalAlterConfigs(Map.of(unknown, List.of(op("compression.type", "lz4", AlterConfigOp.OpType.APPEND))))
                            .values().get(unknown))));
            for (ConfigResource.Type type : List.of(ConfigResource.Type.BROKER, ConfigResource.Type.BROKER_LOGGER)) {
                ConfigResource r = new ConfigResource(type, "-1");
                List<Object> e = err(admin.describeConfigs(List.of(r), new DescribeConfigsOptions().timeoutMs(1500)).all());
                obs.put("configs_" + type.name().toLowerCase() + "_minus_one", e == null ? null : e.get(0));
            }
            for (boolean docs : List.of(true, false)) {
                Config c = admin.describeConfigs(List.of(existing), new DescribeConfigsOptions().includeDocumentation(docs))
                        .values().get(existing).get(20, TimeUnit.SECONDS);
                List<String> without = c.entries().stream().filter(e -> e.documentation() == null).map(ConfigEntry::name).toList();
                List<String> with = c.entries().stream().filter(e -> e.documentation() != null).map(ConfigEntry::name).toList();
                obs.put("documentation_" + docs, Map.of("entries", c.entries().size(), "without", without, "with", with));
            }
        }
    }

    static Map<String, Config> describe(Admin admin, ConfigResource... rs) throws Exception {
        Map<String, Config> out = new LinkedHashMap<>();
        admin.describeConfigs(Arrays.asList(rs)).all().get(20, TimeUnit.SECONDS).forEach((r, c) -> out.put(r.name(), c));
        return out;
    }

    static List<Object> entry(Config c, String name) {
        ConfigEntry e = c.get(name);
        return e == null ? null : Arrays.asList(e.value(), e.isDefault(), e.isSensitive(), e.isReadOnly());
    }

    /** testDescribeAndAlterConfigs (the topics and the broker's own keys) and checkValidAlterConfigs. */
    static void describeAndAlterConfigs(Support s, Map<String, Object> obs) throws Exception {
        String t1 = s.name("describe-alter-1"), t2 = s.name("describe-alter-2");
        ConfigResource r1 = new ConfigResource(ConfigResource.Type.TOPIC, t1);
        ConfigResource r2 = new ConfigResource(ConfigResource.Type.TOPIC, t2);
        try (Admin admin = s.admin()) {
            int n = node(admin);
            ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, String.valueOf(n));
            obs.put("node", n);
            admin.createTopics(List.of(new NewTopic(t1, 1, (short) 1).configs(Map.of("max.message.bytes", "500000",
                    "retention.ms", "60000000")))).all().get(20, TimeUnit.SECONDS);
            Support.createTopic(admin, t2, 1);
            Support.awaitTopic(admin, t1, 1);
            Map<String, Config> cs = describe(admin, r1, r2, broker);
            obs.put("described", cs.size());
            obs.put("t1_max_message_bytes", entry(cs.get(t1), "max.message.bytes"));
            obs.put("t1_retention_ms", entry(cs.get(t1), "retention.ms"));
            obs.put("t2_max_message_bytes", entry(cs.get(t2), "max.message.bytes"));
            obs.put("broker_id", entry(cs.get(broker.name()), "broker.id"));
            obs.put("broker_compression_type", entry(cs.get(broker.name()), "compression.type"));
            var altered = legacyAlter(admin, Map.of(r1, new Config(List.of(new ConfigEntry("flush.ms", "1000"))),
                    r2, new Config(List.of(new ConfigEntry("min.cleanable.dirty.ratio", "0.9"),
                            new ConfigEntry("compression.type", "lz4")))), new AlterConfigsOptions());
            obs.put("alter", Arrays.asList(err(altered.get(r1)), err(altered.get(r2))));
            // describeConfigs with a resource twice (the Kafka test does so on purpose)
            cs = describe(admin, r1, r2, r2);
            obs.put("described_with_duplicate", cs.size());
            obs.put("after_alter", Map.of("t1", Arrays.asList(cs.get(t1).get("flush.ms").value(),
                    cs.get(t1).get("max.message.bytes").value(), cs.get(t1).get("retention.ms").value()),
                    "t2", Arrays.asList(cs.get(t2).get("min.cleanable.dirty.ratio").value(),
                            cs.get(t2).get("compression.type").value())));
            var validated = legacyAlter(admin, Map.of(r1, new Config(List.of(new ConfigEntry("max.message.bytes", "10"))),
                    r2, new Config(List.of(new ConfigEntry("min.cleanable.dirty.ratio", "0.3")))),
                    new AlterConfigsOptions().validateOnly(true));
            obs.put("validate_only", Arrays.asList(err(validated.get(r1)), err(validated.get(r2))));
            cs = describe(admin, r1, r2);
            obs.put("after_validate_only", Arrays.asList(cs.get(t1).get("max.message.bytes").value(),
                    cs.get(t2).get("min.cleanable.dirty.ratio").value()));
        }
    }

    /** testInvalidAlterConfigs (checkInvalidAlterConfigs): one invalid topic, one valid, one broker key not dynamic. */
    static void invalidAlterConfigs(Support s, Map<String, Object> obs) throws Exception {
        String t1 = s.name("invalid-alter-1"), t2 = s.name("invalid-alter-2");
        ConfigResource r1 = new ConfigResource(ConfigResource.Type.TOPIC, t1);
        ConfigResource r2 = new ConfigResource(ConfigResource.Type.TOPIC, t2);
        try (Admin admin = s.admin()) {
            ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, String.valueOf(node(admin)));
            Support.createTopic(admin, t1, 1);
            Support.createTopic(admin, t2, 1);
            Config c1 = new Config(List.of(new ConfigEntry("min.cleanable.dirty.ratio", "1.1"),
                    new ConfigEntry("compression.type", "lz4")));
            Config zk = new Config(List.of(new ConfigEntry("zookeeper.connect", "localhost:2181")));
            for (String codec : List.of("snappy", "gzip")) {
                boolean validateOnly = codec.equals("gzip");
                var r = legacyAlter(admin, Map.of(r1, c1, r2, new Config(List.of(new ConfigEntry("compression.type", codec))),
                        broker, zk), new AlterConfigsOptions().validateOnly(validateOnly));
                String key = validateOnly ? "validate_only" : "for_real";
                obs.put(key, Arrays.asList(first(err(r.get(r1))), err(r.get(r2)), first(err(r.get(broker)))));
                Map<String, Config> cs = describe(admin, r1, r2, broker);
                obs.put(key + "_after", Arrays.asList(cs.get(t1).get("min.cleanable.dirty.ratio").value(),
                        cs.get(t1).get("compression.type").value(), cs.get(t2).get("compression.type").value(),
                        cs.get(broker.name()).get("compression.type").value()));
            }
        }
    }

    static Object first(List<Object> e) {
        return e == null ? null : e.get(0);
    }

    static Object values(Admin admin, ConfigResource r, String... names) throws Exception {
        Config c = describe(admin, r).get(r.name());
        List<Object> out = new ArrayList<>();
        for (String name : names) out.add(c.get(name) == null ? null : c.get(name).value());
        return out;
    }

    static AlterConfigOp op(String name, String value, AlterConfigOp.OpType type) {
        return new AlterConfigOp(new ConfigEntry(name, value), type);
    }

    /** testValidIncrementalAlterConfigs, testAppendConfigToEmptyDefaultValue and testAppendConfigToExistentValue. */
    static void incrementalAlterValid(Support s, Map<String, Object> obs) throws Exception {
        String t1 = s.name("inc-alter-1"), t2 = s.name("inc-alter-2"), t3 = s.name("inc-append-3");
        ConfigResource r1 = new ConfigResource(ConfigResource.Type.TOPIC, t1);
        ConfigResource r2 = new ConfigResource(ConfigResource.Type.TOPIC, t2);
        ConfigResource r3 = new ConfigResource(ConfigResource.Type.TOPIC, t3);
        String throttled = "leader.replication.throttled.replicas";
        AlterConfigOp.OpType set = AlterConfigOp.OpType.SET, append = AlterConfigOp.OpType.APPEND,
                subtract = AlterConfigOp.OpType.SUBTRACT, delete = AlterConfigOp.OpType.DELETE;
        try (Admin admin = s.admin()) {
            admin.createTopics(List.of(new NewTopic(t1, 1, (short) 1).configs(Map.of("retention.ms", "60000000",
                    "cleanup.policy", "compact")), new NewTopic(t3, 1, (short) 1).configs(Map.of(throttled, "1:1"))))
                    .all().get(20, TimeUnit.SECONDS);
            Support.createTopic(admin, t2, 1);
            Support.awaitTopic(admin, t1, 1);
            var first = admin.incrementalAlterConfigs(Map.of(
                    r1, List.of(op("flush.ms", "1000", set), op("cleanup.policy", "delete", append), op("retention.ms", "", delete)),
                    r2, List.of(op("min.cleanable.dirty.ratio", "0.9", set), op("compression.type", "lz4", set),
                            op("cleanup.policy", "compact", append)))).values();
            obs.put("first", Arrays.asList(err(first.get(r1)), err(first.get(r2))));
            obs.put("first_t1", values(admin, r1, "flush.ms", "cleanup.policy", "retention.ms"));
            obs.put("first_t2", values(admin, r2, "min.cleanable.dirty.ratio", "compression.type", "cleanup.policy"));
            var second = admin.incrementalAlterConfigs(Map.of(
                    r1, List.of(op("cleanup.policy", "compact", subtract), op(throttled, "0", subtract)),
                    r2, List.of(op("cleanup.policy", "compact,delete", subtract)))).values();
            obs.put("second", Arrays.asList(err(second.get(r1)), err(second.get(r2))));
            obs.put("second_t1", values(admin, r1, "cleanup.policy", "flush.ms", throttled));
            obs.put("second_t2", values(admin, r2, "cleanup.policy"));
            AlterConfigsOptions validateOnly = new AlterConfigsOptions().validateOnly(true);
            obs.put("validate_only", err(admin.incrementalAlterConfigs(Map.of(r1, List.of(op("cleanup.policy", "compact", append))),
                    validateOnly).all()));
            obs.put("validate_only_t1", values(admin, r1, "cleanup.policy"));
            obs.put("validate_only_invalid", err(admin.incrementalAlterConfigs(Map.of(r1,
                    List.of(op("compression.type", "zip", set))), validateOnly).values().get(r1)));
            obs.put("append_to_empty", err(admin.incrementalAlterConfigs(Map.of(r2, List.of(op(throttled, "0:0", append)))).all()));
            obs.put("append_to_existing", err(admin.incrementalAlterConfigs(Map.of(r3, List.of(op(throttled, "0:0", append)))).all()));
            obs.put("appended", Arrays.asList(values(admin, r2, throttled), values(admin, r3, throttled)));
        }
    }

    /**
     * testIncrementalAlterConfigsDeleteAndSetBrokerConfigs and testIncrementalAlterConfigsDeleteBrokerConfigs
     * on this broker: the replication throttles set, changed and deleted; a deleted one is no longer
     * described with a value (the Kafka tests read a missing entry as "").
     */
    static void brokerThrottleConfigs(Support s, Map<String, Object> obs) throws Exception {
        String leader = "leader.replication.throttled.rate", follower = "follower.replication.throttled.rate",
                alterDirs = "replica.alter.log.dirs.io.max.bytes.per.second";
        AlterConfigOp.OpType set = AlterConfigOp.OpType.SET, delete = AlterConfigOp.OpType.DELETE;
        try (Admin admin = s.admin()) {
            ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, String.valueOf(node(admin)));
            obs.put("set", err(admin.incrementalAlterConfigs(Map.of(broker, List.of(op(leader, "123", set), op(follower, "456", set))))
                    .all()));
            obs.put("after_set", throttles(admin, broker, leader, follower, alterDirs));
            obs.put("change", err(admin.incrementalAlterConfigs(Map.of(broker, List.of(op(leader, "", delete),
                    op(follower, "654", set), op(alterDirs, "987", set)))).all()));
            obs.put("after_change", throttles(admin, broker, leader, follower, alterDirs));
            obs.put("delete", err(admin.incrementalAlterConfigs(Map.of(broker, List.of(op(leader, "", delete),
                    op(follower, "", delete), op(alterDirs, "", delete)))).all()));
            obs.put("after_delete", throttles(admin, broker, leader, follower, alterDirs));
        }
    }

    /** Each name's described value, "" when the broker does not describe it (the Kafka tests' getOrElse). */
    static List<Object> throttles(Admin admin, ConfigResource broker, String... names) throws Exception {
        Config c = describe(admin, broker).get(broker.name());
        List<Object> out = new ArrayList<>();
        for (String name : names) out.add(c.get(name) == null || c.get(name).value() == null ? "" : c.get(name).value());
        return out;
    }

    // ------------------------------------------------------------------ log dirs, reassignments, elections

    /** testDescribeLogDirs, testDescribeReplicaLogDirs and testAlterReplicaLogDirs' step before the topic exists. */
    static void logDirs(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("replica-dirs");
        try (Admin admin = s.admin()) {
            int n = node(admin);
            Map<String, LogDirDescription> dirs = admin.describeLogDirs(List.of(n)).allDescriptions().get(20, TimeUnit.SECONDS).get(n);
            String dir = dirs.keySet().iterator().next();
            TopicPartitionReplica r0 = new TopicPartitionReplica(topic, 0, n);
            obs.put("alter_before_create", first(err(admin.alterReplicaLogDirs(Map.of(r0, dir)).values().get(r0))));
            Support.createTopic(admin, topic, 10);
            dirs = admin.describeLogDirs(List.of(n)).allDescriptions().get(20, TimeUnit.SECONDS).get(n);
            Map<String, String> dirOf = new TreeMap<>();
            boolean sizes = true;
            for (Map.Entry<String, LogDirDescription> d : dirs.entrySet()) {
                sizes &= d.getValue().totalBytes().isPresent() && d.getValue().usableBytes().isPresent();
                d.getValue().replicaInfos().keySet().stream().filter(tp -> tp.topic().equals(topic))
                        .forEach(tp -> dirOf.put(String.valueOf(tp.partition()), d.getKey()));
            }
            obs.put("partitions_listed", dirOf.keySet().stream().map(Integer::valueOf).sorted().toList());
            obs.put("sizes_present", sizes);
            List<TopicPartitionReplica> replicas = new ArrayList<>();
            for (int p = 0; p < 10; p++) replicas.add(new TopicPartitionReplica(topic, p, n));
            Map<TopicPartitionReplica, DescribeReplicaLogDirsResult.ReplicaLogDirInfo> infos =
                    admin.describeReplicaLogDirs(replicas).all().get(20, TimeUnit.SECONDS);
            List<Object> mismatched = new ArrayList<>();
            infos.forEach((r, info) -> {
                if (!String.valueOf(info.getCurrentReplicaLogDir()).equals(dirOf.get(String.valueOf(r.partition())))) {
                    mismatched.add(r.partition() + ":" + info.getCurrentReplicaLogDir());
                }
            });
            obs.put("replica_dirs", infos.size());
            obs.put("replica_dir_mismatches", mismatched);
        }
    }

    /**
     * testDeleteRecordsWithException and what Kafka's Partition.deleteRecordsOnLeader answers besides:
     * an offset below the log start changes nothing, a negative one (other than -1, the high
     * watermark) is OFFSET_OUT_OF_RANGE, as is one past the high watermark, and a compacted topic
     * POLICY_VIOLATION.
     */
    static void deleteRecordsEdges(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("delete-edges"), compacted = s.name("delete-compacted");
        TopicPartition tp = new TopicPartition(topic, 0), ctp = new TopicPartition(compacted, 0);
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, topic, 1);
            admin.createTopics(List.of(new NewTopic(compacted, 1, (short) 1).configs(Map.of("cleanup.policy", "compact"))))
                    .all().get(20, TimeUnit.SECONDS);
            Support.awaitTopic(admin, compacted, 1);
            try (org.apache.kafka.clients.producer.KafkaProducer<byte[], byte[]> p = s.producer()) {
                ClientReplay.sendRecords(p, tp, 10, 0);
                ClientReplay.sendRecords(p, ctp, 10, 0);
            }
            List<Object> steps = new ArrayList<>();
            for (long offset : new long[]{5, 3, 20, -2}) steps.add(lowWatermark(admin, tp, offset));
            obs.put("steps", steps);
            obs.put("compacted", lowWatermark(admin, ctp, 5));
        }
    }

    static Object lowWatermark(Admin admin, TopicPartition tp, long offset) {
        var f = admin.deleteRecords(Map.of(tp, org.apache.kafka.clients.admin.RecordsToDelete.beforeOffset(offset)))
                .lowWatermarks().get(tp);
        try {
            return f.get(20, TimeUnit.SECONDS).lowWatermark();
        } catch (Exception e) {
            return err(f);
        }
    }

    /** testInvalidAlterPartitionReassignments, testListReassignmentsDoesNotShow*, testElectUncleanLeadersForUnknownPartitions. */
    static void reassignmentErrors(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("bad-reassign");
        try (Admin admin = s.admin()) {
            int n = node(admin);
            Support.createTopic(admin, topic, 4);
            TopicPartition tp1 = new TopicPartition(topic, 0), tp2 = new TopicPartition(topic, 1), tp3 = new TopicPartition(topic, 2);
            TopicPartition noTopic = new TopicPartition(s.name("topicA"), 0), noPartition = new TopicPartition(topic, 4);
            Optional<NewPartitionReassignment> valid = Optional.of(new NewPartitionReassignment(List.of(n)));
            Map<TopicPartition, Optional<NewPartitionReassignment>> targets = new LinkedHashMap<>();
            for (TopicPartition tp : List.of(tp1, tp2, tp3, noTopic, noPartition)) targets.put(tp, valid);
            var r = admin.alterPartitionReassignments(targets).values();
            obs.put("nonexistent", Arrays.asList(first(err(r.get(noTopic))), first(err(r.get(noPartition)))));
            targets.clear();
            targets.put(tp1, Optional.of(new NewPartitionReassignment(List.of(n, n + 1))));
            targets.put(tp2, Optional.of(new NewPartitionReassignment(List.of(-3, -2, -1))));
            targets.put(tp3, Optional.of(new NewPartitionReassignment(List.of(n, n))));
            r = admin.alterPartitionReassignments(targets).values();
            obs.put("invalid_replicas", Arrays.asList(first(err(r.get(tp1))), first(err(r.get(tp2))), first(err(r.get(tp3)))));
            TopicPartition untouched = new TopicPartition(topic, 3), gone = new TopicPartition(s.name("never-created"), 0);
            obs.put("listed", Arrays.asList(
                    admin.listPartitionReassignments(Set.of(untouched)).reassignments().get(20, TimeUnit.SECONDS).size(),
                    admin.listPartitionReassignments(Set.of(gone)).reassignments().get(20, TimeUnit.SECONDS).size()));
            TopicPartition unknownPartition = new TopicPartition(topic, 9), unknownTopic = new TopicPartition(s.name("unknown-topic"), 0);
            Map<TopicPartition, Optional<Throwable>> elected = admin.electLeaders(ElectionType.UNCLEAN,
                    Set.of(unknownPartition, unknownTopic)).partitions().get(20, TimeUnit.SECONDS);
            obs.put("unclean_unknown", Arrays.asList(
                    elected.get(unknownPartition).map(t -> t.getClass().getSimpleName()).orElse(null),
                    elected.get(unknownTopic).map(t -> t.getClass().getSimpleName()).orElse(null)));
        }
    }

    /**
     * Admin.alterConfigs (the legacy AlterConfigs API, which these Kafka tests exercise) is in kafka-clients 3.x
     * only; it is called by reflection so that the drivers also compile against 4.x, which never runs these scenarios.
     */
    @SuppressWarnings("unchecked")
    static Map<ConfigResource, KafkaFuture<Void>> legacyAlter(Admin admin, Map<ConfigResource, Config> configs,
            AlterConfigsOptions options) throws Exception {
        Object result = Admin.class.getMethod("alterConfigs", Map.class, AlterConfigsOptions.class)
                .invoke(admin, configs, options);
        return (Map<ConfigResource, KafkaFuture<Void>>) result.getClass().getMethod("values").invoke(result);
    }
}
