import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeProducersOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * What the followers of a simulated three-broker kafka-shim answer, with the stock Java Admin:
 * describeProducers sent to one broker (DescribeProducersOptions.brokerId), which a Kafka follower
 * answers from its own log (ReplicaManager.activeProducerState), a broker without a replica with
 * NOT_LEADER_OR_FOLLOWER. A follower is slowed through the control plane (option {@code control},
 * as {@link ControlDriver}) to show that it answers from what it has fetched.
 * compat/test_java_cluster_followers.py holds the expectations.
 */
final class FollowerReplay {
    private FollowerReplay() {
    }

    /** [producer id, last sequence] of each active producer as {@code broker} (or the leader, -1) describes them. */
    static List<Object> producers(Admin admin, TopicPartition tp, int broker) throws Exception {
        DescribeProducersOptions options = broker < 0 ? new DescribeProducersOptions() : new DescribeProducersOptions().brokerId(broker);
        List<Object> out = new ArrayList<>();
        for (ProducerState p : admin.describeProducers(List.of(tp), options).partitionResult(tp)
                .get(20, TimeUnit.SECONDS).activeProducers()) {
            out.add(List.of(p.producerId(), p.lastSequence()));
        }
        return out;
    }

    static int lastSequence(Admin admin, TopicPartition tp, int broker) {
        try {
            List<Object> all = producers(admin, tp, broker);
            return all.size() == 1 ? (Integer) ((List<?>) all.get(0)).get(1) : -2;
        } catch (Exception e) {
            return -2;
        }
    }

    /** An idempotent producer's three records on brokers 0 (leader) and 1; broker 1 slowed, a fourth. */
    static void describeProducers(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("follower-producers");
        TopicPartition tp = new TopicPartition(topic, 0);
        String follower = "{\"topic\": \"" + topic + "\", \"partition\": 0, \"node\": 1}";
        try (Admin admin = s.admin();
             KafkaProducer<byte[], byte[]> p = s.producer("acks", "all", "enable.idempotence", "true")) {
            admin.createTopics(List.of(new NewTopic(topic, Map.of(0, List.of(0, 1))))).all().get(20, TimeUnit.SECONDS);
            Support.awaitTopic(admin, topic, 1);
            for (int i = 0; i < 3; i++) p.send(Support.rec(topic, 0, "k", "v" + i)).get(20, TimeUnit.SECONDS);
            obs.put("leader", producers(admin, tp, -1));
            obs.put("follower", producers(admin, tp, 1));
            obs.put("no_replica", Support.outcome(admin.describeProducers(List.of(tp),
                    new DescribeProducersOptions().brokerId(2)).partitionResult(tp)));
            ControlDriver.control(s, "slow_follower", follower);
            // acks=all: answered once the follower fetches again; the leader has appended it before
            Future<RecordMetadata> pending = p.send(Support.rec(topic, 0, "k", "v3"));
            obs.put("appended", Support.await(() -> lastSequence(admin, tp, 0) == 3, 20_000));
            obs.put("slowed_follower", producers(admin, tp, 1));
            ControlDriver.control(s, "unslow_follower", follower);
            obs.put("pending", Support.failureOf(() -> pending.get(20, TimeUnit.SECONDS)));
            obs.put("caught_up_follower", producers(admin, tp, 1));
        }
    }
}
