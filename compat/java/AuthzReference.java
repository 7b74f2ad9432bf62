import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

/**
 * Producer scenarios after Apache Kafka's AuthorizerIntegrationTest (3.9): an idempotent producer
 * without IDEMPOTENT_WRITE, and a transactional producer without WRITE on its topic. The broker has
 * an authorizer; options {@code jaas.<user>} hold each user's sasl.jaas.config ({@code admin} is a
 * super user and makes the topics and ACLs), the other client settings come as {@code client.*}.
 * compat/test_java_authz_reference.py holds the expectations.
 */
final class AuthzReference {
    private AuthzReference() {
    }

    static Properties as(Support s, String user, String... kv) {
        Properties p = s.common("sasl.jaas.config", s.option("jaas." + user, ""));
        for (int i = 0; i + 1 < kv.length; i += 2) p.put(kv[i], kv[i + 1]);
        return p;
    }

    static Admin superAdmin(Support s) {
        return Admin.create(as(s, "admin", "default.api.timeout.ms", "20000"));
    }

    static KafkaProducer<byte[], byte[]> producer(Support s, String user, String... kv) {
        Properties p = as(s, user, "max.block.ms", "20000", "delivery.timeout.ms", "30000", "linger.ms", "5");
        for (int i = 0; i + 1 < kv.length; i += 2) p.put(kv[i], kv[i + 1]);
        return new KafkaProducer<>(p, new org.apache.kafka.common.serialization.ByteArraySerializer(),
                new org.apache.kafka.common.serialization.ByteArraySerializer());
    }

    static AclBinding allow(String user, ResourceType type, String name, AclOperation op) {
        return new AclBinding(new ResourcePattern(type, name, PatternType.LITERAL),
                new AccessControlEntry("User:" + user, "*", op, AclPermissionType.ALLOW));
    }

    static String topic(Admin admin, Support s, String suffix) throws Exception {
        String topic = s.name(suffix);
        Support.createTopic(admin, topic, 1);
        return topic;
    }

    /** The producer's count of requests sent (producer-metrics request-total). */
    static double requestsSent(KafkaProducer<byte[], byte[]> p) {
        for (Map.Entry<MetricName, ? extends Metric> e : p.metrics().entrySet()) {
            MetricName n = e.getKey();
            if (n.name().equals("request-total") && n.group().equals("producer-metrics")) {
                return ((Number) e.getValue().metricValue()).doubleValue();
            }
        }
        throw new IllegalStateException("no producer-metrics request-total");
    }

    static Map<String, Object> sendFailure(KafkaProducer<byte[], byte[]> p, String topic) {
        return Support.failureOf(() -> p.send(Support.rec(topic, 0, "k", "hi")).get(20, TimeUnit.SECONDS));
    }

    /**
     * testIdempotentProducerNoIdempotentWriteAclInInitProducerId: user bob may READ the topic and
     * WRITE nothing; each send fails with ClusterAuthorizationException. Meanwhile the idle producer
     * keeps asking for a producer id (Sender.runOnce: shouldHandleAuthorizationError moves it back
     * to UNINITIALIZED, bumpIdempotentEpochAndResetIdIfNeeded enqueues InitProducerId again), so
     * once WRITE on the topic is granted the same producer gets an id and its send succeeds.
     */
    static void idempotentWithoutIdempotentWrite(Support s, Map<String, Object> obs) throws Exception {
        try (Admin admin = superAdmin(s)) {
            String topic = topic(admin, s, "no-idempotent-write");
            admin.createAcls(List.of(allow("bob", ResourceType.TOPIC, topic, AclOperation.READ))).all()
                    .get(20, TimeUnit.SECONDS);
            try (KafkaProducer<byte[], byte[]> p = producer(s, "bob", "retry.backoff.ms", "50")) {
                obs.put("first", sendFailure(p, topic));
                obs.put("second", sendFailure(p, topic));
                double before = requestsSent(p);
                long start = System.nanoTime(), deadline = start + TimeUnit.SECONDS.toNanos(20);
                while (requestsSent(p) - before < 100 && System.nanoTime() < deadline) Thread.sleep(1);
                obs.put("idle_requests_at_least_100", requestsSent(p) - before >= 100);
                obs.put("ms_for_100_requests", (System.nanoTime() - start) / 1_000_000);
                admin.createAcls(List.of(allow("bob", ResourceType.TOPIC, topic, AclOperation.WRITE))).all()
                        .get(20, TimeUnit.SECONDS);
                Map<String, Object> last = null;
                for (int i = 0; i < 20; i++) {  // Kafka applies an ACL on each broker a little after createAcls
                    last = sendFailure(p, topic);
                    if (last == null) break;
                }
                obs.put("after_grant", last);
            }
        }
    }

    /**
     * testIdempotentProducerNoIdempotentWriteAclInProduce: with WRITE on the topic and IDEMPOTENT_WRITE
     * a send succeeds; with every ACL of the user removed but DESCRIBE on the topic, the next two sends
     * fail with TopicAuthorizationException.
     */
    static void idempotentLosesWrite(Support s, Map<String, Object> obs) throws Exception {
        try (Admin admin = superAdmin(s)) {
            String topic = topic(admin, s, "loses-write");
            List<AclBinding> granted = List.of(allow("alice", ResourceType.TOPIC, topic, AclOperation.WRITE),
                    allow("alice", ResourceType.CLUSTER, "kafka-cluster", AclOperation.IDEMPOTENT_WRITE));
            admin.createAcls(granted).all().get(20, TimeUnit.SECONDS);
            try (KafkaProducer<byte[], byte[]> p = producer(s, "alice")) {
                obs.put("first", sendFailure(p, topic));
                List<AclBindingFilter> filters = granted.stream().map(AclBinding::toFilter).toList();
                admin.deleteAcls(filters).all().get(20, TimeUnit.SECONDS);
                admin.createAcls(List.of(allow("alice", ResourceType.TOPIC, topic, AclOperation.DESCRIBE))).all()
                        .get(20, TimeUnit.SECONDS);
                obs.put("second", sendFailure(p, topic));
                obs.put("third", sendFailure(p, topic));
            }
        }
    }

