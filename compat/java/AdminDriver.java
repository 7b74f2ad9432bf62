import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.LinkedHashMap;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.CreatePartitionsOptions;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeConsumerGroupsOptions;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicCollection;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionReplica;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.quota.ClientQuotaFilterComponent;

/**
 * Admin calls beyond topics and transactions, with the stock Java Admin (kafka-clients 3.9):
 * partitions, log dirs, leader elections, reassignments, client quotas (and a producer a quota
 * throttles), describeTopics through DescribeTopicPartitions, authorized operations. Each scenario
 * only observes and records; compat/test_java_admin.py holds the expectations.
 */
public final class AdminDriver {
    public static void main(String[] args) {
        Map<String, Support.Scenario> all = new LinkedHashMap<>();
        all.put("admin.create_partitions", AdminDriver::createPartitions);
        all.put("admin.log_dirs", AdminDriver::logDirs);
        all.put("admin.log_dirs_offline", AdminDriver::logDirsOffline);
        all.put("admin.elect_leaders", AdminDriver::electLeaders);
        all.put("admin.reassignments", AdminDriver::reassignments);
        all.put("admin.client_quotas", AdminDriver::clientQuotas);
        all.put("admin.describe_topics_paged", AdminDriver::describeTopicsPaged);
        all.put("admin.authorized_operations", AdminDriver::authorizedOperations);
        all.put("admin.acls", AdminDriver::acls);
        all.put("quota.produce_throttle", AdminDriver::produceThrottle);
        all.put("quota.fetch_throttle", AdminDriver::fetchThrottle);
        all.put("admin.internal_topics", AdminDriver::internalTopics);
        Support.main("AdminDriver", all, args);
    }

    static int partitions(Admin admin, String topic) throws Exception {
        return admin.describeTopics(List.of(topic)).allTopicNames().get(20, TimeUnit.SECONDS).get(topic).partitions().size();
    }

    // ------------------------------------------------------------------ CreatePartitions

