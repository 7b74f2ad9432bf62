import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.AppInfoParser;

/**
 * Shared by the drivers: client factories, record capture, and the runner that executes named
 * scenarios (in parallel, each with its own topics and clients) and prints one JSON object.
 *
 * Command line of every driver: {@code <scenario[,scenario...]|all> <bootstrap> [key=value...]}
 * with keys {@code prefix} (topic and transactional.id prefix, default "compat"), {@code parallel}
 * (threads, default 4) and {@code timeout_s} (per scenario, default 60); {@code client.<property>} is
 * given to every client as {@code <property>} (security settings); any other key is for the
 * scenarios ({@link #option}).
 * Output (stdout, last line): {@code {"driver":..., "kafka_clients":..., "results": {name:
 * {"ok": bool, "elapsed_ms": n, "observed": {...}, "error": "...", "trace": "..."}}}}.
 */
final class Support {
    /** One scenario: records what it observes into {@code obs}; throws if it cannot go on. */
    interface Scenario {
        void run(Support s, Map<String, Object> obs) throws Exception;
    }

    /** A step whose failure a scenario records ({@link #failureOf}). */
    interface Step {
        void run() throws Exception;
    }

    /** A condition a scenario waits for ({@link #eventually}); an exception means not yet. */
    interface Check {
        boolean holds() throws Exception;
    }

    final String bootstrap;
    final String prefix;
    final Map<String, String> options;

    Support(String bootstrap, String prefix, Map<String, String> options) {
        this.bootstrap = bootstrap;
        this.prefix = prefix;
        this.options = options;
    }

    String name(String suffix) {
        return prefix + "-" + suffix;
    }

    /** A {@code key=value} of the command line, or {@code fallback}. */
    String option(String key, String fallback) {
        return options.getOrDefault(key, fallback);
    }

    // ---------------------------------------------------------------- clients

