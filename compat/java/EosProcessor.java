import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The consume -> transform -> produce processor of compat/test_groups_exactly_once.py in Java:
 * {@code EosProcessor PROTOCOL BOOTSTRAP INPUT OUTPUT GROUP TRANSACTIONAL_ID} reads INPUT as a
 * read_committed member of GROUP ({@code group.protocol} PROTOCOL: classic or consumer), writes
 * {@code "out-" + value} of each record to the same partition of OUTPUT and sends the input offsets
 * to the same transaction with {@code consumer.groupMetadata()}, forever. Any error ends the
 * process (status 3); the test starts another, whose initTransactions fences this one.
 */
final class EosProcessor {
    public static void main(String[] args) {
        String protocol = args[0], bootstrap = args[1], in = args[2], out = args[3], group = args[4], txnId = args[5];
        Properties pp = new Properties();
        pp.put("bootstrap.servers", bootstrap);
        pp.put("transactional.id", txnId);
        pp.put("max.block.ms", "30000");
        Properties cp = new Properties();
        cp.put("bootstrap.servers", bootstrap);
        cp.put("group.id", group);
        cp.put("group.protocol", protocol);
        cp.put("isolation.level", "read_committed");
        cp.put("enable.auto.commit", "false");
        cp.put("auto.offset.reset", "earliest");
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(pp, new ByteArraySerializer(), new ByteArraySerializer());
             KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(cp, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            producer.initTransactions();
            consumer.subscribe(List.of(in));
            while (true) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
                if (records.isEmpty()) continue;
                producer.beginTransaction();
                Map<TopicPartition, OffsetAndMetadata> next = new HashMap<>();
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    byte[] value = ("out-" + new String(r.value())).getBytes();
                    producer.send(new ProducerRecord<>(out, r.partition(), null, value));
                    next.put(new TopicPartition(in, r.partition()), new OffsetAndMetadata(r.offset() + 1));
                }
                producer.sendOffsetsToTransaction(next, consumer.groupMetadata());
                producer.commitTransaction();
            }
        } catch (Exception e) {
            System.err.println("processor stops: " + e);
            System.exit(3);
        }
    }
}
