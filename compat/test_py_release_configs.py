"""confluent_kafka.admin.AdminClient against 3.9, 4.0 and 4.1 emulation: the topic configs Kafka 4.0 removed
(message.format.version, message.downconversion.enable, message.timestamp.difference.max.ms) are refused
as unknown names and no longer described, and from 4.1 a segment.bytes under KIP-1030's 1 MiB is refused,
where 3.9 takes both; the broker configs 4.0 and 4.1 added are described for the broker with their defaults,
and one they made dynamic is altered."""

from __future__ import annotations

import pytest

import shim

pytestmark = pytest.mark.shim_only("starts brokers emulating 3.9, 4.0 and 4.1")


@pytest.mark.parametrize("release", ["3.9", "4.0", "4.1"])
def test_confluent_admin_meets_the_4_0_topic_configs(tmp_path, release):
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", kafka_version=release) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})

        def create(topic, configs):
            (future,) = admin.create_topics([NewTopic(topic, 1, 1, config=configs)], request_timeout=15).values()
            try:
                future.result(timeout=30)
                return None
            except KafkaException as e:
                return e.args[0]

        removed = create("old-format", {"message.downconversion.enable": "false"})
        small = create("small-segments", {"segment.bytes": "65536"})
        assert create("plain", {}) is None
        (described,) = admin.describe_configs([ConfigResource("topic", "plain")], request_timeout=15).values()
        names = set(described.result(timeout=30))
    if release == "3.9":
        assert removed is None
        assert {"message.format.version", "message.downconversion.enable"} <= names
    else:
        assert removed.name() == "INVALID_CONFIG"
        assert "Unknown topic config name: message.downconversion.enable" in removed.str()
        assert not {"message.format.version", "message.downconversion.enable",
                    "message.timestamp.difference.max.ms"} & names
    if release >= "4.1":
        assert small.name() == "INVALID_CONFIG"
        assert "Value must be at least 1048576" in small.str()
    else:  # Kafka 4.0 raised only the broker's log.segment.bytes minimum
        assert small is None
    assert "segment.bytes" in names


@pytest.mark.parametrize("release", ["3.9", "4.0", "4.1"])
def test_confluent_admin_meets_the_4_x_broker_configs(tmp_path, release):
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource

    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", kafka_version=release) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
        resource = ConfigResource("broker", "0")
        (described,) = admin.describe_configs([resource], request_timeout=15).values()
        before = described.result(timeout=30)
        alter = ConfigResource("broker", "0", incremental_configs=[ConfigEntry(
            "remote.log.reader.threads", "4", incremental_operation=AlterConfigOpType.SET)])
        (altered,) = admin.incremental_alter_configs([alter], request_timeout=15).values()
        error = altered.exception(timeout=30)
        (described,) = admin.describe_configs([resource], request_timeout=15).values()
        after = described.result(timeout=30)
    share_rf = before.get("share.coordinator.state.topic.replication.factor")
    streams = before.get("group.streams.session.timeout.ms")
    if release == "3.9":
        assert share_rf is None and streams is None and "zookeeper.connect" in before
        assert "Cannot update these configs dynamically" in str(error)
        return
    assert (share_rf.value, share_rf.is_default, share_rf.is_read_only) == ("3", True, True)
    assert (streams is not None) is (release == "4.1")
    assert "zookeeper.connect" not in before
    assert error is None and after["remote.log.reader.threads"].value == "4"