    static void createPartitions(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("grow");
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, topic, 2);
            int node = admin.describeCluster().nodes().get().iterator().next().id();
            obs.put("validate_only", Support.outcome(admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(6)),
                    new CreatePartitionsOptions().validateOnly(true)).all()));
            obs.put("after_validate_only", partitions(admin, topic));
            obs.put("grow", Support.outcome(admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(4))).all()));
            Support.awaitTopic(admin, topic, 4);
            obs.put("after_grow", partitions(admin, topic));
            obs.put("same", Support.outcome(admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(4))).all()));
            obs.put("fewer", Support.outcome(admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(3))).all()));
            obs.put("other_broker", Support.outcome(admin.createPartitions(Map.of(topic,
                    NewPartitions.increaseTo(5, List.of(List.of(node + 1000))))).all()));
            obs.put("assigned_here", Support.outcome(admin.createPartitions(Map.of(topic,
                    NewPartitions.increaseTo(5, List.of(List.of(node))))).all()));
            Support.awaitTopic(admin, topic, 5);
            obs.put("unknown", Support.outcome(admin.createPartitions(Map.of(s.name("no-such-topic"), NewPartitions.increaseTo(2))).all()));
            try (KafkaProducer<byte[], byte[]> p = s.producer()) {
                obs.put("new_partition_offset", p.send(new ProducerRecord<>(topic, 4, null, Support.b("v"))).get().offset());
            }
        }
    }

    // ------------------------------------------------------------------ log dirs

    /** Against a broker whose log directory already failed: what describeLogDirs and describeTopics
     * report of it (option topic: a topic on that directory). */
    static void logDirsOffline(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.option("topic", "t");
        try (Admin admin = s.admin()) {
            int node = admin.describeCluster().nodes().get().iterator().next().id();
            Map<String, LogDirDescription> dirs = admin.describeLogDirs(List.of(node)).allDescriptions().get().get(node);
            Map<String, Object> described = new TreeMap<>();
            for (Map.Entry<String, LogDirDescription> e : dirs.entrySet()) {
                LogDirDescription d = e.getValue();
                described.put(e.getKey(), Support.map("error", d.error() == null ? null : d.error().getClass().getName(),
                        "replicas", d.replicaInfos().size(), "total_bytes_present", d.totalBytes().isPresent()));
            }
            obs.put("dirs", described);
            TopicDescription t = admin.describeTopics(List.of(topic)).allTopicNames().get(20, TimeUnit.SECONDS).get(topic);
            List<Object> leaders = new ArrayList<>();
            for (var p : t.partitions()) leaders.add(p.leader() == null ? null : p.leader().id());
            obs.put("leaders", leaders);
        }
    }

    static void logDirs(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("logdirs");
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, topic, 2);
            int node = admin.describeCluster().nodes().get().iterator().next().id();
            try (KafkaProducer<byte[], byte[]> p = s.producer()) {
                for (int i = 0; i < 10; i++) p.send(new ProducerRecord<>(topic, 1, null, Support.b("value-" + i))).get();
            }
            Map<String, LogDirDescription> dirs = admin.describeLogDirs(List.of(node)).allDescriptions().get().get(node);
            obs.put("dir_count", dirs.size());
            String dir = dirs.keySet().iterator().next();
            LogDirDescription d = dirs.get(dir);
            obs.put("dir_error", d.error() == null ? null : d.error().getClass().getName());
            obs.put("total_bytes_present", d.totalBytes().isPresent() && d.totalBytes().getAsLong() > 0);
            obs.put("usable_le_total", d.usableBytes().isPresent()
                    && d.usableBytes().getAsLong() <= d.totalBytes().getAsLong());
            Map<String, Object> replicas = new TreeMap<>();
            for (Map.Entry<TopicPartition, ReplicaInfo> e : d.replicaInfos().entrySet()) {
                if (!e.getKey().topic().equals(topic)) continue;
                ReplicaInfo r = e.getValue();
                replicas.put(String.valueOf(e.getKey().partition()),
                        Support.map("size_positive", r.size() > 0, "lag", r.offsetLag(), "future", r.isFuture()));
            }
            obs.put("replicas", replicas);
            TopicPartitionReplica replica = new TopicPartitionReplica(topic, 0, node);
            obs.put("alter_same_dir", Support.outcome(admin.alterReplicaLogDirs(Map.of(replica, dir)).all()));
            obs.put("alter_unknown_dir", Support.outcome(admin.alterReplicaLogDirs(Map.of(replica, dir + "-not-configured")).all()));
        }
    }

    // ------------------------------------------------------------------ internal topics

    /** A group's and a transactional id's first FindCoordinator (listConsumerGroupOffsets,
     * initTransactions), then what Metadata, ListTopics and DescribeConfigs show of the internal topic. */
    static void internalTopics(Support s, Map<String, Object> obs) throws Exception {
        try (Admin admin = s.admin()) {
            admin.listConsumerGroupOffsets(s.name("find-group")).partitionsToOffsetAndMetadata().get(20, TimeUnit.SECONDS);
            obs.put("__consumer_offsets", describeInternal(admin, "__consumer_offsets"));
            try (KafkaProducer<byte[], byte[]> p = s.txnProducer(s.name("find-txn"))) {
                obs.put("__transaction_state", describeInternal(admin, "__transaction_state"));
            }
        }
    }

    static Map<String, Object> describeInternal(Admin admin, String topic) throws Exception {
        Set<String> listed = admin.listTopics(new org.apache.kafka.clients.admin.ListTopicsOptions().listInternal(true))
                .names().get(20, TimeUnit.SECONDS);
        Set<String> unlisted = admin.listTopics().names().get(20, TimeUnit.SECONDS);
        TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get(20, TimeUnit.SECONDS).get(topic);
        org.apache.kafka.common.config.ConfigResource res =
                new org.apache.kafka.common.config.ConfigResource(org.apache.kafka.common.config.ConfigResource.Type.TOPIC, topic);
        org.apache.kafka.clients.admin.Config config =
                admin.describeConfigs(List.of(res)).all().get(20, TimeUnit.SECONDS).get(res);
        Map<String, Object> configs = new TreeMap<>();
        for (String name : List.of("cleanup.policy", "compression.type", "segment.bytes")) {
            org.apache.kafka.clients.admin.ConfigEntry e = config.get(name);
            configs.put(name, List.of(e.value(), e.source().name()));
        }
        return Support.map("listed_internal", listed.contains(topic), "listed_plain", unlisted.contains(topic),
                "partitions", d.partitions().size(), "internal", d.isInternal(), "configs", configs);
    }

    // ------------------------------------------------------------------ elections and reassignments

    static void electLeaders(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("elect");
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, topic, 2);
            TopicPartition tp = new TopicPartition(topic, 0);
            TopicPartition missing = new TopicPartition(topic, 9);
            for (ElectionType type : ElectionType.values()) {
                Map<TopicPartition, Optional<Throwable>> r = admin.electLeaders(type, Set.of(tp, missing)).partitions().get();
                obs.put(type.name().toLowerCase() + "_named", Support.map(
                        "0", r.get(tp).map(t -> t.getClass().getName()).orElse(null),
                        "9", r.get(missing).map(t -> t.getClass().getName()).orElse(null)));
            }
            Map<TopicPartition, Optional<Throwable>> every = admin.electLeaders(ElectionType.PREFERRED, null).partitions().get();
            obs.put("preferred_all_for_topic", every.keySet().stream().filter(p -> p.topic().equals(topic)).count());
        }
    }

    static void reassignments(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("reassign");
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, topic, 3);
            int node = admin.describeCluster().nodes().get().iterator().next().id();
            Map<TopicPartition, Optional<NewPartitionReassignment>> targets = new LinkedHashMap<>();
            targets.put(new TopicPartition(topic, 0), Optional.of(new NewPartitionReassignment(List.of(node))));
            targets.put(new TopicPartition(topic, 1), Optional.of(new NewPartitionReassignment(List.of(node + 1000))));
            targets.put(new TopicPartition(topic, 2), Optional.empty());
            Map<String, Object> results = new TreeMap<>();
            admin.alterPartitionReassignments(targets).values().forEach((tp, f) -> results.put(String.valueOf(tp.partition()), Support.outcome(f)));
            obs.put("alter", results);
            obs.put("listed_all", admin.listPartitionReassignments().reassignments().get().size());
            obs.put("listed_topic", admin.listPartitionReassignments(Set.of(new TopicPartition(topic, 0))).reassignments().get().size());
            TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
            obs.put("replicas_after", d.partitions().stream().map(p -> p.replicas().size()).toList());
        }
    }

    // ------------------------------------------------------------------ client quotas

    static ClientQuotaEntity entity(String... kv) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i + 1 < kv.length; i += 2) m.put(kv[i], kv[i + 1]);
        return new ClientQuotaEntity(m);
    }

    static Map<String, Object> described(Admin admin, ClientQuotaFilter filter, String prefix) throws Exception {
        Map<String, Object> out = new TreeMap<>();
        admin.describeClientQuotas(filter).entities().get().forEach((e, values) -> {
            String key = new TreeMap<>(e.entries()).toString();
            boolean mine = e.entries().values().stream().anyMatch(v -> v != null && v.startsWith(prefix))
                    || e.entries().containsKey("ip");
            boolean isDefault = e.entries().values().stream().allMatch(v -> v == null);
            if (mine || isDefault) out.put(key, new TreeMap<>(values));
        });
        return out;
    }

    static void clientQuotas(Support s, Map<String, Object> obs) throws Exception {
        String user = s.name("user"), client = s.name("client");
        try (Admin admin = s.admin()) {
            List<ClientQuotaAlteration> set = List.of(
                    new ClientQuotaAlteration(entity("user", user), List.of(
                            new ClientQuotaAlteration.Op("producer_byte_rate", 1048576.0),
                            new ClientQuotaAlteration.Op("request_percentage", 50.0))),
                    new ClientQuotaAlteration(entity("user", user, "client-id", client), List.of(
                            new ClientQuotaAlteration.Op("consumer_byte_rate", 2097152.0))),
                    new ClientQuotaAlteration(entity("client-id", client), List.of(
                            new ClientQuotaAlteration.Op("producer_byte_rate", 4096.5))),
                    new ClientQuotaAlteration(entity("ip", "10.9.8.7"), List.of(
                            new ClientQuotaAlteration.Op("connection_creation_rate", 7.0))));
            Map<String, Object> results = new TreeMap<>();
            admin.alterClientQuotas(set).values().forEach((e, f) -> results.put(new TreeMap<>(e.entries()).toString(), Support.outcome(f)));
            obs.put("alter", results);
            ClientQuotaFilter mineUser = ClientQuotaFilter.contains(List.of(ClientQuotaFilterComponent.ofEntity("user", user)));
            Support.eventually(() -> described(admin, mineUser, s.prefix).size() == 2, 10_000);
            obs.put("user_contains", described(admin, mineUser, s.prefix));
            obs.put("user_strict", described(admin, ClientQuotaFilter.containsOnly(
                    List.of(ClientQuotaFilterComponent.ofEntity("user", user))), s.prefix));
            obs.put("ip", described(admin, ClientQuotaFilter.contains(
                    List.of(ClientQuotaFilterComponent.ofEntity("ip", "10.9.8.7"))), s.prefix));
            admin.alterClientQuotas(List.of(new ClientQuotaAlteration(entity("user", user), List.of(
                    new ClientQuotaAlteration.Op("producer_byte_rate", null),
                    new ClientQuotaAlteration.Op("request_percentage", null))),
                    new ClientQuotaAlteration(entity("ip", "10.9.8.7"), List.of(
                            new ClientQuotaAlteration.Op("connection_creation_rate", null))))).all().get();
            Support.eventually(() -> described(admin, mineUser, s.prefix).size() == 1, 10_000);
            obs.put("user_after_removal", described(admin, mineUser, s.prefix));
            obs.put("bad_filter", Support.outcome(admin.describeClientQuotas(ClientQuotaFilter.contains(List.of(
                    ClientQuotaFilterComponent.ofEntity("ip", "10.9.8.7"),
                    ClientQuotaFilterComponent.ofEntity("user", user)))).entities()));
        }
    }

    // ------------------------------------------------------------------ describeTopics, operations

    static void describeTopicsPaged(Support s, Map<String, Object> obs) throws Exception {
        String a = s.name("paged-a"), b = s.name("paged-b");
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, a, 5);
            Support.createTopic(admin, b, 3);
            Map<String, TopicDescription> d = admin.describeTopics(TopicCollection.ofTopicNames(List.of(b, a)),
                    new DescribeTopicsOptions().partitionSizeLimitPerResponse(2)).allTopicNames().get();
            Map<String, Object> out = new TreeMap<>();
            d.forEach((name, td) -> out.put(name.equals(a) ? "a" : "b",
                    td.partitions().stream().map(p -> p.partition()).toList()));
            obs.put("partitions", out);
            Object missing;
            try {
                admin.describeTopics(List.of(s.name("no-such-topic"))).allTopicNames().get();
                missing = null;
            } catch (ExecutionException e) {
                missing = Support.failure(e.getCause());
            }
            obs.put("missing", missing);
        }
    }

    static List<String> names(Set<AclOperation> ops) {
        if (ops == null) return null;
        List<String> out = new ArrayList<>();
        new TreeSet<>(ops).forEach(o -> out.add(o.name()));
        return out;
    }

    static void authorizedOperations(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("ops");
        String group = s.name("ops-group");
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, topic, 1);
            obs.put("cluster", names(admin.describeCluster(new DescribeClusterOptions().includeAuthorizedOperations(true))
                    .authorizedOperations().get()));
            obs.put("cluster_not_asked", names(admin.describeCluster().authorizedOperations().get()));
            obs.put("topic", names(admin.describeTopics(List.of(topic), new DescribeTopicsOptions().includeAuthorizedOperations(true))
                    .allTopicNames().get().get(topic).authorizedOperations()));
            obs.put("topic_not_asked", names(admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).authorizedOperations()));
            try (KafkaConsumer<byte[], byte[]> c = s.consumer("read_uncommitted", "group.id", group)) {
                c.subscribe(List.of(topic));
                Support.await(() -> {
                    c.poll(java.time.Duration.ofMillis(100));
                    return !c.assignment().isEmpty();
                }, 20_000);
                obs.put("group", names(admin.describeConsumerGroups(List.of(group),
                        new DescribeConsumerGroupsOptions().includeAuthorizedOperations(true)).all().get().get(group).authorizedOperations()));
            }
        }
    }

    // ------------------------------------------------------------------ ACLs

    static List<String> described(java.util.Collection<AclBinding> acls) {
        List<String> out = new ArrayList<>();
        for (AclBinding b : acls) {
            out.add(b.pattern().resourceType() + ":" + b.pattern().patternType() + ":" + b.pattern().name() + ":"
                    + b.entry().principal() + ":" + b.entry().host() + ":" + b.entry().operation() + ":"
                    + b.entry().permissionType());
        }
        java.util.Collections.sort(out);
        return out;
    }

    /** createAcls, describeAcls with a MATCH filter and deleteAcls (Kafka's kafka-acls.sh calls). */
    static void acls(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("acl");
        AclBinding literal = new AclBinding(new ResourcePattern(ResourceType.TOPIC, topic, PatternType.LITERAL),
                new AccessControlEntry("User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW));
        AclBinding prefixed = new AclBinding(new ResourcePattern(ResourceType.TOPIC, topic + "-", PatternType.PREFIXED),
                new AccessControlEntry("User:alice", "*", AclOperation.WRITE, AclPermissionType.DENY));
        AclBinding badCluster = new AclBinding(new ResourcePattern(ResourceType.CLUSTER, "other", PatternType.LITERAL),
                new AccessControlEntry("User:alice", "*", AclOperation.ALTER, AclPermissionType.ALLOW));
        AclBindingFilter match = new AclBindingFilter(
                new ResourcePatternFilter(ResourceType.TOPIC, topic + "-x", PatternType.MATCH), AccessControlEntryFilter.ANY);
        AccessControlEntryFilter alice = new AccessControlEntryFilter("User:alice", null, AclOperation.ANY, AclPermissionType.ANY);
        List<AclBindingFilter> mine = List.of(   // the two patterns by name, ANY pattern type
                new AclBindingFilter(new ResourcePatternFilter(ResourceType.TOPIC, topic, PatternType.ANY), alice),
                new AclBindingFilter(new ResourcePatternFilter(ResourceType.TOPIC, topic + "-", PatternType.ANY), alice));
        try (Admin admin = s.admin()) {
            obs.put("create", Support.outcome(admin.createAcls(List.of(literal, prefixed)).all()));
            obs.put("create_bad_cluster", Support.outcome(admin.createAcls(List.of(badCluster)).all()));
            try {
                obs.put("describe_match", described(admin.describeAcls(match).values().get(20, TimeUnit.SECONDS)));
            } catch (ExecutionException e) {
                obs.put("describe_error", Support.failure(e.getCause()));
                return;
            }
            obs.put("deleted", described(admin.deleteAcls(mine).all().get(20, TimeUnit.SECONDS)));
            obs.put("after_delete", described(admin.describeAcls(match).values().get(20, TimeUnit.SECONDS)));
        }
    }

    // ------------------------------------------------------------------ a producer throttled by a quota

    /** Sets one client id's quota {@code key} (null removes it); a quota set is waited for until described. */
    static void clientIdQuota(Admin admin, String client, String key, Double value) throws Exception {
        admin.alterClientQuotas(List.of(new ClientQuotaAlteration(entity("client-id", client), List.of(
                new ClientQuotaAlteration.Op(key, value))))).all().get();
        if (value == null) return;
        ClientQuotaFilter f = ClientQuotaFilter.containsOnly(List.of(ClientQuotaFilterComponent.ofEntity("client-id", client)));
        Support.eventually(() -> !admin.describeClientQuotas(f).entities().get().isEmpty(), 10_000);
    }

    static double metric(KafkaProducer<byte[], byte[]> p, String name) {
        for (Map.Entry<MetricName, ? extends Metric> e : p.metrics().entrySet()) {
            if (e.getKey().name().equals(name) && e.getKey().group().equals("producer-metrics")) {
                Object v = e.getValue().metricValue();
                return v instanceof Double ? (Double) v : Double.NaN;
            }
        }
        return Double.NaN;
    }

    /**
     * producer_byte_rate 10240 for one client id: synchronous 1 KiB sends until the producer reports
     * a throttle (produce-throttle-time-max), which Kafka's 10-second window reaches after ~100 KiB.
     */
    static void produceThrottle(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("throttled");
        String client = s.name("throttled-client");
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, topic, 1);
            clientIdQuota(admin, client, "producer_byte_rate", 10240.0);
            byte[] value = new byte[1024];
            int sent = 0;
            try (KafkaProducer<byte[], byte[]> p = s.producer("client.id", client, "linger.ms", "0");
                 KafkaProducer<byte[], byte[]> free = s.producer("client.id", s.name("free-client"), "linger.ms", "0")) {
                long t0 = System.currentTimeMillis();
                while (sent < 400 && !(metric(p, "produce-throttle-time-max") > 0)) {
                    p.send(new ProducerRecord<>(topic, 0, null, value)).get();
                    free.send(new ProducerRecord<>(topic, 0, null, value)).get();
                    sent++;
                }
                obs.put("sent_before_throttle", sent);
                obs.put("elapsed_ms", System.currentTimeMillis() - t0);
                obs.put("throttle_max_ms", metric(p, "produce-throttle-time-max"));
                obs.put("throttle_avg_ms", metric(p, "produce-throttle-time-avg"));
                obs.put("free_throttle_max_ms", metric(free, "produce-throttle-time-max"));
            }
            clientIdQuota(admin, client, "producer_byte_rate", null);
        }
    }

    /** consumer_byte_rate 16384 for one client id: a consumer reads 200 records of 1 KiB, 64 KiB a fetch. */
    static void fetchThrottle(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("fthrottled");
        String client = s.name("fthrottled-client");
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, topic, 1);
            try (KafkaProducer<byte[], byte[]> p = s.producer()) {
                for (int i = 0; i < 200; i++) {
                    byte[] v = new byte[1024];
                    byte[] n = String.format("%04d", i).getBytes();
                    System.arraycopy(n, 0, v, 0, 4);
                    p.send(new ProducerRecord<>(topic, 0, null, v));
                }
                p.flush();
            }
            clientIdQuota(admin, client, "consumer_byte_rate", 16384.0);
            List<String> values = new ArrayList<>();
            try (KafkaConsumer<byte[], byte[]> c = s.consumer("read_uncommitted", "client.id", client,
                    "fetch.max.bytes", "65536", "max.partition.fetch.bytes", "65536")) {
                TopicPartition tp = new TopicPartition(topic, 0);
                c.assign(List.of(tp));
                c.seekToBeginning(List.of(tp));
                long deadline = System.currentTimeMillis() + 60_000;
                while (values.size() < 200 && System.currentTimeMillis() < deadline) {
                    c.poll(java.time.Duration.ofMillis(200)).forEach(r -> values.add(new String(r.value(), 0, 4)));
                }
                double max = Double.NaN;
                for (Map.Entry<MetricName, ? extends Metric> e : c.metrics().entrySet()) {
                    if (e.getKey().name().equals("fetch-throttle-time-max")) max = (Double) e.getValue().metricValue();
                }
                obs.put("throttle_max_ms", max);
            }
            obs.put("count", values.size());
            obs.put("in_order", values.equals(java.util.stream.IntStream.range(0, 200)
                    .mapToObj(i -> String.format("%04d", i)).toList()));
            clientIdQuota(admin, client, "consumer_byte_rate", null);
        }
    }
}
