import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;

/**
 * Transaction scenarios after Apache Kafka's own integration tests (TransactionsTest,
 * TransactionsWithMaxInFlightOneTest; core/src/test/scala/integration/kafka/api in 3.9 and
 * TransactionsTestHelper in 4.x), on one broker. Records carry Kafka's "transactionStatus" header
 * saying whether the scenario means them to be committed; compat/test_java_reference.py holds the
 * expectations.
 */
final class TxnReference {
    static final String RC = "read_committed";
    static final String RU = "read_uncommitted";
    static final String STATUS = "transactionStatus";

    private TxnReference() {
    }

    static ProducerRecord<byte[], byte[]> rec(String topic, Integer partition, String key, String value, boolean commit) {
        return new ProducerRecord<>(topic, partition, Support.b(key), Support.b(value),
                List.<Header>of(new RecordHeader(STATUS, Support.b(commit ? "committed" : "aborted"))));
    }

    /** "value/status" of a record written by {@link #rec}. */
    static String tagged(ConsumerRecord<byte[], byte[]> r) {
        Header h = r.headers().lastHeader(STATUS);
        String status = h == null ? "none" : new String(h.value(), StandardCharsets.UTF_8);
        return new String(r.value(), StandardCharsets.UTF_8) + "/" + status;
    }

    static List<TopicPartition> partitions(String topic, int n) {
        List<TopicPartition> out = new ArrayList<>();
        for (int i = 0; i < n; i++) out.add(new TopicPartition(topic, i));
        return out;
    }

