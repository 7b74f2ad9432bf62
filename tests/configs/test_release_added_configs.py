"""The broker configs Kafka 4.0 and 4.1 added, changed and removed (their config references,
apache/kafka-site 40/ and 41/generated/kafka_config.html): described for a BROKER resource under the
emulation of the release that defines them, with its defaults; known to a properties file
(``serve --config``) of that release; alterable where Kafka makes them dynamic. 3.9 knows none of them."""

from __future__ import annotations

import logging

import pytest

from shim.config import BrokerConfig
from shim.configs.catalogue import broker_configs
from shim.configs.describe import ConfigSource
from shim.errors import ErrorCode
from shim.node import Node

from .test_config_apis import BROKER, SET, by_name, describe, incremental
from .test_properties import args

# What Kafka 4.x's own config/server.properties sets that 3.9 does not define.
SHARE_STATE = {"share.coordinator.state.topic.replication.factor": "1", "share.coordinator.state.topic.min.isr": "1"}


@pytest.fixture(params=["3.9", "4.0", "4.1"])
def release_node(request, tmp_path):
    node = Node(BrokerConfig(data_dir=tmp_path, kafka_version=request.param))
    yield request.param, node
    node.close()


async def test_added_broker_configs_are_described_with_the_releases_defaults(release_node):
    release, node = release_node
    described = by_name(await describe(node, BROKER, "0", docs=True))
    expected = {  # name: (release that added it, default, ConfigType)
        "share.coordinator.state.topic.replication.factor": ("4.0", "3", 4),
        "share.coordinator.state.topic.min.isr": ("4.0", "2", 4),
        "share.coordinator.append.linger.ms": ("4.0", "10" if release == "4.0" else "5", 3),
        "remote.list.offsets.request.timeout.ms": ("4.0", "30000", 5),
        "group.streams.session.timeout.ms": ("4.1", "45000", 3),
        "group.share.max.share.sessions": ("4.1", "2000", 3),
        "transaction.two.phase.commit.enable": ("4.1", "false", 1),
    }
    for name, (since, default, config_type) in expected.items():
        if release < since:
            assert name not in described
            continue
        entry = described[name]
        assert (entry.value, entry.config_source, entry.config_type) == (default, ConfigSource.DEFAULT_CONFIG,
                                                                         config_type)
        assert entry.documentation == broker_configs(release)[name].doc and entry.documentation
    assert ("group.share.max.groups" in described) is (release < "4.1")  # 4.1 removed it
    assert ("zookeeper.connect" in described) is (release == "3.9")
    assert described["ssl.protocol"].value == ("TLSv1.2" if release == "3.9" else "TLSv1.3")


async def test_a_required_config_has_no_default_synonym_from_4_0(release_node):
    """node.id has no default in Kafka 4 (it is required): no DEFAULT_CONFIG synonym under the static one."""
    release, node = release_node
    (entry,) = (await describe(node, BROKER, "0", ("node.id",), synonyms=True)).configs
    sources = [s.source for s in entry.synonyms]
    assert sources == [ConfigSource.STATIC_BROKER_CONFIG] + ([ConfigSource.DEFAULT_CONFIG] if release == "3.9" else [])


async def test_a_dynamic_config_4_0_added_or_made_dynamic_can_be_altered(release_node):
    release, node = release_node
    (added,) = await incremental(node, [(BROKER, "", [("remote.list.offsets.request.timeout.ms", SET, "1000")])])
    (now_dynamic,) = await incremental(node, [(BROKER, "0", [("remote.log.reader.threads", SET, "4")])])
    if release == "3.9":  # unknown to 3.9, kept as given; read-only in 3.9
        assert added.error_code == ErrorCode.none
        assert (now_dynamic.error_code, now_dynamic.error_message) == (
            ErrorCode.invalid_request, "Cannot update these configs dynamically: Set(remote.log.reader.threads)")
        return
    assert (added.error_code, now_dynamic.error_code) == (ErrorCode.none, ErrorCode.none)
    cluster = by_name(await describe(node, BROKER, ""))
    assert cluster["remote.list.offsets.request.timeout.ms"].config_source == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
    broker = by_name(await describe(node, BROKER, "0"))
    assert (broker["remote.log.reader.threads"].value, broker["remote.log.reader.threads"].read_only) == ("4", False)
    assert broker["remote.list.offsets.request.timeout.ms"].value == "1000"
    (bad,) = await incremental(node, [(BROKER, "", [("remote.list.offsets.request.timeout.ms", SET, "0")])])
    assert (bad.error_code, bad.error_message) == (
        ErrorCode.invalid_request,
        "Invalid value 0 for configuration remote.list.offsets.request.timeout.ms: Value must be at least 1")
    (read_only,) = await incremental(node, [(BROKER, "", [("share.coordinator.state.topic.min.isr", SET, "1")])])
    assert read_only.error_message == "Cannot update these configs dynamically: Set(share.coordinator.state.topic.min.isr)"


@pytest.mark.parametrize("release", ["3.9", "4.0", "4.1"])
def test_a_4_x_server_properties_is_known_to_its_release(tmp_path, caplog, release):
    path = tmp_path / "server.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in SHARE_STATE.items()) + "zookeeper.connect=localhost:2181\n")
    with caplog.at_level(logging.WARNING, logger="shim.configs.properties"):
        config = args("--config", str(path), "--kafka-version", release)
    warned = {r.args[0] for r in caplog.records if "was supplied but is not a known config" in r.getMessage()}
    assert warned == ({*SHARE_STATE} if release == "3.9" else {"zookeeper.connect"})
    assert {k: config.extra[k] for k in SHARE_STATE} == SHARE_STATE


def test_a_4_x_property_is_validated_as_its_release_validates_it():
    """group.share.max.size: a short of at least 10 in 3.9, an int of at least 1 from 4.0."""
    assert args("--kafka-version", "4.0", "--override", "group.share.max.size=5").extra["group.share.max.size"] == "5"
    with pytest.raises(ValueError, match="Invalid value 5 for configuration group.share.max.size: "
                                         "Value must be at least 10"):
        args("--override", "group.share.max.size=5")


@pytest.mark.parametrize("release", ["4.0", "4.1"])
def test_an_internal_4_1_config_kafka_shim_reads_is_known_to_4_1(caplog, release):
    name = "share.coordinator.cold.partition.snapshot.interval.ms"
    with caplog.at_level(logging.WARNING, logger="shim.configs.properties"):
        args("--kafka-version", release, "--override", f"{name}=1000")
    assert (name in caplog.text) is (release == "4.0")


def test_kafka_4_gives_the_topic_the_hour_its_broker_synonym_has():
    from shim.configs.catalogue import topic_configs
    assert [topic_configs(r)["message.timestamp.after.max.ms"].default for r in ("3.9", "4.0", "4.1")] == [
        "9223372036854775807", "3600000", "3600000"]


async def test_a_config_the_release_removed_is_altered_as_an_unknown_name(release_node):
    """DynamicBrokerConfig refuses only KafkaConfig's non-dynamic names: zookeeper.connect is one in 3.9,
    a name Kafka 4 does not know and keeps as given."""
    release, node = release_node
    (r,) = await incremental(node, [(BROKER, "", [("zookeeper.connect", SET, "zk:2181")])])
    if release == "3.9":
        assert r.error_message == "Cannot update these configs dynamically: Set(zookeeper.connect)"
    else:
        assert r.error_code == ErrorCode.none
        assert by_name(await describe(node, BROKER, ""))["zookeeper.connect"].config_source == (
            ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)
