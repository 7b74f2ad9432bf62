/* JProduce: the produce phases with Apache Kafka's own Java client (kafka-clients).
 *
 *   java -cp CLASSPATH JProduce BOOTSTRAP TOPIC PARTITIONS COUNT COMMIT_MS WARMUP_TOPIC WARMUP_COUNT [key=value ...]
 *
 * Produces COUNT records of 1 KiB (64 different random values, partitions 0..PARTITIONS-1 in
 * turn, no key) to TOPIC with the producer settings given as key=value. When the producer's
 * buffer is full, send() waits for room, as the Java client does. With COMMIT_MS > 0 the producer
 * is transactional (a transactional.id must be given): it commits whenever COMMIT_MS have passed
 * since the last commit returned, first delivering what is buffered (flush()) and then
 * committing, so that the pause splits into the two, as in bench/rdproduce.c.
 *
 * Before the clock: WARMUP_COUNT records delivered to WARMUP_TOPIC (in one transaction for a
 * transactional producer, after initTransactions()), so that the JIT has compiled the send path
 * and the producer has its metadata. The clock stops when the last record is delivered (or the
 * last commit returns). Prints one JSON line: records, seconds, client_cpu_s (the JVM's CPU over
 * the window), transactions, commit_seconds, commit_flush_seconds, commit_queued_records (records
 * sent and not yet acknowledged when each commit began, summed), delivery_errors, first_error.
 *
 * Exit status: 0 done; 2 usage; 3 a delivery error; 4 a transactional call failed.
 */
import java.lang.management.ManagementFactory;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class JProduce {
    private static final int RECORD_SIZE = 1024;
    private static final int VALUES = 64;

    private static long cpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    private static String json(String s) {
        return s == null ? "null" : "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", " ") + "\"";
    }

    public static void main(String[] args) {
        if (args.length < 7) {
            System.err.println("usage: JProduce BOOTSTRAP TOPIC PARTITIONS COUNT COMMIT_MS WARMUP_TOPIC WARMUP_COUNT [key=value ...]");
            System.exit(2);
        }
        String topic = args[1], warmupTopic = args[5];
        int partitions = Integer.parseInt(args[2]), warmupCount = Integer.parseInt(args[6]);
        long count = Long.parseLong(args[3]), commitNanos = Long.parseLong(args[4]) * 1_000_000L;
        boolean transactional = commitNanos > 0;
        Properties conf = new Properties();
        conf.put("bootstrap.servers", args[0]);
        for (int i = 7; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            if (kv.length != 2) {
                System.err.println("JProduce: not key=value: " + args[i]);
                System.exit(2);
            }
            conf.put(kv[0], kv[1]);
        }
        if (transactional && !conf.containsKey("transactional.id")) {
            System.err.println("JProduce: COMMIT_MS > 0 needs transactional.id=...");
            System.exit(2);
        }
        byte[][] values = new byte[VALUES][RECORD_SIZE];
        Random random = new Random();
        for (byte[] v : values) random.nextBytes(v);

        AtomicLong acked = new AtomicLong(), errors = new AtomicLong();
        AtomicReference<String> firstError = new AtomicReference<>();
        Callback onDelivery = (metadata, e) -> {
            if (e != null && errors.getAndIncrement() == 0) firstError.set(e.toString());
            acked.incrementAndGet();
        };
        try (KafkaProducer<byte[], byte[]> producer =
                 new KafkaProducer<>(conf, new ByteArraySerializer(), new ByteArraySerializer())) {
            try {
                if (transactional) {
                    producer.initTransactions();
                    producer.beginTransaction();
                }
                for (int i = 0; i < warmupCount; i++)
                    producer.send(new ProducerRecord<>(warmupTopic, 0, null, values[i % VALUES]), onDelivery);
                producer.flush();
                if (transactional) producer.commitTransaction();
                if (errors.get() > 0) {
                    System.err.println("JProduce: warm-up: " + firstError.get());
                    System.exit(3);
                }
                acked.set(0);

                long transactions = 0, queued = 0, commitNanosSpent = 0, flushNanos = 0;
                long cpu0 = cpuNanos(), t0 = System.nanoTime(), lastCommit = t0;
                boolean open = false;
                if (transactional) {
                    producer.beginTransaction();
                    open = true;
                }
                for (long i = 0; i < count; i++) {
                    producer.send(new ProducerRecord<>(topic, (int) (i % partitions), null, values[(int) (i % VALUES)]),
                                  onDelivery);
                    if (transactional && System.nanoTime() - lastCommit >= commitNanos) {
                        long c0 = System.nanoTime();
                        queued += i + 1 - acked.get();
                        producer.flush();
                        long c1 = System.nanoTime();
                        producer.commitTransaction();
                        lastCommit = System.nanoTime();
                        flushNanos += c1 - c0;
                        commitNanosSpent += lastCommit - c0;
                        transactions++;
                        open = i + 1 < count;
                        if (open) producer.beginTransaction();
                    }
                }
                long c0 = System.nanoTime();
                if (open) queued += count - acked.get();
                producer.flush();
                if (open) {
                    long c1 = System.nanoTime();
                    producer.commitTransaction();
                    flushNanos += c1 - c0;
                    commitNanosSpent += System.nanoTime() - c0;
                    transactions++;
                }
                double seconds = (System.nanoTime() - t0) / 1e9, cpu = (cpuNanos() - cpu0) / 1e9;
                System.out.printf("{\"records\": %d, \"seconds\": %.6f, \"client_cpu_s\": %.6f, \"transactions\": %d, "
                                  + "\"commit_seconds\": %.6f, \"commit_flush_seconds\": %.6f, \"commit_queued_records\": %d, "
                                  + "\"delivery_errors\": %d, \"first_error\": %s}%n",
                                  count, seconds, cpu, transactions, commitNanosSpent / 1e9, flushNanos / 1e9, queued,
                                  errors.get(), json(firstError.get()));
                if (errors.get() > 0) {
                    System.err.println("JProduce: " + errors.get() + " delivery errors, the first: " + firstError.get());
                    System.exit(3);
                }
            } catch (org.apache.kafka.common.KafkaException e) {
                System.err.println("JProduce: " + e);
                System.exit(4);
            }
        }
    }
}
