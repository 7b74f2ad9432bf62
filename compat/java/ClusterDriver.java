import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Step by step scenarios for a simulated cluster (compat/test_cluster.py): the test sends one
 * command a line and reads one JSON line back, and changes the cluster between steps.
 *
 *   producer [TXN_ID]              an idempotent (or transactional, initTransactions) producer
 *   send TOPIC PARTITION FROM TO   values FROM..TO-1, then flush; {"acked": n, "errors": [...]}
 *   begin | commit | abort         the transactional producer's transaction
 *   consumer GROUP TOPIC [ISOLATION]  a group member subscribed to TOPIC (earliest, manual commits)
 *   poll COUNT TIMEOUT_MS          poll until COUNT records or the timeout; commitSync; {"values": [...]}
 *   serve TIMEOUT_MS               one poll (it heartbeats, rejoins, fetches), no commit; {"count": records}
 *   close                          close everything and exit
 */
public final class ClusterDriver {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[1];
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        KafkaProducer<String, String> producer = null;
        KafkaConsumer<String, String> consumer = null;
        String line;
        while ((line = in.readLine()) != null) {
            String[] w = line.trim().split(" ");
            Map<String, Object> out = new HashMap<>();
            try {
                switch (w[0]) {
                    case "producer" -> producer = producer(bootstrap, w.length > 1 ? w[1] : null);
                    case "send" -> out = send(producer, w[1], Integer.parseInt(w[2]), Integer.parseInt(w[3]),
                                              Integer.parseInt(w[4]));
                    case "begin" -> producer.beginTransaction();
                    case "commit" -> producer.commitTransaction();
                    case "abort" -> producer.abortTransaction();
                    case "consumer" -> consumer = consumer(bootstrap, w[1], w[2], w.length > 3 ? w[3] : "read_uncommitted");
                    case "poll" -> out.put("values", poll(consumer, Integer.parseInt(w[1]), Long.parseLong(w[2])));
                    case "serve" -> out.put("count", consumer.poll(Duration.ofMillis(Long.parseLong(w[1]))).count());
                    case "close" -> {
                        if (producer != null) producer.close(Duration.ofSeconds(10));
                        if (consumer != null) consumer.close(Duration.ofSeconds(10));
                        System.out.println("{\"ok\": true}");
                        return;
                    }
                    default -> throw new IllegalArgumentException("unknown command " + w[0]);
                }
                out.put("ok", true);
            } catch (Exception e) {
                out.put("ok", false);
                out.put("error", e.toString());
            }
            System.out.println(Json.write(out));
            System.out.flush();
        }
    }

    static KafkaProducer<String, String> producer(String bootstrap, String txnId) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("enable.idempotence", "true");
        p.put("acks", "all");
        p.put("linger.ms", "0");
        p.put("delivery.timeout.ms", "60000");
        p.put("retry.backoff.ms", "50");
        if (txnId != null) p.put("transactional.id", txnId);
        KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
        if (txnId != null) producer.initTransactions();
        return producer;
    }

    static Map<String, Object> send(KafkaProducer<String, String> producer, String topic, int partition, int from,
                                    int to) {
        List<Future<?>> sent = new ArrayList<>();
        for (int i = from; i < to; i++) {
            sent.add(producer.send(new ProducerRecord<>(topic, partition, null, Integer.toString(i))));
        }
        producer.flush();
        int acked = 0;
        List<String> errors = new ArrayList<>();
        for (Future<?> f : sent) {
            try {
                f.get();
                acked++;
            } catch (Exception e) {
                errors.add(e.getCause() != null ? e.getCause().toString() : e.toString());
            }
        }
        Map<String, Object> out = new HashMap<>();
        out.put("acked", acked);
        out.put("errors", errors);
        return out;
    }

    static KafkaConsumer<String, String> consumer(String bootstrap, String group, String topic, String isolation) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", group);
        p.put("auto.offset.reset", "earliest");
        p.put("enable.auto.commit", "false");
        p.put("isolation.level", isolation);
        p.put("retry.backoff.ms", "50");
        KafkaConsumer<String, String> c = new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
        c.subscribe(List.of(topic));
        return c;
    }

    static List<Object> poll(KafkaConsumer<String, String> c, int count, long timeoutMs) {
        List<Object> values = new ArrayList<>();
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (values.size() < count && System.currentTimeMillis() < deadline) {
            for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                values.add(Integer.parseInt(r.value()));
            }
        }
        c.commitSync(Duration.ofSeconds(30));
        return values;
    }
}
