import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;

/**
 * Scenarios of the Java clients under faults armed through kafka-shim's control plane, which the
 * scenario drives itself over HTTP (option {@code control}: the broker's control URL). Each records
 * what it observes; compat/test_control_java.py holds the expectations.
 */
public final class ControlDriver {
    static final String RC = "read_committed";

    public static void main(String[] args) {
        Map<String, Support.Scenario> all = new LinkedHashMap<>();
        all.put("control.txn_coordinator_failing", ControlDriver::txnCoordinatorFailing);
        all.put("control.markers_held", ControlDriver::markersHeld);
        all.put("control.lost_commit", ControlDriver::lostCommit);
        all.put("control.txn_expires", ControlDriver::txnExpires);
        all.put("control.group_coordinator_errors", ControlDriver::groupCoordinatorErrors);
        all.put("control.offsets_expire", ControlDriver::offsetsExpire);
        all.put("control.commit_below_min_isr", ControlDriver::commitBelowMinIsr);
        Support.main("ControlDriver", all, args);
    }

    // ------------------------------------------------------------------ the control plane

    static final HttpClient HTTP = HttpClient.newHttpClient();

    /** POST /v1/ops/{op} with a JSON body; the answer's body, or an exception on a non-200 status. */
    static String control(Support s, String op, String json) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(s.option("control", "") + "/v1/ops/" + op))
                .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)).build();
        HttpResponse<String> response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) throw new IllegalStateException(op + ": " + response.body());
        return response.body();
    }

    static long field(String json, String name) {
        Matcher m = Pattern.compile("\"" + name + "\": (\\d+)").matcher(json);
        if (!m.find()) throw new IllegalStateException("no " + name + " in " + json);
        return Long.parseLong(m.group(1));
    }

    /** Waits until rule {@code rule} acted {@code fired} times; how many it had then. */
    static long waitFired(Support s, long rule, int fired) throws Exception {
        return field(control(s, "wait", "{\"rule\": " + rule + ", \"fired\": " + fired + "}"), "fired");
    }

    // ------------------------------------------------------------------ scenarios

    /** A transaction over two partitions whose coordinator fails twice as partition 1 is added and once at EndTxn. */
    static void txnCoordinatorFailing(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("control-txn-coord");
        String error = s.option("error", "NOT_COORDINATOR");
        s.createTopic(topic, 2);
        try (KafkaProducer<byte[], byte[]> t = s.txnProducer(s.name("control-txn-coord-T"))) {
            t.beginTransaction();
            obs.put("offset_0", t.send(Support.rec(topic, 0, null, "one")).get().offset());
            long mid = field(control(s, "fail_coordinator",
                    "{\"coordinator\": \"transaction\", \"error\": \"" + error + "\", \"count\": 2}"), "rule");
            obs.put("offset_1", t.send(Support.rec(topic, 1, null, "two")).get().offset());
            obs.put("mid_fired", waitFired(s, mid, 2));
            long end = field(control(s, "fail_coordinator",
                    "{\"coordinator\": \"transaction\", \"error\": \"" + error + "\", \"count\": 1}"), "rule");
            t.commitTransaction();
            obs.put("end_fired", waitFired(s, end, 1));
        }
        for (int p = 0; p < 2; p++) {
            try (KafkaConsumer<byte[], byte[]> c = s.consumer(RC)) {
                obs.put("rc_" + p, Support.readFromStart(c, new TopicPartition(topic, p), 2, 15_000));
                obs.put("rc_position_" + p, c.position(new TopicPartition(topic, p)));
            }
        }
    }

    /** The EndTxn of a commit is applied and its response lost: the producer retries and goes on. */
    static void lostCommit(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("control-lost-commit");
        TopicPartition tp = new TopicPartition(topic, 0);
        s.createTopic(topic, 1);
        try (KafkaProducer<byte[], byte[]> t = s.txnProducer(s.name("control-lost-commit-T"))) {
            t.beginTransaction();
            obs.put("offset_once", t.send(Support.rec(topic, 0, null, "once")).get().offset());
            long rule = field(control(s, "close", "{\"api\": \"EndTxn\", \"when\": \"after\"}"), "rule");
            t.commitTransaction();
            obs.put("fired", waitFired(s, rule, 1));
            t.beginTransaction();
            obs.put("offset_next", t.send(Support.rec(topic, 0, null, "next")).get().offset());
            t.commitTransaction();
        }
        try (KafkaConsumer<byte[], byte[]> c = s.consumer(RC)) {
            obs.put("rc", Support.readFromStart(c, tp, 4, 15_000));
        }
    }

    /** Markers held after the commit is answered: read_committed stays at the LSO until they are released. */
    static void markersHeld(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("control-held");
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, topic, 1);
            control(s, "hold_markers", "{}");
            try (KafkaProducer<byte[], byte[]> t = s.txnProducer(s.name("control-held-T"))) {
                t.beginTransaction();
                t.send(Support.rec(topic, 0, null, "a")).get();
                t.send(Support.rec(topic, 0, null, "b")).get();
                t.commitTransaction();  // answered; the markers wait
                try (KafkaConsumer<byte[], byte[]> c = s.consumer(RC, "fetch.max.wait.ms", "100")) {
                    c.assign(List.of(tp));
                    c.seekToBeginning(List.of(tp));
                    List<Object> held = new ArrayList<>();
                    for (int i = 0; i < 5; i++) {  // five fetch round trips while held
                        for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) held.add(Support.record(r));
                    }
                    obs.put("held_records", held);
                    obs.put("held_position", c.position(tp));
                    obs.put("held_lso", Support.listOffset(admin, tp, OffsetSpec.latest(), IsolationLevel.READ_COMMITTED));
                    obs.put("held_hw", Support.listOffset(admin, tp, OffsetSpec.latest(), IsolationLevel.READ_UNCOMMITTED));
                    obs.put("released", control(s, "release_markers", "{}"));
                    obs.put("after_records", Support.readOn(c, tp, 3, 15_000));
                    obs.put("after_position", c.position(tp));
                }
            }
        }
    }

    /** An open transaction the clock advance expires: the commit fails, nothing is visible. */
    static void txnExpires(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("control-expire");
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, topic, 1);
            try (KafkaProducer<byte[], byte[]> t = s.txnProducer(s.name("control-expire-T"),
                    "transaction.timeout.ms", "600000")) {
                t.beginTransaction();
                t.send(Support.rec(topic, 0, null, "x")).get();
                obs.put("advanced", control(s, "advance_clock", "{\"ms\": 600001, \"clock\": \"transactions\"}"));
                obs.put("lso_after", Support.listOffset(admin, tp, OffsetSpec.latest(), IsolationLevel.READ_COMMITTED));
                obs.put("commit_error", Support.failureOf(() -> t.commitTransaction()));
            }
        }
        s.readFromStartInto(obs, "rc", RC, tp, 2, 15_000);
    }

    /** A subscribed consumer whose coordinator fails (heartbeats, commits) keeps consuming and committing. */
    static void groupCoordinatorErrors(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("control-group");
        String error = s.option("error", "NOT_COORDINATOR");
        s.createTopic(topic, 1);
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaProducer<byte[], byte[]> p = s.producer();
             KafkaConsumer<byte[], byte[]> c = s.consumer("read_uncommitted", "group.id", s.name("control-group-G"),
                     "heartbeat.interval.ms", "200", "session.timeout.ms", "10000")) {
            c.subscribe(List.of(topic));
            for (int i = 0; i < 10; i++) p.send(Support.rec(topic, 0, null, "a" + i)).get();
            List<Object> got = new ArrayList<>(pollUntil(c, 10));
            c.commitSync();
            long rule = field(control(s, "fail_coordinator",
                    "{\"coordinator\": \"group\", \"error\": \"" + error + "\", \"count\": 2}"), "rule");
            for (int i = 0; i < 10; i++) p.send(Support.rec(topic, 0, null, "b" + i)).get();
            got.addAll(pollUntil(c, 10));
            c.commitSync(Duration.ofSeconds(30));  // meets the failing coordinator, or heartbeats did
            obs.put("fired", waitFired(s, rule, 2));
            c.commitSync(Duration.ofSeconds(30));
            OffsetAndMetadata committed = c.committed(java.util.Set.of(tp)).get(tp);
            obs.put("committed", committed == null ? -1 : committed.offset());
            obs.put("records", got.size());
        }
    }

    /**
     * Offset expiration (broker with offsets.retention.minutes=1): a group that stays subscribed, one
     * whose member commits and leaves, and one committing with manual assignment; then the clock moves
     * a minute on. Its members' sessions (120 s) outlast the advance.
     */
    static void offsetsExpire(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("control-offsets-expire");
        String kept = s.name("expire-kept"), gone = s.name("expire-gone"), solo = s.name("expire-solo");
        TopicPartition tp = new TopicPartition(topic, 0);
        obs.put("groups", Map.of("kept", kept, "gone", gone, "solo", solo));
        try (Admin admin = s.admin(); KafkaProducer<byte[], byte[]> p = s.producer();
             KafkaConsumer<byte[], byte[]> stays = s.consumer("read_uncommitted", "group.id", kept,
                     "session.timeout.ms", "120000", "heartbeat.interval.ms", "1000")) {
            Support.createTopic(admin, topic, 1);
            for (int i = 0; i < 3; i++) p.send(Support.rec(topic, 0, null, "r" + i)).get();
            stays.subscribe(List.of(topic));
            pollUntil(stays, 3);
            stays.commitSync();
            try (KafkaConsumer<byte[], byte[]> leaves = s.consumer("read_uncommitted", "group.id", gone)) {
                leaves.subscribe(List.of(topic));
                pollUntil(leaves, 3);
                leaves.commitSync();
            }  // close: LeaveGroup, the group is Empty
            try (KafkaConsumer<byte[], byte[]> manual = s.consumer("read_uncommitted", "group.id", solo)) {
                manual.assign(List.of(tp));
                manual.commitSync(Map.of(tp, new OffsetAndMetadata(2)));
            }
            obs.put("gone_state_before", groupState(admin, gone));
            obs.put("listed_before", listed(admin));
            obs.put("advanced", control(s, "advance_clock", "{\"ms\": 61000, \"clock\": \"groups\"}"));
            for (String g : List.of(kept, gone, solo)) {
                String key = g.equals(kept) ? "kept" : g.equals(gone) ? "gone" : "solo";
                Map<TopicPartition, OffsetAndMetadata> offsets =
                        admin.listConsumerGroupOffsets(g).partitionsToOffsetAndMetadata().get();
                obs.put(key + "_offsets", offsets.values().stream().map(o -> o == null ? -1 : o.offset()).toList());
                obs.put(key + "_state", groupState(admin, g));
            }
            obs.put("listed_after", listed(admin));
            OffsetAndMetadata committed = stays.committed(java.util.Set.of(tp)).get(tp);
            obs.put("kept_committed", committed == null ? -1 : committed.offset());
        }
        try (KafkaConsumer<byte[], byte[]> again = s.consumer("read_uncommitted", "group.id", gone)) {
            OffsetAndMetadata committed = again.committed(java.util.Set.of(tp)).get(tp);
            obs.put("gone_committed", committed == null ? -1 : committed.offset());
        }
    }

    /**
     * A three-broker kafka-shim with min.insync.replicas=2: the followers of the group's
     * __consumer_offsets partition go down (its leader, the coordinator, stays), so the coordinator's
     * acks=all append is refused and commits are answered COORDINATOR_NOT_AVAILABLE: commitAsync's
     * callback gets it as a RetriableCommitFailedException and commitSync retries it until its
     * timeout. With the followers back the same commit succeeds.
     */
    static void commitBelowMinIsr(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("control-min-isr"), group = s.name("control-min-isr-G");
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Admin admin = s.admin();
             KafkaConsumer<byte[], byte[]> c = s.consumer("read_uncommitted", "group.id", group)) {
            Support.createTopic(admin, topic, 1);
            c.assign(List.of(tp));
            c.commitSync(Map.of(tp, new OffsetAndMetadata(5)));
            org.apache.kafka.clients.admin.TopicDescription offsets = admin.describeTopics(List.of("__consumer_offsets"))
                    .allTopicNames().get().get("__consumer_offsets");
            int hash = group.hashCode();  // Kafka: Utils.abs(groupId.hashCode()) % partitions
            int partition = (hash == Integer.MIN_VALUE ? 0 : Math.abs(hash)) % offsets.partitions().size();
            org.apache.kafka.common.TopicPartitionInfo info = offsets.partitions().get(partition);
            List<Integer> followers = info.replicas().stream().map(n -> n.id())
                    .filter(id -> id != info.leader().id()).toList();
            obs.put("followers", followers.size());
            for (int id : followers) control(s, "node_down", "{\"node\": " + id + "}");
            List<Object> callback = new ArrayList<>();
            c.commitAsync(Map.of(tp, new OffsetAndMetadata(9)), (o, e) -> callback.add(e == null ? "none"
                    : e.getClass().getName() + (e.getCause() == null ? "" : " / " + e.getCause().getClass().getName())));
            long deadline = System.currentTimeMillis() + 30_000;
            while (callback.isEmpty() && System.currentTimeMillis() < deadline) c.poll(Duration.ofMillis(100));
            obs.put("async_error", callback.isEmpty() ? "no callback" : callback.get(0));
            obs.put("sync_error", Support.failureOf(() -> c.commitSync(Map.of(tp, new OffsetAndMetadata(9)),
                    Duration.ofSeconds(2))));
            obs.put("committed_below", c.committed(java.util.Set.of(tp)).get(tp).offset());
            for (int id : followers) control(s, "node_up", "{\"node\": " + id + "}");
            c.commitSync(Map.of(tp, new OffsetAndMetadata(9)), Duration.ofSeconds(30));
            obs.put("committed_after", c.committed(java.util.Set.of(tp)).get(tp).offset());
        }
    }

    @SuppressWarnings("deprecation")  // state(): 3.9 has no groupState()
    static String groupState(Admin admin, String group) throws Exception {
        return admin.describeConsumerGroups(List.of(group)).describedGroups().get(group).get().state().toString();
    }

    static List<String> listed(Admin admin) throws Exception {
        return admin.listConsumerGroups().all().get().stream().map(g -> g.groupId()).sorted().toList();
    }

    static List<Object> pollUntil(KafkaConsumer<byte[], byte[]> c, int n) {
        List<Object> got = new ArrayList<>();
        long deadline = System.currentTimeMillis() + 60_000;
        while (got.size() < n && System.currentTimeMillis() < deadline) {
            for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(100))) got.add(Support.record(r));
        }
        return got;
    }
}
