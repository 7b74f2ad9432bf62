import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;

/**
 * Scenarios run with the stock Java clients (kafka-clients 3.9): producer, transactions, consumer
 * and Admin (the Admin ones in {@link AdminScenarios}). Each scenario only observes and records;
 * compat/test_java_clients.py holds the expectations. Offsets in comments assume a fresh topic.
 * See compat/scenarios/ for the specs.
 */
public final class KafkaDriver {
    static final String RC = "read_committed";
    static final String RU = "read_uncommitted";

    public static void main(String[] args) {
        Map<String, Support.Scenario> all = new LinkedHashMap<>();
        for (String codec : List.of("none", "gzip", "snappy", "lz4", "zstd")) {
            all.put("produce_consume." + codec, (s, obs) -> produceConsume(s, obs, codec));
        }
        all.put("producer.idempotent_default", KafkaDriver::idempotentDefault);
        all.put("producer.idempotent_retries", KafkaDriver::idempotentRetries);
        all.put("txn.seed", KafkaDriver::txnSeed);
        all.put("txn.open_lso_commit", (s, obs) -> openLso(s, obs, true));
        all.put("txn.open_lso_abort", (s, obs) -> openLso(s, obs, false));
        all.put("txn.interleaved", KafkaDriver::interleaved);
        all.put("txn.zombie_fencing", KafkaDriver::zombieFencing);
        all.put("txn.timeout", KafkaDriver::txnTimeout);
        all.put("consumer.position_past_markers", KafkaDriver::positionPastMarkers);
        all.put("consumer.group_commit", KafkaDriver::groupCommit);
        all.put("consumer.fetch_sessions", FetchSessionScenarios::manyPartitions);
        all.put("eos.send_offsets", (s, obs) -> sendOffsets(s, obs, true));
        all.put("eos.send_offsets_assign", (s, obs) -> sendOffsets(s, obs, false));
        all.put("admin.topics", AdminScenarios::adminTopics);
        all.put("admin.topic_configs", ConfigScenarios::topicConfigs);
        all.put("admin.broker_configs", ConfigScenarios::brokerConfigs);
        all.put("topic.compression_zstd", ConfigScenarios::compressionZstd);
        all.put("topic.future_timestamps", ConfigScenarios::futureTimestamps);
        all.put("topic.release_configs", ConfigScenarios::releaseConfigs);
        all.put("admin.list_offsets_isolation", AdminScenarios::listOffsetsIsolation);
        all.put("admin.transactions", AdminScenarios::adminTransactions);
        all.put("admin.abort_hanging", AdminScenarios::abortHanging);
        all.put("txn.delete_records_open", DeleteRecordsScenarios::deletePastOpenTxn);
        Support.main("KafkaDriver", all, args);
    }

    // ------------------------------------------------------------------ produce / consume

