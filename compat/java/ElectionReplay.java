import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;

/**
 * PlaintextAdminIntegrationTest's election cases against a simulated three-broker kafka-shim whose
 * brokers the scenarios stop and start through its control plane (option {@code control}, as
 * {@link ControlDriver}): testElectPreferredLeaders' failover and return, and
 * testElectUncleanLeadersForOnePartition, ...ForManyPartitions, ...ForAllPartitions, ...WhenNoLiveBrokers,
 * ...Noop and ...AndNoop on their assignments (brokers 1 and 2; 1 and 0). compat/test_java_cluster_elections.py holds the expectations.
 */
final class ElectionReplay {
    private ElectionReplay() {
    }

    static void down(Support s, int node) throws Exception {
        ControlDriver.control(s, "node_down", "{\"node\": " + node + "}");
    }

    static void up(Support s, int node) throws Exception {
        ControlDriver.control(s, "node_up", "{\"node\": " + node + "}");
    }

    static TopicPartitionInfo info(Admin admin, TopicPartition tp) throws Exception {
        TopicDescription d = admin.describeTopics(List.of(tp.topic())).allTopicNames().get(20, TimeUnit.SECONDS).get(tp.topic());
        return d.partitions().get(tp.partition());
    }

    /** [leader or -1, ISR] as the Admin describes them. */
    static List<Object> state(Admin admin, TopicPartition tp) throws Exception {
        TopicPartitionInfo p = info(admin, tp);
        List<Integer> isr = new ArrayList<>();
        for (Node n : p.isr()) isr.add(n.id());
        isr.sort(null);
        return Arrays.asList(p.leader() == null ? -1 : p.leader().id(), isr);
    }

    /** The outcome of each partition's election: null, or the exception's simple name. */
    static List<Object> elect(Admin admin, ElectionType type, TopicPartition... tps) throws Exception {
        var result = admin.electLeaders(type, Set.of(tps)).partitions().get(20, TimeUnit.SECONDS);
        List<Object> out = new ArrayList<>();
        for (TopicPartition tp : tps) {
            out.add(result.get(tp).isPresent() ? result.get(tp).get().getClass().getSimpleName() : null);
        }
        return out;
    }

    static TopicPartition topic(Support s, Admin admin, String name, Map<Integer, List<Integer>> assignment) throws Exception {
        String topic = s.name(name);
        admin.createTopics(List.of(new NewTopic(topic, assignment))).all().get(20, TimeUnit.SECONDS);
        Support.awaitTopic(admin, topic, assignment.size());
        return new TopicPartition(topic, 0);
    }

    /** testElectPreferredLeaders' core: the preferred leader goes away, comes back, and is elected again. */
    static void preferred(Support s, Map<String, Object> obs) throws Exception {
        try (Admin admin = s.admin()) {
            TopicPartition tp = topic(s, admin, "elect-preferred", Map.of(0, List.of(1, 2)));
            List<Object> steps = new ArrayList<>();
            steps.add(state(admin, tp));
            steps.add(elect(admin, ElectionType.PREFERRED, tp));
            down(s, 1);
            steps.add(state(admin, tp));
            steps.add(elect(admin, ElectionType.PREFERRED, tp));
            up(s, 1);
            steps.add(state(admin, tp));
            steps.add(elect(admin, ElectionType.PREFERRED, tp));
            steps.add(state(admin, tp));
            obs.put("steps", steps);
        }
    }

