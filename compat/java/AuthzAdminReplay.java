import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupListing;
import org.apache.kafka.clients.admin.ListConsumerGroupsResult;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourceType;

/**
 * Admin scenarios after Apache Kafka 3.9's AuthorizerIntegrationTest: describe, list and delete
 * groups and delete group offsets with and without their ACLs (testDescribeGroupApi*,
 * testListGroupApiWithAndWithoutListGroupAcls, testDeleteGroupApi*, testDeleteGroupOffsets*), and
 * DeleteTopics, DeleteRecords and CreatePartitions refused or allowed by a wildcard ACL, ALL on a topic
 * for its metadata and configs, and ListTransactions filtered by the transactional id's DESCRIBE.
 * Every case is a SCRAM user of its own ({@link AuthzConsumerReplay#user}), so removing its ACLs and
 * its wildcard ACLs touch nothing else. compat/test_java_authz_reference.py holds the expectations.
 */
final class AuthzAdminReplay {
    private AuthzAdminReplay() {
    }

    static Admin client(Support s) {
        return Admin.create(AuthzConsumerReplay.client(s, "default.api.timeout.ms", "20000"));
    }

    static Object outcome(Support s, KafkaFuture<?> f) {
        try {
            f.get(20, TimeUnit.SECONDS);
            return null;
        } catch (java.util.concurrent.ExecutionException e) {
            return AuthzConsumerReplay.refusal(s, e.getCause());
        } catch (Exception e) {
            return AuthzConsumerReplay.refusal(s, e);
        }
    }

    static void allow(Admin admin, ResourceType type, String name, AclOperation... ops) throws Exception {
        for (AclOperation op : ops) AuthzConsumerReplay.allow(admin, type, name, op);
    }

    static void removeAll(Admin admin) throws Exception {
        admin.deleteAcls(List.of(new org.apache.kafka.common.acl.AclBindingFilter(
                new org.apache.kafka.common.resource.ResourcePatternFilter(ResourceType.ANY, null, PatternType.ANY),
                new org.apache.kafka.common.acl.AccessControlEntryFilter("User:" + AuthzConsumerReplay.USER.get(), null,
                        AclOperation.ANY, AclPermissionType.ANY)))).all().get(20, TimeUnit.SECONDS);
    }

    /** The group commits offset 5 on the topic's partition 0 as this case's user (who then may READ both). */
    static void commit(Support s, Admin admin, String group, String topic) throws Exception {
        allow(admin, ResourceType.GROUP, group, AclOperation.READ);
        allow(admin, ResourceType.TOPIC, topic, AclOperation.READ);
        try (KafkaConsumer<byte[], byte[]> c = AuthzConsumerReplay.consumer(s, group)) {
            TopicPartition tp = new TopicPartition(topic, 0);
            c.assign(List.of(tp));
            c.commitSync(Map.of(tp, new OffsetAndMetadata(5, "")));
        }
    }

    interface Case {
        Object run(Admin admin, Admin client, String topic, String group) throws Exception;
    }

    static void run(Support s, Map<String, Object> obs, String kind, Map<String, Case> cases) throws Exception {
        try (Admin admin = AuthzReference.superAdmin(s)) {
            for (Map.Entry<String, Case> e : cases.entrySet()) {
                String name = kind + "-" + e.getKey().replace('_', '-');
                AuthzConsumerReplay.user(s, admin, s.name(name));
                String topic = AuthzConsumerReplay.topicWithRecord(s, admin, name);
                try (Admin client = client(s)) {
                    obs.put(e.getKey(), e.getValue().run(admin, client, topic, s.name(name + "-G")));
                }
            }
        }
    }