    /** Five records in one batch with codec {@code codec}: keys (one null), headers (one null value), timestamps. */
    static void produceConsume(Support s, Map<String, Object> obs, String codec) throws Exception {
        String topic = s.name("pc-" + codec);
        TopicPartition tp = new TopicPartition(topic, 0);
        s.createTopic(topic, 1);
        long baseTs = System.currentTimeMillis() - 60_000;
        obs.put("base_ts", baseTs);
        List<Long> offsets = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> p = s.producer("compression.type", codec, "linger.ms", "200")) {
            List<Future<RecordMetadata>> fs = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                String value = codec + "-value-" + i + "-" + "abcdefgh".repeat(32);
                ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(topic, 0, baseTs + i * 1000L,
                        i == 3 ? null : Support.b("key-" + i), Support.b(value));
                r.headers().add("h1", Support.b("x" + i));
                r.headers().add("h2", i == 2 ? null : Support.b("y" + i));
                fs.add(p.send(r));
            }
            p.flush();
            for (Future<RecordMetadata> f : fs) offsets.add(f.get().offset());
        }
        obs.put("offsets", offsets);
        try (KafkaConsumer<byte[], byte[]> c = s.consumer(RU)) {
            obs.put("records", Support.readFromStart(c, tp, 5, 15_000));
            obs.put("position", c.position(tp));
        }
    }

    /** The default producer (idempotent since 3.0): contiguous offsets, one producer state per partition. */
    static void idempotentDefault(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("idem");
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, topic, 2);
            Map<Integer, List<Long>> offsets = new LinkedHashMap<>();
            try (KafkaProducer<byte[], byte[]> p = s.producer()) {
                List<Future<RecordMetadata>> fs = new ArrayList<>();
                for (int i = 0; i < 10; i++) {
                    for (int part = 0; part < 2; part++) fs.add(p.send(Support.rec(topic, part, "k" + i, "v" + part + "-" + i)));
                }
                p.flush();
                for (Future<RecordMetadata> f : fs) {
                    RecordMetadata m = f.get();
                    offsets.computeIfAbsent(m.partition(), k -> new ArrayList<>()).add(m.offset());
                }
            }
            obs.put("offsets", offsets);
            List<TopicPartition> tps = List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1));
            Map<String, Object> producers = new LinkedHashMap<>();
            for (TopicPartition tp : tps) {
                List<Object> states = new ArrayList<>();
                for (ProducerState ps : admin.describeProducers(List.of(tp)).partitionResult(tp).get().activeProducers()) {
                    states.add(AdminScenarios.producerState(ps));
                }
                producers.put(String.valueOf(tp.partition()), states);
            }
            obs.put("producers", producers);
            Map<String, Object> read = new LinkedHashMap<>();
            try (KafkaConsumer<byte[], byte[]> c = s.consumer(RU)) {
                for (TopicPartition tp : tps) read.put(String.valueOf(tp.partition()), values(Support.readFromStart(c, tp, 10, 15_000)));
            }
            obs.put("values", read);
        }
    }

    /**
     * The default (idempotent) producer writes {@code records} records (option, default 3000) to
     * partition 0 of {@code topic} (option) over many small Produce requests. Meant to run through
     * compat/test_idempotent_retries.py's proxy, which loses some Produce responses after the broker
     * appended the batch: the producer must retry them with the same sequence numbers. Records what
     * each record was acknowledged with and how many times its callback ran.
     */
    static void idempotentRetries(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.option("topic", s.name("idempotent-retries"));
        int n = Integer.parseInt(s.option("records", "3000"));
        if (!s.option("create_topic", "true").equals("false")) {  // false: the caller made it (replicated)
            s.createTopic(topic, 1);
        }
        AtomicIntegerArray callbacks = new AtomicIntegerArray(n);
        List<Long> offsets = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> p = s.producer("batch.size", "2048", "linger.ms", "2",
                "retry.backoff.ms", "20", "reconnect.backoff.ms", "20", "delivery.timeout.ms", "60000")) {
            List<Future<RecordMetadata>> fs = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                int index = i;
                fs.add(p.send(new ProducerRecord<>(topic, 0, Support.b(String.valueOf(i)),
                        Support.b(String.format("value-%06d", i))), (m, e) -> callbacks.incrementAndGet(index)));
                if (i % 100 == 99) Thread.sleep(2);  // spread the records over many requests
            }
            p.flush();
            for (Future<RecordMetadata> f : fs) offsets.add(f.get(60, TimeUnit.SECONDS).offset());
        }
        obs.put("offsets", offsets);
        Map<String, Integer> byCount = new java.util.TreeMap<>();  // callbacks per record -> records
        for (int i = 0; i < n; i++) byCount.merge(String.valueOf(callbacks.get(i)), 1, Integer::sum);
        obs.put("callbacks_per_record", byCount);
    }

    // ------------------------------------------------------------------ transactions

    /** Txn A aborts, a plain producer writes, txn B commits (reference section 5's seed). */
    static void txnSeed(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("seed");
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, topic, 1);
            try (KafkaProducer<byte[], byte[]> a = s.txnProducer(s.name("seed-A"));
                 KafkaProducer<byte[], byte[]> plain = s.producer();
                 KafkaProducer<byte[], byte[]> bb = s.txnProducer(s.name("seed-B"))) {
                a.beginTransaction();
                a.send(Support.rec(topic, 0, "a", "a-1"));
                a.send(Support.rec(topic, 0, "a", "a-2")).get();
                a.abortTransaction();                                   // a-1 0, a-2 1, ABORT 2
                // Kafka answers EndTxn before it writes the markers: plain-1 goes after the ABORT.
                Support.awaitEnd(admin, tp, 3);
                plain.send(Support.rec(topic, 0, "p", "plain-1")).get(); // 3
                bb.beginTransaction();
                bb.send(Support.rec(topic, 0, "b", "b-1"));
                bb.send(Support.rec(topic, 0, "b", "b-2")).get();
                bb.commitTransaction();                                 // b-1 4, b-2 5, COMMIT 6
                Support.awaitEnd(admin, tp, 7);
            }
            obs.put("end_rc", Support.listOffset(admin, tp, OffsetSpec.latest(), IsolationLevel.READ_COMMITTED));
            obs.put("end_ru", Support.listOffset(admin, tp, OffsetSpec.latest(), IsolationLevel.READ_UNCOMMITTED));
        }
        for (String iso : List.of(RC, RU)) {
            try (KafkaConsumer<byte[], byte[]> c = s.consumer(iso)) {
                obs.put(iso, Support.readFromStart(c, tp, 7, 15_000));
                obs.put(iso + "_position", c.position(tp));
                obs.put(iso + "_end_offsets", c.endOffsets(List.of(tp)).get(tp));
            }
        }
    }

    /**
     * An open transaction holds read_committed at the LSO while read_uncommitted reads the plain
     * records written after it; commit ({@code commit}) releases them, abort skips the txn's record.
     */
    static void openLso(Support s, Map<String, Object> obs, boolean commit) throws Exception {
        String topic = s.name(commit ? "lso-commit" : "lso-abort");
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Admin admin = s.admin();
             KafkaProducer<byte[], byte[]> plain = s.producer();
             KafkaProducer<byte[], byte[]> t = s.txnProducer(s.name(commit ? "lso-commit-T" : "lso-abort-T"));
             KafkaConsumer<byte[], byte[]> rc = s.consumer(RC);
             KafkaConsumer<byte[], byte[]> ru = s.consumer(RU)) {
            Support.createTopic(admin, topic, 1);
            plain.send(Support.rec(topic, 0, null, "p-0")).get();      // 0
            t.beginTransaction();
            t.send(Support.rec(topic, 0, null, "t-1")).get();          // 1 (open)
            plain.send(Support.rec(topic, 0, null, "p-2")).get();      // 2
            plain.send(Support.rec(topic, 0, null, "p-3")).get();      // 3
            obs.put("ru", Support.readFromStart(ru, tp, 4, 15_000));
            obs.put("ru_position", ru.position(tp));
            // Read up to the LSO, then keep polling a while: the position must stay there.
            List<Map<String, Object>> before = Support.readFromStart(rc, tp, 1, 15_000);
            before.addAll(Support.pollFor(rc, tp, 1000));
            obs.put("rc_before", before);
            obs.put("rc_position_before", rc.position(tp));
            obs.put("rc_end_offsets_before", rc.endOffsets(List.of(tp)).get(tp));
            obs.put("ru_end_offsets_before", ru.endOffsets(List.of(tp)).get(tp));
            obs.put("admin_latest_rc_before", Support.listOffset(admin, tp, OffsetSpec.latest(), IsolationLevel.READ_COMMITTED));
            obs.put("admin_latest_ru_before", Support.listOffset(admin, tp, OffsetSpec.latest(), IsolationLevel.READ_UNCOMMITTED));
            if (commit) t.commitTransaction(); else t.abortTransaction(); // marker 4
            obs.put("rc_after", Support.readOn(rc, tp, 5, 15_000));
            obs.put("rc_position_after", rc.position(tp));
            obs.put("admin_latest_rc_after", Support.listOffset(admin, tp, OffsetSpec.latest(), IsolationLevel.READ_COMMITTED));
        }
    }

    /**
     * Two transactions interleaved record by record on one partition with plain records between them;
     * one aborts, one commits. Small fetches (max.partition.fetch.bytes=256) end inside the
     * transactions, so each Fetch must list the aborted transaction that overlaps its range.
     */
    static void interleaved(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("interleaved");
        TopicPartition tp = new TopicPartition(topic, 0);
        s.createTopic(topic, 1);
        List<String> written = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> keep = s.txnProducer(s.name("interleaved-keep"));
             KafkaProducer<byte[], byte[]> drop = s.txnProducer(s.name("interleaved-drop"));
             KafkaProducer<byte[], byte[]> plain = s.producer()) {
            keep.beginTransaction();
            drop.beginTransaction();
            for (int i = 0; i < 30; i++) {
                keep.send(Support.rec(topic, 0, null, "keep-" + i)).get();
                drop.send(Support.rec(topic, 0, null, "drop-" + i)).get();
                written.add("keep-" + i);
                written.add("drop-" + i);
                if (i % 10 == 9) {
                    plain.send(Support.rec(topic, 0, null, "plain-" + i)).get();
                    written.add("plain-" + i);
                }
            }
            drop.abortTransaction();                                    // ABORT at 63
            keep.commitTransaction();                                   // COMMIT at 64
        }
        obs.put("written", written);
        for (String iso : List.of(RC, RU)) {
            try (KafkaConsumer<byte[], byte[]> c = s.consumer(iso, "max.partition.fetch.bytes", "256")) {
                obs.put(iso, values(Support.readFromStart(c, tp, 65, 20_000)));
                obs.put(iso + "_position", c.position(tp));
            }
        }
    }

    /** A second producer with the same transactional.id fences the first, whose open txn is aborted. */
    static void zombieFencing(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("zombie");
        String tid = s.name("zombie-T");
        TopicPartition tp = new TopicPartition(topic, 0);
        s.createTopic(topic, 1);
        KafkaProducer<byte[], byte[]> p1 = s.txnProducer(tid);
        try {
            p1.beginTransaction();
            p1.send(Support.rec(topic, 0, null, "zombie-1")).get();    // 0, never committed
            try (KafkaProducer<byte[], byte[]> p2 = s.txnProducer(tid)) { // fences p1: ABORT 1
                p2.beginTransaction();
                p2.send(Support.rec(topic, 0, null, "fencer-1")).get(); // 2
                p2.commitTransaction();                                // COMMIT 3
                obs.put("p2_committed", true);
            }
            fencedFailures(obs, "p1_", p1, Support.rec(topic, 0, null, "zombie-2"));
        } finally {
            p1.close(Duration.ofSeconds(2));
        }
        for (String iso : List.of(RC, RU)) s.readFromStartInto(obs, iso, iso, tp, 4, 15_000);
    }

    /** How a fenced transactional producer fails: sending {@code next}, then committing (under {@code prefix}). */
    static void fencedFailures(Map<String, Object> obs, String prefix, KafkaProducer<byte[], byte[]> fenced,
                               ProducerRecord<byte[], byte[]> next) {
        obs.put(prefix + "send_error", Support.failureOf(() -> fenced.send(next).get(15, TimeUnit.SECONDS)));
        obs.put(prefix + "commit_error", Support.failureOf(fenced::commitTransaction));
    }

    /** transaction.timeout.ms=2000: the broker aborts the open txn and fences its producer. */
    static void txnTimeout(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("txn-timeout");
        String tid = s.name("txn-timeout-T");
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, topic, 1);
            KafkaProducer<byte[], byte[]> t = s.txnProducer(tid, "transaction.timeout.ms", "2000");
            try {
                t.beginTransaction();
                t.send(Support.rec(topic, 0, null, "expires-1")).get(); // 0, then ABORT 1 from the broker
                long t0 = System.currentTimeMillis();
                obs.put("lso_while_open", Support.listOffset(admin, tp, OffsetSpec.latest(), IsolationLevel.READ_COMMITTED));
                boolean aborted = Support.eventually(
                        () -> Support.listOffset(admin, tp, OffsetSpec.latest(), IsolationLevel.READ_COMMITTED) > 0, 30_000);
                obs.put("aborted_by_broker", aborted);
                obs.put("aborted_after_ms", System.currentTimeMillis() - t0);
                obs.put("lso_after", Support.listOffset(admin, tp, OffsetSpec.latest(), IsolationLevel.READ_COMMITTED));
                obs.put("leo_after", Support.listOffset(admin, tp, OffsetSpec.latest(), IsolationLevel.READ_UNCOMMITTED));
                // The coordinator completes the abort once the markers are written.
                Support.eventually(() -> admin.describeTransactions(List.of(tid)).description(tid).get().state()
                        == TransactionState.COMPLETE_ABORT, 5_000);
                TransactionDescription d = admin.describeTransactions(List.of(tid)).description(tid).get();
                obs.put("state_after_timeout", d.state().name());
                fencedFailures(obs, "", t, Support.rec(topic, 0, null, "expires-2"));
            } finally {
                t.close(Duration.ofSeconds(2));
            }
        }
        for (String iso : List.of(RC, RU)) s.readFromStartInto(obs, iso, iso, tp, 2, 15_000);
    }

    /** Only aborted transactions: read_committed polls return nothing, yet the position reaches the end. */
    static void positionPastMarkers(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("markers");
        TopicPartition tp = new TopicPartition(topic, 0);
        s.createTopic(topic, 1);
        try (KafkaProducer<byte[], byte[]> t = s.txnProducer(s.name("markers-T"))) {
            t.beginTransaction();
            t.send(Support.rec(topic, 0, null, "aborted-1"));
            t.send(Support.rec(topic, 0, null, "aborted-2")).get();
            t.abortTransaction();                                      // 0, 1, ABORT 2
            t.beginTransaction();
            t.send(Support.rec(topic, 0, null, "aborted-3")).get();
            t.abortTransaction();                                      // 3, ABORT 4
        }
        try (KafkaConsumer<byte[], byte[]> rc = s.consumer(RC)) {
            rc.assign(List.of(tp));
            rc.seekToBeginning(List.of(tp));
            List<Object> polls = new ArrayList<>();
            long deadline = System.currentTimeMillis() + 10_000;
            while (rc.position(tp) < 5 && System.currentTimeMillis() < deadline) {
                int n = rc.poll(Duration.ofMillis(300)).records(tp).size();
                polls.add(Support.map("records", n, "position", rc.position(tp)));
            }
            obs.put("rc_polls", polls);
            obs.put("rc_position", rc.position(tp));
            // Seek onto the first abort marker itself: the position must still move to the end.
            rc.seek(tp, 2);
            obs.put("rc_from_marker", Support.readOn(rc, tp, 5, 10_000));
            obs.put("rc_position_from_marker", rc.position(tp));
        }
        try (KafkaConsumer<byte[], byte[]> ru = s.consumer(RU)) {
            obs.put("ru", Support.readFromStart(ru, tp, 5, 10_000));
            obs.put("ru_position", ru.position(tp));
        }
    }

    // ------------------------------------------------------------------ groups

    /** subscribe + commitSync; a second member of the group resumes from the committed offset. */
    static void groupCommit(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("group");
        String group = s.name("group-G");
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Admin admin = s.admin(); KafkaProducer<byte[], byte[]> p = s.producer()) {
            Support.createTopic(admin, topic, 1);
            for (int i = 0; i < 3; i++) p.send(Support.rec(topic, 0, null, "g-" + i));
            p.flush();
            try (KafkaConsumer<byte[], byte[]> c = s.consumer(RC, "group.id", group, "session.timeout.ms", "10000")) {
                c.subscribe(List.of(topic));
                List<String> got = new ArrayList<>();
                long deadline = System.currentTimeMillis() + 20_000;
                while (got.size() < 3 && System.currentTimeMillis() < deadline) {
                    for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) got.add(new String(r.value()));
                }
                obs.put("first_member", got);
                c.commitSync(Duration.ofSeconds(15));
                obs.put("committed", offsetOf(c.committed(Set.of(tp), Duration.ofSeconds(15)).get(tp)));
            }
            for (int i = 3; i < 5; i++) p.send(Support.rec(topic, 0, null, "g-" + i));
            p.flush();
            try (KafkaConsumer<byte[], byte[]> c = s.consumer(RC, "group.id", group, "session.timeout.ms", "10000")) {
                c.subscribe(List.of(topic));
                List<String> got = new ArrayList<>();
                long deadline = System.currentTimeMillis() + 20_000;
                while (got.size() < 2 && System.currentTimeMillis() < deadline) {
                    for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) got.add(new String(r.value()));
                }
                obs.put("second_member", got);
            }
            Map<TopicPartition, OffsetAndMetadata> offsets =
                    admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
            obs.put("admin_group_offset", offsetOf(offsets.get(tp)));
        }
    }

    /**
     * Consume-transform-produce with sendOffsetsToTransaction(offsets, consumer.groupMetadata()):
     * a committed round moves the group's offset and publishes the output, an aborted one neither.
     * {@code subscribe}: group membership (JoinGroup/SyncGroup); otherwise assign() with a group.id.
     */
    static void sendOffsets(Support s, Map<String, Object> obs, boolean subscribe) throws Exception {
        String tag = subscribe ? "eos" : "eos-assign";
        String in = s.name(tag + "-in");
        String out = s.name(tag + "-out");
        String group = s.name(tag + "-G");
        TopicPartition inTp = new TopicPartition(in, 0);
        TopicPartition outTp = new TopicPartition(out, 0);
        try (Admin admin = s.admin();
             KafkaProducer<byte[], byte[]> plain = s.producer();
             KafkaProducer<byte[], byte[]> tx = s.txnProducer(s.name(tag + "-T"));
             KafkaConsumer<byte[], byte[]> c = s.consumer(RC, "group.id", group, "session.timeout.ms", "10000")) {
            Support.createTopic(admin, in, 1);
            Support.createTopic(admin, out, 1);
            for (int i = 0; i < 3; i++) plain.send(Support.rec(in, 0, null, "in-" + i));
            plain.flush();
            if (subscribe) c.subscribe(List.of(in));
            else {
                c.assign(List.of(inTp));
                c.seekToBeginning(List.of(inTp));
            }
            obs.put("committed_round", processRound(c, tx, inTp, out, 3, true));
            obs.put("group_generation", c.groupMetadata().generationId());
            for (int i = 3; i < 5; i++) plain.send(Support.rec(in, 0, null, "in-" + i));
            plain.flush();
            obs.put("aborted_round", processRound(c, tx, inTp, out, 2, false));
            Map<TopicPartition, OffsetAndMetadata> offsets =
                    admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(20, TimeUnit.SECONDS);
            obs.put("group_offset", offsetOf(offsets.get(inTp)));
        }
        for (String iso : List.of(RC, RU)) {
            try (KafkaConsumer<byte[], byte[]> c = s.consumer(iso)) {
                obs.put("out_" + iso, Support.readFromStart(c, outTp, 7, 10_000));
            }
        }
    }

    private static Map<String, Object> processRound(KafkaConsumer<byte[], byte[]> c, KafkaProducer<byte[], byte[]> tx,
                                                    TopicPartition inTp, String out, int expect, boolean commit) {
        List<String> got = new ArrayList<>();
        long next = -1;
        long deadline = System.currentTimeMillis() + 20_000;
        tx.beginTransaction();
        while (got.size() < expect && System.currentTimeMillis() < deadline) {
            for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                got.add(new String(r.value()));
                tx.send(Support.rec(out, 0, null, "out-" + new String(r.value())));
                next = r.offset() + 1;
            }
        }
        if (next >= 0) tx.sendOffsetsToTransaction(Map.of(inTp, new OffsetAndMetadata(next)), c.groupMetadata());
        tx.flush();  // abortTransaction() would drop unsent records; these must reach the log, aborted
        if (commit) tx.commitTransaction(); else tx.abortTransaction();
        return Support.map("consumed", got, "offset_sent", next);
    }

    private static Long offsetOf(OffsetAndMetadata m) {
        return m == null ? null : m.offset();
    }

    private static List<Object> values(List<Map<String, Object>> records) {
        List<Object> out = new ArrayList<>();
        for (Map<String, Object> r : records) out.add(r.get("v"));
        return out;
    }

    private KafkaDriver() {}
}
