import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.LinkedHashMap;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.clients.admin.FinalizedVersionRange;
import org.apache.kafka.clients.admin.QuorumInfo;
import org.apache.kafka.clients.admin.SupportedVersionRange;
import org.apache.kafka.clients.admin.UpdateFeaturesOptions;

/**
 * The cluster-level Admin calls, with the stock Java Admin: describeMetadataQuorum,
 * describeFeatures/updateFeatures, the delegation-token calls and unregisterBroker. Each scenario
 * only observes and records; compat/test_java_cluster_admin.py holds the expectations. Nothing
 * here changes the cluster (updates are validateOnly, the broker unregistered is not one), so the
 * scenarios run against a shared Apache Kafka as they do against kafka-shim.
 */
public final class ClusterAdminDriver {
    public static void main(String[] args) {
        Map<String, Support.Scenario> all = new LinkedHashMap<>();
        all.put("admin.metadata_quorum", ClusterAdminDriver::metadataQuorum);
        all.put("admin.features", ClusterAdminDriver::features);
        all.put("admin.delegation_tokens", ClusterAdminDriver::delegationTokens);
        all.put("admin.unregister_broker", ClusterAdminDriver::unregisterBroker);
        all.put("admin.client_metrics_resources", ClusterAdminDriver::clientMetricsResources);
        // changes the cluster: only for a broker of the test's own (compat/test_java4_tv2.py)
        all.put("features.transaction_version_1", ClusterAdminDriver::transactionVersion1);
        // sets and restores the cluster-level min.insync.replicas: a broker of the test's own
        all.put("config.elr_min_isr", ClusterAdminDriver::elrMinIsr);
        Support.main("ClusterAdminDriver", all, args);
    }

    /** KIP-966: the cluster-level min.insync.replicas, a topic's view of it, and the alterations of
     * min.insync.replicas the controller refuses while eligible leader replicas are enabled. */
    static void elrMinIsr(Support s, Map<String, Object> obs) throws Exception {
        String topic = s.name("elr");
        try (Admin admin = s.admin()) {
            Support.createTopic(admin, topic, 1);
            String node = String.valueOf(admin.describeCluster().nodes().get().iterator().next().id());
            org.apache.kafka.common.config.ConfigResource cluster = broker("");
            org.apache.kafka.common.config.ConfigResource broker = broker(node);
            org.apache.kafka.common.config.ConfigResource res = new org.apache.kafka.common.config.ConfigResource(
                    org.apache.kafka.common.config.ConfigResource.Type.TOPIC, topic);
            obs.put("elr_level", admin.describeFeatures().featureMetadata().get(20, TimeUnit.SECONDS)
                    .finalizedFeatures().getOrDefault("eligible.leader.replicas.version",
                            new FinalizedVersionRange((short) 0, (short) 0)).maxVersionLevel());
            obs.put("cluster", minIsr(admin, cluster));
            obs.put("topic", minIsr(admin, res));
            obs.put("set_broker_level", Support.outcome(alter(admin, broker, org.apache.kafka.clients.admin.AlterConfigOp.OpType.SET, "2")));
            obs.put("delete_cluster_level", Support.outcome(alter(admin, cluster, org.apache.kafka.clients.admin.AlterConfigOp.OpType.DELETE, null)));
            obs.put("set_cluster_level", Support.outcome(alter(admin, cluster, org.apache.kafka.clients.admin.AlterConfigOp.OpType.SET, "2")));
            obs.put("topic_after", minIsr(admin, res));
            obs.put("restore_cluster_level", Support.outcome(alter(admin, cluster, org.apache.kafka.clients.admin.AlterConfigOp.OpType.SET, "1")));
        }
    }

    static org.apache.kafka.common.config.ConfigResource broker(String name) {
        return new org.apache.kafka.common.config.ConfigResource(org.apache.kafka.common.config.ConfigResource.Type.BROKER, name);
    }

    static org.apache.kafka.common.KafkaFuture<Void> alter(Admin admin, org.apache.kafka.common.config.ConfigResource res,
                                   org.apache.kafka.clients.admin.AlterConfigOp.OpType op, String value) {
        org.apache.kafka.clients.admin.AlterConfigOp change = new org.apache.kafka.clients.admin.AlterConfigOp(
                new org.apache.kafka.clients.admin.ConfigEntry("min.insync.replicas", value), op);
        return admin.incrementalAlterConfigs(Map.of(res, List.of(change))).all();
    }

    /** [value, source] of min.insync.replicas in the resource's description, or null when not listed. */
    static Object minIsr(Admin admin, org.apache.kafka.common.config.ConfigResource res) throws Exception {
        org.apache.kafka.clients.admin.Config c = admin.describeConfigs(List.of(res)).all().get(20, TimeUnit.SECONDS).get(res);
        org.apache.kafka.clients.admin.ConfigEntry e = c.get("min.insync.replicas");
        return e == null ? null : List.of(e.value(), e.source().name());
    }

