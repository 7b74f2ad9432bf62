import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.AbortTransactionSpec;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListTransactionsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;

/**
 * The Admin scenarios of {@link KafkaDriver} with the stock Java Admin (kafka-clients 3.9):
 * admin.topics, admin.list_offsets_isolation, admin.transactions and admin.abort_hanging. Each
 * only observes and records; compat/test_java_clients.py holds the expectations.
 */
final class AdminScenarios {
    private AdminScenarios() {
    }

    static void adminTopics(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("admin-topic");
        String doomed = s.name("admin-doomed");
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, topic, 3);
            Throwable again = null;
            try {
                Support.createTopic(admin, topic, 3);
            } catch (ExecutionException e) {
                again = e;
            }
            obs.put("create_again_error", Support.failure(again));
            TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
            List<Object> parts = new ArrayList<>();
            for (TopicPartitionInfo p : d.partitions()) {
                parts.add(Support.map("partition", p.partition(), "leader", p.leader() == null ? null : p.leader().id(),
                        "replicas", p.replicas().size(), "isr", p.isr().size()));
            }
            obs.put("partitions", parts);
            obs.put("internal", d.isInternal());
            obs.put("topic_id_set", d.topicId() != null && !d.topicId().equals(Uuid.ZERO_UUID));
            obs.put("cluster_nodes", admin.describeCluster().nodes().get().size());
            obs.put("listed", admin.listTopics().names().get().contains(topic));
            Support.createTopic(admin, doomed, 1);
            admin.deleteTopics(List.of(doomed)).all().get(20, TimeUnit.SECONDS);
            obs.put("deleted_gone", Support.eventually(() -> !admin.listTopics().names().get().contains(doomed), 10_000));
        }
    }

    /** ListOffsets with ListOffsetsOptions(isolation): latest is the LSO under read_committed. */
    static void listOffsetsIsolation(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("list-offsets");
        TopicPartition tp = new TopicPartition(topic, 0);
        // Records a minute in the future: the COMMIT marker carries the broker's clock, and Kafka's
        // timestamp lookup counts markers too (FileRecords.searchForTimestamp), so records stamped
        // before it would make the lookups below answer the marker's offset.
        long t0 = System.currentTimeMillis() + 60_000;
        obs.put("base_ts", t0);
        try (Admin admin = s.admin();
             KafkaProducer<byte[], byte[]> plain = s.producer();
             KafkaProducer<byte[], byte[]> tx = s.txnProducer(s.name("list-offsets-T"))) {
            Support.createTopic(admin, topic, 1);
            plain.send(new ProducerRecord<>(topic, 0, t0, null, Support.b("p-0"))).get();          // 0
            plain.send(new ProducerRecord<>(topic, 0, t0 + 1000, null, Support.b("p-1"))).get();   // 1
            tx.beginTransaction();
            tx.send(new ProducerRecord<>(topic, 0, t0 + 2000, null, Support.b("c-2"))).get();      // 2
            tx.commitTransaction();                                                              // COMMIT 3
            Support.awaitEnd(admin, tp, 4);  // Kafka writes the marker just after answering EndTxn
            tx.beginTransaction();
            tx.send(new ProducerRecord<>(topic, 0, t0 + 4000, null, Support.b("open-4"))).get();   // 4 (open)
            plain.send(new ProducerRecord<>(topic, 0, t0 + 5000, null, Support.b("p-5"))).get();   // 5
            Map<String, Object> before = new LinkedHashMap<>();
            for (IsolationLevel iso : IsolationLevel.values()) {
                String k = iso.toString().toLowerCase();
                before.put(k + "_earliest", Support.listOffset(admin, tp, OffsetSpec.earliest(), iso));
                before.put(k + "_latest", Support.listOffset(admin, tp, OffsetSpec.latest(), iso));
                before.put(k + "_ts_p1", Support.listOffset(admin, tp, OffsetSpec.forTimestamp(t0 + 1000), iso));
                before.put(k + "_ts_p5", Support.listOffset(admin, tp, OffsetSpec.forTimestamp(t0 + 5000), iso));
                before.put(k + "_max", Support.listOffset(admin, tp, OffsetSpec.maxTimestamp(), iso));
            }
            obs.put("open", before);
            tx.commitTransaction();                                                              // COMMIT 6
            Support.awaitEnd(admin, tp, 7);
            Map<String, Object> after = new LinkedHashMap<>();
            for (IsolationLevel iso : IsolationLevel.values()) {
                String k = iso.toString().toLowerCase();
                after.put(k + "_latest", Support.listOffset(admin, tp, OffsetSpec.latest(), iso));
                after.put(k + "_ts_p5", Support.listOffset(admin, tp, OffsetSpec.forTimestamp(t0 + 5000), iso));
                after.put(k + "_max", Support.listOffset(admin, tp, OffsetSpec.maxTimestamp(), iso));
            }
            obs.put("committed", after);
        }
    }

    /** listTransactions, describeTransactions and describeProducers of an open, then committed txn. */
    static void adminTransactions(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("admin-txn");
        String tid = s.name("admin-txn-T");
        List<TopicPartition> tps = List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1));
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, topic, 2);
            try (KafkaProducer<byte[], byte[]> plain = s.producer();
                 KafkaProducer<byte[], byte[]> t = s.txnProducer(tid, "transaction.timeout.ms", "45000")) {
                plain.send(Support.rec(topic, 0, null, "plain-0")).get();  // p0: 0
                t.beginTransaction();
                t.send(Support.rec(topic, 0, null, "t-p0")).get();         // p0: 1
                t.send(Support.rec(topic, 1, null, "t-p1")).get();         // p1: 0
                obs.put("open", describeTxn(admin, tid, tps));
                List<Object> ongoing = new ArrayList<>();
                for (TransactionListing l : admin.listTransactions(new ListTransactionsOptions()
                        .filterStates(List.of(TransactionState.ONGOING))).all().get()) {
                    ongoing.add(l.transactionalId());
                }
                obs.put("listed_ongoing", ongoing.contains(tid));
                t.commitTransaction();
                // EndTxn returns once PrepareCommit is logged; the markers follow.
                Support.eventually(() -> admin.describeTransactions(List.of(tid)).description(tid).get().state()
                        == TransactionState.COMPLETE_COMMIT, 10_000);
                obs.put("committed", describeTxn(admin, tid, tps));
                List<Object> ongoingAfter = new ArrayList<>();
                for (TransactionListing l : admin.listTransactions(new ListTransactionsOptions()
                        .filterStates(List.of(TransactionState.ONGOING))).all().get()) {
                    ongoingAfter.add(l.transactionalId());
                }
                obs.put("listed_ongoing_after", ongoingAfter.contains(tid));
            }
        }
    }

    private static Map<String, Object> describeTxn(Admin admin, String tid, List<TopicPartition> tps) throws Exception {
        Map<String, Object> out = new LinkedHashMap<>();
        TransactionDescription d = admin.describeTransactions(List.of(tid)).description(tid).get();
        List<String> parts = new ArrayList<>();
        for (TopicPartition tp : d.topicPartitions()) parts.add(tp.toString());
        java.util.Collections.sort(parts);
        out.put("state", d.state().name());
        out.put("producer_id", d.producerId());
        out.put("producer_epoch", d.producerEpoch());
        out.put("timeout_ms", d.transactionTimeoutMs());
        out.put("start_time_set", d.transactionStartTimeMs().isPresent());
        out.put("partitions", parts);
        TransactionListing listing = null;
        for (TransactionListing l : admin.listTransactions().all().get()) {
            if (l.transactionalId().equals(tid)) listing = l;
        }
        out.put("listing", listing == null ? null
                : Support.map("producer_id", listing.producerId(), "state", listing.state().name()));
        Map<String, Object> producers = new LinkedHashMap<>();
        for (TopicPartition tp : tps) {
            List<Object> states = new ArrayList<>();
            for (ProducerState ps : admin.describeProducers(List.of(tp)).partitionResult(tp).get().activeProducers()) {
                if (ps.producerId() == d.producerId()) states.add(producerState(ps));
            }
            producers.put(String.valueOf(tp.partition()), states);
        }
        out.put("producers", producers);
        return out;
    }

    static Map<String, Object> producerState(ProducerState ps) {
        return Support.map("producer_id", ps.producerId(), "producer_epoch", ps.producerEpoch(),
                "last_sequence", ps.lastSequence(), "txn_start_offset", ps.currentTransactionStartOffset(),
                "coordinator_epoch", ps.coordinatorEpoch());
    }

    /**
     * A hanging transaction aborted through the Admin API: AbortTransactionSpec from
     * describeProducers (producer id, epoch, coordinator epoch), which sends WriteTxnMarkers.
     */
    static void abortHanging(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("hanging");
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Admin admin = s.admin();
             KafkaProducer<byte[], byte[]> plain = s.producer()) {
            Support.createTopic(admin, topic, 1);
            KafkaProducer<byte[], byte[]> t = s.txnProducer(s.name("hanging-T"), "transaction.timeout.ms", "60000");
            try {
                plain.send(Support.rec(topic, 0, null, "p-0")).get();   // 0
                t.beginTransaction();
                t.send(Support.rec(topic, 0, null, "hang-1")).get();    // 1 (hangs)
                plain.send(Support.rec(topic, 0, null, "p-2")).get();   // 2
                obs.put("lso_before", Support.listOffset(admin, tp, OffsetSpec.latest(), IsolationLevel.READ_COMMITTED));
                ProducerState hanging = null;
                for (ProducerState ps : admin.describeProducers(List.of(tp)).partitionResult(tp).get().activeProducers()) {
                    if (ps.currentTransactionStartOffset().isPresent()) hanging = ps;
                }
                obs.put("hanging", hanging == null ? null : producerState(hanging));
                if (hanging == null) throw new IllegalStateException("describeProducers shows no open transaction");
                AbortTransactionSpec spec = new AbortTransactionSpec(tp, hanging.producerId(),
                        (short) hanging.producerEpoch(), hanging.coordinatorEpoch().orElse(0));
                admin.abortTransaction(spec).all().get(20, TimeUnit.SECONDS);   // ABORT 3
                obs.put("lso_after", Support.listOffset(admin, tp, OffsetSpec.latest(), IsolationLevel.READ_COMMITTED));
                obs.put("leo_after", Support.listOffset(admin, tp, OffsetSpec.latest(), IsolationLevel.READ_UNCOMMITTED));
                List<Object> open = new ArrayList<>();
                for (ProducerState ps : admin.describeProducers(List.of(tp)).partitionResult(tp).get().activeProducers()) {
                    if (ps.currentTransactionStartOffset().isPresent()) open.add(producerState(ps));
                }
                obs.put("open_after", open);
                for (String iso : List.of(KafkaDriver.RC, KafkaDriver.RU)) s.readFromStartInto(obs, iso, iso, tp, 4, 10_000);
            } finally {
                t.close(Duration.ZERO);
            }
        }
    }
}