    Properties common(String... kv) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("request.timeout.ms", "15000");
        p.put("retry.backoff.ms", "50");
        // command-line options "client.<property>=<value>" go to every client unchanged, e.g. a
        // production security setup: client.security.protocol=SASL_SSL, client.sasl.jaas.config=...
        for (Map.Entry<String, String> e : options.entrySet()) {
            if (e.getKey().startsWith("client.")) p.put(e.getKey().substring("client.".length()), e.getValue());
        }
        for (int i = 0; i + 1 < kv.length; i += 2) p.put(kv[i], kv[i + 1]);
        return p;
    }

    /** A producer with the Java defaults (idempotent, acks=all) plus {@code kv}. */
    KafkaProducer<byte[], byte[]> producer(String... kv) {
        Properties p = common("max.block.ms", "20000", "delivery.timeout.ms", "30000", "linger.ms", "5");
        for (int i = 0; i + 1 < kv.length; i += 2) p.put(kv[i], kv[i + 1]);
        return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
    }

    KafkaProducer<byte[], byte[]> txnProducer(String transactionalId, String... kv) {
        String[] all = new String[kv.length + 2];
        all[0] = "transactional.id";
        all[1] = transactionalId;
        System.arraycopy(kv, 0, all, 2, kv.length);
        KafkaProducer<byte[], byte[]> p = producer(all);
        p.initTransactions();
        return p;
    }

    /** An assign-mode consumer without a group unless {@code kv} sets group.id. */
    KafkaConsumer<byte[], byte[]> consumer(String isolation, String... kv) {
        Properties p = common("isolation.level", isolation, "enable.auto.commit", "false",
                "auto.offset.reset", "earliest", "default.api.timeout.ms", "20000");
        for (int i = 0; i + 1 < kv.length; i += 2) p.put(kv[i], kv[i + 1]);
        return new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    Admin admin() {
        return Admin.create(common("default.api.timeout.ms", "20000"));
    }

    /** {@link #createTopic(Admin, String, int)} with an Admin of its own. */
    void createTopic(String topic, int partitions) throws Exception {
        try (Admin admin = admin()) {
            createTopic(admin, topic, partitions);
        }
    }

    static void createTopic(Admin admin, String topic, int partitions) throws Exception {
        admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get(20, TimeUnit.SECONDS);
        awaitTopic(admin, topic, partitions);
    }

    /**
     * Until the broker describes the topic with a leader for each partition: Kafka answers
     * CreateTopics once the controller has committed the topic, and the broker's metadata
     * catches up a moment later (until then Metadata says UNKNOWN_TOPIC_OR_PARTITION).
     */
    static void awaitTopic(Admin admin, String topic, int partitions) throws Exception {
        boolean known = eventually(() -> {
            TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames()
                    .get(5, TimeUnit.SECONDS).get(topic);
            return d.partitions().size() == partitions
                    && d.partitions().stream().allMatch(p -> p.leader() != null);
        }, 20_000);
        if (!known) throw new TimeoutException("topic " + topic + " not described with leaders after 20 s");
    }

    /** Until ListOffsets latest (read_uncommitted: the high watermark) of {@code tp} is {@code offset}. */
    static void awaitEnd(Admin admin, TopicPartition tp, long offset) throws Exception {
        boolean reached = eventually(
                () -> listOffset(admin, tp, OffsetSpec.latest(), IsolationLevel.READ_UNCOMMITTED) == offset, 20_000);
        if (!reached) throw new TimeoutException(tp + " did not reach end offset " + offset + " in 20 s");
    }

    static long listOffset(Admin admin, TopicPartition tp, OffsetSpec spec, IsolationLevel iso) throws Exception {
        return admin.listOffsets(Map.of(tp, spec), new ListOffsetsOptions(iso))
                .partitionResult(tp).get(20, TimeUnit.SECONDS).offset();
    }

    // ---------------------------------------------------------------- records

    static byte[] b(String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }

    static ProducerRecord<byte[], byte[]> rec(String topic, int partition, String key, String value) {
        return new ProducerRecord<>(topic, partition, b(key), b(value));
    }

    static Map<String, Object> record(ConsumerRecord<byte[], byte[]> r) {
        List<Object> headers = new ArrayList<>();
        for (Header h : r.headers()) headers.add(java.util.Arrays.asList(h.key(), h.value()));
        return map("p", r.partition(), "o", r.offset(), "k", r.key(), "v", r.value(),
                "ts", r.timestamp(), "tt", r.timestampType().name, "h", headers);
    }

    /**
     * Reads {@code tp} from the beginning until the consumer's position reaches {@code until}
     * (past markers and aborted batches too) or {@code timeoutMs} passes; returns the records.
     */
    static List<Map<String, Object>> readFromStart(KafkaConsumer<byte[], byte[]> c, TopicPartition tp,
                                                   long until, long timeoutMs) {
        c.assign(List.of(tp));
        c.seekToBeginning(List.of(tp));
        return readOn(c, tp, until, timeoutMs);
    }

    /**
     * A new {@code isolation} consumer reads {@code tp} from the beginning as {@link #readFromStart}
     * does: the records go to {@code obs} under {@code key}, its position after under {@code key_position}.
     */
    void readFromStartInto(Map<String, Object> obs, String key, String isolation, TopicPartition tp,
                           long until, long timeoutMs) {
        try (KafkaConsumer<byte[], byte[]> c = consumer(isolation)) {
            obs.put(key, readFromStart(c, tp, until, timeoutMs));
            obs.put(key + "_position", c.position(tp));
        }
    }

    static List<Map<String, Object>> readOn(KafkaConsumer<byte[], byte[]> c, TopicPartition tp,
                                            long until, long timeoutMs) {
        List<Map<String, Object>> out = new ArrayList<>();
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (c.position(tp) < until && System.currentTimeMillis() < deadline) {
            ConsumerRecords<byte[], byte[]> rs = c.poll(Duration.ofMillis(200));
            for (ConsumerRecord<byte[], byte[]> r : rs.records(tp)) out.add(record(r));
        }
        return out;
    }

    /** Polls for {@code ms} whatever happens; returns the records. */
    static List<Map<String, Object>> pollFor(KafkaConsumer<byte[], byte[]> c, TopicPartition tp, long ms) {
        List<Map<String, Object>> out = new ArrayList<>();
        long deadline = System.currentTimeMillis() + ms;
        while (System.currentTimeMillis() < deadline) {
            for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(100)).records(tp)) out.add(record(r));
        }
        return out;
    }

    /**
     * Polls the members until their assignments split {@code every} with these sizes, in any order;
     * with {@code noRecords}, a record polled meanwhile fails the scenario.
     */
    static List<Set<TopicPartition>> settleAnyOrder(List<KafkaConsumer<byte[], byte[]>> members, List<Integer> sizes,
                                                    Set<TopicPartition> every, boolean noRecords) {
        List<Integer> want = new ArrayList<>(sizes);
        Collections.sort(want);
        long deadline = System.currentTimeMillis() + 60_000;
        while (System.currentTimeMillis() < deadline) {
            List<Set<TopicPartition>> owned = new ArrayList<>();
            Set<TopicPartition> union = new HashSet<>();
            List<Integer> got = new ArrayList<>();
            int total = 0;
            for (KafkaConsumer<byte[], byte[]> c : members) {
                if (!c.poll(Duration.ofMillis(100)).isEmpty() && noRecords) {
                    throw new IllegalStateException("records while settling");
                }
                Set<TopicPartition> a = new HashSet<>(c.assignment());
                owned.add(a);
                union.addAll(a);
                got.add(a.size());
                total += a.size();
            }
            Collections.sort(got);
            if (total == every.size() && union.equals(every) && got.equals(want)) return owned;
        }
        throw new IllegalStateException("assignments never reached sizes " + sizes);
    }

    /**
     * Subscribes {@code c} to {@code topic} and polls until {@code stop}, counting down {@code ready}
     * once it has an assignment, committing after each poll with {@code commit}; does not close it.
     */
    static void pollUntilStopped(KafkaConsumer<byte[], byte[]> c, String topic, AtomicBoolean stop, CountDownLatch ready,
                                 boolean commit) {
        c.subscribe(List.of(topic));
        boolean counted = false;
        while (!stop.get()) {
            c.poll(Duration.ofMillis(100));
            if (!counted && !c.assignment().isEmpty()) {
                counted = true;
                ready.countDown();
            }
            if (commit) c.commitSync();
        }
    }

    // ---------------------------------------------------------------- misc

    static Map<String, Object> map(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i + 1 < kv.length; i += 2) m.put((String) kv[i], kv[i + 1]);
        return m;
    }

    /** The class names of an exception and its causes, outermost first. */
    static List<String> chain(Throwable t) {
        List<String> out = new ArrayList<>();
        for (Throwable x = t; x != null && out.size() < 8; x = x.getCause()) out.add(x.getClass().getName());
        return out;
    }

    static Map<String, Object> failure(Throwable t) {
        return t == null ? null : map("chain", chain(t), "message", String.valueOf(t.getMessage()));
    }

    /** Runs {@code step}: null when it succeeded, else its failure ({@link #failure}). */
    static Map<String, Object> failureOf(Step step) {
        try {
            step.run();
            return null;
        } catch (Exception e) {
            return failure(e);
        }
    }

    /** The outcome of one Admin future: null when it succeeded, else the failure it completed with. */
    static Object outcome(KafkaFuture<?> f) {
        try {
            f.get(20, TimeUnit.SECONDS);
            return null;
        } catch (ExecutionException e) {
            return failure(e.getCause());
        } catch (Exception e) {
            return failure(e);
        }
    }

    /** Waits until {@code cond} holds; false if it did not within {@code timeoutMs}. */
    static boolean await(BooleanSupplier cond, long timeoutMs) throws InterruptedException {
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (System.currentTimeMillis() < deadline) {
            if (cond.getAsBoolean()) return true;
            Thread.sleep(100);
        }
        return cond.getAsBoolean();
    }

    /** As {@link #await}, with a condition that may throw: an exception counts as not yet. */
    static boolean eventually(Check cond, long timeoutMs) throws InterruptedException {
        return await(() -> {
            try {
                return cond.holds();
            } catch (Exception e) {
                return false;
            }
        }, timeoutMs);
    }

    static String trace(Throwable t) {
        StringWriter w = new StringWriter();
        t.printStackTrace(new PrintWriter(w));
        String s = w.toString();
        return s.length() > 4000 ? s.substring(0, 4000) : s;
    }

    // ---------------------------------------------------------------- runner

    static void main(String driver, Map<String, Scenario> scenarios, String[] args) {
        if (args.length < 2) {
            System.err.println("usage: " + driver + " <scenario[,scenario...]|all|list> <bootstrap> [key=value...]");
            System.err.println("scenarios: " + String.join(" ", scenarios.keySet()));
            System.exit(2);
        }
        Map<String, String> opts = new LinkedHashMap<>();
        for (int i = 2; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            opts.put(kv[0], kv.length > 1 ? kv[1] : "");
        }
        List<String> names = new ArrayList<>();
        if (args[0].equals("all")) names.addAll(scenarios.keySet());
        else for (String n : args[0].split(",")) if (!n.isBlank()) names.add(n.trim());
        Set<String> unknown = new java.util.TreeSet<>(names);
        unknown.removeAll(scenarios.keySet());
        if (!unknown.isEmpty()) {
            System.err.println("unknown scenarios: " + unknown);
            System.exit(2);
        }
        Support s = new Support(args[1], opts.getOrDefault("prefix", "compat"), opts);
        int parallel = Integer.parseInt(opts.getOrDefault("parallel", "4"));
        long timeoutS = Long.parseLong(opts.getOrDefault("timeout_s", "60"));

        ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, parallel), r -> {
            Thread t = new Thread(r);
            t.setDaemon(true);
            return t;
        });
        Map<String, Map<String, Object>> observed = new LinkedHashMap<>();
        Map<String, Future<Throwable>> futures = new LinkedHashMap<>();
        Map<String, long[]> times = new java.util.concurrent.ConcurrentHashMap<>();
        for (String n : names) {
            Map<String, Object> obs = java.util.Collections.synchronizedMap(new LinkedHashMap<>());
            observed.put(n, obs);
            futures.put(n, pool.submit(() -> {
                long t0 = System.currentTimeMillis();
                times.put(n, new long[] {t0, -1});
                try {
                    scenarios.get(n).run(s, obs);
                    return null;
                } catch (Throwable t) {
                    return t;
                } finally {
                    times.get(n)[1] = System.currentTimeMillis() - t0;
                }
            }));
        }
        Map<String, Object> results = new LinkedHashMap<>();
        long deadline = System.currentTimeMillis() + timeoutS * 1000L * Math.max(1, (names.size() + parallel - 1) / Math.max(1, parallel));
        for (String n : names) {
            Map<String, Object> r = new LinkedHashMap<>();
            Throwable err;
            try {
                long left = Math.max(1, deadline - System.currentTimeMillis());
                err = futures.get(n).get(left, TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                err = new TimeoutException("scenario " + n + " did not finish within the driver's deadline");
            } catch (Exception e) {
                err = e;
            }
            r.put("ok", err == null);
            long[] t = times.get(n);
            r.put("elapsed_ms", t == null ? -1 : t[1]);
            synchronized (observed.get(n)) {
                r.put("observed", new LinkedHashMap<>(observed.get(n)));
            }
            if (err != null) {
                r.put("error", chain(err) + ": " + err.getMessage());
                r.put("trace", trace(err));
            }
            results.put(n, r);
        }
        Map<String, Object> out = map("driver", driver, "kafka_clients", AppInfoParser.getVersion(),
                "bootstrap", s.bootstrap, "results", results);
        System.out.println(Json.write(out));
        System.out.flush();
        System.exit(0);
    }
}
