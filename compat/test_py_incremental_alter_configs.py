"""The steps and assertions of confluent-kafka-python's own integration test
tests/integration/admin/test_incremental_alter_configs.py, replayed with its AdminClient on brokers
started with kafka-shim's defaults: a topic's non-default entries are exactly what the test set
(plus, from 4.1, the cluster-level min.insync.replicas the controller writes: compat/test_elr_min_isr.py).
This needs DescribeConfigs to show nothing of kafka-shim's own (segment.bytes among them) as set."""

from __future__ import annotations

import pytest

import shim

pytestmark = pytest.mark.shim_only("starts brokers with kafka-shim's defaults under 3.9 and 4.1")


def _non_default(admin, resources) -> dict:
    fs = admin.describe_configs(resources)
    assert len(fs) == len(resources)
    return {res.name: sorted(str(e) for e in f.result(20).values() if not e.is_default) for res, f in fs.items()}


@pytest.mark.parametrize("release", ["3.9", "4.1"])
def test_confluent_kafka_pythons_incremental_alter_configs(tmp_path, release):
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic, ResourceType

    elr = ['min.insync.replicas="1"'] if release >= "4.1" else []  # KIP-966's cluster-level default
    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", kafka_version=release) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
        topics = [NewTopic(t, 2, 1, config={"compression.type": "gzip"}) for t in ("test-topic", "test-topic2")]
        topics.append(NewTopic("plain", 1, 1))
        for f in admin.create_topics(topics).values():
            f.result(20)
        plain = ConfigResource(ResourceType.TOPIC, "plain")
        assert _non_default(admin, [plain]) == {"plain": elr}  # a fresh topic: nothing set

        res1 = ConfigResource(ResourceType.TOPIC, "test-topic", incremental_configs=[
            ConfigEntry("cleanup.policy", "compact", incremental_operation=AlterConfigOpType.APPEND),
            ConfigEntry("retention.ms", "10000", incremental_operation=AlterConfigOpType.SET)])
        res2 = ConfigResource(ResourceType.TOPIC, "test-topic2", incremental_configs=[
            ConfigEntry("cleanup.policy", "delete", incremental_operation=AlterConfigOpType.SUBTRACT),
            ConfigEntry("retention.ms", "5000", incremental_operation=AlterConfigOpType.SET)])
        fs = admin.incremental_alter_configs([res1, res2])
        assert len(fs) == 2 and all(f.result(20) is None for f in fs.values())
        assert _non_default(admin, [res1, res2]) == {
            "test-topic": sorted(['cleanup.policy="delete,compact"', 'compression.type="gzip"',
                                  'retention.ms="10000"'] + elr),
            "test-topic2": sorted(['cleanup.policy=""', 'compression.type="gzip"', 'retention.ms="5000"'] + elr)}

        res2 = ConfigResource(ResourceType.TOPIC, "test-topic2", incremental_configs=[
            ConfigEntry("compression.type", None, incremental_operation=AlterConfigOpType.DELETE),
            ConfigEntry("retention.ms", "10000", incremental_operation=AlterConfigOpType.SET)])
        (f,) = admin.incremental_alter_configs([res2]).values()
        assert f.result(20) is None
        assert _non_default(admin, [res2]) == {"test-topic2": sorted(['cleanup.policy=""', 'retention.ms="10000"'] + elr)}

        (f,) = admin.describe_configs([ConfigResource(ResourceType.BROKER, "0")]).values()
        segment = f.result(20)["log.segment.bytes"]
        assert (segment.value, segment.is_default, segment.source) == ("1073741824", True, 5)  # DEFAULT_CONFIG


def test_a_store_location_without_a_listener_prefix_is_refused(tmp_path):
    """As Kafka's DynamicBrokerConfig.validateConfigs: ssl.keystore.location and the other
    reconfigurable store settings change only per listener (listener.name.<l>.ssl.keystore.location)."""
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    def alter(name: str):
        (f,) = admin.incremental_alter_configs([ConfigResource(ResourceType.BROKER, "0", incremental_configs=[
            ConfigEntry(name, "PKCS12", incremental_operation=AlterConfigOpType.SET)])]).values()
        return f.result(20)

    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0") as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
        with pytest.raises(KafkaException) as refused:
            alter("ssl.keystore.type")
        error = refused.value.args[0]
        assert error.code() == KafkaError.INVALID_REQUEST
        assert error.str().endswith("These security configs can be dynamically updated only per-listener using "
                                    "the listener prefix: HashSet(ssl.keystore.type)"), error.str()
        assert alter("listener.name.plaintext.ssl.keystore.type") is None
