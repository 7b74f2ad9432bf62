"""Kafka 4.0's config changes under 4.x emulation, through the request dispatcher: the configs it removed
(KIP-724, KIP-896, KIP-937, KIP-1041, ZooKeeper's) are unknown to CreateTopics, AlterConfigs and
IncrementalAlterConfigs and no longer described; KIP-1030's 1 MiB minimum segment size (log.segment.bytes
from 4.0, the topic's segment.bytes from 4.1). 3.9 keeps both."""

from __future__ import annotations

import datetime

import pytest

from shim.config import BrokerConfig
from shim.errors import ErrorCode
from shim.node import Node

from .support import call, module
from .test_config_apis import BROKER, CREATE, SET, TOPIC, by_name, describe, incremental, legacy

REMOVED_TOPIC = ("message.format.version", "message.downconversion.enable", "message.timestamp.difference.max.ms")
REMOVED_BROKER = ("log.message.format.version", "log.message.downconversion.enable",
                  "log.message.timestamp.difference.max.ms", "offsets.commit.required.acks",
                  "delegation.token.master.key", "zookeeper.connect")
VALUES = {"message.format.version": "3.0-IV1", "message.downconversion.enable": "false",
          "message.timestamp.difference.max.ms": "60000"}


@pytest.fixture(params=["3.9", "4.0", "4.1"])
def release_node(request, tmp_path):
    node = Node(BrokerConfig(data_dir=tmp_path, kafka_version=request.param))
    yield request.param, node
    node.close()


async def create(node, name, configs):
    m = module(CREATE, 7)
    request = m.CreateTopicsRequest(timeout=datetime.timedelta(seconds=5), validate_only=False, topics=(
        m.CreatableTopic(name=name, num_partitions=1, replication_factor=1, assignments=(), configs=tuple(
            m.CreatableTopicConfig(name=k, value=v) for k, v in configs.items())),))
    (result,) = (await call(node, CREATE, 7, request)).topics
    return result


@pytest.mark.parametrize("name", REMOVED_TOPIC)
async def test_removed_topic_configs_are_unknown_names_from_4_0(release_node, name):
    release, node = release_node
    removed = release >= "4.0"
    created = await create(node, "t", {name: VALUES[name]})
    if removed:  # LogConfig.validateNames
        assert (created.error_code, created.error_message) == (ErrorCode.invalid_config,
                                                               f"Unknown topic config name: {name}")
        node.logs.create_topic("t", 1)
    else:
        assert created.error_code == ErrorCode.none
        assert node.logs.topic("t").configs == {name: VALUES[name]}
    (inc,) = await incremental(node, [(TOPIC, "t", [(name, SET, VALUES[name])])])
    old = await legacy(node, TOPIC, "t", {name: VALUES[name]})
    for r in (inc, old):
        if removed:
            assert (r.error_code, r.error_message) == (ErrorCode.invalid_config, f"Unknown topic config name: {name}")
        else:
            assert r.error_code == ErrorCode.none
    described = by_name(await describe(node, TOPIC, "t"))
    assert (name in described) is not removed
    assert ("message.timestamp.type" in described)  # the rest is still there


async def test_removed_broker_configs_are_no_longer_described(release_node):
    release, node = release_node
    described = by_name(await describe(node, BROKER, "0"))
    for name in REMOVED_BROKER:
        assert (name in described) is (release < "4.0"), name
    assert "log.message.timestamp.before.max.ms" in described


async def test_a_topic_config_stored_under_3_9_does_not_block_changes_under_4_0(tmp_path):
    """Kafka 4.0 loads a topic that still carries a removed config and lets it be altered."""
    node = Node(BrokerConfig(data_dir=tmp_path, kafka_version="3.9"))
    node.logs.create_topic("t", 1, {"message.format.version": "3.0-IV1", "retention.ms": "1000"})
    node.close()
    node = Node(BrokerConfig(data_dir=tmp_path, kafka_version="4.0"))
    try:
        assert "message.format.version" not in by_name(await describe(node, TOPIC, "t"))
        (r,) = await incremental(node, [(TOPIC, "t", [("retention.ms", SET, "2000")])])
        assert r.error_code == ErrorCode.none
        assert node.logs.topic("t").configs == {"retention.ms": "2000"}
    finally:
        node.close()


