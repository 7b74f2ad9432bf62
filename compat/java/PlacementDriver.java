import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

/**
 * Which partition the broker's {@code uniform} assignor gives to which kafka-clients 4.x member
 * ({@code group.protocol=consumer}). {@code consumer_protocol.placement}: members join one at a
 * time, each once the previous assignment settled; after each join the driver waits until the
 * members' assignments cover the subscribed partitions once with the sizes the step must reach and
 * records every member's id, subscription and assignment. Two groups: three members over a
 * 6-partition topic, and a member on two topics joined by one on the larger topic only and then a
 * third on both. The test compares each step with Kafka's algorithm on the recorded member ids.
 */
final class PlacementDriver {
    public static void main(String[] args) {
        Map<String, Support.Scenario> all = new LinkedHashMap<>();
        all.put("consumer_protocol.placement", PlacementDriver::placement);
        Support.main("PlacementDriver", all, args);
    }

    static void placement(Support s, Map<String, Object> obs) throws Exception {
        String p6 = s.name("pl-p6"), hx = s.name("pl-hx"), hy = s.name("pl-hy");
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, p6, 6);
            Support.createTopic(admin, hx, 3);
            Support.createTopic(admin, hy, 6);
        }
        obs.put("topics", Map.of("p6", p6, "hx", hx, "hy", hy));
        obs.put("one_subscription", steps(s, s.name("pl-G1"), List.of(List.of(p6), List.of(p6), List.of(p6)),
                List.of(List.of(6), List.of(3, 3), List.of(2, 2, 2)), Map.of(p6, 6)));
        obs.put("two_subscriptions", steps(s, s.name("pl-G2"), List.of(List.of(hx, hy), List.of(hy), List.of(hx, hy)),
                List.of(List.of(9), List.of(4, 5), List.of(3, 3, 3)), Map.of(hx, 3, hy, 6)));
    }

    /** Members join in turn; after each, the settled assignments: [{member, topics, partitions}]. */
    static List<List<Map<String, Object>>> steps(Support s, String group, List<List<String>> subscriptions,
                                                List<List<Integer>> sizes, Map<String, Integer> counts)
            throws Exception {
        Set<TopicPartition> every = new HashSet<>();
        counts.forEach((t, n) -> { for (int p = 0; p < n; p++) every.add(new TopicPartition(t, p)); });
        List<KafkaConsumer<byte[], byte[]>> members = new ArrayList<>();
        List<List<Map<String, Object>>> out = new ArrayList<>();
        try {
            for (int i = 0; i < subscriptions.size(); i++) {
                KafkaConsumer<byte[], byte[]> c = s.consumer("read_uncommitted", "group.id", group,
                        "group.protocol", "consumer", "client.rack", "rack-" + i);
                c.subscribe(subscriptions.get(i));
                members.add(c);
                List<Set<TopicPartition>> owned = Support.settleAnyOrder(members, sizes.get(i), every, false);
                List<Map<String, Object>> step = new ArrayList<>();
                for (int m = 0; m < members.size(); m++) {
                    List<String> parts = new ArrayList<>();
                    for (TopicPartition tp : owned.get(m)) parts.add(tp.topic() + ":" + tp.partition());
                    Collections.sort(parts);
                    step.add(Map.of("member", members.get(m).groupMetadata().memberId(),
                            "topics", subscriptions.get(m), "partitions", parts));
                }
                out.add(step);
            }
        } finally {
            for (KafkaConsumer<byte[], byte[]> c : members) c.close(Duration.ofSeconds(10));
        }
        return out;
    }
}
