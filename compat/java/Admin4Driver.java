import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.common.Node;

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
