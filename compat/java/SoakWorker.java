import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The crash soak's Java workers (compat/soak_java.py), kafka-clients 3.9.1, one thread each:
 * {@code SoakWorker BOOTSTRAP CYCLE SEED TXN_BASE}. Each says what it was told on stdout, one line
 * per event, and stops when stdin closes:
 * <ul>
 * <li>{@code idem}: an idempotent acks=all producer over two partitions of soak-idem-java, value
 *     {@code j<cycle>-<i>} to partition i % 2: {@code idem s I} before the send,
 *     {@code idem a P I OFFSET} on its acknowledgement;</li>
 * <li>{@code txn}: a transactional producer (soak-tx-java every cycle) committing (with the group
 *     offset {@code n} of soak-eos-java through sendOffsetsToTransaction) or aborting transactions
 *     numbered from TXN_BASE: {@code txn b N K} (K records {@code jt-N-i} to partition i % 2),
 *     {@code txn u N} before its outcome is asked for, {@code txn c N} / {@code txn x N} once
 *     committed / aborted. An error that leaves the producer unusable makes a new one, whose
 *     initTransactions fences the old;</li>
 * <li>{@code member}: a classic member of soak-members-java on soak-idem committing its positions
 *     with commitSync: {@code member t P OFFSET} sent, {@code member k P OFFSET} acknowledged.</li>
 * </ul>
 */
final class SoakWorker {
    static volatile boolean halt;
    static String bootstrap;
    static int cycle;

    public static void main(String[] args) throws Exception {
        bootstrap = args[0];
        cycle = Integer.parseInt(args[1]);
        long seed = Long.parseLong(args[2]);
        long txnBase = Long.parseLong(args[3]);
        List<Thread> threads = new ArrayList<>();
        threads.add(new Thread(SoakWorker::idem, "idem"));
        threads.add(new Thread(() -> txn(new Random(seed), txnBase), "txn"));
        threads.add(new Thread(SoakWorker::member, "member"));
        for (Thread t : threads) t.start();
        InputStream in = System.in;
        try {
            while (in.read() >= 0) { }
        } catch (IOException e) { }
        halt = true;
        for (Thread t : threads) t.join();
        emit("done");
        System.exit(0);
    }

    static synchronized void emit(String line) {
        System.out.println(line);
        System.out.flush();
    }

    static Properties common() {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("request.timeout.ms", "5000");
        p.put("reconnect.backoff.ms", "20");
        p.put("reconnect.backoff.max.ms", "200");
        p.put("retry.backoff.ms", "50");
        p.put("retry.backoff.max.ms", "200");
        return p;
    }

    static KafkaProducer<byte[], byte[]> producer(String txnId) {
        Properties p = common();
        p.put("acks", "all");
        p.put("enable.idempotence", "true");
        p.put("linger.ms", "2");
        p.put("delivery.timeout.ms", "20000");
        p.put("max.block.ms", "15000");
        if (txnId != null) {
            p.put("transactional.id", txnId);
            p.put("transaction.timeout.ms", "20000");
        }
        return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
    }

    static void idem() {
        try (KafkaProducer<byte[], byte[]> producer = producer(null)) {
            for (int i = 0; !halt; i++) {
                final int n = i, p = i % 2;
                emit("idem s " + n);
                try {
                    producer.send(new ProducerRecord<>("soak-idem-java", p, null, ("j" + cycle + "-" + n).getBytes()),
                        (md, err) -> { if (err == null) emit("idem a " + p + " " + n + " " + md.offset()); });
                } catch (KafkaException e) {  // the buffer stayed full past max.block.ms while the broker was down
                    sleep(50);
                }
                if (i % 20 == 0) sleep(10);
            }
            producer.flush();
        } catch (RuntimeException e) {
            System.err.println("idem stops: " + e);
        }
    }

    static void txn(Random rng, long base) {
        long n = base;
        while (!halt) {
            KafkaProducer<byte[], byte[]> producer = producer("soak-tx-java");
            try {
                producer.initTransactions();
                while (!halt) one(producer, rng, n++);
            } catch (RuntimeException e) {  // fenced, timed out or fatal: a new producer fences this one
                System.err.println("txn: " + e);
                sleep(100);
            } finally {
                producer.close(Duration.ofSeconds(5));
            }
        }
    }

    static void one(KafkaProducer<byte[], byte[]> producer, Random rng, long n) {
        boolean commit = rng.nextDouble() < 0.7;
        int k = 1 + rng.nextInt(8);
        producer.beginTransaction();
        emit("txn b " + n + " " + k);
        try {
            for (int i = 0; i < k; i++)
                producer.send(new ProducerRecord<>("soak-txn-java", i % 2, null, ("jt-" + n + "-" + i).getBytes()));
            producer.flush();  // else an abort drops the records unsent, and the log never has them
            emit("txn u " + n);
            if (commit) {
                producer.sendOffsetsToTransaction(Map.of(new TopicPartition("soak-idem", 0), new OffsetAndMetadata(n)),
                    new ConsumerGroupMetadata("soak-eos-java"));
                producer.commitTransaction();
                emit("txn c " + n);
            } else {
                producer.abortTransaction();
                emit("txn x " + n);
            }
        } catch (ProducerFencedException e) {
            throw e;
        } catch (KafkaException e) {
            if (e instanceof org.apache.kafka.common.errors.TimeoutException) throw e;
            producer.abortTransaction();  // an abortable error; a fatal one throws here and ends this producer
            emit("txn x " + n);
        }
    }

    static void member() {
        Properties p = common();
        p.put("group.id", "soak-members-java");
        p.put("enable.auto.commit", "false");
        p.put("auto.offset.reset", "earliest");
        p.put("session.timeout.ms", "10000");
        p.put("heartbeat.interval.ms", "500");
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of("soak-idem"));
            while (!halt) {
                try {
                    consumer.poll(Duration.ofMillis(200));
                    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                    for (TopicPartition tp : consumer.assignment())
                        offsets.put(tp, new OffsetAndMetadata(consumer.position(tp, Duration.ofSeconds(5))));
                    if (offsets.isEmpty()) continue;
                    offsets.forEach((tp, o) -> emit("member t " + tp.partition() + " " + o.offset()));
                    consumer.commitSync(offsets, Duration.ofSeconds(10));
                    offsets.forEach((tp, o) -> emit("member k " + tp.partition() + " " + o.offset()));
                } catch (KafkaException e) {  // the kill, or a rebalance
                    sleep(50);
                }
            }
        } catch (RuntimeException e) {
            System.err.println("member stops: " + e);
        }
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
