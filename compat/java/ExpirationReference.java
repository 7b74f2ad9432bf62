import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.TransactionalIdNotFoundException;

/**
 * Scenarios after Apache Kafka's TransactionsExpirationTest and ProducerIdExpirationTest
 * (core/src/test/scala/integration/kafka/api): transactional ids and producer ids expire on a broker
 * started with short transactional.id.expiration.ms / producer.id.expiration.ms and check intervals.
 * Each waits on the state the Admin describes, with a deadline. compat/test_java_expiration.py
 * starts the brokers and holds the expectations.
 */
final class ExpirationReference {
    static final long WAIT_MS = 60_000;

    private ExpirationReference() {
    }

    static List<ProducerState> producers(Admin admin, TopicPartition tp) throws Exception {
        return admin.describeProducers(List.of(tp)).partitionResult(tp).get(20, TimeUnit.SECONDS).activeProducers();
    }

    /** DescribeTransactions of {@code tid} answers TRANSACTIONAL_ID_NOT_FOUND. */
    static boolean expired(Admin admin, String tid) throws Exception {
        try {
            admin.describeTransactions(List.of(tid)).description(tid).get(20, TimeUnit.SECONDS);
            return false;
        } catch (java.util.concurrent.ExecutionException e) {
            return e.getCause() instanceof TransactionalIdNotFoundException;
        }
    }

    static boolean listed(Admin admin, String tid) throws Exception {
        for (var l : admin.listTransactions().all().get(20, TimeUnit.SECONDS)) {
            if (l.transactionalId().equals(tid)) return true;
        }
        return false;
    }

    static void await(Support.Check check, String what) throws Exception {
        if (!Support.eventually(check, WAIT_MS)) throw new IllegalStateException(what + " within " + WAIT_MS + " ms");
    }

    static String failure(Future<RecordMetadata> f) {
        try {
            f.get(30, TimeUnit.SECONDS);
            return null;
        } catch (Exception e) {
            return e.getCause() == null ? e.getClass().getName() : e.getCause().getClass().getName();
        }
    }

    static List<String> readCommitted(Support s, Collection<TopicPartition> tps) {
        return TxnReference.drain(s, TxnReference.RC, tps);
    }

    /**
     * TransactionsExpirationTest.testBumpTransactionalEpochAfterInvalidProducerIdMapping (3.9) and
     * testFatalErrorAfterInvalidProducerIdMapping (4.x): after an aborted transaction the id expires;
     * the producer's next send fails with InvalidPidMappingException. kafka-clients 3.9 aborts (an
     * InitProducerId that moves it to a new producer id) and goes on; 4.x treats the error as fatal,
     * so its abort fails and a new producer with the same transactional id goes on.
     */
    static void bumpAfterInvalidMapping(Support s, Map<String, Object> obs) throws Exception {
        String tid = s.name("exp-bump-T");
        List<String> topics;
        try (Admin admin = s.admin()) {
            topics = TxnReference.twoTopics(s, admin, "exp-bump", 4);
            String t1 = topics.get(0), t2 = topics.get(1);
            KafkaProducer<byte[], byte[]> p = s.txnProducer(tid);
            try {
                p.beginTransaction();
                p.send(TxnReference.rec(t1, 0, "2", "2", false));
                p.send(TxnReference.rec(t2, 0, "4", "4", false));
                p.abortTransaction();
                long before = admin.describeTransactions(List.of(tid)).description(tid).get().producerId();
                obs.put("listed_before", listed(admin, tid));
                await(() -> expired(admin, tid), "the transactional id did not expire");
                obs.put("listed_after", listed(admin, tid));
                p.beginTransaction();
                obs.put("send_error", failure(p.send(TxnReference.rec(t1, 3, "1", "1", false))));
                Map<String, Object> abortError = Support.failureOf(p::abortTransaction);
                obs.put("abort_error", abortError == null ? null : ((List<?>) abortError.get("chain")).get(0));
                if (abortError != null) {  // fatal: a new instance takes the transactional id over
                    p.close(java.time.Duration.ofSeconds(2));
                    p = s.txnProducer(tid);
                }
                p.beginTransaction();
                p.send(TxnReference.rec(t2, null, "2", "2", true));
                p.send(TxnReference.rec(t1, 2, "4", "4", true));
                p.send(TxnReference.rec(t2, null, "1", "1", true));
                p.send(TxnReference.rec(t1, 3, "3", "3", true));
                p.commitTransaction();
                var after = admin.describeTransactions(List.of(tid)).description(tid).get();
                obs.put("state_after", after.state().name());
                obs.put("new_producer_id", after.producerId() != before);
            } finally {
                p.close(java.time.Duration.ofSeconds(2));
            }
        }
        obs.put(TxnReference.RC, readCommitted(s, TxnReference.all(topics, 4)));
    }

