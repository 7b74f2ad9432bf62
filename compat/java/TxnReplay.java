import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;

/**
 * More of Apache Kafka 3.9's TransactionsTest on the shared broker: testBasicTransactions,
 * testFencingOnSend and testConsecutivelyRunInitTransactions (testSendOffsetsWithGroupId is
 * {@link TxnReference#sendOffsetsRounds(Support, Map, boolean)}). Records carry the test's
 * transactionStatus header ({@link TxnReference#rec}). compat/test_java_reference.py holds the
 * expectations.
 */
final class TxnReplay {
    private TxnReplay() {
    }

    static long logStart(Admin admin, TopicPartition tp) throws Exception {
        return Support.listOffset(admin, tp, OffsetSpec.earliest(), IsolationLevel.READ_UNCOMMITTED);
    }

    /**
     * testBasicTransactions: an aborted transaction (topic2-2, topic1-1), then a committed one; the log
     * start stays 0 throughout; read_committed sees the two committed records, read_uncommitted all four.
     */
    static void basic(Support s, Map<String, Object> obs) throws Exception {
        List<String> topics = List.of(s.name("basic-topic1"), s.name("basic-topic2"));
        TopicPartition tp11 = new TopicPartition(topics.get(0), 1), tp22 = new TopicPartition(topics.get(1), 2);
        try (Admin admin = s.admin(); KafkaProducer<byte[], byte[]> p = s.txnProducer(s.name("basic-T"))) {
            for (String t : topics) Support.createTopic(admin, t, 4);
            p.beginTransaction();
            p.send(TxnReference.rec(tp22.topic(), 2, "2", "2", false));
            p.send(TxnReference.rec(tp11.topic(), 1, "4", "4", false));
            p.flush();
            List<Object> starts = new ArrayList<>();
            starts.add(Arrays.asList(logStart(admin, tp11), logStart(admin, tp22)));
            p.abortTransaction();
            starts.add(Arrays.asList(logStart(admin, tp11), logStart(admin, tp22)));
            p.beginTransaction();
            p.send(TxnReference.rec(tp11.topic(), 1, "1", "1", true));
            p.send(TxnReference.rec(tp22.topic(), 2, "3", "3", true));
            p.commitTransaction();
            starts.add(Arrays.asList(logStart(admin, tp11), logStart(admin, tp22)));
            obs.put("log_starts", starts);
        }
        List<TopicPartition> all = TxnReference.all(topics, 4);
        obs.put("read_committed", TxnReference.drain(s, TxnReference.RC, all));
        obs.put("read_uncommitted", TxnReference.drain(s, TxnReference.RU, all));
    }

    /**
     * testFencingOnSend: producer2 (the same transactional id) fences producer1 mid-transaction; producer1's
     * next send to a partition already in its transaction fails (ProducerFencedException, or the Produce's
     * InvalidProducerEpochException); producer2 commits and read_committed sees only its records.
     */
    static void fencingOnSend(Support s, Map<String, Object> obs) throws Exception {
        List<String> topics = List.of(s.name("fence-send-topic1"), s.name("fence-send-topic2"));
        String tid = s.name("fence-send-T");
        try (Admin admin = s.admin()) {
            for (String t : topics) Support.createTopic(admin, t, 4);
        }
        try (KafkaProducer<byte[], byte[]> p1 = s.txnProducer(tid)) {
            p1.beginTransaction();
            p1.send(TxnReference.rec(topics.get(0), null, "1", "1", false));
            p1.send(TxnReference.rec(topics.get(1), null, "3", "3", false));
            p1.flush();
            try (KafkaProducer<byte[], byte[]> p2 = s.txnProducer(tid)) {
                p2.beginTransaction();
                p2.send(TxnReference.rec(topics.get(0), null, "2", "4", true)).get(20, TimeUnit.SECONDS);
                p2.send(TxnReference.rec(topics.get(1), null, "2", "4", true)).get(20, TimeUnit.SECONDS);
                obs.put("fenced_send", Support.failureOf(() -> {
                    RecordMetadata m = p1.send(TxnReference.rec(topics.get(0), null, "1", "5", false)).get(20, TimeUnit.SECONDS);
                    throw new IllegalStateException("a fenced producer wrote to " + m.topic() + "-" + m.partition());
                }));
                p2.commitTransaction();
            }
        }
        obs.put("read_committed", TxnReference.drain(s, TxnReference.RC, TxnReference.all(topics, 4)));
    }

    /** testConsecutivelyRunInitTransactions: a second initTransactions() is the client's IllegalStateException. */
    static void consecutiveInit(Support s, Map<String, Object> obs) throws Exception {
        try (KafkaProducer<byte[], byte[]> p = s.txnProducer(s.name("consecutive-init-T"))) {
            obs.put("second_init", Support.failureOf(p::initTransactions));
        }
    }
}
