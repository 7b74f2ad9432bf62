import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.CreateTopicsResult;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.quota.ClientQuotaFilterComponent;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

/**
 * More of the Admin surface after Apache Kafka's own tests, on one broker: AdminFenceProducersTest,
 * ClientQuotasRequestTest (through the Admin's quota calls, which send the same requests), the
 * KRaft cases of ListOffsetsIntegrationTest on the leader's append path, and from
 * PlaintextAdminIntegrationTest and BaseAdminIntegrationTest testListTopicsWithOptionListInternal,
 * testDescribeTopicsWithOptionPartitionSizeLimitPerResponse, testAclOperations,
 * testLogStartOffsetAfterDeleteRecords, testCreatePartitionWithOptionRetryOnQuotaViolation,
 * testDescribeConfigsNonexistentForKraft and testCreateDeleteTopics. Each scenario only observes;
 * compat/test_java_reference_admin.py holds the expectations.
 */
final class AdminSurfaceReplay {
    private AdminSurfaceReplay() {
    }

    // ------------------------------------------------------------------ FenceProducers

    /** testFenceAfterProducerCommit and testFenceBeforeProducerCommit (transaction.timeout.ms=2000). */
    static void fenceProducers(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("fence-topic");
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, topic, 1);
            for (boolean committed : new boolean[] {true, false}) {
                String tid = s.name(committed ? "fence-after-commit" : "fence-before-commit");
                Map<String, Object> out = new LinkedHashMap<>();
                try (KafkaProducer<byte[], byte[]> p = s.txnProducer(tid, "transaction.timeout.ms", "2000")) {
                    p.beginTransaction();
                    p.send(new ProducerRecord<>(topic, null, new byte[1])).get(20, TimeUnit.SECONDS);
                    if (committed) p.commitTransaction();
                    out.put("fence", Support.outcome(admin.fenceProducers(List.of(tid)).all()));
                    if (committed) p.beginTransaction();
                    out.put("send", Support.failureOf(() -> p.send(new ProducerRecord<>(topic, null, new byte[1]))
                            .get(20, TimeUnit.SECONDS)));
                    out.put("commit", Support.failureOf(p::commitTransaction));
                }
                obs.put(committed ? "after_commit" : "before_commit", out);
            }
        }
    }

    // ------------------------------------------------------------------ client quotas

    static ClientQuotaEntity entity(String... kv) {
        Map<String, String> m = new HashMap<>();
        for (int i = 0; i + 1 < kv.length; i += 2) m.put(kv[i], kv[i + 1]);
        return new ClientQuotaEntity(m);
    }

    /** Alters one entity; {@code kv} is key, value (a Double, or null to remove). */
    static Object alter(Admin admin, ClientQuotaEntity e, boolean validateOnly, Object... kv) {
        List<ClientQuotaAlteration.Op> ops = new ArrayList<>();
        for (int i = 0; i + 1 < kv.length; i += 2) ops.add(new ClientQuotaAlteration.Op((String) kv[i], (Double) kv[i + 1]));
        return AdminReference.errorAndMessage(admin.alterClientQuotas(List.of(new ClientQuotaAlteration(e, ops)),
                new org.apache.kafka.clients.admin.AlterClientQuotasOptions().validateOnly(validateOnly)).all());
    }

    /** An entity as "type=name" pairs sorted, "type default" for a default name. */
    static String label(ClientQuotaEntity e) {
        List<String> parts = new ArrayList<>();
        new TreeMap<>(e.entries()).forEach((k, v) -> parts.add(v == null ? k + " default" : k + "=" + v));
        return String.join(",", parts);
    }

    /** What describeClientQuotas answers for {@code filter}: entity label to its sorted quotas, or the error. */
    static Object describe(Admin admin, ClientQuotaFilter filter) {
        try {
            Map<String, Object> out = new TreeMap<>();
            admin.describeClientQuotas(filter).entities().get(20, TimeUnit.SECONDS)
                    .forEach((e, q) -> out.put(label(e), new TreeMap<>(q)));
            return out;
        } catch (java.util.concurrent.ExecutionException e) {
            return Arrays.asList(e.getCause().getClass().getSimpleName(), e.getCause().getMessage());
        } catch (Exception e) {
            return Support.failure(e);
        }
    }

    /** The filter that matches exactly {@code e} (ClientQuotasRequestTest.verifyDescribeEntityQuotas). */
    static ClientQuotaFilter exactly(ClientQuotaEntity e) {
        List<ClientQuotaFilterComponent> cs = new ArrayList<>();
        e.entries().forEach((k, v) -> cs.add(v == null ? ClientQuotaFilterComponent.ofDefaultEntity(k)
                : ClientQuotaFilterComponent.ofEntity(k, v)));
        return ClientQuotaFilter.containsOnly(cs);
    }

    static final String PRODUCE = "producer_byte_rate", CONSUME = "consumer_byte_rate", REQUEST = "request_percentage",
            IP_RATE = "connection_creation_rate", MUTATION = "controller_mutation_rate";

    /**
     * ClientQuotasRequestTest: first its two matching tests on a broker without quotas (they count
     * every entity), then removing those, the rest in the order of the Kafka test, each on
     * entities of its own; and PlaintextAdminIntegrationTest.testCreatePartitionWithOptionRetryOnQuotaViolation.
     */
    static void clientQuotas(Support s, Map<String, Object> obs) throws Exception {
        try (Admin admin = s.admin()) {
            obs.put("initially", describe(admin, ClientQuotaFilter.all()));
            quotaMatching(admin, obs);
            quotaAlterations(admin, obs);
            quotaRefusals(admin, obs);
            String clientId = s.name("quota-client-id");
            ClientQuotaEntity e = entity(ClientQuotaEntity.CLIENT_ID, clientId);
            obs.put("retry_on_quota", alter(admin, e, false, MUTATION, 1.0, CONSUME, 3.0));
            obs.put("retry_on_quota_described", describe(admin, ClientQuotaFilter.all()));
            alter(admin, e, false, MUTATION, null, CONSUME, null);
        }
    }

    /** testDescribeClientQuotasMatchExact and testDescribeClientQuotasMatchPartial. */
    static void quotaMatching(Admin admin, Map<String, Object> obs) throws Exception {
        String u = ClientQuotaEntity.USER, c = ClientQuotaEntity.CLIENT_ID, ip = ClientQuotaEntity.IP;
        Object[][] userClient = {
            {"user-1", "client-id-1", 50.50}, {"user-2", "client-id-1", 51.51}, {"user-3", "client-id-2", 52.52},
            {null, "client-id-1", 53.53}, {"user-1", null, 54.54}, {"user-3", null, 55.55},
            {"user-1", "-", 56.56}, {"user-2", "-", 57.57}, {"user-3", "-", 58.58}, {null, "-", 59.59},
            {"-", "client-id-2", 60.60}};
        List<ClientQuotaAlteration> setup = new ArrayList<>();
        List<ClientQuotaEntity> entities = new ArrayList<>();
        for (Object[] row : userClient) {
            Map<String, String> m = new HashMap<>();
            if (!"-".equals(row[0])) m.put(u, (String) row[0]);
            if (!"-".equals(row[1])) m.put(c, (String) row[1]);
            ClientQuotaEntity e = new ClientQuotaEntity(m);
            entities.add(e);
            setup.add(new ClientQuotaAlteration(e, List.of(new ClientQuotaAlteration.Op(REQUEST, (Double) row[2]))));
        }
        for (Object[] row : new Object[][] {{"1.2.3.4", 10.0}, {"2.3.4.5", 20.0}}) {
            ClientQuotaEntity e = entity(ip, (String) row[0]);
            entities.add(e);
            setup.add(new ClientQuotaAlteration(e, List.of(new ClientQuotaAlteration.Op(IP_RATE, (Double) row[1]))));
        }
        obs.put("match_setup", Support.outcome(admin.alterClientQuotas(setup).all()));
        List<Object> exact = new ArrayList<>();
        for (int i = 0; i < userClient.length; i++) exact.add(describe(admin, exactly(entities.get(i))));
        obs.put("match_exact", exact);
        List<Object> none = new ArrayList<>();
        for (ClientQuotaEntity e : List.of(entity(u, "user-1", c, "client-id-2"), entity(u, "user-3", c, "client-id-1"),
                entity(u, "user-2", c, null), entity(u, "user-4"), entity(u, null, c, "client-id-2"),
                entity(c, "client-id-1"), entity(c, "client-id-3"))) {
            none.add(describe(admin, exactly(e)));
        }
        obs.put("match_exact_none", none);
        Map<String, Object> partial = new LinkedHashMap<>();
        partial.put("user-1", describe(admin, ClientQuotaFilter.contains(List.of(ClientQuotaFilterComponent.ofEntity(u, "user-1")))));
        partial.put("unknown", describe(admin, ClientQuotaFilter.contains(List.of(ClientQuotaFilterComponent.ofEntity(u, "unknown")))));
        partial.put("client-id-2", describe(admin, ClientQuotaFilter.contains(List.of(ClientQuotaFilterComponent.ofEntity(c, "client-id-2")))));
        partial.put("default_user", describe(admin, ClientQuotaFilter.contains(List.of(ClientQuotaFilterComponent.ofDefaultEntity(u)))));
        partial.put("only_user-2", describe(admin, ClientQuotaFilter.containsOnly(List.of(ClientQuotaFilterComponent.ofEntity(u, "user-2")))));
        partial.put("only_client-id-1", describe(admin, ClientQuotaFilter.containsOnly(List.of(ClientQuotaFilterComponent.ofEntity(c, "client-id-1")))));
        partial.put("only_users", describe(admin, ClientQuotaFilter.containsOnly(List.of(ClientQuotaFilterComponent.ofEntityType(u)))));
        partial.put("users", describe(admin, ClientQuotaFilter.contains(List.of(ClientQuotaFilterComponent.ofEntityType(u)))));
        partial.put("only_clients", describe(admin, ClientQuotaFilter.containsOnly(List.of(ClientQuotaFilterComponent.ofEntityType(c)))));
        partial.put("clients", describe(admin, ClientQuotaFilter.contains(List.of(ClientQuotaFilterComponent.ofEntityType(c)))));
        partial.put("ips", describe(admin, ClientQuotaFilter.contains(List.of(ClientQuotaFilterComponent.ofEntityType(ip)))));
        partial.put("all", describe(admin, ClientQuotaFilter.contains(List.of())));
        partial.put("only_nothing", describe(admin, ClientQuotaFilter.containsOnly(List.of())));
        obs.put("match_partial", partial);
        List<ClientQuotaAlteration> teardown = new ArrayList<>();
        for (int i = 0; i < entities.size(); i++) {
            teardown.add(new ClientQuotaAlteration(entities.get(i), List.of(new ClientQuotaAlteration.Op(
                    i < userClient.length ? REQUEST : IP_RATE, null))));
        }
        obs.put("match_teardown", Support.outcome(admin.alterClientQuotas(teardown).all()));
    }

    /** testAlterClientQuotasRequest, ...ValidateOnly, testAlterIpQuotasRequest, ...Sanitized, ...WithDefaultName. */
    static void quotaAlterations(Admin admin, Map<String, Object> obs) throws Exception {
        ClientQuotaEntity e = entity(ClientQuotaEntity.USER, "user", ClientQuotaEntity.CLIENT_ID, "client-id");
        List<Object> steps = new ArrayList<>();
        steps.add(describe(admin, exactly(e)));
        Object[][] alters = {{PRODUCE, 10000.0, CONSUME, 20000.0}, {PRODUCE, 15000.0}, {PRODUCE, null}, {REQUEST, null},
            {PRODUCE, 5000.0}, {PRODUCE, 20000.0, CONSUME, null, REQUEST, 12.3}};
        for (Object[] a : alters) steps.add(Arrays.asList(alter(admin, e, false, a), describe(admin, exactly(e))));
        obs.put("alter_steps", steps);
        alter(admin, e, false, PRODUCE, null, REQUEST, null);

        ClientQuotaEntity user = entity(ClientQuotaEntity.USER, "user");
        List<Object> vsteps = new ArrayList<>();
        vsteps.add(Arrays.asList(alter(admin, user, false, PRODUCE, 20000.0, REQUEST, 23.45), describe(admin, exactly(user))));
        Object[][] validateOnly = {{CONSUME, 50000.0}, {PRODUCE, 10000.0}, {REQUEST, null},
            {PRODUCE, 10000.0, CONSUME, 50000.0, REQUEST, null}};
        for (Object[] a : validateOnly) vsteps.add(Arrays.asList(alter(admin, user, true, a), describe(admin, exactly(user))));
        obs.put("validate_only_steps", vsteps);
        alter(admin, user, false, PRODUCE, null, REQUEST, null);

        ClientQuotaEntity known = entity(ClientQuotaEntity.IP, "1.2.3.4"), byDefault = entity(ClientQuotaEntity.IP, null);
        ClientQuotaFilter knownF = ClientQuotaFilter.containsOnly(List.of(ClientQuotaFilterComponent.ofEntity(ClientQuotaEntity.IP, "1.2.3.4")));
        ClientQuotaFilter defaultF = ClientQuotaFilter.containsOnly(List.of(ClientQuotaFilterComponent.ofDefaultEntity(ClientQuotaEntity.IP)));
        ClientQuotaFilter allIps = ClientQuotaFilter.containsOnly(List.of(ClientQuotaFilterComponent.ofEntityType(ClientQuotaEntity.IP)));
        List<Object> ipSteps = new ArrayList<>();
        ipSteps.add(describe(admin, allIps));
        ipSteps.add(Arrays.asList(alter(admin, known, false, IP_RATE, 100.0), describe(admin, knownF)));
        ipSteps.add(Arrays.asList(alter(admin, known, false, IP_RATE, 150.0), describe(admin, knownF)));
        ipSteps.add(Arrays.asList(alter(admin, byDefault, false, IP_RATE, 200.0), describe(admin, defaultF)));
        ipSteps.add(describe(admin, allIps));
        ipSteps.add(Arrays.asList(alter(admin, known, false, IP_RATE, null), describe(admin, knownF)));
        ipSteps.add(Arrays.asList(alter(admin, byDefault, false, IP_RATE, null), describe(admin, allIps)));
        obs.put("ip_steps", ipSteps);

        ClientQuotaEntity spaces = entity(ClientQuotaEntity.USER, "user with spaces");
        obs.put("sanitized", Arrays.asList(alter(admin, spaces, false, PRODUCE, 20000.0), describe(admin, exactly(spaces))));
        alter(admin, spaces, false, PRODUCE, null);
        ClientQuotaEntity named = entity(ClientQuotaEntity.CLIENT_ID, "<default>");
        obs.put("default_name", Arrays.asList(alter(admin, named, false, PRODUCE, 20000.0), describe(admin, exactly(named)),
                describe(admin, ClientQuotaFilter.containsOnly(List.of(ClientQuotaFilterComponent.ofDefaultEntity(ClientQuotaEntity.CLIENT_ID))))));
        alter(admin, named, false, PRODUCE, null);
    }

    /** testAlterClientQuotasInvalidRequests, ...InvalidEntityCombination, ...BadIp, the invalid filter
     * combinations and testClientQuotasUnsupportedEntityTypes (all validateOnly, as in the Kafka test). */
    static void quotaRefusals(Admin admin, Map<String, Object> obs) {
        String u = ClientQuotaEntity.USER, c = ClientQuotaEntity.CLIENT_ID, ip = ClientQuotaEntity.IP;
        obs.put("invalid", Arrays.asList(
                alter(admin, entity(u, ""), true, REQUEST, 12.34),
                alter(admin, entity(c, ""), true, REQUEST, 12.34),
                alter(admin, entity("", "name"), true, REQUEST, 12.34),
                alter(admin, entity(), true, PRODUCE, 10000.5),
                alter(admin, entity(u, "user"), true, "bad", 1.0),
                alter(admin, entity(u, "user"), true, PRODUCE, 10000.5)));
        obs.put("invalid_combination", Arrays.asList(
                alter(admin, entity(u, "user", ip, "1.2.3.4"), true, REQUEST, 12.34),
                alter(admin, entity(c, "client", ip, "1.2.3.4"), true, REQUEST, 12.34)));
        obs.put("bad_ip", Arrays.asList(
                alter(admin, entity(ip, "not a valid host because it has spaces"), true, IP_RATE, 50.0),
                alter(admin, entity(ip, "RFC2606.invalid"), true, IP_RATE, 50.0)));
        obs.put("invalid_filter", Arrays.asList(
                describe(admin, ClientQuotaFilter.contains(List.of(ClientQuotaFilterComponent.ofEntityType(ip),
                        ClientQuotaFilterComponent.ofEntityType(u)))),
                describe(admin, ClientQuotaFilter.contains(List.of(ClientQuotaFilterComponent.ofEntityType(ip),
                        ClientQuotaFilterComponent.ofEntityType(c))))));
        obs.put("unsupported_type", describe(admin, exactly(entity("other", "name"))));
    }

    // ------------------------------------------------------------------ ListOffsets

    /**
     * ListOffsetsIntegrationTest's KRaft cases, the leader's append path (case 0): three records
     * with timestamps 100, 999, 200 in one batch or three, plain, gzip, and on a topic with lz4;
     * again on a LogAppendTime topic. testListMaxTimestampWithEmptyLog first.
     */
    static void listOffsets(Support s, Map<String, Object> obs) throws Exception {
        try (Admin admin = s.admin()) {
            String empty = s.name("lo-empty");
            Support.createTopic(admin, empty, 1);
            ListOffsetsResult.ListOffsetsResultInfo info = offsets(admin, empty, OffsetSpec.maxTimestamp());
            obs.put("empty_max_timestamp", Arrays.asList(info.offset(), info.timestamp(), info.leaderEpoch()));
            Map<String, Object> cases = new LinkedHashMap<>();
            for (String compression : List.of("none", "gzip", "lz4-topic")) {
                for (boolean oneBatch : new boolean[] {true, false}) {
                    for (boolean appendTime : new boolean[] {false, true}) {
                        if (compression.equals("lz4-topic") && appendTime) continue;  // the Kafka tests have no such case
                        String id = compression + (oneBatch ? "-one" : "-separate") + (appendTime ? "-append" : "-create");
                        String topic = s.name("lo-" + id);
                        Map<String, String> configs = new HashMap<>();
                        if (appendTime) configs.put("message.timestamp.type", "LogAppendTime");
                        if (compression.equals("lz4-topic")) configs.put("compression.type", "lz4");
                        admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1).configs(configs))).all().get(20, TimeUnit.SECONDS);
                        Support.awaitTopic(admin, topic, 1);
                        produceThree(s, topic, compression.equals("gzip") ? "gzip" : "none", oneBatch);
                        List<Object> seen = new ArrayList<>();
                        for (OffsetSpec spec : List.of(OffsetSpec.earliest(), OffsetSpec.latest(), OffsetSpec.maxTimestamp())) {
                            ListOffsetsResult.ListOffsetsResultInfo r = offsets(admin, topic, spec);
                            seen.add(Arrays.asList(r.offset(), r.leaderEpoch()));
                        }
                        cases.put(id, seen);
                    }
                }
            }
            obs.put("cases", cases);
        }
    }

    static ListOffsetsResult.ListOffsetsResultInfo offsets(Admin admin, String topic, OffsetSpec spec) throws Exception {
        TopicPartition tp = new TopicPartition(topic, 0);
        return admin.listOffsets(Map.of(tp, spec)).all().get(20, TimeUnit.SECONDS).get(tp);
    }

    /**
     * produceMessagesInOneBatch / ...InSeparateBatch: timestamps 100, 999, 200. In separate batches,
     * each waits for its acknowledgement and for the clock to move on, as the Kafka test's MockTime
     * moves on between batches, so a LogAppendTime topic gives each its own time.
     */
    static void produceThree(Support s, String topic, String compression, boolean oneBatch) throws Exception {
        long[] stamps = {100L, 999L, 200L};
        try (KafkaProducer<byte[], byte[]> p = s.producer("compression.type", compression,
                "linger.ms", oneBatch ? String.valueOf(Integer.MAX_VALUE) : "0", "delivery.timeout.ms", String.valueOf(Integer.MAX_VALUE),
                "request.timeout.ms", "15000")) {
            List<java.util.concurrent.Future<?>> sent = new ArrayList<>();
            for (long ts : stamps) {
                var f = p.send(new ProducerRecord<>(topic, 0, ts, null, new byte[10]));
                if (oneBatch) {
                    sent.add(f);
                    continue;
                }
                p.flush();
                f.get(20, TimeUnit.SECONDS);
                long acked = System.currentTimeMillis();
                while (System.currentTimeMillis() <= acked + 1) Thread.onSpinWait();
            }
            p.flush();
            for (var f : sent) f.get(20, TimeUnit.SECONDS);
        }
    }

    // ------------------------------------------------------------------ misc

    /**
     * testListTopicsWithOptionListInternal (a group's offsets topic made first),
     * testDescribeTopicsWithOptionPartitionSizeLimitPerResponse, testAclOperations (no authorizer),
     * testLogStartOffsetAfterDeleteRecords, testDescribeConfigsNonexistentForKraft.
     */
    static void misc(Support s, Map<String, Object> obs) throws Exception {
        try (Admin admin = s.admin()) {
            String group = s.name("misc-group");
            TopicPartition tp = new TopicPartition(s.name("misc-dr"), 0);
            admin.createTopics(List.of(new NewTopic(tp.topic(), 2, (short) 1))).all().get(20, TimeUnit.SECONDS);
            Support.awaitTopic(admin, tp.topic(), 2);
            try (KafkaConsumer<byte[], byte[]> c = s.consumer("read_uncommitted", "group.id", group)) {
                c.subscribe(List.of(tp.topic()));
                Support.await(() -> {
                    c.poll(java.time.Duration.ofMillis(100));
                    return !c.assignment().isEmpty();
                }, 30_000);
                try (KafkaProducer<byte[], byte[]> p = s.producer()) {
                    for (int i = 0; i < 10; i++) p.send(Support.rec(tp.topic(), 0, "k" + i, "v" + i));
                    p.flush();
                }
                var deleted = admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(3L))).lowWatermarks().get(tp)
                        .get(20, TimeUnit.SECONDS);
                obs.put("low_watermark", deleted.lowWatermark());
                obs.put("log_start_offset", offsets(admin, tp.topic(), OffsetSpec.earliest()).offset());
            }
            var internal = new java.util.TreeSet<>(admin.listTopics(new ListTopicsOptions().listInternal(true)).names().get(20, TimeUnit.SECONDS));
            var external = admin.listTopics().names().get(20, TimeUnit.SECONDS);
            internal.removeAll(external);
            obs.put("internal_only", new ArrayList<>(internal));

            String limited = s.name("misc-size-limit");
            admin.createTopics(List.of(new NewTopic(limited, 3, (short) 1))).all().get(20, TimeUnit.SECONDS);
            Support.awaitTopic(admin, limited, 3);
            Map<String, TopicDescription> described = admin.describeTopics(List.of(limited),
                    new DescribeTopicsOptions().partitionSizeLimitPerResponse(1)).allTopicNames().get(20, TimeUnit.SECONDS);
            obs.put("size_limited", Arrays.asList(described.size(), described.get(limited).partitions().stream()
                    .map(TopicPartitionInfo::partition).toList()));
            obs.put("size_limited_delete", Support.outcome(admin.deleteTopics(List.of(limited)).all()));

            AclBinding acl = new AclBinding(new ResourcePattern(ResourceType.TOPIC, "mytopic3", PatternType.LITERAL),
                    new AccessControlEntry("User:ANONYMOUS", "*", AclOperation.DESCRIBE, AclPermissionType.ALLOW));
            obs.put("acls", Arrays.asList(AdminReference.error(admin.describeAcls(AclBindingFilter.ANY).values()),
                    AdminReference.error(admin.createAcls(List.of(acl)).all()),
                    AdminReference.error(admin.deleteAcls(List.of(acl.toFilter())).all())));

            // (its GROUP resource is kafka-clients 4's; 3.9 has no ConfigResource.Type.GROUP)
            ConfigResource metricResource = new ConfigResource(ConfigResource.Type.CLIENT_METRICS, s.name("none_metric"));
            Map<String, Object> nonexistent = new LinkedHashMap<>();
            for (ConfigResource r : List.of(metricResource)) {
                try {
                    nonexistent.put(r.type().name(), admin.describeConfigs(List.of(r)).all().get(20, TimeUnit.SECONDS)
                            .get(r).entries().size());
                } catch (java.util.concurrent.ExecutionException e) {
                    nonexistent.put(r.type().name(), e.getCause().getClass().getSimpleName());
                }
            }
            obs.put("configs_nonexistent", nonexistent);
        }
    }

    /** BaseAdminIntegrationTest.testCreateDeleteTopics on one broker n: the assignments are [n] and
     * every replication factor 1 (the Kafka test's three brokers give 2 and 3). */
    static void createDeleteTopics(Support s, Map<String, Object> obs) throws Exception {
        List<String> topics = List.of(s.name("cd-mytopic"), s.name("cd-mytopic2"), s.name("cd-mytopic3"));
        try (Admin admin = s.admin()) {
            int n = admin.describeCluster().nodes().get(20, TimeUnit.SECONDS).iterator().next().id();
            List<NewTopic> newTopics = List.of(new NewTopic(topics.get(0), Map.of(0, List.of(n), 1, List.of(n))),
                    new NewTopic(topics.get(1), 3, (short) 1),
                    new NewTopic(topics.get(2), java.util.Optional.empty(), java.util.Optional.empty()));
            CreateTopicsResult validate = admin.createTopics(newTopics, new CreateTopicsOptions().validateOnly(true));
            obs.put("validate", Support.outcome(validate.all()));
            obs.put("validate_shapes", shapes(validate, topics));
            obs.put("after_validate", new java.util.TreeSet<>(admin.listTopics().names().get(20, TimeUnit.SECONDS))
                    .stream().filter(topics::contains).toList());
            CreateTopicsResult created = admin.createTopics(newTopics);
            obs.put("create", Support.outcome(created.all()));
            obs.put("create_shapes", shapes(created, topics));
            for (String t : topics) Support.awaitTopic(admin, t, t.equals(topics.get(0)) ? 2 : t.equals(topics.get(1)) ? 3 : 1);
            Map<String, TopicDescription> described = admin.describeTopics(topics).allTopicNames().get(20, TimeUnit.SECONDS);
            List<Boolean> idsMatch = new ArrayList<>();
            for (String t : topics) idsMatch.add(created.topicId(t).get().equals(described.get(t).topicId()));
            obs.put("ids_match", idsMatch);
            CreateTopicsResult again = admin.createTopics(newTopics);
            List<Object> errors = new ArrayList<>();
            for (String t : topics) errors.add(AdminReference.error(again.values().get(t)));
            errors.add(AdminReference.error(again.numPartitions(topics.get(2))));
            errors.add(AdminReference.error(again.replicationFactor(topics.get(2))));
            errors.add(AdminReference.error(again.config(topics.get(2))));
            obs.put("again", errors);
            Map<String, Object> shapes = new LinkedHashMap<>();
            for (String t : topics) {
                TopicDescription d = described.get(t);
                List<Object> parts = new ArrayList<>();
                for (TopicPartitionInfo p : d.partitions()) {
                    parts.add(Arrays.asList(p.partition(), p.leader().id() - n, p.replicas().stream().map(r -> r.id() - n).toList(),
                            p.isr().stream().map(r -> r.id() - n).toList()));
                }
                shapes.put(t.substring(t.lastIndexOf('-') + 1), Arrays.asList(d.isInternal(), parts));
            }
            obs.put("described", shapes);
            obs.put("delete", Support.outcome(admin.deleteTopics(topics).all()));
            obs.put("gone", Support.eventually(() -> admin.listTopics().names().get().stream().noneMatch(topics::contains), 20_000));
        }
    }

    static Map<String, Object> shapes(CreateTopicsResult r, List<String> topics) throws Exception {
        Map<String, Object> out = new LinkedHashMap<>();
        for (String t : topics) {
            out.put(t.substring(t.lastIndexOf('-') + 1), Arrays.asList(r.numPartitions(t).get(), r.replicationFactor(t).get(),
                    !r.config(t).get().entries().isEmpty()));
        }
        return out;
    }
}