    /**
     * TransactionsExpirationTest.testTransactionAfterProducerIdExpires: the producer id expires from
     * the partition while the transactional id lives on; a new producer with the same id gets the
     * same producer id with the next epoch, and its transaction commits.
     */
    static void afterProducerIdExpires(Support s, Map<String, Object> obs) throws Exception {
        String tid = s.name("exp-pid-T");
        String topic = s.name("exp-pid");
        TopicPartition tp0 = new TopicPartition(topic, 0);
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, topic, 4);
            KafkaProducer<byte[], byte[]> p = s.txnProducer(tid);
            List<ProducerState> state;
            try {
                p.beginTransaction();
                p.send(TxnReference.rec(topic, 0, "2", "2", false));
                p.flush();
                await(() -> !producers(admin, tp0).isEmpty(), "the producer was not listed");
                state = producers(admin, tp0);
                obs.put("producers_during", state.size());
                p.abortTransaction();
                await(() -> producers(admin, tp0).isEmpty(), "the producer id did not expire");
            } finally {
                p.close();
            }
            obs.put("transaction_kept", !expired(admin, tid));
            try (KafkaProducer<byte[], byte[]> p2 = s.txnProducer(tid)) {
                p2.beginTransaction();
                p2.send(TxnReference.rec(topic, 0, "4", "4", true));
                p2.send(TxnReference.rec(topic, 3, "3", "3", true));
                p2.commitTransaction();
            }
            List<ProducerState> again = producers(admin, tp0);
            obs.put("producers_after", again.size());
            obs.put("same_producer_id", again.get(0).producerId() == state.get(0).producerId());
            obs.put("epoch_step", again.get(0).producerEpoch() - state.get(0).producerEpoch());
        }
        obs.put(TxnReference.RC, readCommitted(s, TxnReference.partitions(topic, 4)));
    }

    /**
     * ProducerIdExpirationTest.testProducerIdExpirationWithNoTransactions: an idempotent producer's
     * state expires; its next batch (sequence 1, where the broker knows nothing) is taken.
     */
    static void idempotentExpires(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("exp-idem");
        TopicPartition tp0 = new TopicPartition(topic, 0);
        try (Admin admin = s.admin(); KafkaProducer<byte[], byte[]> p = s.producer()) {
            Support.createTopic(admin, topic, 4);
            p.send(new ProducerRecord<>(topic, 0, null, Support.b("value"))).get(20, TimeUnit.SECONDS);
            obs.put("producers_before", producers(admin, tp0).size());
            await(() -> producers(admin, tp0).isEmpty(), "the producer id did not expire");
            obs.put("second_send_error", failure(p.send(new ProducerRecord<>(topic, 0, null, Support.b("value")))));
            List<ProducerState> again = producers(admin, tp0);
            obs.put("producers_after", again.size());
            obs.put("last_sequence_after", again.isEmpty() ? -1 : again.get(0).lastSequence());
        }
    }

    /**
     * ProducerIdExpirationTest.testTransactionAfterTransactionIdExpiresButProducerIdRemains: the
     * transactional id expires first; the producer id stays in the partition, the next send fails
     * with InvalidPidMappingException, and after an abort (kafka-clients 4: the error is fatal, a new
     * instance takes the id over) the next transaction commits.
     */
    static void transactionalIdExpiresFirst(Support s, Map<String, Object> obs) throws Exception {
        String tid = s.name("exp-tid-T");
        String topic = s.name("exp-tid");
        TopicPartition tp0 = new TopicPartition(topic, 0);
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, topic, 4);
            KafkaProducer<byte[], byte[]> p = s.txnProducer(tid);
            try {
                p.beginTransaction();
                p.send(TxnReference.rec(topic, 0, "2", "2", false));
                p.flush();
                await(() -> producers(admin, tp0).size() == 1, "the producer was not listed");
                p.abortTransaction();
                await(() -> expired(admin, tid), "the transactional id did not expire");
                obs.put("producers_after_expiry", producers(admin, tp0).size());
                p.beginTransaction();
                obs.put("send_error", failure(p.send(TxnReference.rec(topic, 0, "1", "1", false))));
                Map<String, Object> abortError = Support.failureOf(p::abortTransaction);
                obs.put("abort_error", abortError == null ? null : ((List<?>) abortError.get("chain")).get(0));
                if (abortError != null) {
                    p.close(java.time.Duration.ofSeconds(2));
                    p = s.txnProducer(tid);
                }
                p.beginTransaction();
                p.send(TxnReference.rec(topic, 0, "4", "4", true));
                p.send(TxnReference.rec(topic, 0, "3", "3", true));
                p.flush();
                obs.put("producers_in_next", producers(admin, tp0).size());
                p.commitTransaction();
            } finally {
                p.close(java.time.Duration.ofSeconds(2));
            }
        }
        obs.put(TxnReference.RC, readCommitted(s, List.of(tp0)));
    }

    static void setExpiration(Admin admin, String value) throws Exception {
        ConfigResource cluster = new ConfigResource(ConfigResource.Type.BROKER, "");
        AlterConfigOp op = new AlterConfigOp(new ConfigEntry("producer.id.expiration.ms", value), AlterConfigOp.OpType.SET);
        admin.incrementalAlterConfigs(Map.of(cluster, List.of(op))).all().get(20, TimeUnit.SECONDS);
    }

    static String described(Admin admin) throws Exception {
        ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, "0");
        return admin.describeConfigs(List.of(broker)).all().get(20, TimeUnit.SECONDS).get(broker)
                .get("producer.id.expiration.ms").value();
    }

    /**
     * ProducerIdExpirationTest.testDynamicProducerIdExpirationMs, on one broker: the producer id
     * expires, producer.id.expiration.ms goes up (the producer stays listed after its next send),
     * then down again and it expires again. Kafka's four-second wait for "does not expire" is left
     * to tests/txn/test_expiration.py, which drives the check with a fake clock.
     */
    static void dynamicExpiration(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("exp-dyn");
        TopicPartition tp0 = new TopicPartition(topic, 0);
        try (Admin admin = s.admin(); KafkaProducer<byte[], byte[]> p = s.producer()) {
            Support.createTopic(admin, topic, 4);
            p.send(new ProducerRecord<>(topic, 0, null, Support.b("value"))).get(20, TimeUnit.SECONDS);
            await(() -> producers(admin, tp0).isEmpty(), "the producer id did not expire");
            setExpiration(admin, "100000");
            obs.put("described_high", described(admin));
            p.send(new ProducerRecord<>(topic, 0, null, Support.b("value"))).get(20, TimeUnit.SECONDS);
            obs.put("producers_after_raise", producers(admin, tp0).size());
            setExpiration(admin, "100");
            obs.put("described_low", described(admin));
            await(() -> producers(admin, tp0).isEmpty(), "the producer id did not expire after lowering");
            obs.put("expired_again", true);
        }
    }
}