    static void groups(Support s, Map<String, Object> obs) throws Exception {
        Map<String, Case> cases = new LinkedHashMap<>();
        cases.put("describe_no_group_acl", (admin, client, t, g) -> {
            allow(admin, ResourceType.TOPIC, t, AclOperation.DESCRIBE);
            return outcome(s, client.describeConsumerGroups(List.of(g)).describedGroups().get(g));
        });
        cases.put("describe_group_describe", (admin, client, t, g) -> {
            allow(admin, ResourceType.GROUP, g, AclOperation.DESCRIBE);
            allow(admin, ResourceType.TOPIC, t, AclOperation.DESCRIBE);
            return outcome(s, client.describeConsumerGroups(List.of(g)).describedGroups().get(g));
        });
        cases.put("list", (admin, client, t, g) -> {
            String g2 = g + "-other";
            commit(s, admin, g, t);
            commit(s, admin, g2, t);
            List<Object> out = new ArrayList<>();
            removeAll(admin);
            allow(admin, ResourceType.CLUSTER, "kafka-cluster", AclOperation.DESCRIBE);
            out.add(listed(s, client, g));
            removeAll(admin);
            allow(admin, ResourceType.GROUP, g, AclOperation.READ);
            out.add(listed(s, client, g));
            removeAll(admin);
            ListConsumerGroupsResult none = client.listConsumerGroups();
            out.add(Arrays.asList(none.errors().get(20, TimeUnit.SECONDS).size(), none.all().get(20, TimeUnit.SECONDS).size()));
            return out;
        });
        cases.put("delete_with_delete", (admin, client, t, g) -> {
            commit(s, admin, g, t);
            allow(admin, ResourceType.GROUP, g, AclOperation.DELETE);
            return outcome(s, client.deleteConsumerGroups(List.of(g)).deletedGroups().get(g));
        });
        cases.put("delete_without_delete", (admin, client, t, g) -> {
            commit(s, admin, g, t);
            return outcome(s, client.deleteConsumerGroups(List.of(g)).deletedGroups().get(g));
        });
        cases.put("delete_no_acl", (admin, client, t, g) ->
                outcome(s, client.deleteConsumerGroups(List.of(g)).deletedGroups().get(g)));
        cases.put("delete_offsets_with_acl", (admin, client, t, g) -> {
            commit(s, admin, g, t);
            allow(admin, ResourceType.GROUP, g, AclOperation.DELETE);
            return outcome(s, client.deleteConsumerGroupOffsets(g, Set.of(new TopicPartition(t, 0)))
                    .partitionResult(new TopicPartition(t, 0)));
        });
        cases.put("delete_offsets_without_delete", (admin, client, t, g) -> {
            commit(s, admin, g, t);
            return outcome(s, client.deleteConsumerGroupOffsets(g, Set.of(new TopicPartition(t, 0))).all());
        });
        cases.put("delete_offsets_without_topic", (admin, client, t, g) -> {
            commit(s, admin, g, t);
            removeAll(admin);
            allow(admin, ResourceType.GROUP, g, AclOperation.DELETE, AclOperation.READ);
            var result = client.deleteConsumerGroupOffsets(g, Set.of(new TopicPartition(t, 0)));
            return Arrays.asList(outcome(s, result.all()), outcome(s, result.partitionResult(new TopicPartition(t, 0))));
        });
        cases.put("delete_offsets_no_acl", (admin, client, t, g) ->
                outcome(s, client.deleteConsumerGroupOffsets(g, Set.of(new TopicPartition(t, 0))).all()));
        run(s, obs, "authz-g", cases);
    }

    /** This case's groups among those listed, without the run's prefix. */
    static List<String> listed(Support s, Admin client, String group) throws Exception {
        TreeSet<String> out = new TreeSet<>();
        for (ConsumerGroupListing l : client.listConsumerGroups().all().get(20, TimeUnit.SECONDS)) {
            if (l.groupId().startsWith(group)) out.add(l.groupId().replace(s.prefix + "-", ""));
        }
        return new ArrayList<>(out);
    }

