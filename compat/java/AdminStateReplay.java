import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.AbortTransactionSpec;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.UserScramCredentialDeletion;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.admin.UserScramCredentialsDescription;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicCollection;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.clients.admin.OffsetSpec;

/**
 * Admin scenarios after Apache Kafka's PlaintextAdminIntegrationTest on the state the broker keeps
 * for producers, transactions and SCRAM users, and on the cluster's description: testDescribeProducers,
 * testDescribeTransactions, testAbortTransaction, testDescribeUserScramCredentials (with ScramImage's
 * and ScramControlManager's refusals), testListNodes, testDescribeCluster and testDescribeTopicsWithNames.
 * Each scenario only observes; compat/test_java_reference_replay.py holds the expectations.
 */
final class AdminStateReplay {
    private AdminStateReplay() {
    }

    /** [producer epoch, coordinator epoch or null, current transaction start offset or null], by producer id. */
    static List<Object> producers(Admin admin, TopicPartition tp) throws Exception {
        List<ProducerState> states = new ArrayList<>(admin.describeProducers(List.of(tp)).partitionResult(tp)
                .get(20, TimeUnit.SECONDS).activeProducers());
        states.sort(Comparator.comparingLong(ProducerState::producerId));
        List<Object> out = new ArrayList<>();
        for (ProducerState st : states) {
            out.add(java.util.Arrays.asList(st.producerEpoch(),
                    st.coordinatorEpoch().isPresent() ? st.coordinatorEpoch().getAsInt() : null,
                    st.currentTransactionStartOffset().isPresent() ? st.currentTransactionStartOffset().getAsLong() : null));
        }
        return out;
    }

    /** consumeToExpectedNumber / checkConsumer: what a read_committed consumer reads up to the LSO. */
    static int committedCount(Support s, Admin admin, TopicPartition tp) throws Exception {
        long lso = Support.listOffset(admin, tp, OffsetSpec.latest(), IsolationLevel.READ_COMMITTED);
        try (KafkaConsumer<byte[], byte[]> c = s.consumer("read_committed")) {
            return Support.readFromStart(c, tp, lso, 20_000).size();
        }
    }

    static void send(KafkaProducer<byte[], byte[]> p, TopicPartition tp, int n) throws Exception {
        for (int i = 0; i < n; i++) p.send(Support.rec(tp.topic(), tp.partition(), "" + i, "" + i));
        p.flush();
    }

