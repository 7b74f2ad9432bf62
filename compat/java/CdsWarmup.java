import java.time.Duration;
import java.util.Properties;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Builds and closes a producer, a transactional producer, a consumer and an Admin client against
 * an address nothing listens on, so that a JVM run with -XX:ArchiveClassesAtExit archives the
 * classes every driver loads first (compat/javarun.py: the drivers' class-data-sharing archive).
 */
public final class CdsWarmup {
    public static void main(String[] args) {
        Properties p = new Properties();
        p.put("bootstrap.servers", "127.0.0.1:9");
        p.put("key.serializer", ByteArraySerializer.class.getName());
        p.put("value.serializer", ByteArraySerializer.class.getName());
        new KafkaProducer<byte[], byte[]>(p).close(Duration.ZERO);
        p.put("transactional.id", "cds-warmup");
        new KafkaProducer<byte[], byte[]>(p).close(Duration.ZERO);
        Properties c = new Properties();
        c.put("bootstrap.servers", "127.0.0.1:9");
        c.put("group.id", "cds-warmup");
        c.put("key.deserializer", ByteArrayDeserializer.class.getName());
        c.put("value.deserializer", ByteArrayDeserializer.class.getName());
        new KafkaConsumer<byte[], byte[]>(c).close(Duration.ZERO);
        Properties a = new Properties();
        a.put("bootstrap.servers", "127.0.0.1:9");
        Admin.create(a).close(Duration.ZERO);
    }
}