    static void metadataQuorum(Support s, Map<String, Object> obs) throws Exception {
        try (Admin admin = s.admin()) {
            obs.put("controller", admin.describeCluster().controller().get().id());
            QuorumInfo q = admin.describeMetadataQuorum().quorumInfo().get(20, TimeUnit.SECONDS);
            obs.put("leader", q.leaderId());
            obs.put("epoch_positive", q.leaderEpoch() > 0);
            obs.put("high_watermark_positive", q.highWatermark() > 0);
            obs.put("observers", q.observers().size());
            List<Object> voters = new java.util.ArrayList<>();
            for (QuorumInfo.ReplicaState v : q.voters()) {
                voters.add(Support.map("id", v.replicaId(), "leo_at_least_hw", v.logEndOffset() >= q.highWatermark(),
                        "fetch_time", v.lastFetchTimestamp().isPresent(),
                        "caught_up_time", v.lastCaughtUpTimestamp().isPresent(),
                        "directory_id_set", !v.replicaDirectoryId().equals(org.apache.kafka.common.Uuid.ZERO_UUID)));
            }
            obs.put("voters", voters);
            List<Object> nodes = new java.util.ArrayList<>();
            for (QuorumInfo.Node n : q.nodes().values()) {
                nodes.add(Support.map("id", n.nodeId(), "endpoints", n.endpoints().size()));
            }
            obs.put("nodes", nodes);
        }
    }

    static void features(Support s, Map<String, Object> obs) throws Exception {
        try (Admin admin = s.admin()) {
            FeatureMetadata f = admin.describeFeatures().featureMetadata().get(20, TimeUnit.SECONDS);
            Map<String, Object> finalized = new TreeMap<>();
            for (Map.Entry<String, FinalizedVersionRange> e : f.finalizedFeatures().entrySet()) {
                finalized.put(e.getKey(), List.of(e.getValue().minVersionLevel(), e.getValue().maxVersionLevel()));
            }
            Map<String, Object> supported = new TreeMap<>();
            for (Map.Entry<String, SupportedVersionRange> e : f.supportedFeatures().entrySet()) {
                supported.put(e.getKey(), List.of(e.getValue().minVersion(), e.getValue().maxVersion()));
            }
            obs.put("finalized", finalized);
            obs.put("supported", supported);
            obs.put("epoch_present", f.finalizedFeaturesEpoch().isPresent());
            short mv = f.finalizedFeatures().get("metadata.version").maxVersionLevel();
            UpdateFeaturesOptions validate = new UpdateFeaturesOptions().validateOnly(true);
            obs.put("same_level", Support.outcome(admin.updateFeatures(Map.of("metadata.version",
                    new FeatureUpdate(mv, FeatureUpdate.UpgradeType.UPGRADE)), validate).all()));
            obs.put("downgrade_as_upgrade", Support.outcome(admin.updateFeatures(Map.of("metadata.version",
                    new FeatureUpdate((short) (mv - 1), FeatureUpdate.UpgradeType.UPGRADE)), validate).all()));
            obs.put("unknown_feature", Support.outcome(admin.updateFeatures(Map.of("no.such.feature",
                    new FeatureUpdate((short) 1, FeatureUpdate.UpgradeType.UPGRADE)), validate).all()));
            obs.put("above_supported", Support.outcome(admin.updateFeatures(Map.of("metadata.version",
                    new FeatureUpdate((short) (mv + 100), FeatureUpdate.UpgradeType.UPGRADE)), validate).all()));
            obs.put("metadata_version_after", admin.describeFeatures().featureMetadata().get()
                    .finalizedFeatures().get("metadata.version").maxVersionLevel());
        }
    }

    static void delegationTokens(Support s, Map<String, Object> obs) throws Exception {
        try (Admin admin = s.admin()) {
            obs.put("create", Support.outcome(admin.createDelegationToken().delegationToken()));
            obs.put("describe", Support.outcome(admin.describeDelegationToken().delegationTokens()));
            obs.put("renew", Support.outcome(admin.renewDelegationToken(new byte[] {1, 2, 3}).expiryTimestamp()));
            obs.put("expire", Support.outcome(admin.expireDelegationToken(new byte[] {1, 2, 3}).expiryTimestamp()));
        }
    }

    /** Finalizes transaction.version 1 (a safe downgrade from 4.x's 2) and reads the features back. */
    static void transactionVersion1(Support s, Map<String, Object> obs) throws Exception {
        try (Admin admin = s.admin()) {
            obs.put("before", admin.describeFeatures().featureMetadata().get()
                    .finalizedFeatures().get("transaction.version").maxVersionLevel());
            obs.put("update", Support.outcome(admin.updateFeatures(Map.of("transaction.version",
                    new FeatureUpdate((short) 1, FeatureUpdate.UpgradeType.SAFE_DOWNGRADE)), new UpdateFeaturesOptions()).all()));
            obs.put("after", admin.describeFeatures().featureMetadata().get()
                    .finalizedFeatures().get("transaction.version").maxVersionLevel());
        }
    }

    static void clientMetricsResources(Support s, Map<String, Object> obs) throws Exception {
        try (Admin admin = s.admin()) {
            obs.put("listed", admin.listClientMetricsResources().all().get(20, TimeUnit.SECONDS).size());
        }
    }

    static void unregisterBroker(Support s, Map<String, Object> obs) throws Exception {
        try (Admin admin = s.admin()) {
            int node = admin.describeCluster().nodes().get().iterator().next().id();
            obs.put("unknown", Support.outcome(admin.unregisterBroker(node + 1000).all()));
        }
    }
}
