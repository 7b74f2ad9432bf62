import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;

/**
 * txn.delete_records_open with the Java Admin, producer and consumer: DeleteRecords past the start
 * of an open transaction, then offsets and a read_committed read. Each scenario only observes;
 * compat/test_java_clients.py holds the expectations.
 */
final class DeleteRecordsScenarios {
    private DeleteRecordsScenarios() {
    }

    /** Offsets 0-1 plain, 2-3 an open txn, 4 plain; DeleteRecords to 3, then to the high watermark; commit. */
    static void deletePastOpenTxn(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("delete-open-txn");
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Admin admin = s.admin();
             KafkaProducer<byte[], byte[]> plain = s.producer();
             KafkaProducer<byte[], byte[]> tx = s.txnProducer(s.name("delete-open-txn-T"))) {
            Support.createTopic(admin, topic, 1);
            for (String v : List.of("p-0", "p-1")) plain.send(new ProducerRecord<>(topic, 0, null, Support.b(v))).get();
            tx.beginTransaction();
            for (String v : List.of("t-2", "t-3")) tx.send(new ProducerRecord<>(topic, 0, null, Support.b(v))).get();
            plain.send(new ProducerRecord<>(topic, 0, null, Support.b("p-4"))).get();
            obs.put("before", offsets(admin, tp));
            obs.put("low_watermark_3", lowWatermark(admin, tp, 3));
            obs.put("after_3", offsets(admin, tp));
            obs.put("low_watermark_hw", lowWatermark(admin, tp, -1));
            obs.put("after_hw", offsets(admin, tp));
            try (KafkaConsumer<byte[], byte[]> rc = s.consumer("read_committed")) {
                rc.assign(List.of(tp));
                rc.seekToBeginning(List.of(tp));
                obs.put("rc_position", rc.position(tp));
                plain.send(new ProducerRecord<>(topic, 0, null, Support.b("p-5"))).get();
                tx.commitTransaction();                                                        // COMMIT 6
                obs.put("rc_read", Support.readOn(rc, tp, 7, 15_000));
                obs.put("rc_position_after", rc.position(tp));
            }
            obs.put("committed", offsets(admin, tp));
        }
    }

    private static long lowWatermark(Admin admin, TopicPartition tp, long before) throws Exception {
        return admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(before))).lowWatermarks().get(tp)
                .get(20, TimeUnit.SECONDS).lowWatermark();
    }

    private static Map<String, Object> offsets(Admin admin, TopicPartition tp) throws Exception {
        Map<String, Object> out = new LinkedHashMap<>();
        for (IsolationLevel iso : IsolationLevel.values()) {
            String k = iso.toString().toLowerCase();
            out.put(k + "_earliest", Support.listOffset(admin, tp, OffsetSpec.earliest(), iso));
            out.put(k + "_latest", Support.listOffset(admin, tp, OffsetSpec.latest(), iso));
        }
        return out;
    }
}