    /**
     * testTransactionalProducerTopicAuthorizationExceptionInSendCallback, with the time close() then
     * takes: AddPartitionsToTxn is refused (TOPIC_AUTHORIZATION_FAILED), so the abort that close()
     * starts completes in the client without an EndTxn, and the sender's last poll sleeps for
     * request.timeout.ms (NetworkClient.poll caps its wait there) with nothing to wake it.
     */
    static void txnWithoutTopicWrite(Support s, Map<String, Object> obs) throws Exception {
        try (Admin admin = superAdmin(s)) {
            String topic = topic(admin, s, "txn-no-write"), txnId = s.name("txn-no-write-T");
            admin.createAcls(List.of(allow("alice", ResourceType.TRANSACTIONAL_ID, txnId, AclOperation.WRITE),
                    allow("alice", ResourceType.TOPIC, topic, AclOperation.DESCRIBE))).all().get(20, TimeUnit.SECONDS);
            KafkaProducer<byte[], byte[]> p = producer(s, "alice", "transactional.id", txnId);
            long closeStart = 0;
            try {
                p.initTransactions();
                p.beginTransaction();
                Future<RecordMetadata> f = p.send(Support.rec(topic, 0, "1", "1"));
                try {
                    f.get(20, TimeUnit.SECONDS);
                    obs.put("unauthorized_topics", null);
                } catch (ExecutionException e) {
                    obs.put("error", Support.failure(e.getCause()));
                    if (e.getCause() instanceof TopicAuthorizationException tae) {
                        obs.put("unauthorized_topics", new TreeSet<>(tae.unauthorizedTopics()).stream()
                                .map(t -> t.equals(topic) ? "<topic>" : t).toList());
                    }
                }
                closeStart = System.nanoTime();
            } finally {
                p.close();
            }
            obs.put("close_ms", (System.nanoTime() - closeStart) / 1_000_000);
        }
    }

    /** testTransactionalProducerTopicAuthorizationExceptionInCommit: commitTransaction throws it. */
    static void txnCommitWithoutTopicWrite(Support s, Map<String, Object> obs) throws Exception {
        try (Admin admin = superAdmin(s)) {
            String topic = topic(admin, s, "txn-commit-no-write"), txnId = s.name("txn-commit-no-write-T");
            admin.createAcls(List.of(allow("alice", ResourceType.TRANSACTIONAL_ID, txnId, AclOperation.WRITE),
                    allow("alice", ResourceType.TOPIC, topic, AclOperation.DESCRIBE))).all().get(20, TimeUnit.SECONDS);
            try (KafkaProducer<byte[], byte[]> p = producer(s, "alice", "transactional.id", txnId)) {
                p.initTransactions();
                p.beginTransaction();
                obs.put("commit", Support.failureOf(() -> {
                    p.send(Support.rec(topic, 0, "1", "1"));
                    p.commitTransaction();
                }));
            }
        }
    }

    /**
     * WRITE on the topic taken away inside a transaction whose partition was added: the next Produce
     * is refused (TOPIC_AUTHORIZATION_FAILED), and close() aborts with an EndTxn the coordinator
     * answers (WRITE on the transactional id is all it needs), so it returns at once.
     */
    static void txnLosesTopicWrite(Support s, Map<String, Object> obs) throws Exception {
        try (Admin admin = superAdmin(s)) {
            String topic = topic(admin, s, "txn-loses-write"), txnId = s.name("txn-loses-write-T");
            AclBinding write = allow("alice", ResourceType.TOPIC, topic, AclOperation.WRITE);
            admin.createAcls(List.of(write, allow("alice", ResourceType.TRANSACTIONAL_ID, txnId, AclOperation.WRITE),
                    allow("alice", ResourceType.TOPIC, topic, AclOperation.DESCRIBE))).all().get(20, TimeUnit.SECONDS);
            KafkaProducer<byte[], byte[]> p = producer(s, "alice", "transactional.id", txnId);
            long closeStart = 0;
            try {
                p.initTransactions();
                p.beginTransaction();
                p.send(Support.rec(topic, 0, "1", "1")).get(20, TimeUnit.SECONDS);
                admin.deleteAcls(List.of(write.toFilter())).all().get(20, TimeUnit.SECONDS);
                Map<String, Object> last = null;
                for (int i = 0; i < 20 && last == null; i++) last = sendFailure(p, topic);
                obs.put("error", last);
                closeStart = System.nanoTime();
            } finally {
                p.close();
            }
            obs.put("close_ms", (System.nanoTime() - closeStart) / 1_000_000);
            TransactionDescription d = admin.describeTransactions(List.of(txnId)).description(txnId)
                    .get(20, TimeUnit.SECONDS);
            obs.put("state_after_close", d.state().toString());
        }
    }
}
