import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Consumer scenarios after Apache Kafka 3.9's AuthorizerIntegrationTest: the consume cases
 * (assign with and without group or topic access, explicit seek without a group, pattern
 * subscriptions with and without access, internal topics matched by a pattern, READ on a topic that
 * does not exist), the commit cases, the OffsetFetch cases through position() and, for several
 * groups in one request, the Admin's listConsumerGroupOffsets (testOffsetFetchMultipleGroupsAuthorization).
 * The client is a SCRAM user each scenario makes for itself ({@link #user}); admin, a super user,
 * makes the users, topics, records and ACLs. Each case has a topic and a group of its own. compat/test_java_authz_reference.py holds the expectations.
 */
final class AuthzConsumerReplay {
    private AuthzConsumerReplay() {
    }

    /** This thread's client user (each scenario runs on a thread of its own). */
    static final ThreadLocal<String> USER = new ThreadLocal<>();

    /** A SCRAM-SHA-512 user of its own for this scenario's thread, made by the super user. */
    static void user(Support s, Admin admin, String name) throws Exception {
        admin.alterUserScramCredentials(List.of(new org.apache.kafka.clients.admin.UserScramCredentialUpsertion(name,
                new org.apache.kafka.clients.admin.ScramCredentialInfo(
                        org.apache.kafka.clients.admin.ScramMechanism.SCRAM_SHA_512, 4096), name + "-secret")))
                .all().get(20, TimeUnit.SECONDS);
        USER.set(name);
    }

    static Properties client(Support s, String... kv) {
        String user = USER.get();
        Properties p = s.common("sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required "
                + "username=\"" + user + "\" password=\"" + user + "-secret\";");
        for (int i = 0; i + 1 < kv.length; i += 2) p.put(kv[i], kv[i + 1]);
        return p;
    }

    static KafkaConsumer<byte[], byte[]> consumer(Support s, String group, String... kv) {
        Properties p = client(s, "enable.auto.commit", "false", "auto.offset.reset", "earliest",
                "default.api.timeout.ms", "20000");
        if (group != null) p.put("group.id", group);
        for (int i = 0; i + 1 < kv.length; i += 2) p.put(kv[i], kv[i + 1]);
        return new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    static void allow(Admin admin, ResourceType type, String name, AclOperation op) throws Exception {
        admin.createAcls(List.of(AuthzReference.allow(USER.get(), type, name, op))).all().get(20, TimeUnit.SECONDS);
    }

    /** What an exception says: [class, unauthorized topics or group, without the run's prefix]. */
    static Object refusal(Support s, Throwable e) {
        String strip = s.prefix + "-";
        if (e instanceof TopicAuthorizationException) {
            TreeSet<String> topics = new TreeSet<>();
            for (String t : ((TopicAuthorizationException) e).unauthorizedTopics()) topics.add(t.replace(strip, ""));
            return Arrays.asList("TopicAuthorizationException", new ArrayList<>(topics));
        }
        if (e instanceof GroupAuthorizationException) {
            String g = ((GroupAuthorizationException) e).groupId();
            return Arrays.asList("GroupAuthorizationException", g == null ? null : g.replace(strip, ""));
        }
        return Arrays.asList(e.getClass().getSimpleName(), e.getMessage());
    }

    /** consumeRecords: polls until a record comes ("ok") or the poll throws (its refusal); "nothing" after 10 s. */
    static Object consume(Support s, KafkaConsumer<byte[], byte[]> c) {
        try {
            long deadline = System.currentTimeMillis() + 10_000;
            while (System.currentTimeMillis() < deadline) {
                if (!c.poll(Duration.ofMillis(100)).isEmpty()) return "ok";
            }
            return "nothing";
        } catch (Exception e) {
            return refusal(s, e);
        }
    }

    /** A topic of one partition with one record, written by the super user. */
    static String topicWithRecord(Support s, Admin admin, String name) throws Exception {
        String topic = s.name(name);
        Support.createTopic(admin, topic, 1);
        try (KafkaProducer<byte[], byte[]> p = AuthzReference.producer(s, "admin")) {
            p.send(Support.rec(topic, 0, "k", "v")).get(20, TimeUnit.SECONDS);
        }
        return topic;
    }

    interface Case {
        Object run(String topic, String group) throws Exception;
    }

    static void consume(Support s, Map<String, Object> obs) throws Exception {
        try (Admin admin = AuthzReference.superAdmin(s)) {
            user(s, admin, s.prefix + "-carol");
            Map<String, Case> cases = new LinkedHashMap<>();
            cases.put("assign_no_access", (t, g) -> assigned(s, g, t));
            cases.put("offset_lookup_no_group", (t, g) -> {
                allow(admin, ResourceType.TOPIC, t, AclOperation.READ);
                return assigned(s, g, t);
            });
            cases.put("explicit_seek_no_group", (t, g) -> {
                allow(admin, ResourceType.TOPIC, t, AclOperation.READ);
                try (KafkaConsumer<byte[], byte[]> c = consumer(s, null)) {
                    c.assign(List.of(new TopicPartition(t, 0)));
                    c.seekToBeginning(List.of(new TopicPartition(t, 0)));
                    return consume(s, c);
                }
            });
            cases.put("no_topic_describe", (t, g) -> {
                allow(admin, ResourceType.GROUP, g, AclOperation.READ);
                return assigned(s, g, t);
            });
            for (AclOperation op : List.of(AclOperation.DESCRIBE, AclOperation.WRITE, AclOperation.READ)) {
                cases.put("topic_" + op.name().toLowerCase() + "_group_read", (t, g) -> {
                    allow(admin, ResourceType.TOPIC, t, op);
                    allow(admin, ResourceType.GROUP, g, AclOperation.READ);
                    return assigned(s, g, t);
                });
            }
            cases.put("pattern_no_topic_access", (t, g) -> {
                allow(admin, ResourceType.GROUP, g, AclOperation.READ);
                try (KafkaConsumer<byte[], byte[]> c = consumer(s, g)) {
                    c.subscribe(Pattern.compile(Pattern.quote(t) + ".*"));
                    c.poll(Duration.ZERO);
                    return c.subscription().isEmpty();
                }
            });
            cases.put("pattern_topic_describe", (t, g) -> {
                allow(admin, ResourceType.TOPIC, t, AclOperation.DESCRIBE);
                allow(admin, ResourceType.GROUP, g, AclOperation.READ);
                return subscribed(s, g, Pattern.quote(t) + ".*");
            });
            cases.put("pattern_topic_and_group_read", (t, g) -> {
                allow(admin, ResourceType.TOPIC, t, AclOperation.READ);
                allow(admin, ResourceType.GROUP, g, AclOperation.READ);
                try (KafkaConsumer<byte[], byte[]> c = consumer(s, g)) {
                    c.subscribe(Pattern.compile(Pattern.quote(t) + ".*"));
                    Object first = consume(s, c);
                    // an internal topic is left out of a pattern subscription (exclude.internal.topics=true)
                    allow(admin, ResourceType.TOPIC, "__consumer_offsets", AclOperation.READ);
                    // Kafka 4's version of the test waits for the rebalance (3.9's poll(0L) blocked for it)
                    GroupReplay.Listener l = new GroupReplay.Listener();
                    c.subscribe(Pattern.compile("__consumer_offsets"), l);
                    boolean rebalanced = GroupReplay.awaitRebalance(c, l);
                    return Arrays.asList(first, rebalanced, c.subscription().isEmpty(), c.assignment().isEmpty());
                }
            });
            cases.put("pattern_not_matching_internal", (t, g) -> {
                allow(admin, ResourceType.TOPIC, t, AclOperation.READ);
                allow(admin, ResourceType.GROUP, g, AclOperation.READ);
                try (KafkaConsumer<byte[], byte[]> c = consumer(s, g, "exclude.internal.topics", "false")) {
                    c.subscribe(Pattern.compile(Pattern.quote(t) + ".*"));
                    return consume(s, c);
                }
            });
            // testPatternSubscriptionMatchingInternalTopic and ...WithDescribeOnlyPermission, each with a user of its
            // own (the pattern .* matches every topic the user may describe)
            cases.put("internal_matched", (t, g) -> {
                user(s, admin, s.prefix + "-erin");
                allow(admin, ResourceType.TOPIC, t, AclOperation.READ);
                allow(admin, ResourceType.GROUP, g, AclOperation.READ);
                try (KafkaConsumer<byte[], byte[]> c = consumer(s, g, "exclude.internal.topics", "false")) {
                    c.subscribe(Pattern.compile(".*"));
                    Object first = consume(s, c);
                    List<String> before = stripped(s, c.subscription());
                    allow(admin, ResourceType.TOPIC, "__consumer_offsets", AclOperation.READ);
                    c.subscribe(Pattern.compile("__consumer_offsets"));
                    boolean subscribed = Support.await(() -> {
                        c.poll(Duration.ZERO);
                        return c.subscription().equals(java.util.Set.of("__consumer_offsets"));
                    }, 30_000);
                    return Arrays.asList(first, before, subscribed);
                }
            });
            cases.put("internal_describe_only", (t, g) -> {
                user(s, admin, s.prefix + "-frank");
                allow(admin, ResourceType.TOPIC, t, AclOperation.READ);
                allow(admin, ResourceType.GROUP, g, AclOperation.READ);
                allow(admin, ResourceType.TOPIC, "__consumer_offsets", AclOperation.DESCRIBE);
                try (KafkaConsumer<byte[], byte[]> c = consumer(s, g, "exclude.internal.topics", "false")) {
                    c.subscribe(Pattern.compile(".*"));
                    Object first = consume(s, c);
                    return "ok".equals(first) ? consume(s, c) : first;
                }
            });
            cases.put("read_missing_topic", (t, g) -> {
                String missing = t + "-new";
                allow(admin, ResourceType.TOPIC, missing, AclOperation.READ);
                allow(admin, ResourceType.GROUP, g, AclOperation.READ);
                try (KafkaConsumer<byte[], byte[]> c = consumer(s, g)) {
                    c.assign(List.of(new TopicPartition(missing, 0)));
                    Object refused = "not refused";
                    try {
                        for (int i = 0; i < 10; i++) c.poll(Duration.ofMillis(50));
                    } catch (Exception e) {
                        refused = refusal(s, e);
                    }
                    // with CREATE on the topic, the consumer's Metadata creates it
                    allow(admin, ResourceType.TOPIC, missing, AclOperation.CREATE);
                    boolean created = Support.eventually(() -> {
                        c.poll(Duration.ofMillis(50));
                        return admin.listTopics().names().get().contains(missing);
                    }, 20_000);
                    return Arrays.asList(refused, created);
                }
            });
            for (Map.Entry<String, Case> e : cases.entrySet()) {
                String name = "authz-c-" + e.getKey().replace('_', '-');
                String topic = topicWithRecord(s, admin, name);
                obs.put(e.getKey(), e.getValue().run(topic, s.name(name + "-G")));
            }
        }
    }

    static List<String> stripped(Support s, java.util.Collection<String> names) {
        List<String> out = new ArrayList<>();
        for (String n : names) out.add(n.replace(s.prefix + "-", ""));
        out.sort(null);
        return out;
    }

    /** An assign()ed consumer of the group reads the topic's partition 0. */
    static Object assigned(Support s, String group, String topic) {
        try (KafkaConsumer<byte[], byte[]> c = consumer(s, group)) {
            c.assign(List.of(new TopicPartition(topic, 0)));
            return consume(s, c);
        }
    }

    static Object subscribed(Support s, String group, String pattern) {
        try (KafkaConsumer<byte[], byte[]> c = consumer(s, group)) {
            c.subscribe(Pattern.compile(pattern));
            return consume(s, c);
        }
    }

    static Object attempt(Support s, Support.Step step) {
        try {
            step.run();
            return null;
        } catch (Exception e) {
            return refusal(s, e);
        }
    }

    /** The testCommitWith* and testOffsetFetchWith* cases: commitSync(offset 5) and position() of an assigned partition. */
    static void commitAndFetch(Support s, Map<String, Object> obs) throws Exception {
        try (Admin admin = AuthzReference.superAdmin(s)) {
            user(s, admin, s.prefix + "-dave");
            String[][] grants = {
                {"none"}, {"group:READ"}, {"group:READ", "topic:WRITE"}, {"group:READ", "topic:DESCRIBE"},
                {"topic:READ"}, {"group:READ", "topic:READ"}, {"group:DESCRIBE", "topic:DESCRIBE"}};
            Map<String, Object> commits = new TreeMap<>(), positions = new TreeMap<>();
            for (String[] grant : grants) {
                String key = String.join(",", grant);
                String name = "authz-o-" + key.replaceAll("[^A-Za-z]", "-").toLowerCase();
                String topic = topicWithRecord(s, admin, name), group = s.name(name + "-G");
                for (String g : grant) {
                    if (g.equals("none")) continue;
                    String[] kv = g.split(":");
                    allow(admin, kv[0].equals("group") ? ResourceType.GROUP : ResourceType.TOPIC,
                            kv[0].equals("group") ? group : topic, AclOperation.valueOf(kv[1]));
                }
                TopicPartition tp = new TopicPartition(topic, 0);
                try (KafkaConsumer<byte[], byte[]> c = consumer(s, group)) {
                    commits.put(key, attempt(s, () -> c.commitSync(Map.of(tp, new OffsetAndMetadata(5)))));
                }
                try (KafkaConsumer<byte[], byte[]> c = consumer(s, group)) {
                    c.assign(List.of(tp));
                    positions.put(key, attempt(s, () -> c.position(tp)));
                }
            }
            obs.put("commit", commits);
            obs.put("position", positions);
            obs.put("multiple_groups", multipleGroups(s, admin));
        }
    }

    /**
     * testOffsetFetchMultipleGroupsAuthorization through the Admin: five groups commit offset 15
     * (leader epoch 1, metadata) on three topics; with READ on groups 1, 2, 4 and DESCRIBE on topic 1
     * only, then more. The Admin fails a group refused GROUP_AUTHORIZATION_FAILED and leaves out the
     * partitions answered TOPIC_AUTHORIZATION_FAILED. Per group: its partitions listed, or the refusal.
     */
    static Map<String, Object> multipleGroups(Support s, Admin admin) throws Exception {
        List<String> topics = new ArrayList<>(), groups = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            topics.add(s.name("authz-mg-topic" + i));
            Support.createTopic(admin, topics.get(i - 1), i);
        }
        for (int i = 1; i <= 5; i++) groups.add(s.name("authz-mg-group" + i));
        List<TopicPartition> topic1 = List.of(new TopicPartition(topics.get(0), 0));
        List<TopicPartition> topic12 = List.of(topic1.get(0), new TopicPartition(topics.get(1), 0), new TopicPartition(topics.get(1), 1));
        List<TopicPartition> all = new ArrayList<>(topic12);
        for (int p = 0; p < 3; p++) all.add(new TopicPartition(topics.get(2), p));
        List<List<TopicPartition>> committed = List.of(topic1, topic12, all, all, all);
        for (int i = 0; i < 5; i++) {
            allow(admin, ResourceType.GROUP, groups.get(i), AclOperation.READ);
        }
        for (String t : topics) allow(admin, ResourceType.TOPIC, t, AclOperation.READ);
        for (int i = 0; i < 5; i++) {
            try (KafkaConsumer<byte[], byte[]> c = consumer(s, groups.get(i))) {
                Map<TopicPartition, OffsetAndMetadata> offsets = new LinkedHashMap<>();
                for (TopicPartition tp : committed.get(i)) offsets.put(tp, new OffsetAndMetadata(15, Optional.of(1), "metadata"));
                c.commitSync(offsets);
            }
        }
        // the Admin asks as the same user: removeAllClientAcls, then the grants of each step
        admin.deleteAcls(List.of(new org.apache.kafka.common.acl.AclBindingFilter(
                new org.apache.kafka.common.resource.ResourcePatternFilter(ResourceType.ANY, null,
                        org.apache.kafka.common.resource.PatternType.ANY),
                new org.apache.kafka.common.acl.AccessControlEntryFilter("User:" + USER.get(), null, AclOperation.ANY,
                        org.apache.kafka.common.acl.AclPermissionType.ANY)))).all().get(20, TimeUnit.SECONDS);
        Map<String, ListConsumerGroupOffsetsSpec> specs = new LinkedHashMap<>();
        specs.put(groups.get(0), new ListConsumerGroupOffsetsSpec().topicPartitions(topic1));
        specs.put(groups.get(1), new ListConsumerGroupOffsetsSpec().topicPartitions(topic12));
        specs.put(groups.get(2), new ListConsumerGroupOffsetsSpec().topicPartitions(all));
        specs.put(groups.get(3), new ListConsumerGroupOffsetsSpec());
        specs.put(groups.get(4), new ListConsumerGroupOffsetsSpec());
        Map<String, Object> out = new LinkedHashMap<>();
        try (Admin alice = Admin.create(client(s, "default.api.timeout.ms", "20000"))) {
            allow(admin, ResourceType.GROUP, groups.get(0), AclOperation.READ);
            allow(admin, ResourceType.GROUP, groups.get(1), AclOperation.READ);
            allow(admin, ResourceType.GROUP, groups.get(3), AclOperation.READ);
            allow(admin, ResourceType.TOPIC, topics.get(0), AclOperation.DESCRIBE);
            out.put("step1", listed(s, alice, specs));
            allow(admin, ResourceType.GROUP, groups.get(2), AclOperation.READ);
            allow(admin, ResourceType.GROUP, groups.get(4), AclOperation.READ);
            allow(admin, ResourceType.TOPIC, topics.get(1), AclOperation.DESCRIBE);
            out.put("step2", listed(s, alice, specs));
            allow(admin, ResourceType.TOPIC, topics.get(2), AclOperation.DESCRIBE);
            out.put("step3", listed(s, alice, specs));
        }
        return out;
    }

    /** Per group (its number): the partitions listed as "topicN-p:offset:epoch:metadata", or the refusal. */
    static Map<String, Object> listed(Support s, Admin alice, Map<String, ListConsumerGroupOffsetsSpec> specs) {
        var result = alice.listConsumerGroupOffsets(specs);
        Map<String, Object> out = new TreeMap<>();
        for (String group : specs.keySet()) {
            String key = group.substring(group.length() - 1);
            try {
                Map<TopicPartition, OffsetAndMetadata> m = result.partitionsToOffsetAndMetadata(group).get(20, TimeUnit.SECONDS);
                List<String> parts = new ArrayList<>();
                m.forEach((tp, o) -> parts.add(tp.topic().substring(tp.topic().length() - 1) + "-" + tp.partition() + ":"
                        + (o == null ? "null" : o.offset() + ":" + o.leaderEpoch().orElse(-1) + ":" + o.metadata())));
                parts.sort(null);
                out.put(key, parts);
            } catch (java.util.concurrent.ExecutionException e) {
                out.put(key, refusal(s, e.getCause()));
            } catch (Exception e) {
                out.put(key, refusal(s, e));
            }
        }
        return out;
    }
}