async def test_segment_bytes_minimum_is_one_mib_from_4_0_for_brokers_and_4_1_for_topics(release_node):
    """KIP-1030: log.segment.bytes atLeast(1024 * 1024) from Kafka 4.0 (KAFKA-16368), the topic's
    segment.bytes from 4.1 (KAFKA-19080); 14 bytes before."""
    release, node = release_node
    topic_min = "1048576" if release >= "4.1" else "14"
    small = await create(node, "small", {"segment.bytes": "1048575"})
    if release >= "4.1":
        assert (small.error_code, small.error_message) == (
            ErrorCode.invalid_config,
            "Invalid value 1048575 for configuration segment.bytes: Value must be at least 1048576")
    else:
        assert small.error_code == ErrorCode.none
        assert node.logs.get("small", 0).config.segment_bytes == 1048575
    tiny = await create(node, "tiny", {"segment.bytes": "13"})
    assert (tiny.error_code, tiny.error_message) == (
        ErrorCode.invalid_config, f"Invalid value 13 for configuration segment.bytes: Value must be at least {topic_min}")
    ok = await create(node, "ok", {"segment.bytes": "1048576"})
    assert ok.error_code == ErrorCode.none
    (inc,) = await incremental(node, [(TOPIC, "ok", [("segment.bytes", SET, "65536")])])
    assert (inc.error_code == ErrorCode.invalid_config) is (release >= "4.1")
    (broker,) = await incremental(node, [(BROKER, "", [("log.segment.bytes", SET, "65536")])])
    if release >= "4.0":  # DynamicBrokerConfig.validate: INVALID_REQUEST with the ConfigException's message
        assert (broker.error_code, broker.error_message) == (
            ErrorCode.invalid_request,
            "Invalid value 65536 for configuration log.segment.bytes: Value must be at least 1048576")
    else:
        assert broker.error_code == ErrorCode.none


@pytest.mark.parametrize("release", ["3.9", "4.0", "4.1"])
def test_the_brokers_own_segment_size_is_at_least_one_mib_at_start_up_from_4_0(tmp_path, release):
    """KIP-1030: Kafka 4 does not start with log.segment.bytes under 1 MiB (KafkaConfig's
    ConfigException); 3.9 takes 14 bytes and up."""
    if release >= "4.0":
        with pytest.raises(ValueError, match=r"^Invalid value 1048575 for configuration log.segment.bytes: "
                                             r"Value must be at least 1048576$"):
            Node(BrokerConfig(data_dir=tmp_path, kafka_version=release, segment_bytes=1048575))
        assert not tmp_path.joinpath("__cluster_metadata").exists()  # refused before anything was written
    else:
        Node(BrokerConfig(data_dir=tmp_path, kafka_version=release, segment_bytes=14)).close()
    Node(BrokerConfig(data_dir=tmp_path / "mib", kafka_version=release, segment_bytes=1 << 20)).close()


async def test_a_small_dynamic_segment_size_stored_under_3_9_does_not_stop_a_4_0_start(tmp_path):
    """Kafka applies stored dynamic configs after start-up and logs those it cannot take; only the
    broker's own (static) value stops the start."""
    node = Node(BrokerConfig(data_dir=tmp_path, kafka_version="3.9"))
    (r,) = await incremental(node, [(BROKER, "", [("log.segment.bytes", SET, "65536")])])
    assert r.error_code == ErrorCode.none
    node.close()
    node = Node(BrokerConfig(data_dir=tmp_path, kafka_version="4.0"))
    node.close()


async def test_the_default_segment_size_is_kafkas_and_described_as_its_default(release_node):
    release, node = release_node
    node.logs.create_topic("t", 1)
    (entry,) = (await describe(node, TOPIC, "t", ("segment.bytes",))).configs
    assert (entry.value, entry.config_source) == ("1073741824", 5)  # DEFAULT_CONFIG
    (entry,) = (await describe(node, BROKER, "0", ("log.segment.bytes",))).configs
    assert (entry.value, entry.config_source) == ("1073741824", 5)
    assert node.logs.get("t", 0).config.segment_bytes == 1 << 30


async def test_internal_segment_bytes_gives_4_1_topics_small_segments(release_node):
    """KAFKA-19080: Kafka 4.1's internal.segment.bytes replaces segment.bytes, without its minimum, and is
    described only where set; releases before 4.1 do not know the name."""
    release, node = release_node
    created = await create(node, "t", {"internal.segment.bytes": "4096"})
    if release < "4.1":
        assert (created.error_code, created.error_message) == (
            ErrorCode.invalid_config, "Unknown topic config name: internal.segment.bytes")
        return
    assert created.error_code == ErrorCode.none
    assert node.logs.get("t", 0).config.segment_bytes == 4096
    entry = by_name(await describe(node, TOPIC, "t"))["internal.segment.bytes"]
    assert (entry.value, entry.config_source) == ("4096", 1)
    node.logs.create_topic("plain", 1)
    assert "internal.segment.bytes" not in by_name(await describe(node, TOPIC, "plain"))