    /** testDescribeProducers: an idempotent producer, a committed transaction, an open one. */
    static void describeProducers(Support s, Map<String, Object> obs) throws Exception {
        TopicPartition tp = new TopicPartition(s.name("describe-producers"), 0);
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, tp.topic(), 1);
            try (KafkaProducer<byte[], byte[]> p = s.producer()) {
                send(p, tp, 1);
            }
            obs.put("idempotent", producers(admin, tp));
            try (KafkaProducer<byte[], byte[]> p = s.txnProducer(s.name("dp-foo"))) {
                p.beginTransaction();
                send(p, tp, 2);
                p.commitTransaction();
            }
            obs.put("committed_read", committedCount(s, admin, tp));
            obs.put("after_commit", producers(admin, tp));
            try (KafkaProducer<byte[], byte[]> p = s.txnProducer(s.name("dp-foo3"))) {
                p.beginTransaction();
                send(p, tp, 3);
                obs.put("ongoing", producers(admin, tp));
                p.abortTransaction();
            }
        }
    }

    static Object state(Admin admin, String tid) {
        try {
            return admin.describeTransactions(List.of(tid)).description(tid).get(20, TimeUnit.SECONDS).state().name();
        } catch (java.util.concurrent.ExecutionException e) {
            return e.getCause().getClass().getSimpleName();
        } catch (Exception e) {
            return e.getClass().getSimpleName();
        }
    }

    /** The leader of the __transaction_state partition of {@code tid} (Utils.abs(hashCode) % partitions). */
    static int coordinatorOf(Admin admin, String tid) throws Exception {
        var d = admin.describeTopics(List.of("__transaction_state")).allTopicNames().get(20, TimeUnit.SECONDS)
                .get("__transaction_state");
        int partition = (tid.hashCode() & 0x7fffffff) % d.partitions().size();
        return d.partitions().get(partition).leader().id();
    }

    /** [state, coordinator is the leader of its partition, producer id as DescribeProducers has it, epoch, partitions]. */
    static List<Object> described(Admin admin, String tid, TopicPartition tp) throws Exception {
        TransactionDescription d = admin.describeTransactions(List.of(tid)).description(tid).get(20, TimeUnit.SECONDS);
        boolean known = admin.describeProducers(List.of(tp)).partitionResult(tp).get(20, TimeUnit.SECONDS)
                .activeProducers().stream().anyMatch(st -> st.producerId() == d.producerId());
        return java.util.Arrays.asList(d.state().name(), d.coordinatorId() == coordinatorOf(admin, tid),
                known || d.topicPartitions().isEmpty(), (int) d.producerEpoch(),
                d.topicPartitions().stream().map(TopicPartition::toString).sorted().toList());
    }

    /** testDescribeTransactions: a transaction's states from before initTransactions to its commit or abort. */
    static void describeTransactions(Support s, Map<String, Object> obs) throws Exception {
        TopicPartition tp = new TopicPartition(s.name("describe-txn"), 0);
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, tp.topic(), 1);
            for (boolean commit : List.of(true, false)) {
                String tid = s.name(commit ? "dt-foo" : "dt-foo2");
                List<Object> steps = new ArrayList<>();
                steps.add(state(admin, tid));
                try (KafkaProducer<byte[], byte[]> p = s.txnProducer(tid)) {
                    steps.add(state(admin, tid));
                    p.beginTransaction();
                    steps.add(described(admin, tid, tp));
                    p.send(Support.rec(tp.topic(), 0, "k1", "v1"));
                    p.send(Support.rec(tp.topic(), 0, "k2", "v2"));
                    p.flush();
                    steps.add(described(admin, tid, tp));
                    if (commit) p.commitTransaction(); else p.abortTransaction();
                    String done = commit ? "COMPLETE_COMMIT" : "COMPLETE_ABORT";
                    Support.eventually(() -> done.equals(state(admin, tid)), 20_000);
                    steps.add(described(admin, tid, tp));
                }
                obs.put(commit ? "commit" : "abort", steps);
            }
        }
    }

    /** testAbortTransaction: the Admin aborts an open transaction with the producer's id, epoch and coordinator epoch. */
    static void abortTransaction(Support s, Map<String, Object> obs) throws Exception {
        TopicPartition tp = new TopicPartition(s.name("abort-txn"), 0);
        try (Admin admin = s.admin(); KafkaProducer<byte[], byte[]> p = s.txnProducer(s.name("at-foo"))) {
            Support.createTopic(admin, tp.topic(), 1);
            p.beginTransaction();
            p.send(Support.rec(tp.topic(), 0, "k1", "v1"));
            p.commitTransaction();
            obs.put("after_commit", committedCount(s, admin, tp));
            p.beginTransaction();
            p.send(Support.rec(tp.topic(), 0, "k2", "v2"));
            p.flush();
            try (KafkaProducer<byte[], byte[]> plain = s.producer()) {
                send(plain, tp, 1);
            }
            obs.put("while_open", committedCount(s, admin, tp));
            ProducerState txn = admin.describeProducers(List.of(tp)).partitionResult(tp).get(20, TimeUnit.SECONDS)
                    .activeProducers().stream().min(Comparator.comparingLong(ProducerState::producerId)).get();
            obs.put("abort", Support.outcome(admin.abortTransaction(new AbortTransactionSpec(tp, txn.producerId(),
                    (short) txn.producerEpoch(), txn.coordinatorEpoch().getAsInt())).all()));
            obs.put("after_abort", committedCount(s, admin, tp));
            obs.put("end", Support.listOffset(admin, tp, OffsetSpec.latest(), IsolationLevel.READ_COMMITTED));
            // the same abort again: the producer is no longer in a transaction on the partition
            obs.put("abort_again", Support.outcome(admin.abortTransaction(new AbortTransactionSpec(tp, txn.producerId(),
                    (short) txn.producerEpoch(), txn.coordinatorEpoch().getAsInt())).all()));
        }
    }

    /** {user: [[mechanism, iterations]...]} of the users whose names start with {@code prefix}. */
    static Map<String, Object> scram(Admin admin, List<String> users, String prefix) throws Exception {
        Map<String, UserScramCredentialsDescription> d = users == null
                ? admin.describeUserScramCredentials().all().get(20, TimeUnit.SECONDS)
                : admin.describeUserScramCredentials(users).all().get(20, TimeUnit.SECONDS);
        Map<String, Object> out = new TreeMap<>();
        d.forEach((user, desc) -> {
            if (!user.startsWith(prefix)) return;
            List<Object> infos = new ArrayList<>();
            for (ScramCredentialInfo i : desc.credentialInfos()) infos.add(List.of(i.mechanism().name(), i.iterations()));
            infos.sort(Comparator.comparing(Object::toString));
            out.put(user.substring(prefix.length()) + (desc.name().equals(user) ? "" : "?"), infos);
        });
        return out;
    }

    static UserScramCredentialUpsertion upsert(String user, ScramMechanism m, int iterations) {
        return new UserScramCredentialUpsertion(user, new ScramCredentialInfo(m, iterations), "123456");
    }

    /** testDescribeUserScramCredentials, then ScramImage.describe's and ScramControlManager's refusals. */
    static void scramCredentials(Support s, Map<String, Object> obs) throws Exception {
        String prefix = s.name("scram-");
        String tom = prefix + "tom", tom2 = prefix + "tom2", tom3 = prefix + "tom3";
        ScramMechanism sha256 = ScramMechanism.SCRAM_SHA_256, sha512 = ScramMechanism.SCRAM_SHA_512;
        try (Admin admin = s.admin()) {
            obs.put("add", Support.outcome(admin.alterUserScramCredentials(List.of(upsert(tom, sha256, 4096))).all()));
            obs.put("one", scram(admin, null, prefix));
            obs.put("add_two", Support.outcome(admin.alterUserScramCredentials(
                    List.of(upsert(tom2, sha256, 4096), upsert(tom3, sha256, 4096))).all()));
            obs.put("alter", Support.outcome(admin.alterUserScramCredentials(List.of(upsert(tom, sha512, 8192))).all()));
            obs.put("all", scram(admin, null, prefix));
            obs.put("tom2", scram(admin, List.of(tom2), prefix));
            var missing = admin.describeUserScramCredentials(List.of(tom2, prefix + "nobody"));
            obs.put("missing", java.util.Arrays.asList(Support.outcome(missing.description(tom2)) == null,
                    AdminReference.errorAndMessage(missing.description(prefix + "nobody")),
                    AdminReference.errorAndMessage(missing.all())));
            var twice = admin.describeUserScramCredentials(List.of(tom3, tom3));
            obs.put("twice", AdminReference.errorAndMessage(twice.description(tom3)));
            var refused = admin.alterUserScramCredentials(List.of(
                    upsert(prefix + "few", sha256, 4095), upsert(prefix + "many", sha512, 16385),
                    upsert(prefix + "dup", sha256, 4096), new UserScramCredentialDeletion(prefix + "dup", sha512),
                    new UserScramCredentialDeletion(prefix + "ghost", sha256),
                    new UserScramCredentialDeletion(tom2, sha256), upsert(tom2, sha512, 4096))).values();
            Map<String, Object> errors = new TreeMap<>();
            refused.forEach((user, f) -> errors.put(user.substring(prefix.length()), AdminReference.errorAndMessage(f)));
            obs.put("refused", errors);
            obs.put("delete", Support.outcome(admin.alterUserScramCredentials(List.of(
                    new UserScramCredentialDeletion(tom, sha256))).all()));
            obs.put("after_delete", scram(admin, null, prefix));
        }
    }

    /** testListNodes, testDescribeCluster, testDescribeTopicsWithNames (and by ids, testDescribeTopicsWithIds). */
    static void clusterMetadata(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("existing-topic");
        try (Admin admin = s.admin()) {
            DescribeClusterResult cluster = admin.describeCluster();
            List<String> nodes = new ArrayList<>();
            List<Integer> ids = new ArrayList<>();
            for (Node n : cluster.nodes().get(20, TimeUnit.SECONDS)) {
                nodes.add(n.host() + ":" + n.port());
                ids.add(n.id());
            }
            nodes.sort(null);
            obs.put("nodes", nodes);
            obs.put("controller_is_a_broker", ids.contains(cluster.controller().get(20, TimeUnit.SECONDS).id()));
            obs.put("cluster_id", cluster.clusterId().get(20, TimeUnit.SECONDS));
            Uuid created = admin.createTopics(List.of(new org.apache.kafka.clients.admin.NewTopic(topic, 1, (short) 1)))
                    .topicId(topic).get(20, TimeUnit.SECONDS);
            Support.awaitTopic(admin, topic, 1);
            Uuid byName = admin.describeTopics(TopicCollection.ofTopicNames(List.of(topic))).topicNameValues().get(topic)
                    .get(20, TimeUnit.SECONDS).topicId();
            obs.put("id_by_name", byName.equals(created));
            var byIds = admin.describeTopics(TopicCollection.ofTopicIds(List.of(created, Uuid.randomUuid()))).topicIdValues();
            obs.put("by_ids", byIds.values().stream().map(f -> {
                Object out = AdminReference.error(f);
                return out == null ? "found" : out;
            }).sorted().toList());
        }
    }
}