    static void topics(Support s, Map<String, Object> obs) throws Exception {
        Map<String, Case> cases = new LinkedHashMap<>();
        cases.put("delete_topic_without_describe", (admin, client, t, g) ->
                outcome(s, client.deleteTopics(List.of(t + "-missing")).all()));
        cases.put("delete_topic_with_describe", (admin, client, t, g) -> {
            allow(admin, ResourceType.TOPIC, t, AclOperation.DESCRIBE);
            return outcome(s, client.deleteTopics(List.of(t)).all());
        });
        cases.put("delete_topic_wildcard", (admin, client, t, g) -> {
            allow(admin, ResourceType.TOPIC, "*", AclOperation.DELETE);
            return outcome(s, client.deleteTopics(List.of(t)).all());
        });
        cases.put("delete_records_without_describe", (admin, client, t, g) ->
                outcome(s, client.deleteRecords(Map.of(new TopicPartition(t, 0), RecordsToDelete.beforeOffset(1))).all()));
        cases.put("delete_records_with_describe", (admin, client, t, g) -> {
            allow(admin, ResourceType.TOPIC, t, AclOperation.DESCRIBE);
            return outcome(s, client.deleteRecords(Map.of(new TopicPartition(t, 0), RecordsToDelete.beforeOffset(1))).all());
        });
        cases.put("delete_records_wildcard", (admin, client, t, g) -> {
            allow(admin, ResourceType.TOPIC, "*", AclOperation.DELETE);
            return outcome(s, client.deleteRecords(Map.of(new TopicPartition(t, 0), RecordsToDelete.beforeOffset(1))).all());
        });
        cases.put("create_partitions_unauthorized", (admin, client, t, g) ->
                outcome(s, client.createPartitions(Map.of(t + "-missing", NewPartitions.increaseTo(10))).all()));
        cases.put("create_partitions_wildcard", (admin, client, t, g) -> {
            allow(admin, ResourceType.TOPIC, "*", AclOperation.ALTER);
            return outcome(s, client.createPartitions(Map.of(t, NewPartitions.increaseTo(10))).all());
        });
        cases.put("topic_all", (admin, client, t, g) -> {
            allow(admin, ResourceType.TOPIC, t, AclOperation.ALL);
            ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, t);
            return Arrays.asList(outcome(s, client.describeTopics(List.of(t)).allTopicNames()),
                    outcome(s, client.describeConfigs(List.of(r)).all()));
        });
        cases.put("list_transactions", (admin, client, t, g) -> {
            String tid = t + "-txn";
            allow(admin, ResourceType.TRANSACTIONAL_ID, tid, AclOperation.WRITE);
            allow(admin, ResourceType.TOPIC, t, AclOperation.WRITE);
            java.util.Properties p = AuthzConsumerReplay.client(s, "transactional.id", tid, "max.block.ms", "20000");
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p,
                    new org.apache.kafka.common.serialization.ByteArraySerializer(),
                    new org.apache.kafka.common.serialization.ByteArraySerializer())) {
                producer.initTransactions();
                producer.beginTransaction();
                producer.send(Support.rec(t, 0, "1", "1")).get(20, TimeUnit.SECONDS);
                List<Object> out = new ArrayList<>();
                out.add(transactions(s, client));
                admin.deleteAcls(List.of(AuthzReference.allow(AuthzConsumerReplay.USER.get(), ResourceType.TRANSACTIONAL_ID,
                        tid, AclOperation.WRITE).toFilter())).all().get(20, TimeUnit.SECONDS);
                out.add(transactions(s, client));
                allow(admin, ResourceType.TRANSACTIONAL_ID, tid, AclOperation.DESCRIBE);
                out.add(transactions(s, client));
                allow(admin, ResourceType.TRANSACTIONAL_ID, tid, AclOperation.WRITE);  // EndTxn needs WRITE
                producer.abortTransaction();
                return out;
            }
        });
        run(s, obs, "authz-t", cases);
    }

    static List<String> transactions(Support s, Admin client) throws Exception {
        TreeSet<String> out = new TreeSet<>();
        for (TransactionListing l : client.listTransactions().all().get(20, TimeUnit.SECONDS)) {
            out.add(l.transactionalId().replace(s.prefix + "-", ""));
        }
        return new ArrayList<>(out);
    }

    static List<String> ops(Set<AclOperation> ops) {
        if (ops == null) return null;
        TreeSet<String> out = new TreeSet<>();
        for (AclOperation op : ops) out.add(op.name());
        return new ArrayList<>(out);
    }

    /**
     * DescribeAuthorizedOperationsTest: a user with ALTER on the cluster and DESCRIBE on every topic
     * (a wildcard ACL) sees the operations its ACLs allow, implied ones included (ALTER and DELETE imply
     * DESCRIBE), and every supported operation with ALL; nothing when not asked.
     */
    static void authorizedOperations(Support s, Map<String, Object> obs) throws Exception {
        String user = s.name("authz-ops");
        List<String> groups = List.of(s.name("authz-ops-G1"), s.name("authz-ops-G2"), s.name("authz-ops-G3"));
        List<String> topics = List.of(s.name("authz-ops-T1"), s.name("authz-ops-T2"));
        try (Admin admin = AuthzReference.superAdmin(s)) {
            AuthzConsumerReplay.user(s, admin, user);
            allow(admin, ResourceType.CLUSTER, "kafka-cluster", AclOperation.ALTER);
            allow(admin, ResourceType.TOPIC, "*", AclOperation.DESCRIBE);
            for (String t : topics) Support.createTopic(admin, t, 1);
        }
        try (Admin client = client(s)) {
            var withOps = new org.apache.kafka.clients.admin.DescribeClusterOptions().includeAuthorizedOperations(true);
            obs.put("cluster_not_asked", ops(client.describeCluster().authorizedOperations().get(20, TimeUnit.SECONDS)));
            obs.put("cluster_alter", ops(client.describeCluster(withOps).authorizedOperations().get(20, TimeUnit.SECONDS)));
            client.createAcls(List.of(AuthzReference.allow(user, ResourceType.CLUSTER, "kafka-cluster", AclOperation.ALL),
                    AuthzReference.allow(user, ResourceType.GROUP, groups.get(0), AclOperation.ALL),
                    AuthzReference.allow(user, ResourceType.GROUP, groups.get(1), AclOperation.DESCRIBE),
                    AuthzReference.allow(user, ResourceType.GROUP, groups.get(2), AclOperation.DELETE)))
                    .all().get(20, TimeUnit.SECONDS);
            obs.put("cluster_all", ops(client.describeCluster(withOps).authorizedOperations().get(20, TimeUnit.SECONDS)));
            var described = client.describeConsumerGroups(groups,
                    new org.apache.kafka.clients.admin.DescribeConsumerGroupsOptions().includeAuthorizedOperations(true))
                    .describedGroups();
            List<Object> groupOps = new ArrayList<>();
            for (String g : groups) groupOps.add(ops(described.get(g).get(20, TimeUnit.SECONDS).authorizedOperations()));
            obs.put("groups", groupOps);
            var topicOps = new org.apache.kafka.clients.admin.DescribeTopicsOptions().includeAuthorizedOperations(true);
            List<Object> topicsOut = new ArrayList<>();
            var plain = client.describeTopics(topics).allTopicNames().get(20, TimeUnit.SECONDS);
            topicsOut.add(Arrays.asList(ops(plain.get(topics.get(0)).authorizedOperations()),
                    ops(plain.get(topics.get(1)).authorizedOperations())));
            var before = client.describeTopics(topics, topicOps).allTopicNames().get(20, TimeUnit.SECONDS);
            topicsOut.add(Arrays.asList(ops(before.get(topics.get(0)).authorizedOperations()),
                    ops(before.get(topics.get(1)).authorizedOperations())));
            client.createAcls(List.of(AuthzReference.allow(user, ResourceType.TOPIC, topics.get(0), AclOperation.ALL),
                    AuthzReference.allow(user, ResourceType.TOPIC, topics.get(1), AclOperation.DELETE)))
                    .all().get(20, TimeUnit.SECONDS);
            var after = client.describeTopics(topics, topicOps).allTopicNames().get(20, TimeUnit.SECONDS);
            topicsOut.add(Arrays.asList(ops(after.get(topics.get(0)).authorizedOperations()),
                    ops(after.get(topics.get(1)).authorizedOperations())));
            obs.put("topics", topicsOut);
        }
    }
}
