import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.AlterConfigsOptions;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.DescribeConsumerGroupsOptions;
import org.apache.kafka.clients.admin.DescribeShareGroupsOptions;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;

/**
 * PlaintextAdminIntegrationTest's cases that need kafka-clients 4 (compiled for {@code client="4"}
 * only): testIncrementalAlterAndDescribeGroupConfigs, the GROUP half of
 * testDescribeConfigsNonexistentForKraft, testShareGroups (with the 4.x Admin's listGroups and
 * GroupState), and testConsumerGroups' listing by group type, here across a classic group, a
 * consumer-protocol group and a share group; testListClientMetricsResources and
 * testListConfigResources with CLIENT_METRICS subscriptions made and refused. Each scenario only observes;
 * compat/test_java4_reference_admin.py holds the expectations.
 */
public final class Admin4Replay {
    private Admin4Replay() {
    }

    public static void main(String[] args) {
        Map<String, Support.Scenario> all = new LinkedHashMap<>();
        all.put("admin.group_configs", Admin4Replay::groupConfigs);
        all.put("admin.list_groups_by_type", Admin4Replay::groupsByType);
        all.put("admin.consumer_protocol_groups", Admin4Replay::consumerProtocolGroups);
        all.put("admin.member_migration", Admin4Replay::memberMigration);
        all.put("admin.delete_offsets_consumer_protocol", Admin4Replay::deleteOffsetsConsumerProtocol);
        all.put("admin.create_topics_returns_configs", Admin4Replay::createTopicsReturnsConfigs);
        all.put("admin.client_metrics_configs", Admin4Replay::clientMetricsConfigs);
        Support.main("Admin4Replay", all, args);
    }

    /** [value, source] of {@code name} in the group's described configs. */
    static List<Object> entry(Admin admin, ConfigResource r, String name) throws Exception {
        Config c = admin.describeConfigs(List.of(r)).all().get(20, TimeUnit.SECONDS).get(r);
        ConfigEntry e = c.get(name);
        return e == null ? null : Arrays.asList(e.value(), e.source().name());
    }

