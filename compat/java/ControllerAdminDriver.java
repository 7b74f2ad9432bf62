import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.QuorumInfo;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;

/**
 * Java's Admin with {@code bootstrap.controllers} (KIP-919): every call goes to the controller
 * listener, whose address is the driver's bootstrap argument (compat/test_java_controller_admin.py).
 *
 * <ul>
 *   <li>{@code controller.describe_cluster}: the nodes (id, host, port), the controller and the cluster id.</li>
 *   <li>{@code controller.describe_quorum}: the leader, the voters and the observers of the metadata quorum.</li>
 *   <li>{@code controller.describe_features}: the finalized metadata.version and kraft.version levels.</li>
 *   <li>{@code controller.acls}: a topic ACL created, then described by a filter on its topic (each call's
 *       outcome; kafka-clients 3.9 sends them to brokers only and refuses them with bootstrap.controllers).</li>
 *   <li>{@code controller.broker_config}: message.max.bytes set on broker {@code node} (option), then
 *       described with its source.</li>
 * </ul>
 */
public final class ControllerAdminDriver {
    public static void main(String[] args) {
        Map<String, Support.Scenario> all = new LinkedHashMap<>();
        all.put("controller.describe_cluster", ControllerAdminDriver::describeCluster);
        all.put("controller.describe_quorum", ControllerAdminDriver::describeQuorum);
        all.put("controller.describe_features", ControllerAdminDriver::describeFeatures);
        all.put("controller.acls", ControllerAdminDriver::acls);
        all.put("controller.broker_config", ControllerAdminDriver::brokerConfig);
        Support.main("ControllerAdminDriver", all, args);
    }

    static Admin admin(Support s) {
        Properties p = s.common("default.api.timeout.ms", "20000");
        p.remove("bootstrap.servers");  // Admin refuses both
        p.put("bootstrap.controllers", s.bootstrap);
        return Admin.create(p);
    }

    static void describeCluster(Support s, Map<String, Object> obs) throws Exception {
        try (Admin admin = admin(s)) {
            DescribeClusterResult r = admin.describeCluster();
            List<Object> nodes = new ArrayList<>();
            for (Node n : r.nodes().get(20, TimeUnit.SECONDS)) nodes.add(List.of(n.id(), n.host(), n.port()));
            obs.put("nodes", nodes);
            Node controller = r.controller().get(20, TimeUnit.SECONDS);
            obs.put("controller", controller == null ? null : controller.id());
            obs.put("cluster_id", r.clusterId().get(20, TimeUnit.SECONDS));
        }
    }

    static void describeQuorum(Support s, Map<String, Object> obs) throws Exception {
        try (Admin admin = admin(s)) {
            QuorumInfo q = admin.describeMetadataQuorum().quorumInfo().get(20, TimeUnit.SECONDS);
            obs.put("leader", q.leaderId());
            List<Object> voters = new ArrayList<>();
            for (QuorumInfo.ReplicaState v : q.voters()) voters.add(v.replicaId());
            obs.put("voters", voters);
            obs.put("observers", q.observers().size());
            Map<String, Object> endpoints = new TreeMap<>();
            for (Map.Entry<Integer, QuorumInfo.Node> n : q.nodes().entrySet()) {
                List<Object> eps = new ArrayList<>();
                for (org.apache.kafka.clients.admin.RaftVoterEndpoint e : n.getValue().endpoints()) {
                    eps.add(List.of(e.name(), e.host(), e.port()));
                }
                endpoints.put(String.valueOf(n.getKey()), eps);
            }
            obs.put("endpoints", endpoints);
        }
    }

    static void describeFeatures(Support s, Map<String, Object> obs) throws Exception {
        try (Admin admin = admin(s)) {
            FeatureMetadata f = admin.describeFeatures().featureMetadata().get(20, TimeUnit.SECONDS);
            Map<String, Object> finalized = new TreeMap<>();
            f.finalizedFeatures().forEach((name, range) -> finalized.put(name, range.maxVersionLevel()));
            obs.put("finalized", finalized);
            obs.put("epoch_known", f.finalizedFeaturesEpoch().isPresent());
        }
    }

    static void acls(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("acl-topic");
        ResourcePattern pattern = new ResourcePattern(ResourceType.TOPIC, topic, PatternType.LITERAL);
        AclBinding binding = new AclBinding(pattern,
                new AccessControlEntry("User:carol", "*", AclOperation.READ, AclPermissionType.ALLOW));
        try (Admin admin = admin(s)) {
            // kafka-clients 3.9 sends the ACL calls to brokers only: it refuses them itself here
            obs.put("create", Support.outcome(admin.createAcls(List.of(binding)).all()));
            AclBindingFilter filter = new AclBindingFilter(
                    new ResourcePatternFilter(ResourceType.TOPIC, topic, PatternType.LITERAL), AccessControlEntryFilter.ANY);
            KafkaFuture<Collection<AclBinding>> described = admin.describeAcls(filter).values();
            obs.put("describe", Support.outcome(described));
            if (obs.get("describe") == null) {
                List<Object> found = new ArrayList<>();
                for (AclBinding b : described.get()) {
                    found.add(List.of(b.entry().principal(), b.entry().operation().toString(),
                            b.entry().permissionType().toString()));
                }
                obs.put("described", found);
            }
        }
    }

    static void brokerConfig(Support s, Map<String, Object> obs) throws Exception {
        ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, s.option("node", "0"));
        AlterConfigOp set = new AlterConfigOp(new ConfigEntry("message.max.bytes", "2000000"), AlterConfigOp.OpType.SET);
        try (Admin admin = admin(s)) {
            obs.put("alter", Support.outcome(admin.incrementalAlterConfigs(Map.of(broker, List.of(set))).all()));
            ConfigEntry entry = admin.describeConfigs(List.of(broker)).all().get(20, TimeUnit.SECONDS)
                    .get(broker).get("message.max.bytes");
            obs.put("value", entry.value());
            obs.put("source", entry.source().toString());
        }
    }
}