    /**
     * A new {@code isolation} consumer reads {@code tps} from the beginning until its positions reach
     * the end offsets it is told (the LSO under read_committed); returns the records, sorted.
     */
    static List<String> drain(Support s, String isolation, Collection<TopicPartition> tps, String... kv) {
        List<String> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = s.consumer(isolation, kv)) {
            c.assign(tps);
            c.seekToBeginning(tps);
            Map<TopicPartition, Long> end = c.endOffsets(tps);
            long deadline = System.currentTimeMillis() + 30_000;
            while (!reached(c, end) && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) out.add(tagged(r));
            }
            if (!reached(c, end)) throw new IllegalStateException("positions never reached " + end);
        }
        java.util.Collections.sort(out);
        return out;
    }

    private static boolean reached(KafkaConsumer<byte[], byte[]> c, Map<TopicPartition, Long> end) {
        for (Map.Entry<TopicPartition, Long> e : end.entrySet()) {
            if (c.position(e.getKey()) < e.getValue()) return false;
        }
        return true;
    }

    /** Two topics of {@code n} partitions each, named {@code tag}-1 and {@code tag}-2. */
    static List<String> twoTopics(Support s, Admin admin, String tag, int n) throws Exception {
        List<String> topics = List.of(s.name(tag + "-1"), s.name(tag + "-2"));
        for (String t : topics) Support.createTopic(admin, t, n);
        return topics;
    }

    static List<TopicPartition> all(List<String> topics, int n) {
        List<TopicPartition> out = new ArrayList<>();
        for (String t : topics) out.addAll(partitions(t, n));
        return out;
    }

    // ------------------------------------------------------------------ fencing

    /**
     * testFencingOnCommit / testFencingOnSendOffsets / testFencingOnAddPartitions: producer 1's
     * transaction is overtaken by producer 2 with the same transactional.id; {@code step} is what
     * producer 1 tries next ("commit", "send_offsets" or, after it aborted, "begin_send").
     */
    static void fencing(Support s, Map<String, Object> obs, String step) throws Exception {
        String tag = "fence-" + step;
        String tid = s.name(tag + "-T");
        List<String> topics;
        try (Admin admin = s.admin()) {
            topics = twoTopics(s, admin, tag, 2);
        }
        String t1 = topics.get(0), t2 = topics.get(1);
        KafkaProducer<byte[], byte[]> p1 = s.txnProducer(tid);
        try {
            p1.beginTransaction();
            p1.send(rec(t1, null, "1", "1", false));
            p1.send(rec(t2, null, "3", "3", false));
            p1.flush();
            if (step.equals("begin_send")) p1.abortTransaction();
            try (KafkaProducer<byte[], byte[]> p2 = s.txnProducer(tid)) {  // aborts what p1 left open
                p2.beginTransaction();
                p2.send(rec(t1, null, "2", "4", true)).get(20, TimeUnit.SECONDS);
                p2.send(rec(t2, null, "2", "4", true)).get(20, TimeUnit.SECONDS);
                obs.put("error", Support.failureOf(() -> {
                    switch (step) {
                        case "commit" -> p1.commitTransaction();
                        case "send_offsets" -> p1.sendOffsetsToTransaction(
                                Map.of(new TopicPartition(t1, 0), new OffsetAndMetadata(110L)),
                                new ConsumerGroupMetadata(s.name(tag + "-G")));
                        default -> {
                            p1.beginTransaction();
                            p1.send(rec(t1, null, "1", "5", false)).get(20, TimeUnit.SECONDS);
                        }
                    }
                }));
                p2.commitTransaction();
            }
        } finally {
            p1.close(Duration.ofSeconds(2));
        }
        obs.put(RC, drain(s, RC, all(topics, 2)));
        obs.put(RU, drain(s, RU, all(topics, 2)));
    }

    /**
     * testFencingOnTransactionExpiration: the broker aborts a transaction older than its
     * transaction.timeout.ms; the producer's next send fails and its first record stays aborted.
     * The next record goes to partition 0 again (already in the transaction: a Produce the broker
     * refuses) or to partition 1 (with transaction version 1, the client's AddPartitionsToTxn first).
     */
    static void fencingOnExpiration(Support s, Map<String, Object> obs) throws Exception {
        Map<String, Object> same = new java.util.LinkedHashMap<>(), other = new java.util.LinkedHashMap<>();
        fencingOnExpiration(s, same, 0);
        obs.put("same_partition", same);
        fencingOnExpiration(s, other, 1);
        obs.put("new_partition", other);
    }

    private static void fencingOnExpiration(Support s, Map<String, Object> obs, int nextPartition) throws Exception {
        String tag = "fence-expiry-" + nextPartition;
        String topic = s.name(tag);
        String tid = s.name(tag + "-T");
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, topic, 2);
            KafkaProducer<byte[], byte[]> p = s.txnProducer(tid, "transaction.timeout.ms", "300");
            try {
                p.beginTransaction();
                obs.put("first_offset", p.send(rec(topic, 0, "1", "1", false)).get(20, TimeUnit.SECONDS).offset());
                obs.put("aborted_by_broker", Support.eventually(() -> admin.describeTransactions(List.of(tid))
                        .description(tid).get().state() == org.apache.kafka.clients.admin.TransactionState.COMPLETE_ABORT, 20_000));
                obs.put("error", Support.failureOf(() -> p.send(rec(topic, nextPartition, "2", "2", false)).get(20, TimeUnit.SECONDS)));
            } finally {
                p.close(Duration.ofSeconds(2));
            }
        }
        obs.put(RC, drain(s, RC, partitions(topic, 2)));
        obs.put(RU, drain(s, RU, partitions(topic, 2)));
    }

    // ------------------------------------------------------------------ offsets in transactions

    /** testOffsetMetadataInSendOffsetsToTransaction: leader epoch and metadata survive TxnOffsetCommit. */
    static void offsetMetadata(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("txn-offset-meta");
        String tid = s.name("txn-offset-meta-T");
        String group = s.name("txn-offset-meta-G");
        TopicPartition tp = new TopicPartition(topic, 0);
        s.createTopic(topic, 1);
        OffsetAndMetadata sent = new OffsetAndMetadata(110L, Optional.of(15), "some metadata");
        try (KafkaProducer<byte[], byte[]> p = s.txnProducer(tid)) {
            p.beginTransaction();
            p.sendOffsetsToTransaction(Map.of(tp, sent), new ConsumerGroupMetadata(group));
            p.commitTransaction();
        }
        // A new producer of the id waits for the previous transaction to complete (its markers and offsets).
        s.txnProducer(tid).close();
        try (KafkaConsumer<byte[], byte[]> c = s.consumer(RC, "group.id", group)) {
            OffsetAndMetadata got = c.committed(Set.of(tp)).get(tp);
            obs.put("committed", got == null ? null : Support.map("offset", got.offset(),
                    "leader_epoch", got.leaderEpoch().orElse(-1), "metadata", got.metadata()));
        }
    }

    /**
     * testSendOffsetsWithGroupMetadata, smaller: a group member copies {@code n} records from a
     * 4-partition topic to another in transactions with sendOffsetsToTransaction(groupMetadata),
     * every other transaction aborted (and the consumer sent back to the committed offsets).
     */
    static void sendOffsetsRounds(Support s, Map<String, Object> obs) throws Exception {
        sendOffsetsRounds(s, obs, false);
    }

    /**
     * As above; {@code byGroupId}: testSendOffsetsWithGroupId, the deprecated sendOffsetsToTransaction(offsets,
     * groupId) (TxnOffsetCommit without generation or member: Kafka's coordinator checks neither), called by
     * reflection as kafka-clients 4 no longer has it ("absent" then).
     */
    static void sendOffsetsRounds(Support s, Map<String, Object> obs, boolean byGroupId) throws Exception {
        java.lang.reflect.Method byId = null;
        if (byGroupId) {
            try {
                byId = KafkaProducer.class.getMethod("sendOffsetsToTransaction", Map.class, String.class);
            } catch (NoSuchMethodException e) {
                obs.put("absent", true);
                return;
            }
        }
        int n = 120;
        String tag = byGroupId ? "rounds-id" : "rounds";
        String src = s.name(tag + "-src"), dst = s.name(tag + "-dst");
        String group = s.name(tag + "-G");
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, src, 4);
            Support.createTopic(admin, dst, 4);
        }
        try (KafkaProducer<byte[], byte[]> plain = s.producer()) {
            for (int i = 0; i < n; i++) plain.send(new ProducerRecord<>(src, Support.b(String.valueOf(i)), Support.b(String.valueOf(i))));
            plain.flush();
        }
        int aborted = 0, committed = 0;
        try (KafkaProducer<byte[], byte[]> p = s.txnProducer(s.name(tag + "-T"));
             KafkaConsumer<byte[], byte[]> c = s.consumer(RC, "group.id", group, "max.poll.records", String.valueOf(n / 4))) {
            c.subscribe(List.of(src));
            boolean commit = false;
            int processed = 0;
            long deadline = System.currentTimeMillis() + 60_000;
            while (processed < n && System.currentTimeMillis() < deadline) {
                List<ConsumerRecord<byte[], byte[]>> batch = pollAtLeast(c, Math.min(10, n - processed), deadline);
                p.beginTransaction();
                commit = !commit;
                for (ConsumerRecord<byte[], byte[]> r : batch) {
                    p.send(rec(dst, null, new String(r.key()), new String(r.value()), commit));
                }
                Map<TopicPartition, OffsetAndMetadata> positions = new HashMap<>();
                for (TopicPartition tp : c.assignment()) positions.put(tp, new OffsetAndMetadata(c.position(tp)));
                if (byId != null) byId.invoke(p, positions, group);
                else p.sendOffsetsToTransaction(positions, c.groupMetadata());
                if (commit) {
                    p.commitTransaction();
                    processed += batch.size();
                    committed++;
                } else {
                    p.abortTransaction();
                    aborted++;
                    for (TopicPartition tp : c.assignment()) {
                        OffsetAndMetadata at = c.committed(Set.of(tp)).get(tp);
                        if (at == null) c.seekToBeginning(List.of(tp));
                        else c.seek(tp, at.offset());
                    }
                }
            }
            obs.put("processed", processed);
        }
        obs.put("transactions", Support.map("committed", committed, "aborted", aborted));
        List<String> out = drain(s, RC, partitions(dst, 4));
        obs.put("out_count", out.size());
        obs.put("out_distinct", new java.util.TreeSet<>(out).size());
        obs.put("out_not_committed", out.stream().filter(v -> !v.endsWith("/committed")).count());
        try (Admin admin = s.admin()) {
            long sum = 0;
            for (OffsetAndMetadata m : admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
                    .get(20, TimeUnit.SECONDS).values()) sum += m.offset();
            obs.put("group_offsets_sum", sum);
        }
    }

    static List<ConsumerRecord<byte[], byte[]>> pollAtLeast(KafkaConsumer<byte[], byte[]> c, int n, long deadline) {
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        while (out.size() < n && System.currentTimeMillis() < deadline) {
            for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(100))) out.add(r);
        }
        return out;
    }

    // ------------------------------------------------------------------ read_committed and the LSO

    /**
     * testReadCommittedConsumerShouldNotSeeUndecidedData: an open transaction after a committed
     * record holds read_committed at offset 1 even after seekToEnd, and offsetsForTimes does not
     * find its timestamps; read_uncommitted finds them.
     */
    static void undecidedData(Support s, Map<String, Object> obs) throws Exception {
        List<String> topics;
        try (Admin admin = s.admin()) {
            topics = twoTopics(s, admin, "undecided", 1);
        }
        List<TopicPartition> tps = all(topics, 1);
        try (KafkaProducer<byte[], byte[]> p1 = s.txnProducer(s.name("undecided-T1"));
             KafkaProducer<byte[], byte[]> p2 = s.txnProducer(s.name("undecided-T2"))) {
            p1.beginTransaction();
            p2.beginTransaction();
            long visible = System.currentTimeMillis();
            long written = visible + 1;
            for (String t : topics) p2.send(new ProducerRecord<>(t, 0, visible, Support.b("x"), Support.b("1")));
            p2.flush();
            for (String t : topics) {
                p1.send(new ProducerRecord<>(t, 0, written, Support.b("a"), Support.b("1")));
                p1.send(new ProducerRecord<>(t, 0, written, Support.b("b"), Support.b("2")));
            }
            p1.flush();
            for (String t : topics) p2.send(new ProducerRecord<>(t, 0, written, Support.b("x"), Support.b("2")));
            p2.commitTransaction();
            Map<TopicPartition, Long> search = new HashMap<>();
            for (TopicPartition tp : tps) search.put(tp, written);
            try (KafkaConsumer<byte[], byte[]> ru = s.consumer(RU)) {
                ru.assign(tps);
                obs.put("ru_offsets_for_times", found(ru.offsetsForTimes(search), tps, written));
            }
            try (KafkaConsumer<byte[], byte[]> rc = s.consumer(RC)) {
                rc.assign(tps);
                rc.seekToBeginning(tps);
                List<String> seen = new ArrayList<>();
                long deadline = System.currentTimeMillis() + 20_000;
                long quiet = Long.MAX_VALUE;  // once both positions reach 1, half a second more of polls
                while (System.currentTimeMillis() < Math.min(deadline, quiet)) {
                    for (ConsumerRecord<byte[], byte[]> r : rc.poll(Duration.ofMillis(100))) {
                        seen.add(new String(r.key()) + "=" + new String(r.value()) + "@" + r.offset());
                    }
                    if (quiet == Long.MAX_VALUE && rc.position(tps.get(0)) >= 1 && rc.position(tps.get(1)) >= 1) {
                        quiet = System.currentTimeMillis() + 500;
                    }
                }
                obs.put("rc_seen", seen);
                rc.seekToEnd(tps);
                obs.put("rc_positions_after_seek_to_end", List.of(rc.position(tps.get(0)), rc.position(tps.get(1))));
                obs.put("rc_offsets_for_times", found(rc.offsetsForTimes(search), tps, written));
            }
            p1.abortTransaction();
        }
    }

    /** offsetsForTimes' answer per partition of {@code tps}: null, or [offset, timestamp - ts]. */
    private static List<Object> found(Map<TopicPartition, OffsetAndTimestamp> got, List<TopicPartition> tps, long ts) {
        List<Object> out = new ArrayList<>();
        for (TopicPartition tp : tps) {
            OffsetAndTimestamp o = got.get(tp);
            out.add(o == null ? null : List.of(o.offset(), o.timestamp() - ts));
        }
        return out;
    }

    /**
     * testDelayedFetchIncludesAbortedTransaction: a read_committed fetch that waits in the broker
     * (fetch.min.bytes 100000) still carries the aborted transaction, so its records are skipped.
     */
    static void delayedFetchAborted(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("delayed-aborted");
        TopicPartition tp = new TopicPartition(topic, 0);
        s.createTopic(topic, 1);
        try (KafkaProducer<byte[], byte[]> p1 = s.txnProducer(s.name("delayed-aborted-T1"));
             KafkaProducer<byte[], byte[]> p2 = s.txnProducer(s.name("delayed-aborted-T2"))) {
            p1.beginTransaction();
            p2.beginTransaction();
            p2.send(new ProducerRecord<>(topic, 0, Support.b("x"), Support.b("1")));        // 0
            p2.flush();
            p1.send(new ProducerRecord<>(topic, 0, Support.b("y"), Support.b("1")));        // 1
            p1.send(new ProducerRecord<>(topic, 0, Support.b("y"), Support.b("2")));        // 2
            p1.flush();
            p2.send(new ProducerRecord<>(topic, 0, Support.b("x"), Support.b("2")));        // 3
            p2.flush();
            p1.abortTransaction();                                                          // ABORT 4
            p2.commitTransaction();                                                         // COMMIT 5
        }
        try (Admin admin = s.admin()) {
            Support.awaitEnd(admin, tp, 6);
        }
        try (KafkaConsumer<byte[], byte[]> c = s.consumer(RC, "fetch.min.bytes", "100000", "fetch.max.wait.ms", "100")) {
            List<Object> got = new ArrayList<>();
            for (Map<String, Object> r : Support.readFromStart(c, tp, 6, 20_000)) {
                got.add(new String((byte[]) r.get("k")) + "=" + new String((byte[]) r.get("v")) + "@" + r.get("o"));
            }
            obs.put("read_committed", got);
            obs.put("position", c.position(tp));
        }
    }

    /**
     * testMultipleMarkersOneLeader, smaller: one transaction aborts records on 20 partitions of two
     * topics, the next commits records on 10 of them; markers for every partition.
     */
    static void multipleMarkers(Support s, Map<String, Object> obs) throws Exception {
        List<String> topics;
        try (Admin admin = s.admin()) {
            topics = twoTopics(s, admin, "markers", 10);
        }
        try (KafkaProducer<byte[], byte[]> p = s.txnProducer(s.name("markers-T"))) {
            p.beginTransaction();
            for (int i = 0; i < 1000; i++) p.send(rec(topics.get(0), null, String.valueOf(i), String.valueOf(i), false));
            for (int i = 1000; i < 2000; i++) p.send(rec(topics.get(1), null, String.valueOf(i), String.valueOf(i), false));
            p.flush();
            p.abortTransaction();
            p.beginTransaction();
            for (int i = 2000; i < 2300; i++) p.send(rec(topics.get(0), null, String.valueOf(i), String.valueOf(i), true));
            p.commitTransaction();
        }
        List<TopicPartition> tps = all(topics, 10);
        List<String> rc = drain(s, RC, tps);
        obs.put("rc_count", rc.size());
        obs.put("rc_not_committed", rc.stream().filter(v -> !v.endsWith("/committed")).count());
        obs.put("ru_count", drain(s, RU, tps).size());
    }

    // ------------------------------------------------------------------ epoch bump

    /**
     * testBumpTransactionalEpoch (TransactionsTestHelper's WithTV2Disabled / Enabled), on a
     * simulated three-broker kafka-shim whose control plane (option {@code control}) takes down the
     * leader of a one-replica partition: a batch for it times out, the producer aborts (bumping its
     * epoch: InitProducerId with its producer id and epoch under transaction version 1, the abort
     * itself under version 2) and commits its next transaction over the partition once it is back.
     */
    static void bumpEpoch(Support s, Map<String, Object> obs) throws Exception {
        String bump = s.name("bump"), other = s.name("bump-other"), third = s.name("bump-third");
        TopicPartition tp = new TopicPartition(bump, 0);
        try (Admin admin = s.admin()) {
            admin.createTopics(List.of(new org.apache.kafka.clients.admin.NewTopic(bump, 1, (short) 1),
                    new org.apache.kafka.clients.admin.NewTopic(other, 2, (short) 3),
                    new org.apache.kafka.clients.admin.NewTopic(third, 2, (short) 3))).all().get(20, TimeUnit.SECONDS);
            for (String t : List.of(bump, other, third)) Support.awaitTopic(admin, t, t.equals(bump) ? 1 : 2);
            int leader = admin.describeTopics(List.of(bump)).allTopicNames().get(20, TimeUnit.SECONDS).get(bump)
                    .partitions().get(0).leader().id();
            try (KafkaProducer<byte[], byte[]> p = s.txnProducer(s.name("bump-T"), "delivery.timeout.ms", "5005",
                    "request.timeout.ms", "5000")) {
                p.beginTransaction();
                p.send(rec(bump, 0, "4", "4", true));
                p.commitTransaction();
                org.apache.kafka.clients.admin.ProducerState before = producer(admin, tp);
                obs.put("epoch_before", before.producerEpoch());
                p.beginTransaction();
                p.send(rec(other, null, "2", "2", false)).get(20, TimeUnit.SECONDS);
                ControlDriver.control(s, "node_down", "{\"node\": " + leader + "}");
                java.util.concurrent.Future<?> failed = p.send(rec(bump, 0, "3", "3", false));
                obs.put("timed_out", Support.failureOf(() -> failed.get(30, TimeUnit.SECONDS)));
                ControlDriver.control(s, "node_up", "{\"node\": " + leader + "}");
                obs.put("abort_error", Support.failureOf(p::abortTransaction));
                obs.put("next_error", Support.failureOf(() -> {
                    p.beginTransaction();
                    p.send(rec(third, null, "2", "2", true));
                    p.send(rec(other, null, "4", "4", true));
                    p.send(rec(bump, 0, "1", "1", true));
                    p.send(rec(bump, 0, "3", "3", true));
                    p.commitTransaction();
                }));
                obs.put("same_producer_id", producer(admin, tp).producerId() == before.producerId());
                obs.put("epoch_after", producer(admin, tp).producerEpoch());
            }
        }
        List<TopicPartition> tps = new ArrayList<>(List.of(tp));
        tps.addAll(partitions(other, 2));
        tps.addAll(partitions(third, 2));
        obs.put(RC, drain(s, RC, tps));
    }

    /**
     * testFailureToFenceEpoch (TransactionsTest), on a simulated three-broker kafka-shim with
     * transaction.state.log.min.isr=2 whose control plane (option {@code control}) takes brokers 0
     * and 1 down: the transactional id's __transaction_state partition is under its min ISR, so a
     * second producer's initTransactions (max.block.ms=1000) times out while its coordinator answers
     * COORDINATOR_NOT_AVAILABLE; with the brokers back a third producer's epoch is the first's plus one.
     */
    static void failureToFenceEpoch(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("fence-fail"), txnId = s.name("fence-fail-T");
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Admin admin = s.admin()) {
            admin.createTopics(List.of(new org.apache.kafka.clients.admin.NewTopic(topic, 4, (short) 3)
                    .configs(Map.of("min.insync.replicas", "2")))).all().get(20, TimeUnit.SECONDS);
            Support.awaitTopic(admin, topic, 4);
            KafkaProducer<byte[], byte[]> first = s.txnProducer(txnId);
            try {
                first.beginTransaction();
                first.send(rec(topic, 0, "4", "4", true));
                first.commitTransaction();
                org.apache.kafka.clients.admin.ProducerState initial = producer(admin, tp);
                obs.put("epoch_before", initial.producerEpoch());
                ControlDriver.control(s, "node_down", "{\"node\": 0}");
                ControlDriver.control(s, "node_down", "{\"node\": 1}");
                KafkaProducer<byte[], byte[]> second = s.producer("transactional.id", txnId, "max.block.ms", "1000");
                try {
                    obs.put("init_error", Support.failureOf(second::initTransactions));
                } finally {
                    second.close();
                }
                ControlDriver.control(s, "node_up", "{\"node\": 0}");
                ControlDriver.control(s, "node_up", "{\"node\": 1}");
                // beginTransaction is local: the test accepts no error or ProducerFencedException
                obs.put("begin_error", Support.failureOf(first::beginTransaction));
                // The transaction holds no partition, so its abort is local too (TransactionManager.nextRequest
                // completes an EndTxn of a transaction never started without sending it), and no broker sees a
                // difference. Aborted by close() instead, it would idle the closing Sender in one more poll, up
                // to request.timeout.ms (15 s here), since nothing wakes it once the state is READY.
                Support.failureOf(first::abortTransaction);
            } finally {
                first.close();
            }
            try (KafkaProducer<byte[], byte[]> third = s.txnProducer(txnId, "max.block.ms", "5000")) {
                third.beginTransaction();
                third.send(rec(topic, 0, "4", "4", true));
                third.commitTransaction();
            }
            org.apache.kafka.clients.admin.ProducerState after = producer(admin, tp);
            obs.put("epoch_after", after.producerEpoch());
        }
        obs.put(RC, drain(s, RC, List.of(tp)));
    }

    private static org.apache.kafka.clients.admin.ProducerState producer(Admin admin, TopicPartition tp) throws Exception {
        List<org.apache.kafka.clients.admin.ProducerState> all = admin.describeProducers(List.of(tp)).partitionResult(tp)
                .get(20, TimeUnit.SECONDS).activeProducers();
        if (all.size() != 1) throw new IllegalStateException("producers of " + tp + ": " + all);
        return all.get(0);
    }

    // ------------------------------------------------------------------ producer lifecycle

    /** testEmptyAbortAfterCommit, then one more committed transaction from the same producer. */
    static void emptyAbortAfterCommit(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("empty-abort");
        s.createTopic(topic, 2);
        try (KafkaProducer<byte[], byte[]> p = s.txnProducer(s.name("empty-abort-T"))) {
            p.beginTransaction();
            p.send(rec(topic, 1, "4", "4", true));
            p.commitTransaction();
            p.beginTransaction();
            obs.put("abort_error", Support.failureOf(p::abortTransaction));
            obs.put("next_error", Support.failureOf(() -> {
                p.beginTransaction();
                p.send(rec(topic, 0, "5", "5", true)).get(20, TimeUnit.SECONDS);
                p.commitTransaction();
            }));
        }
        obs.put(RC, drain(s, RC, partitions(topic, 2)));
    }

    /** TransactionsWithMaxInFlightOneTest: one request in flight per connection, abort then commit. */
    static void maxInFlightOne(Support s, Map<String, Object> obs) throws Exception {
        List<String> topics;
        try (Admin admin = s.admin()) {
            topics = twoTopics(s, admin, "inflight1", 2);
        }
        try (KafkaProducer<byte[], byte[]> p = s.txnProducer(s.name("inflight1-T"),
                "max.in.flight.requests.per.connection", "1")) {
            p.beginTransaction();
            p.send(rec(topics.get(1), null, "2", "2", false));
            p.send(rec(topics.get(0), null, "4", "4", false));
            p.flush();
            p.abortTransaction();
            p.beginTransaction();
            p.send(rec(topics.get(0), null, "1", "1", true));
            p.send(rec(topics.get(1), null, "3", "3", true));
            p.commitTransaction();
        }
        obs.put(RC, drain(s, RC, all(topics, 2)));
        obs.put(RU, drain(s, RU, all(topics, 2)));
    }
}
