import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.AlterPartitionReassignmentsOptions;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ListTransactionsOptions;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;

/**
 * Admin calls kafka-clients 3.9 does not have (compiled for {@code client="4"} only), against a
 * kafka-shim whose control plane (option {@code control}) the scenario drives. Each scenario only
 * observes; compat/test_java_reference.py holds the expectations.
 */
public final class Admin4Driver {
    public static void main(String[] args) {
        Map<String, Support.Scenario> all = new LinkedHashMap<>();
        all.put("admin.describe_cluster_fenced", Admin4Driver::describeClusterFenced);
        all.put("admin.describe_member_protocols", Admin4Driver::describeMemberProtocols);
        all.put("admin.list_transactions_pattern", Admin4Driver::listTransactionsPattern);
        all.put("admin.reassign_keeping_replication_factor", Admin4Driver::reassignKeepingReplicationFactor);
        Support.main("Admin4Driver", all, args);
    }

    /** describeCluster with and without includeFencedBrokers (KIP-1073) while broker {@code node} is down. */
    static void describeClusterFenced(Support s, Map<String, Object> obs) throws Exception {
        int down = Integer.parseInt(s.option("node", "2"));
        try (Admin admin = s.admin()) {
            obs.put("before", nodes(admin, false));
            ControlDriver.control(s, "node_down", "{\"node\": " + down + "}");
            obs.put("down", nodes(admin, false));
            obs.put("down_with_fenced", nodes(admin, true));
            ControlDriver.control(s, "node_up", "{\"node\": " + down + "}");
        }
    }

    /**
     * describeConsumerGroups of group {@code group}: its type and, per member id, whether the member
     * speaks the consumer protocol ({@code MemberDescription.upgraded()}, KIP-1099: ConsumerGroupDescribe's
     * MemberType).
     */
    static void describeMemberProtocols(Support s, Map<String, Object> obs) throws Exception {
        String group = s.option("group", "g");
        try (Admin admin = s.admin()) {
            ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all()
                    .get(20, TimeUnit.SECONDS).get(group);
            obs.put("group_type", d.type().toString());
            Map<String, Object> upgraded = new TreeMap<>();
            for (MemberDescription m : d.members()) {
                upgraded.put(m.consumerId(), m.upgraded().map(Object::toString).orElse("unknown"));
            }
            obs.put("upgraded", upgraded);
        }
    }

    /**
     * listTransactions filtered by transactional id pattern (KIP-1152, ListTransactions v2): three
     * producers of this run initialize ({@code <prefix>-a1}, {@code -a2}, {@code -b1}), then the
     * listing of {@code <prefix>-a.*}, of the run's ids alone, and the outcome of a pattern that
     * does not compile.
     */
    static void listTransactionsPattern(Support s, Map<String, Object> obs) throws Exception {
        List<KafkaProducer<byte[], byte[]>> producers = new ArrayList<>();
        try (Admin admin = s.admin()) {
            for (String id : List.of("a1", "a2", "b1")) {
                producers.add(s.txnProducer(s.name(id)));  // initialized: the id is Empty
            }
            obs.put("a", listed(admin, s.name("a") + ".*"));
            obs.put("run", listed(admin, s.name("") + ".*"));
            obs.put("whole_match_only", listed(admin, s.name("a")));
            obs.put("invalid", Support.outcome(admin.listTransactions(
                    new ListTransactionsOptions().filterOnTransactionalIdPattern("(")).all()));
        } finally {
            for (KafkaProducer<byte[], byte[]> p : producers) {
                p.close();
            }
        }
    }

    /**
     * alterPartitionReassignments with allowReplicationFactorChange(false) (KIP-1101, v1) on a topic
     * of two replicas: a target of three brokers, and one of two.
     */
    static void reassignKeepingReplicationFactor(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("rf");
        try (Admin admin = s.admin()) {
            admin.createTopics(List.of(new NewTopic(topic, 2, (short) 2))).all().get(20, TimeUnit.SECONDS);
            AlterPartitionReassignmentsOptions keep = new AlterPartitionReassignmentsOptions()
                    .allowReplicationFactorChange(false);
            Map<TopicPartition, java.util.Optional<NewPartitionReassignment>> grow = Map.of(
                    new TopicPartition(topic, 0), java.util.Optional.of(new NewPartitionReassignment(List.of(0, 1, 2))));
            obs.put("grow", Support.outcome(admin.alterPartitionReassignments(grow, keep).all()));
            Map<TopicPartition, java.util.Optional<NewPartitionReassignment>> same = Map.of(
                    new TopicPartition(topic, 1), java.util.Optional.of(new NewPartitionReassignment(List.of(2, 0))));
            obs.put("same", Support.outcome(admin.alterPartitionReassignments(same, keep).all()));
        }
    }

    private static List<String> listed(Admin admin, String pattern) throws Exception {
        List<String> ids = new ArrayList<>();
        for (TransactionListing t : admin.listTransactions(
                new ListTransactionsOptions().filterOnTransactionalIdPattern(pattern)).all().get(20, TimeUnit.SECONDS)) {
            ids.add(t.transactionalId() + ":" + t.state());
        }
        ids.sort(null);
        return ids;
    }

    private static List<String> nodes(Admin admin, boolean fenced) throws Exception {
        List<String> out = new ArrayList<>();
        for (Node n : admin.describeCluster(new DescribeClusterOptions().includeFencedBrokers(fenced)).nodes()
                .get(20, TimeUnit.SECONDS)) {
            out.add(n.id() + (n.isFenced() ? ":fenced" : ""));
        }
        java.util.Collections.sort(out);
        return out;
    }

    private Admin4Driver() {}
}
