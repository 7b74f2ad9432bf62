import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;

/**
 * Consumers of many partitions whose data arrives a few partitions at a time, so that the
 * consumer's fetch sessions (KIP-227) answer most fetches incrementally: committed, aborted and
 * plain records interleaved, one transaction held open over several rounds. Observes what
 * read_committed and read_uncommitted consumers (the first with a client.rack) return per partition.
 */
final class FetchSessionScenarios {
    static final int PARTITIONS = 24;
    static final int ROUNDS = 12;

    private FetchSessionScenarios() {
    }

    static void manyPartitions(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("fetch-sessions");
        s.createTopic(topic, PARTITIONS);
        List<TopicPartition> tps = new ArrayList<>();
        for (int i = 0; i < PARTITIONS; i++) tps.add(new TopicPartition(topic, i));
        Map<String, List<String>> written = new LinkedHashMap<>();  // partition -> "value:kept"
        Map<String, Map<String, List<Object>>> read = new LinkedHashMap<>();
        List<KafkaConsumer<byte[], byte[]>> consumers = List.of(
                s.consumer(KafkaDriver.RC, "client.rack", "rack-a", "max.partition.fetch.bytes", "256",
                        "fetch.max.wait.ms", "100"),
                s.consumer(KafkaDriver.RU, "max.partition.fetch.bytes", "256", "fetch.max.wait.ms", "100"));
        try (KafkaProducer<byte[], byte[]> txn = s.txnProducer(s.name("fetch-sessions-T"));
             KafkaProducer<byte[], byte[]> open = s.txnProducer(s.name("fetch-sessions-open"));
             KafkaProducer<byte[], byte[]> plain = s.producer()) {
            for (KafkaConsumer<byte[], byte[]> c : consumers) {
                c.assign(tps);
                c.seekToBeginning(tps);
                read.put(c == consumers.get(0) ? KafkaDriver.RC : KafkaDriver.RU, new LinkedHashMap<>());
                catchUp(c, tps, read.get(c == consumers.get(0) ? KafkaDriver.RC : KafkaDriver.RU));
            }
            for (int r = 0; r < ROUNDS; r++) {
                round(txn, open, plain, topic, r, written);
                catchUp(consumers.get(0), tps, read.get(KafkaDriver.RC));
                catchUp(consumers.get(1), tps, read.get(KafkaDriver.RU));
            }
        } finally {
            for (KafkaConsumer<byte[], byte[]> c : consumers) c.close();
        }
        obs.put("written", written);
        obs.put("read", read);
    }

    /**
     * Round {@code r}: a transaction writes to three partitions and commits (aborts every third
     * round); a plain record goes to a fourth. Another transaction, on partition 5, opens in round 3
     * and commits in round 8: read_committed stops there meanwhile.
     */
    static void round(KafkaProducer<byte[], byte[]> txn, KafkaProducer<byte[], byte[]> open,
                      KafkaProducer<byte[], byte[]> plain, String topic, int r, Map<String, List<String>> written)
            throws Exception {
        boolean commit = r % 3 != 1;
        txn.beginTransaction();
        for (int k = 0; k < 3; k++) {
            int p = (r * 7 + k * 5) % PARTITIONS;
            String v = "t" + r + "-" + k;
            txn.send(Support.rec(topic, p, null, v)).get();
            written.computeIfAbsent(String.valueOf(p), x -> new ArrayList<>()).add(v + ":" + commit);
        }
        if (r == 3) open.beginTransaction();
        if (r >= 3 && r <= 8) {
            open.send(Support.rec(topic, 5, null, "open-" + r)).get();
            written.computeIfAbsent("5", x -> new ArrayList<>()).add("open-" + r + ":true");
        }
        if (commit) txn.commitTransaction(); else txn.abortTransaction();
        if (r == 8) open.commitTransaction();
        int p = (r * 11 + 3) % PARTITIONS;
        plain.send(Support.rec(topic, p, null, "p" + r)).get();
        written.computeIfAbsent(String.valueOf(p), x -> new ArrayList<>()).add("p" + r + ":true");
    }

    /** Polls until the consumer's position reaches its end offset on every partition. */
    static void catchUp(KafkaConsumer<byte[], byte[]> c, List<TopicPartition> tps, Map<String, List<Object>> into) {
        Map<TopicPartition, Long> end = c.endOffsets(tps);
        long deadline = System.currentTimeMillis() + 30_000;
        while (System.currentTimeMillis() < deadline && !caughtUp(c, end)) {
            for (ConsumerRecord<byte[], byte[]> rec : c.poll(Duration.ofMillis(200))) {
                into.computeIfAbsent(String.valueOf(rec.partition()), x -> new ArrayList<>())
                        .add(new String(rec.value(), java.nio.charset.StandardCharsets.UTF_8));
            }
        }
        if (!caughtUp(c, end)) throw new IllegalStateException("did not reach " + end);
    }

    static boolean caughtUp(KafkaConsumer<byte[], byte[]> c, Map<TopicPartition, Long> end) {
        for (Map.Entry<TopicPartition, Long> e : end.entrySet()) {
            if (c.position(e.getKey()) < e.getValue()) return false;
        }
        return true;
    }
}
