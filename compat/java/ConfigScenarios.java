import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeConfigsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.ConfigResource;

/**
 * admin.topic_configs and admin.broker_configs with the Java Admin client: createTopics with
 * configs, describeConfigs (with synonyms and documentation) and incrementalAlterConfigs. Each
 * scenario only observes; compat/test_java_clients.py holds the expectations.
 */
final class ConfigScenarios {
    private ConfigScenarios() {
    }

    static void topicConfigs(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("configs");
        ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        try (Admin admin = s.admin()) {
            NewTopic t = new NewTopic(topic, 1, (short) 1).configs(Map.of("compression.type", "gzip", "retention.ms", "3600000"));
            admin.createTopics(List.of(t)).all().get(20, TimeUnit.SECONDS);
            Support.awaitTopic(admin, topic, 1);
            obs.put("bad_value", createError(admin, s.name("configs-bad"), Map.of("compression.type", "gzipx")));
            obs.put("unknown_name", createError(admin, s.name("configs-unknown"), Map.of("no.such.config", "1")));
            Config c = describe(admin, res);
            for (String name : List.of("compression.type", "retention.ms", "segment.ms", "cleanup.policy")) {
                obs.put(name, entry(c.get(name)));
            }
            alter(admin, res, List.of(new AlterConfigOp(new ConfigEntry("retention.ms", "7200000"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("compression.type", null), AlterConfigOp.OpType.DELETE)));
            Support.await(() -> "7200000".equals(valueOf(admin, res, "retention.ms")), 10_000);
            Config after = describe(admin, res);
            obs.put("after_retention.ms", entry(after.get("retention.ms")));
            obs.put("after_compression.type", entry(after.get("compression.type")));
        }
    }

    /** topic.compression_zstd: Java producers with other codecs, a Java consumer reading the zstd topic. */
    static void compressionZstd(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("zstd-topic");
        org.apache.kafka.common.TopicPartition tp = new org.apache.kafka.common.TopicPartition(topic, 0);
        try (Admin admin = s.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1).configs(Map.of("compression.type", "zstd"))))
                    .all().get(20, TimeUnit.SECONDS);
            Support.awaitTopic(admin, topic, 1);
        }
        obs.put("topic", topic);
        for (String codec : List.of("none", "snappy", "gzip")) {
            try (org.apache.kafka.clients.producer.KafkaProducer<byte[], byte[]> p = s.producer("compression.type", codec)) {
                p.send(new org.apache.kafka.clients.producer.ProducerRecord<>(topic, 0, null, Support.b("java-" + codec))).get();
            }
        }
        try (org.apache.kafka.clients.consumer.KafkaConsumer<byte[], byte[]> c = s.consumer("read_uncommitted")) {
            List<Object> values = new ArrayList<>();
            for (Map<String, Object> r : Support.readFromStart(c, tp, 3, 15_000)) values.add(r.get("v"));
            obs.put("values", values);
        }
    }

    /** topic.future_timestamps: records stamped an hour ahead and a minute ahead, and the bound described. */
    static void futureTimestamps(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("future-ts");
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, topic, 1);
            obs.put("after_max_ms", entry(describe(admin, new ConfigResource(ConfigResource.Type.TOPIC, topic))
                    .get("message.timestamp.after.max.ms")));
        }
        long now = System.currentTimeMillis();
        try (org.apache.kafka.clients.producer.KafkaProducer<byte[], byte[]> p = s.producer()) {
            for (Map.Entry<String, Long> e : Map.of("two_hours_ahead", now + 7_200_000L, "a_minute_ahead", now + 60_000L)
                    .entrySet()) {
                obs.put(e.getKey(), Support.failureOf(() -> p.send(new org.apache.kafka.clients.producer.ProducerRecord<>(
                        topic, 0, e.getValue(), null, Support.b(e.getKey()))).get(20, TimeUnit.SECONDS)));
            }
        }
    }

    /** topic.release_configs: a config Kafka 4.0 removed and a segment.bytes under 1 MiB, created and altered. */
    static void releaseConfigs(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("release-configs");
        ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        try (Admin admin = s.admin()) {
            obs.put("create_removed", createError(admin, s.name("removed"), Map.of("message.format.version", "3.0-IV1")));
            obs.put("create_small_segments", createError(admin, s.name("small"), Map.of("segment.bytes", "65536")));
            Support.createTopic(admin, topic, 1);
            obs.put("alter_removed", Support.failureOf(() -> alter(admin, res, List.of(new AlterConfigOp(
                    new ConfigEntry("message.downconversion.enable", "false"), AlterConfigOp.OpType.SET)))));
            obs.put("alter_small_segments", Support.failureOf(() -> alter(admin, res, List.of(new AlterConfigOp(
                    new ConfigEntry("segment.bytes", "65536"), AlterConfigOp.OpType.SET)))));
            List<String> names = new ArrayList<>();
            for (ConfigEntry e : describe(admin, res).entries()) names.add(e.name());
            obs.put("described", names);
        }
    }

    static void brokerConfigs(Support s, Map<String, Object> obs) throws Exception {
        try (Admin admin = s.admin()) {
            String id = String.valueOf(admin.describeCluster().nodes().get().iterator().next().id());
            ConfigResource res = new ConfigResource(ConfigResource.Type.BROKER, id);
            Config c = describe(admin, res);
            for (String name : List.of("listeners", "auto.create.topics.enable", "message.max.bytes", "ssl.keystore.password")) {
                obs.put(name, entry(c.get(name)));
            }
            alter(admin, res, List.of(new AlterConfigOp(new ConfigEntry("log.retention.ms", "86400000"), AlterConfigOp.OpType.SET)));
            Support.await(() -> "86400000".equals(valueOf(admin, res, "log.retention.ms")), 10_000);
            obs.put("set_log.retention.ms", entry(describe(admin, res).get("log.retention.ms")));
            alter(admin, res, List.of(new AlterConfigOp(new ConfigEntry("log.retention.ms", null), AlterConfigOp.OpType.DELETE)));
            Support.await(() -> valueOf(admin, res, "log.retention.ms") == null, 10_000);
            obs.put("deleted_log.retention.ms", entry(describe(admin, res).get("log.retention.ms")));
            Throwable readOnly = null;
            try {
                alter(admin, res, List.of(new AlterConfigOp(new ConfigEntry("auto.create.topics.enable", "false"), AlterConfigOp.OpType.SET)));
            } catch (ExecutionException e) {
                readOnly = e;
            }
            obs.put("read_only_error", Support.failure(readOnly));
            // the store settings change only per listener (DynamicBrokerConfig.validateConfigs)
            obs.put("unprefixed_keystore", Support.failureOf(() -> alter(admin, res, List.of(new AlterConfigOp(
                    new ConfigEntry("ssl.keystore.location", "/no/such.jks"), AlterConfigOp.OpType.SET)))));
            // BROKER_LOGGER: the root logger is described; set to its own level it stays; it cannot be
            // removed, and APPEND is no operation for loggers (ConfigAdminManager.validateLogLevelConfigs)
            ConfigResource loggers = new ConfigResource(ConfigResource.Type.BROKER_LOGGER, id);
            ConfigEntry root = describe(admin, loggers).get("root");
            obs.put("root_logger", root == null ? null : root.value());
            if (root != null) {
                obs.put("root_set_same", loggerError(admin, loggers, new AlterConfigOp(
                        new ConfigEntry("root", root.value()), AlterConfigOp.OpType.SET)));
                obs.put("root_delete", loggerError(admin, loggers, new AlterConfigOp(
                        new ConfigEntry("root", null), AlterConfigOp.OpType.DELETE)));
                obs.put("root_append", loggerError(admin, loggers, new AlterConfigOp(
                        new ConfigEntry("root", "INFO"), AlterConfigOp.OpType.APPEND)));
            }
        }
    }

    static Object loggerError(Admin admin, ConfigResource res, AlterConfigOp op) {
        try {
            alter(admin, res, List.of(op));
            return null;
        } catch (Exception e) {
            return Support.failure(e instanceof ExecutionException ? e.getCause() : e);
        }
    }

    private static Object createError(Admin admin, String topic, Map<String, String> configs) throws Exception {
        try {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1).configs(configs))).all().get(20, TimeUnit.SECONDS);
            return null;
        } catch (ExecutionException e) {
            return Support.failure(e);
        }
    }

    private static Config describe(Admin admin, ConfigResource res) throws Exception {
        DescribeConfigsOptions opts = new DescribeConfigsOptions().includeSynonyms(true).includeDocumentation(true);
        return admin.describeConfigs(List.of(res), opts).all().get(20, TimeUnit.SECONDS).get(res);
    }

    private static void alter(Admin admin, ConfigResource res, Collection<AlterConfigOp> ops) throws Exception {
        admin.incrementalAlterConfigs(Map.of(res, ops)).all().get(20, TimeUnit.SECONDS);
    }

    private static String valueOf(Admin admin, ConfigResource res, String name) {
        try {
            ConfigEntry e = describe(admin, res).get(name);
            return e == null ? null : e.value();
        } catch (Exception e) {
            return "unavailable";
        }
    }

    private static Map<String, Object> entry(ConfigEntry e) {
        if (e == null) return null;
        List<Object> synonyms = new ArrayList<>();
        for (ConfigEntry.ConfigSynonym syn : e.synonyms()) {
            synonyms.add(Support.map("name", syn.name(), "value", syn.value(), "source", syn.source().name()));
        }
        return Support.map("value", e.value(), "source", e.source().name(), "read_only", e.isReadOnly(),
                "sensitive", e.isSensitive(), "type", e.type().name(), "documented", e.documentation() != null,
                "synonyms", synonyms);
    }
}
