"""KIP-966's cluster-level min.insync.replicas under 4.x emulation, through confluent-kafka's
AdminClient and kafka-clients 4's Admin (compat/java/ClusterAdminDriver.java, ``config.elr_min_isr``).

Kafka 4.1 formats a cluster with eligible.leader.replicas.version 1, and its controller then writes
a cluster-level min.insync.replicas of the static value (1) before anything else
(ConfigurationControlManager.maybeGenerateElrSafetyRecords): DescribeConfigs shows it on the
default broker resource and on every topic as DYNAMIC_DEFAULT_BROKER_CONFIG, so it is among a
topic's non-default entries (what confluent-kafka-python's test_incremental_alter_configs expects
of 4.1). While ELR is on, a broker-level min.insync.replicas cannot be set and the cluster-level
one cannot be removed (INVALID_CONFIG). Under 4.0, whose clusters start with ELR off, none of this.
"""

from __future__ import annotations

import pytest

import shim

pytestmark = pytest.mark.shim_only("starts brokers emulating 4.0 and 4.1")

def _non_default(admin, resource) -> list[str]:
    (f,) = admin.describe_configs([resource]).values()
    return sorted(str(e) for e in f.result(20).values() if not e.is_default)


def test_confluent_incremental_alter_configs_sees_the_cluster_level_min_isr(tmp_path):
    """The steps and expectations of confluent-kafka-python's test_incremental_alter_configs (4.1)."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic, ResourceType

    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", kafka_version="4.1") as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
        for f in admin.create_topics([NewTopic(t, 2, 1, config={"compression.type": "gzip"}) for t in ("a", "b")]).values():
            f.result(20)
        res1 = ConfigResource(ResourceType.TOPIC, "a", incremental_configs=[
            ConfigEntry("cleanup.policy", "compact", incremental_operation=AlterConfigOpType.APPEND),
            ConfigEntry("retention.ms", "10000", incremental_operation=AlterConfigOpType.SET)])
        res2 = ConfigResource(ResourceType.TOPIC, "b", incremental_configs=[
            ConfigEntry("cleanup.policy", "delete", incremental_operation=AlterConfigOpType.SUBTRACT),
            ConfigEntry("retention.ms", "5000", incremental_operation=AlterConfigOpType.SET)])
        for f in admin.incremental_alter_configs([res1, res2]).values():
            assert f.result(20) is None
        assert _non_default(admin, res1) == ['cleanup.policy="delete,compact"', 'compression.type="gzip"',
                                            'min.insync.replicas="1"', 'retention.ms="10000"']
        assert _non_default(admin, res2) == ['cleanup.policy=""', 'compression.type="gzip"',
                                            'min.insync.replicas="1"', 'retention.ms="5000"']

        # confluent-kafka's ConfigResource refuses an empty broker name, so the cluster level is the
        # Java test's; a broker-level value is refused (and the topics keep the cluster-level one)
        broker_level = ConfigResource(ResourceType.BROKER, "0", incremental_configs=[
            ConfigEntry("min.insync.replicas", "2", incremental_operation=AlterConfigOpType.SET)])
        (f,) = admin.incremental_alter_configs([broker_level]).values()
        with pytest.raises(KafkaException) as e:
            f.result(20)
        assert e.value.args[0].name() == "INVALID_CONFIG"
        assert "Broker-level min.insync.replicas cannot be altered while ELR is enabled." in e.value.args[0].str()
        (f,) = admin.describe_configs([ConfigResource(ResourceType.BROKER, "0")]).values()
        entry = f.result(20)["min.insync.replicas"]
        assert (entry.value, entry.source) == ("1", 3)  # DYNAMIC_DEFAULT_BROKER_CONFIG
        del admin  # its client goes before the broker does


@pytest.mark.parametrize("release", ["4.0", "4.1"])
def test_java_admin_sees_and_is_refused_as_by_kafka(tmp_path, java4, release):
    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", kafka_version=release) as broker:
        out = java4.run("ClusterAdminDriver", ["config.elr_min_isr"], broker.bootstrap_servers, timeout=200,
                        prefix="elr", timeout_s=60)
    result = out["results"]["config.elr_min_isr"]
    assert result["ok"], result.get("error")
    obs = result["observed"]

    def error(key):
        return None if obs[key] is None else obs[key]["chain"][0].rsplit(".", 1)[-1]

    if release == "4.1":
        assert obs["elr_level"] == 1
        assert obs["cluster"] == obs["topic"] == ["1", "DYNAMIC_DEFAULT_BROKER_CONFIG"]
        assert error("set_broker_level") == error("delete_cluster_level") == "InvalidConfigurationException"
        assert obs["topic_after"] == ["2", "DYNAMIC_DEFAULT_BROKER_CONFIG"]
    else:
        assert obs["elr_level"] == 0
        assert obs["cluster"] is None and obs["topic"] == ["1", "DEFAULT_CONFIG"]
        assert error("set_broker_level") is None and error("delete_cluster_level") is None
        assert obs["topic_after"] == ["2", "DYNAMIC_BROKER_CONFIG"]  # the broker-level value wins
    assert error("set_cluster_level") is None and error("restore_cluster_level") is None