    static void groupConfigs(Support s, Map<String, Object> obs) throws Exception {
        ConfigResource group = new ConfigResource(ConfigResource.Type.GROUP, s.name("describe-alter-configs-group"));
        String session = "consumer.session.timeout.ms", heartbeat = "consumer.heartbeat.interval.ms";
        try (Admin admin = s.admin()) {
            var first = admin.incrementalAlterConfigs(Map.of(group, List.of(
                    new AlterConfigOp(new ConfigEntry(session, "50000"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry(heartbeat, ""), AlterConfigOp.OpType.DELETE))));
            obs.put("alter_keys", first.values().keySet().stream().map(ConfigResource::name).toList());
            obs.put("alter", Support.outcome(first.all()));
            obs.put("described_count", admin.describeConfigs(List.of(group)).all().get(20, TimeUnit.SECONDS).size());
            obs.put("session", entry(admin, group, session));
            obs.put("heartbeat", entry(admin, group, heartbeat));
            obs.put("validate_only", Support.outcome(admin.incrementalAlterConfigs(Map.of(group, List.of(
                    new AlterConfigOp(new ConfigEntry(session, "60000"), AlterConfigOp.OpType.SET))),
                    new AlterConfigsOptions().validateOnly(true)).all()));
            obs.put("session_after_validate_only", entry(admin, group, session));
            var invalid = admin.incrementalAlterConfigs(Map.of(group, List.of(
                    new AlterConfigOp(new ConfigEntry(session, "5"), AlterConfigOp.OpType.SET))),
                    new AlterConfigsOptions().validateOnly(true));
            obs.put("invalid", AdminReference.errorAndMessage(invalid.values().get(group)));
            // testDescribeConfigsNonexistentForKraft: a group never made is described with its defaults
            ConfigResource none = new ConfigResource(ConfigResource.Type.GROUP, s.name("none_group"));
            obs.put("nonexistent_entries", admin.describeConfigs(List.of(none)).all().get(20, TimeUnit.SECONDS)
                    .get(none).entries().size());
        }
    }

    /** groupId:type:state of the listed groups among {@code mine}, sorted. */
    static List<String> listed(Admin admin, ListGroupsOptions options, Set<String> mine) throws Exception {
        List<String> out = new ArrayList<>();
        for (GroupListing g : admin.listGroups(options).all().get(20, TimeUnit.SECONDS)) {
            if (!mine.contains(g.groupId())) continue;
            out.add(g.groupId().substring(g.groupId().lastIndexOf('-') + 1) + ":" + g.type().map(Object::toString).orElse("?")
                    + ":" + g.protocol() + ":" + g.groupState().map(Object::toString).orElse("?"));
        }
        out.sort(null);
        return out;
    }

    /**
     * A classic group, a consumer-protocol group and a share group, one member each, all Stable;
     * listGroups with every kind of filter; then testShareGroups' descriptions (the share group,
     * an unknown one, and the share group described as a consumer group).
     */
    static void groupsByType(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("types-topic");
        String classic = s.name("types-classic"), consumer = s.name("types-consumer"), share = s.name("types-share");
        String fake = s.name("types-fake"), simple = s.name("types-simple");
        Set<String> mine = Set.of(classic, consumer, share, simple);
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch ready = new CountDownLatch(3);
        List<Thread> threads = new ArrayList<>();
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, topic, 2);
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, share), List.of(
                    new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET))))
                    .all().get(20, TimeUnit.SECONDS);
            try (KafkaProducer<byte[], byte[]> p = s.producer()) {
                p.send(new ProducerRecord<>(topic, 0, null, null)).get(20, TimeUnit.SECONDS);
            }
            threads.add(member(() -> s.consumer("read_uncommitted", "group.id", classic, "client.id", "test_client_id"),
                    topic, stop, ready));
            threads.add(member(() -> s.consumer("read_uncommitted", "group.id", consumer, "client.id", "test_client_id",
                    "group.protocol", "consumer"), topic, stop, ready));
            threads.add(shareMember(s, share, topic, stop, ready));
            obs.put("ready", ready.await(60, TimeUnit.SECONDS));
            // testListGroups' simple group: offsets committed by the Admin, no member
            TopicPartition tp0 = new TopicPartition(topic, 0);
            var simpleAlter = admin.alterConsumerGroupOffsets(simple, Map.of(tp0, new OffsetAndMetadata(0L)));
            obs.put("simple_alter", Arrays.asList(Support.outcome(simpleAlter.all()), Support.outcome(simpleAlter.partitionResult(tp0))));
            obs.put("all_stable", Support.eventually(() -> listed(admin, new ListGroupsOptions(), mine).stream()
                    .filter(l -> l.endsWith(":Stable")).count() == 3 && listed(admin, new ListGroupsOptions(), mine).size() == 4, 30_000));
            obs.put("list_errors", admin.listGroups().errors().get(20, TimeUnit.SECONDS).size());
            Map<String, Object> filters = new LinkedHashMap<>();
            filters.put("none", listed(admin, new ListGroupsOptions(), mine));
            filters.put("consumer_groups", listed(admin, ListGroupsOptions.forConsumerGroups(), mine));
            filters.put("share_groups", listed(admin, ListGroupsOptions.forShareGroups(), mine));
            filters.put("classic", listed(admin, new ListGroupsOptions().withTypes(Set.of(GroupType.CLASSIC)), mine));
            filters.put("consumer", listed(admin, new ListGroupsOptions().withTypes(Set.of(GroupType.CONSUMER)), mine));
            filters.put("share", listed(admin, new ListGroupsOptions().withTypes(Set.of(GroupType.SHARE)), mine));
            filters.put("classic_stable", listed(admin, new ListGroupsOptions().withTypes(Set.of(GroupType.CLASSIC))
                    .inGroupStates(Set.of(GroupState.STABLE)), mine));
            filters.put("stable", listed(admin, new ListGroupsOptions().inGroupStates(Set.of(GroupState.STABLE)), mine));
            filters.put("empty", listed(admin, new ListGroupsOptions().inGroupStates(Set.of(GroupState.EMPTY)), mine));
            filters.put("protocol_consumer", listed(admin, new ListGroupsOptions().withProtocolTypes(Set.of("consumer")), mine));
            filters.put("share_empty", listed(admin, ListGroupsOptions.forShareGroups().inGroupStates(Set.of(GroupState.EMPTY)), mine));
            obs.put("filters", filters);

            // testDescribeClassicGroups
            Map<String, Object> classics = new LinkedHashMap<>();
            admin.describeClassicGroups(List.of(simple, classic)).all().get(20, TimeUnit.SECONDS).forEach((id, g) ->
                    classics.put(id.substring(id.lastIndexOf('-') + 1), Support.map("protocol", g.protocol(),
                            "members", g.members().size(), "upgraded", g.members().stream().map(m -> m.upgraded().isPresent()).toList())));
            obs.put("classic_described", new java.util.TreeMap<>(classics));
            var described = admin.describeShareGroups(List.of(share, fake),
                    new DescribeShareGroupsOptions().includeAuthorizedOperations(true)).describedGroups();
            obs.put("described_count", described.size());
            ShareGroupDescription d = described.get(share).get(20, TimeUnit.SECONDS);
            List<String> assignment = new ArrayList<>();
            Set<String> clients = new TreeSet<>();
            d.members().forEach(m -> {
                clients.add(m.clientId());
                m.assignment().topicPartitions().forEach(tp -> assignment.add(tp.toString()));
            });
            assignment.sort(null);
            obs.put("share", Support.map("state", d.groupState().toString(), "members", d.members().size(),
                    "clients", new ArrayList<>(clients), "assignment", assignment,
                    "operations", AdminDriver.names(d.authorizedOperations())));
            Object fakeError = AdminReference.errorAndMessage(described.get(fake));
            if (fakeError != null) {
                obs.put("share_fake", Support.map("error", fakeError));
            } else {
                ShareGroupDescription f = described.get(fake).get(20, TimeUnit.SECONDS);
                obs.put("share_fake", Support.map("state", f.groupState().toString(), "members", f.members().size(),
                        "operations", AdminDriver.names(f.authorizedOperations())));
            }
            var asConsumer = admin.describeConsumerGroups(List.of(share),
                    new DescribeConsumerGroupsOptions().includeAuthorizedOperations(true)).describedGroups().get(share);
            Object asConsumerError = AdminReference.errorAndMessage(asConsumer);
            if (asConsumerError != null) {
                obs.put("share_as_consumer", Support.map("error", asConsumerError));
            } else {
                ConsumerGroupDescription c = asConsumer.get(20, TimeUnit.SECONDS);
                obs.put("share_as_consumer", Support.map("state", c.groupState().toString(), "members", c.members().size(),
                        "assignor", c.partitionAssignor(), "operations", AdminDriver.names(c.authorizedOperations())));
            }
        } finally {
            stop.set(true);
            for (Thread t : threads) t.join(20_000);
        }
    }

    /** [member epoch or null, upgraded or null] of a member. */
    static List<Object> epochs(org.apache.kafka.clients.admin.MemberDescription m) {
        return Arrays.asList(m.memberEpoch().orElse(null), m.upgraded().orElse(null));
    }

    /**
     * testConsumerGroups with group.protocol=consumer: two static members and a dynamic one, each
     * on a topic of its own; once they have committed, the threads stop polling (the members stay
     * until their session ends) and the Admin lists, describes, removes members and deletes.
     */
    static void consumerProtocolGroups(Support s, Map<String, Object> obs) throws Exception {
        String group = s.name("cp-group"), fake = s.name("cp-fake");
        List<String> topics = List.of(s.name("cp-topic"), s.name("cp-topic1"), s.name("cp-topic2"));
        List<String> instances = Arrays.asList(s.name("instance-1"), s.name("instance-2"), null);
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch ready = new CountDownLatch(3);
        List<Thread> threads = new ArrayList<>();
        List<KafkaConsumer<byte[], byte[]>> consumers = new ArrayList<>();
        TopicPartition tp0 = new TopicPartition(topics.get(0), 0);
        try (Admin admin = s.admin()) {
            for (String t : topics) Support.createTopic(admin, t, 2);
            try (KafkaProducer<byte[], byte[]> p = s.producer()) {
                p.send(new ProducerRecord<>(topics.get(0), 0, null, null)).get(20, TimeUnit.SECONDS);
            }
            for (int i = 0; i < 3; i++) {
                List<String> kv = new ArrayList<>(List.of("group.id", group, "client.id", "test_client_id",
                        "group.protocol", "consumer"));
                if (instances.get(i) != null) kv.addAll(List.of("group.instance.id", instances.get(i)));
                KafkaConsumer<byte[], byte[]> c = s.consumer("read_uncommitted", kv.toArray(new String[0]));
                consumers.add(c);
                threads.add(committer(c, topics.get(i), stop, ready));
            }
            obs.put("ready", ready.await(60, TimeUnit.SECONDS));
            // the Kafka test's first wait: the group listed Stable (every member at the target epoch)
            obs.put("stable_and_committed", Support.eventually(() -> {
                OffsetAndMetadata m = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get().get(tp0);
                return m != null && m.offset() == 1 && cgListed(admin, new org.apache.kafka.clients.admin
                        .ListConsumerGroupsOptions(), group).equals(List.of("Consumer:Stable"));
            }, 30_000));
            stop.set(true);
            for (Thread t : threads) t.join(20_000);
            var options = new org.apache.kafka.clients.admin.ListConsumerGroupsOptions();
            obs.put("listed", Arrays.asList(cgListed(admin, options, group),
                    cgListed(admin, new org.apache.kafka.clients.admin.ListConsumerGroupsOptions().withTypes(Set.of(GroupType.CONSUMER)), group),
                    cgListed(admin, new org.apache.kafka.clients.admin.ListConsumerGroupsOptions().withTypes(Set.of(GroupType.CONSUMER))
                            .inGroupStates(Set.of(GroupState.STABLE)), group),
                    cgListed(admin, new org.apache.kafka.clients.admin.ListConsumerGroupsOptions().withTypes(Set.of(GroupType.CLASSIC)), group),
                    cgListed(admin, new org.apache.kafka.clients.admin.ListConsumerGroupsOptions().inGroupStates(Set.of(GroupState.EMPTY)), group)));
            var described = admin.describeConsumerGroups(List.of(group, fake),
                    new DescribeConsumerGroupsOptions().includeAuthorizedOperations(true));
            ConsumerGroupDescription d = described.describedGroups().get(group).get(20, TimeUnit.SECONDS);
            List<String> assignment = new ArrayList<>();
            Set<Object> clients = new TreeSet<>(), upgraded = new java.util.HashSet<>();
            d.members().forEach(m -> {
                clients.add(m.clientId());
                upgraded.add(m.upgraded().orElse(null));
                m.assignment().topicPartitions().forEach(tp -> assignment.add(tp.toString()));
            });
            assignment.sort(null);
            obs.put("described", Support.map("type", d.type().toString(), "state", d.groupState().toString(),
                    "simple", d.isSimpleConsumerGroup(), "group_epoch", d.groupEpoch().orElse(null),
                    "target_assignment_epoch", d.targetAssignmentEpoch().orElse(null), "members", d.members().size(),
                    "clients", new ArrayList<>(clients), "upgraded", new ArrayList<>(upgraded), "assignment", assignment,
                    "operations", AdminDriver.names(d.authorizedOperations())));
            obs.put("fake", AdminReference.errorAndMessage(described.describedGroups().get(fake)));
            obs.put("fake_all", AdminReference.errorAndMessage(described.all()));
            var stable = new org.apache.kafka.clients.admin.ListConsumerGroupOffsetsOptions().requireStable(true);
            var spec = Map.of(group, new org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec().topicPartitions(List.of(tp0)));
            obs.put("offsets", Arrays.asList(
                    admin.listConsumerGroupOffsets(group, stable).partitionsToOffsetAndMetadata().get().get(tp0).offset(),
                    admin.listConsumerGroupOffsets(spec).partitionsToOffsetAndMetadata().get().get(tp0).offset(),
                    admin.listConsumerGroupOffsets(spec, stable).partitionsToOffsetAndMetadata().get().get(tp0).offset()));
            var unknown = new org.apache.kafka.clients.admin.MemberToRemove("invalid-instance-id");
            var bad = admin.removeMembersFromConsumerGroup(group,
                    new org.apache.kafka.clients.admin.RemoveMembersFromConsumerGroupOptions(Set.of(unknown)));
            obs.put("remove_unknown", Arrays.asList(AdminReference.error(bad.all()), AdminReference.error(bad.memberResult(unknown))));
            var del = admin.deleteConsumerGroups(List.of(group, fake)).deletedGroups();
            obs.put("delete_active", Arrays.asList(AdminReference.error(del.get(fake)), AdminReference.error(del.get(group))));
            var one = new org.apache.kafka.clients.admin.RemoveMembersFromConsumerGroupOptions(
                    Set.of(new org.apache.kafka.clients.admin.MemberToRemove(instances.get(0))));
            one.reason("test remove");
            var removed = admin.removeMembersFromConsumerGroup(group, one);
            obs.put("remove_static", Arrays.asList(AdminReference.error(removed.all()),
                    AdminReference.error(removed.memberResult(new org.apache.kafka.clients.admin.MemberToRemove(instances.get(0))))));
            obs.put("members_after_one", admin.describeConsumerGroups(List.of(group)).describedGroups().get(group)
                    .get(20, TimeUnit.SECONDS).members().size());
            obs.put("remove_all", AdminReference.errorAndMessage(admin.removeMembersFromConsumerGroup(group,
                    new org.apache.kafka.clients.admin.RemoveMembersFromConsumerGroupOptions()).all()));
            obs.put("members_after_all", admin.describeConsumerGroups(List.of(group)).describedGroups().get(group)
                    .get(20, TimeUnit.SECONDS).members().size());
            obs.put("delete_empty", AdminReference.error(admin.deleteConsumerGroups(List.of(group)).deletedGroups().get(group)));
            var alter = admin.alterConsumerGroupOffsets(group, Map.of(tp0, new OffsetAndMetadata(0L)));
            obs.put("alter", Arrays.asList(AdminReference.error(alter.all()), AdminReference.error(alter.partitionResult(tp0))));
            obs.put("altered", admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get().get(tp0).offset());
        } finally {
            stop.set(true);
            for (Thread t : threads) t.join(20_000);
            for (KafkaConsumer<byte[], byte[]> c : consumers) c.close(Duration.ofSeconds(5));
        }
    }

    static List<String> cgListed(Admin admin, org.apache.kafka.clients.admin.ListConsumerGroupsOptions o, String group)
            throws Exception {
        List<String> out = new ArrayList<>();
        for (var l : admin.listConsumerGroups(o).all().get(20, TimeUnit.SECONDS)) {
            if (l.groupId().equals(group)) out.add(l.type().map(Object::toString).orElse("?") + ":"
                    + l.groupState().map(Object::toString).orElse("?"));
        }
        return out;
    }

    /** testConsumerGroupWithMemberMigration: a classic member, then a consumer-protocol member, in one group. */
    static void memberMigration(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("migration-topic"), group = s.name("migration-group");
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, topic, 2);
            try (KafkaProducer<byte[], byte[]> p = s.producer()) {
                p.send(new ProducerRecord<>(topic, 0, null, null));
                p.send(new ProducerRecord<>(topic, 1, null, null));
                p.flush();
            }
            try (KafkaConsumer<byte[], byte[]> classic = s.consumer("read_uncommitted", "group.id", group,
                    "client.id", "test_classic_client_id", "group.protocol", "classic");
                 KafkaConsumer<byte[], byte[]> consumer = s.consumer("read_uncommitted", "group.id", group,
                    "client.id", "test_consumer_client_id", "group.protocol", "consumer")) {
                classic.subscribe(List.of(topic));
                classic.poll(Duration.ofMillis(1000));
                consumer.subscribe(List.of(topic));
                consumer.poll(Duration.ofMillis(1000));
                obs.put("stable", Support.eventually(() -> {
                    classic.poll(Duration.ofMillis(100));
                    consumer.poll(Duration.ofMillis(100));
                    ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
                    return d.groupState() == GroupState.STABLE && d.members().size() == 2;
                }, 30_000));
                ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all().get(20, TimeUnit.SECONDS).get(group);
                Map<String, Object> members = new java.util.TreeMap<>();
                d.members().forEach(m -> members.put(m.clientId(), epochs(m)));
                obs.put("described", Support.map("type", d.type().toString(), "group_epoch", d.groupEpoch().orElse(null),
                        "target_assignment_epoch", d.targetAssignmentEpoch().orElse(null), "members", members));
            }
        }
    }

    /** testDeleteConsumerGroupOffsets with group.protocol=consumer. */
    static void deleteOffsetsConsumerProtocol(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("do-topic"), group = s.name("do-group"), fake = s.name("do-fake");
        TopicPartition tp1 = new TopicPartition(topic, 0), tp2 = new TopicPartition(s.name("do-foo"), 0);
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, topic, 1);
            try (KafkaProducer<byte[], byte[]> p = s.producer()) {
                p.send(new ProducerRecord<>(topic, 0, null, null)).get(20, TimeUnit.SECONDS);
            }
            try (KafkaConsumer<byte[], byte[]> c = s.consumer("read_uncommitted", "group.id", group,
                    "client.id", "test_client_id", "group.protocol", "consumer",
                    "max.poll.interval.ms", String.valueOf(Integer.MAX_VALUE))) {
                c.subscribe(List.of(topic));
                obs.put("polled", Support.await(() -> !c.poll(Duration.ofMillis(200)).isEmpty(), 30_000));
                c.commitSync();
                obs.put("consuming", AdminReference.deleteOffsetsOf(admin, group, tp1, tp2));
                obs.put("fake", AdminReference.deleteOffsetsOf(admin, fake, tp1, tp2));
            }
            obs.put("empty", AdminReference.deleteOffsetsOf(admin, group, tp1, tp2));
        }
    }

    /**
     * testCreateTopicsReturnsConfigs, on a broker started with BaseAdminIntegrationTest's static
     * log.roll.hours=2 and log.roll.jitter.ms=123: a cluster-wide log.retention.ms and this broker's
     * log.cleaner.delete.retention.ms set dynamically first; [value, source, sensitive, read-only]
     * of the configs CreateTopics answers for the topic with an override.
     */
    static void createTopicsReturnsConfigs(Support s, Map<String, Object> obs) throws Exception {
        try (Admin admin = s.admin()) {
            int n = admin.describeCluster().nodes().get(20, TimeUnit.SECONDS).iterator().next().id();
            ConfigResource cluster = new ConfigResource(ConfigResource.Type.BROKER, "");
            ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, String.valueOf(n));
            admin.incrementalAlterConfigs(Map.of(cluster, List.of(new AlterConfigOp(
                    new ConfigEntry("log.retention.ms", "10800000"), AlterConfigOp.OpType.SET)))).all().get(20, TimeUnit.SECONDS);
            admin.incrementalAlterConfigs(Map.of(broker, List.of(new AlterConfigOp(
                    new ConfigEntry("log.cleaner.delete.retention.ms", "34"), AlterConfigOp.OpType.SET)))).all().get(20, TimeUnit.SECONDS);
            String foo = s.name("rc-foo"), bar = s.name("rc-bar"), baz = s.name("rc-baz");
            var result = admin.createTopics(List.of(
                    new org.apache.kafka.clients.admin.NewTopic(foo, Map.of(0, List.of(n), 1, List.of(n)))
                            .configs(Map.of("index.interval.bytes", "9999999")),
                    new org.apache.kafka.clients.admin.NewTopic(bar, 3, (short) 1),
                    new org.apache.kafka.clients.admin.NewTopic(baz, java.util.Optional.empty(), java.util.Optional.empty())));
            obs.put("created", Support.outcome(result.all()));
            obs.put("shapes", Arrays.asList(result.numPartitions(foo).get(), result.replicationFactor(foo).get(),
                    result.numPartitions(bar).get(), result.replicationFactor(bar).get(),
                    result.numPartitions(baz).get(), result.replicationFactor(baz).get()));
            Config configs = result.config(foo).get(20, TimeUnit.SECONDS);
            Map<String, Object> entries = new java.util.TreeMap<>();
            for (String name : List.of("cleanup.policy", "retention.ms", "delete.retention.ms", "segment.jitter.ms",
                    "segment.ms", "index.interval.bytes")) {
                ConfigEntry e = configs.get(name);
                entries.put(name, e == null ? null : Arrays.asList(e.value(), e.source().name(), e.isSensitive(),
                        e.isReadOnly(), e.synonyms().size()));
            }
            obs.put("configs", entries);
            // leave the broker as it was for the scenarios beside this one
            admin.incrementalAlterConfigs(Map.of(cluster, List.of(new AlterConfigOp(
                    new ConfigEntry("log.retention.ms", ""), AlterConfigOp.OpType.DELETE)),
                    broker, List.of(new AlterConfigOp(new ConfigEntry("log.cleaner.delete.retention.ms", ""),
                            AlterConfigOp.OpType.DELETE)))).all().get(20, TimeUnit.SECONDS);
        }
    }

    /** TYPE:name of every listed resource named in {@code mine} (the scenarios beside make others), sorted. */
    static List<String> configResources(Admin admin, Set<ConfigResource.Type> types, Set<String> mine) throws Exception {
        var listed = types == null ? admin.listConfigResources() : admin.listConfigResources(types,
                new org.apache.kafka.clients.admin.ListConfigResourcesOptions());
        List<String> out = new ArrayList<>();
        for (ConfigResource r : listed.all().get(20, TimeUnit.SECONDS)) {
            if (mine.contains(r.name())) out.add(r.type() + ":" + r.name());
        }
        out.sort(null);
        return out;
    }

    @SuppressWarnings("deprecation")
    static List<String> clientMetricsListed(Admin admin) throws Exception {
        List<String> out = new ArrayList<>();
        for (var l : admin.listClientMetricsResources().all().get(20, TimeUnit.SECONDS)) out.add(l.name());
        out.sort(null);
        return out;
    }

    static Object alterOne(Admin admin, ConfigResource r, String key, String value, AlterConfigOp.OpType op) {
        var result = admin.incrementalAlterConfigs(Map.of(r, List.of(new AlterConfigOp(new ConfigEntry(key, value), op))));
        return AdminReference.errorAndMessage(result.values().get(r));
    }

    /**
     * testListClientMetricsResources and testListConfigResources (4.1): a subscription with
     * interval.ms=111 and a group config make a CLIENT_METRICS and a GROUP resource that
     * listClientMetricsResources and listConfigResources (all types, then each) list; UNKNOWN is
     * refused. Beside them: ClientMetricsConfigs' refusals through the Admin, the subscription
     * described with its defaults, and its removal with its last key.
     */
    static void clientMetricsConfigs(Support s, Map<String, Object> obs) throws Exception {
        String name = s.name("metrics-sub");
        ConfigResource metrics = new ConfigResource(ConfigResource.Type.CLIENT_METRICS, name);
        ConfigResource group = new ConfigResource(ConfigResource.Type.GROUP, s.name("cfg-group"));
        try (Admin admin = s.admin()) {
            String id = String.valueOf(admin.describeCluster().nodes().get(20, TimeUnit.SECONDS).iterator().next().id());
            // IntegrationTestHarness creates the offsets topic before each test
            admin.listConsumerGroupOffsets(s.name("cfg-offsets")).partitionsToOffsetAndMetadata().get(20, TimeUnit.SECONDS);
            obs.put("initially", clientMetricsListed(admin));
            var alter = admin.incrementalAlterConfigs(Map.of(
                    metrics, List.of(new AlterConfigOp(new ConfigEntry("interval.ms", "111"), AlterConfigOp.OpType.SET)),
                    group, List.of(new AlterConfigOp(new ConfigEntry("consumer.session.timeout.ms", "50000"),
                            AlterConfigOp.OpType.SET))));
            obs.put("alter", Support.outcome(alter.all()));
            obs.put("listed", clientMetricsListed(admin));
            Set<String> mine = Set.of(id, "__consumer_offsets", name, group.name());
            Map<String, Object> byType = new LinkedHashMap<>();
            byType.put("ALL", configResources(admin, null, mine));
            for (ConfigResource.Type t : List.of(ConfigResource.Type.BROKER, ConfigResource.Type.BROKER_LOGGER,
                    ConfigResource.Type.TOPIC, ConfigResource.Type.GROUP, ConfigResource.Type.CLIENT_METRICS))
                byType.put(t.name(), configResources(admin, Set.of(t), mine));
            obs.put("config_resources", byType);
            obs.put("unknown_type", Support.outcome(admin.listConfigResources(Set.of(ConfigResource.Type.UNKNOWN),
                    new org.apache.kafka.clients.admin.ListConfigResourcesOptions()).all()));
            Map<String, Object> refused = new LinkedHashMap<>();
            refused.put("interval", alterOne(admin, metrics, "interval.ms", "99", AlterConfigOp.OpType.SET));
            refused.put("not_a_number", alterOne(admin, metrics, "interval.ms", "often", AlterConfigOp.OpType.SET));
            refused.put("unknown_key", alterOne(admin, metrics, "colour", "red", AlterConfigOp.OpType.SET));
            refused.put("selector", alterOne(admin, metrics, "match", "client_idx=a", AlterConfigOp.OpType.SET));
            refused.put("regex", alterOne(admin, metrics, "match", "client_id=(", AlterConfigOp.OpType.SET));
            refused.put("append", alterOne(admin, metrics, "metrics", "org.", AlterConfigOp.OpType.APPEND));
            obs.put("refused", refused);
            obs.put("match", alterOne(admin, metrics, "match", "client_software_name=apache-kafka-java, client_id=.*",
                    AlterConfigOp.OpType.SET));
            Map<String, Object> described = new java.util.TreeMap<>();
            for (ConfigEntry e : admin.describeConfigs(List.of(metrics)).all().get(20, TimeUnit.SECONDS).get(metrics).entries())
                described.put(e.name(), Arrays.asList(e.value(), e.source().name(), e.type().name()));
            obs.put("described", described);
            alterOne(admin, metrics, "interval.ms", "", AlterConfigOp.OpType.DELETE);
            obs.put("listed_after_one_delete", clientMetricsListed(admin));
            alterOne(admin, metrics, "match", "", AlterConfigOp.OpType.DELETE);
            obs.put("listed_after_last_delete", clientMetricsListed(admin));
            alterOne(admin, group, "consumer.session.timeout.ms", "", AlterConfigOp.OpType.DELETE);
        }
    }

    /** Polls and commits with {@code c} until {@code stop}, counting down {@code ready} once assigned; does not close it. */
    static Thread committer(KafkaConsumer<byte[], byte[]> c, String topic, AtomicBoolean stop, CountDownLatch ready) {
        return daemon(() -> Support.pollUntilStopped(c, topic, stop, ready, true));
    }

    interface ConsumerFactory {
        KafkaConsumer<byte[], byte[]> make();
    }

    /** A consumer {@code factory} makes, polling until {@code stop} as {@link #committer} does without committing; closed after. */
    static Thread member(ConsumerFactory factory, String topic, AtomicBoolean stop, CountDownLatch ready) {
        return daemon(() -> {
            try (KafkaConsumer<byte[], byte[]> c = factory.make()) {
                Support.pollUntilStopped(c, topic, stop, ready, false);
            }
        });
    }

    static Thread daemon(Runnable body) {
        Thread t = new Thread(body);
        t.setDaemon(true);
        t.start();
        return t;
    }

    static Thread shareMember(Support s, String group, String topic, AtomicBoolean stop, CountDownLatch ready) {
        Thread t = new Thread(() -> {
            try (KafkaShareConsumer<byte[], byte[]> c = new KafkaShareConsumer<>(s.common("group.id", group,
                    "client.id", "test_client_id"), new org.apache.kafka.common.serialization.ByteArrayDeserializer(),
                    new org.apache.kafka.common.serialization.ByteArrayDeserializer())) {
                c.subscribe(List.of(topic));
                boolean counted = false;
                while (!stop.get()) {
                    if (!c.poll(Duration.ofMillis(100)).isEmpty() && !counted) {
                        counted = true;
                        ready.countDown();
                    }
                }
            }
        });
        t.setDaemon(true);
        t.start();
        return t;
    }
}
