import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.LinkedHashMap;

import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;

/**
 * The two halves of the log compaction scenarios (compat/test_compaction.py), with the stock Java
 * producer and consumer; the test runs the cleaner between them.
 *
 * <ul>
 *   <li>{@code compaction.produce}: options {@code topic}, {@code records} ("key:value;key:~;..." where
 *       ~ is a null value, a tombstone) and optionally {@code txn} (a transactional id: all records in
 *       one transaction) with {@code commit=true|false}. Each record is sent and acknowledged in turn.</li>
 *   <li>{@code compaction.read}: options {@code topic}, {@code isolation} and {@code until}: an assign()
 *       consumer reads partition 0 from the beginning until its position reaches {@code until} and
 *       reports every record (offset, key, value) and its position.</li>
 * </ul>
 */
public final class CompactionDriver {
    public static void main(String[] args) {
        Map<String, Support.Scenario> all = new LinkedHashMap<>();
        all.put("compaction.produce", CompactionDriver::produce);
        all.put("compaction.read", CompactionDriver::read);
        Support.main("CompactionDriver", all, args);
    }

    static void produce(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.option("topic", null);
        String txn = s.option("txn", "");
        List<Object> offsets = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> p = txn.isEmpty() ? s.producer("linger.ms", "0") : s.txnProducer(txn)) {
            if (!txn.isEmpty()) p.beginTransaction();
            for (String pair : s.option("records", "").split(";")) {
                String[] kv = pair.split(":", 2);
                String value = kv[1].equals("~") ? null : kv[1];
                offsets.add(p.send(Support.rec(topic, 0, kv[0], value)).get().offset());
            }
            if (!txn.isEmpty()) {
                if (Boolean.parseBoolean(s.option("commit", "true"))) p.commitTransaction();
                else p.abortTransaction();
            }
        }
        obs.put("offsets", offsets);
    }

    static void read(Support s, Map<String, Object> obs) throws Exception {
        TopicPartition tp = new TopicPartition(s.option("topic", null), 0);
        long until = Long.parseLong(s.option("until", "0"));
        try (KafkaConsumer<byte[], byte[]> c = s.consumer(s.option("isolation", "read_uncommitted"))) {
            obs.put("records", Support.readFromStart(c, tp, until, 20_000));
            obs.put("position", c.position(tp));
        }
    }
}