    /** testElectUncleanLeadersForOnePartition then ...Noop, and ...WhenNoLiveBrokers and ...AndNoop. */
    static void unclean(Support s, Map<String, Object> obs) throws Exception {
        try (Admin admin = s.admin()) {
            TopicPartition p1 = topic(s, admin, "elect-unclean", Map.of(0, List.of(1, 2), 1, List.of(1, 0)));
            TopicPartition p2 = new TopicPartition(p1.topic(), 1);
            // testElectUncleanLeadersForManyPartitions: both partitions on brokers 1 and 2
            TopicPartition m0 = topic(s, admin, "elect-unclean-many", Map.of(0, List.of(1, 2), 1, List.of(1, 2)));
            TopicPartition m1 = new TopicPartition(m0.topic(), 1);
            // testElectUncleanLeadersForAllPartitions: as p1 and p2, elected with no partitions named
            TopicPartition a0 = topic(s, admin, "elect-unclean-all", Map.of(0, List.of(1, 2), 1, List.of(1, 0)));
            TopicPartition a1 = new TopicPartition(a0.topic(), 1);
            List<Object> steps = new ArrayList<>();
            steps.add(Arrays.asList(state(admin, p1), state(admin, p2)));
            down(s, 2);
            down(s, 1);
            steps.add(Arrays.asList(state(admin, p1), state(admin, p2)));
            steps.add(elect(admin, ElectionType.UNCLEAN, p1));  // no live replica of p1
            up(s, 2);
            steps.add(elect(admin, ElectionType.UNCLEAN, p1, p2));
            steps.add(Arrays.asList(state(admin, p1), state(admin, p2)));
            steps.add(elect(admin, ElectionType.UNCLEAN, m0, m1));
            steps.add(Arrays.asList(state(admin, m0), state(admin, m1)));
            var all = admin.electLeaders(ElectionType.UNCLEAN, null).partitions().get(20, TimeUnit.SECONDS);
            obs.put("all", Arrays.asList(all.containsKey(a0) ? all.get(a0).map(e -> e.getClass().getSimpleName()).orElse(null) : "absent",
                    all.containsKey(a1) ? "present" : "absent"));
            obs.put("all_state", Arrays.asList(state(admin, a0), state(admin, a1)));
            up(s, 1);
            steps.add(elect(admin, ElectionType.UNCLEAN, p1));
            steps.add(Arrays.asList(state(admin, p1), state(admin, p2)));
            obs.put("steps", steps);
        }
    }

    /**
     * ProducerFailureHandlingTest on two of the brokers: testPartitionTooLargeForReplicationWithAckAll /
     * testResponseTooLargeForReplicationWithAckAll (a record near max.message.bytes, acks=all,
     * min.insync.replicas=2: written) and testNotEnoughReplicasAfterBrokerShutdown (a replica down:
     * NotEnoughReplicasException, or ...AfterAppend, or a timeout; the broker back: written again).
     */
    static void notEnoughReplicas(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("min-isr-2");
        int maxMessage = 20_000;
        try (Admin admin = s.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, Map.of(0, List.of(0, 1))).configs(Map.of(
                    "min.insync.replicas", "2", "max.message.bytes", String.valueOf(maxMessage)))))
                    .all().get(20, TimeUnit.SECONDS);
            Support.awaitTopic(admin, topic, 1);
        }
        try (org.apache.kafka.clients.producer.KafkaProducer<byte[], byte[]> p = s.producer("acks", "-1", "retries", "0",
                "enable.idempotence", "false", "request.timeout.ms", "30000", "delivery.timeout.ms", "60000")) {
            byte[] value = new byte[maxMessage - 61 - 21];  // RECORD_BATCH_OVERHEAD, DefaultRecord.MAX_RECORD_OVERHEAD
            obs.put("large_acks_all", Support.failureOf(() -> p.send(new org.apache.kafka.clients.producer.ProducerRecord<>(
                    topic, null, value)).get(20, TimeUnit.SECONDS)));
            var record = Support.rec(topic, 0, "key", "value");
            obs.put("all_up", Support.failureOf(() -> p.send(record).get(20, TimeUnit.SECONDS)));
            down(s, 1);
            obs.put("replica_down", Support.failureOf(() -> p.send(record).get(40, TimeUnit.SECONDS)));
            up(s, 1);
            obs.put("replica_back", Support.failureOf(() -> p.send(record).get(20, TimeUnit.SECONDS)));
        }
    }
}
