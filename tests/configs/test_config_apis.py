"""DescribeConfigs (32), AlterConfigs (33), IncrementalAlterConfigs (44) and CreateTopics' configs
through the dispatcher: what Kafka's ConfigHelper and ConfigAdminManager would answer."""

from __future__ import annotations

import logging

import pytest

from shim.config import BrokerConfig
from shim.configs.broker import FILE_NAME
from shim.configs.describe import ConfigSource
from shim.errors import ErrorCode
from shim.node import Node

from .support import call, module

DESCRIBE, ALTER, INCREMENTAL, CREATE = 32, 33, 44, 19
TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS = 2, 4, 8, 16
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


async def describe(node, rtype, name, keys=None, *, version=4, synonyms=False, docs=False):
    m = module(DESCRIBE, version)
    fields = {"include_synonyms": synonyms}
    if version >= 3:
        fields["include_documentation"] = docs
    request = m.DescribeConfigsRequest(resources=(m.DescribeConfigsResource(
        resource_type=rtype, resource_name=name, configuration_keys=keys),), **fields)
    (result,) = (await call(node, DESCRIBE, version, request)).results
    return result


def by_name(result):
    return {c.name: c for c in result.configs}


async def incremental(node, resources, validate_only=False):
    m = module(INCREMENTAL, 1)
    request = m.IncrementalAlterConfigsRequest(validate_only=validate_only, resources=tuple(
        m.AlterConfigsResource(resource_type=t, resource_name=n, configs=tuple(
            m.AlterableConfig(name=k, config_operation=op, value=v) for k, op, v in ops)) for t, n, ops in resources))
    return (await call(node, INCREMENTAL, 1, request)).responses


async def legacy(node, rtype, name, configs, validate_only=False):
    m = module(ALTER, 2)
    request = m.AlterConfigsRequest(validate_only=validate_only, resources=(m.AlterConfigsResource(
        resource_type=rtype, resource_name=name, configs=tuple(m.AlterableConfig(name=k, value=v)
                                                               for k, v in configs.items())),))
    (r,) = (await call(node, ALTER, 2, request)).responses
    return r


async def test_topic_entries_with_sources_synonyms_types_and_documentation(node):
    node.logs.create_topic("t", 1, {"retention.ms": "1000"})
    result = await describe(node, TOPIC, "t", synonyms=True, docs=True)
    configs = by_name(result)
    retention = configs["retention.ms"]
    assert (retention.value, retention.config_source, retention.read_only) == ("1000", ConfigSource.TOPIC_CONFIG, False)
    assert [(s.name, s.value, s.source) for s in retention.synonyms] == [("retention.ms", "1000", 1)]
    assert retention.config_type == 5 and "retain a log" in retention.documentation  # LONG
    segment = configs["segment.bytes"]  # Kafka's default, as Kafka describes it
    assert (segment.value, segment.config_source) == ("1073741824", ConfigSource.DEFAULT_CONFIG)
    assert [(s.name, s.value, s.source) for s in segment.synonyms] == [("log.segment.bytes", "1073741824", 5)]
    assert configs["cleanup.policy"].config_type == 7  # LIST
    assert set(configs) >= {"compression.type", "message.timestamp.type", "min.insync.replicas", "segment.ms"}


async def test_retention_ms_default_comes_from_hours_and_lists_no_synonym(node):
    # Kafka: configSynonyms drops synonyms before the named one (log.retention.hours before .ms)
    node.logs.create_topic("t", 1)
    (entry,) = (await describe(node, TOPIC, "t", ("retention.ms",), synonyms=True)).configs
    assert (entry.value, entry.config_source, entry.synonyms) == ("604800000", ConfigSource.DEFAULT_CONFIG, ())


async def test_synonyms_and_documentation_only_when_asked_and_by_version(node):
    node.logs.create_topic("t", 1, {"segment.bytes": "2000000"})
    (entry,) = (await describe(node, TOPIC, "t", ("segment.bytes",))).configs
    assert entry.synonyms == () and entry.documentation is None
    (v1,) = (await describe(node, TOPIC, "t", ("segment.bytes",), version=1, synonyms=True)).configs
    assert [s.source for s in v1.synonyms] == [1, 5] and not hasattr(v1, "documentation")  # TOPIC, DEFAULT


async def test_broker_entries_show_our_values_read_only_and_sensitive(node):
    node.bound(node.listeners[0], 19092)  # as the server does once it listens
    configs = by_name(await describe(node, BROKER, "0"))
    assert configs["listeners"].value == "PLAINTEXT://127.0.0.1:19092"
    assert configs["log.dirs"].value == str(node.config.data_dir)
    assert configs["auto.create.topics.enable"].read_only and not configs["message.max.bytes"].read_only
    password = configs["ssl.keystore.password"]
    assert (password.value, password.is_sensitive, password.config_type) == (None, True, 9)
    assert configs["log.retention.ms"].value is None  # unset in Kafka too: the hours give the value


@pytest.mark.parametrize("release,read_only", [("3.9", False), ("4.0", True), ("4.1", True)])
async def test_advertised_listeners_became_read_only_in_4_0(tmp_path, release, read_only):
    """KAFKA-18405: KRaft brokers cannot change the addresses they registered with."""
    node = Node(BrokerConfig(data_dir=tmp_path, kafka_version=release))
    try:
        assert by_name(await describe(node, BROKER, "0"))["advertised.listeners"].read_only is read_only
        (r,) = await incremental(node, [(BROKER, "0", [("advertised.listeners", SET, "PLAINTEXT://h:1")])])
        assert r.error_code == ErrorCode.invalid_request
        assert (r.error_message == "Cannot update these configs dynamically: Set(advertised.listeners)") is read_only
    finally:
        node.close()


@pytest.mark.parametrize("release,after", [("3.9", "9223372036854775807"), ("4.0", "3600000"), ("4.1", "3600000")])
async def test_kafka_4_defaults_are_described_as_defaults(tmp_path, release, after):
    """KIP-1030: Kafka 4.0's defaults of log.message.timestamp.after.max.ms (an hour) and
    num.recovery.threads.per.data.dir (2), and KIP-848's group.coordinator.rebalance.protocols
    (classic,consumer; 4.1 adds streams), as the topic's and the broker's DEFAULT_CONFIG."""
    node = Node(BrokerConfig(data_dir=tmp_path, kafka_version=release))
    try:
        node.logs.create_topic("t", 1)
        (entry,) = (await describe(node, TOPIC, "t", ("message.timestamp.after.max.ms",), synonyms=True)).configs
        assert (entry.value, entry.config_source) == (after, ConfigSource.DEFAULT_CONFIG)
        assert [(s.name, s.value, s.source) for s in entry.synonyms] == [
            ("log.message.timestamp.after.max.ms", after, ConfigSource.DEFAULT_CONFIG)]
        broker = by_name(await describe(node, BROKER, "0"))
        assert broker["log.message.timestamp.after.max.ms"].value == after
        assert broker["num.recovery.threads.per.data.dir"].value == ("1" if release == "3.9" else "2")
        # the consumer group protocol is served from 4.0, and described as enabled there; 4.1 adds streams
        assert broker["group.coordinator.rebalance.protocols"].value == {
            "3.9": "classic", "4.0": "classic,consumer", "4.1": "classic,consumer,streams"}[release]
    finally:
        node.close()


async def test_unknown_topic_and_other_broker_ids_are_errors(node):
    missing = await describe(node, TOPIC, "nope")
    assert missing.error_code == ErrorCode.unknown_topic_or_partition and missing.configs == ()
    other = await describe(node, BROKER, "7")
    assert other.error_code == ErrorCode.invalid_request
    assert other.error_message == "Unexpected broker id, expected 0, but received 7"


async def test_dynamic_broker_config_is_persisted_described_and_applied_live(node, tmp_path):
    node.logs.create_topic("t", 1)
    (r,) = await incremental(node, [(BROKER, "", [("log.retention.ms", SET, "5000")])])
    assert r.error_code == ErrorCode.none
    assert node.logs.get("t", 0).config.retention_ms == 5000  # live, for topics without an override
    default = by_name(await describe(node, BROKER, ""))
    assert list(default) == ["log.retention.ms"]
    assert default["log.retention.ms"].config_source == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
    (t,) = (await describe(node, TOPIC, "t", ("retention.ms",), synonyms=True)).configs
    assert (t.value, t.config_source) == ("5000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)
    meta = node.config.data_dir / "__cluster_metadata"
    assert (meta / FILE_NAME).exists() and not list(meta.glob("*.tmp"))
    node.close()
    reopened = Node(BrokerConfig(data_dir=node.config.data_dir))
    try:
        assert reopened.logs.get("t", 0).config.retention_ms == 5000
    finally:
        reopened.close()


async def test_read_only_and_per_broker_configs_are_refused_as_kafka_refuses_them(node):
    (ro,) = await incremental(node, [(BROKER, "0", [("auto.create.topics.enable", SET, "false")])])
    assert (ro.error_code, ro.error_message) == (
        ErrorCode.invalid_request, "Cannot update these configs dynamically: Set(auto.create.topics.enable)")
    (per,) = await incremental(node, [(BROKER, "", [("log.dirs", SET, "/x")])])
    assert per.error_code == ErrorCode.invalid_request
    (pb,) = await incremental(node, [(BROKER, "", [("listener.name.ssl.ssl.keystore.type", SET, "PKCS12")])])
    assert pb.error_message.startswith("Cannot update these configs at default cluster level")
    (bad,) = await incremental(node, [(BROKER, "0", [("message.max.bytes", SET, "-1")])])
    assert (bad.error_code, bad.error_message) == (
        ErrorCode.invalid_request, "Invalid value -1 for configuration message.max.bytes: Value must be at least 0")


PREFIX_ONLY = "These security configs can be dynamically updated only per-listener using the listener prefix: "


@pytest.mark.parametrize("name", ["0", ""])
async def test_ssl_stores_are_altered_only_with_a_listener_prefix(node, name):
    # Kafka: DynamicBrokerConfig.validateConfigs, before the per-broker check; INVALID_REQUEST (KAFKA-13609)
    (r,) = await incremental(node, [(BROKER, name, [("ssl.keystore.location", SET, "/etc/k.jks"),
                                                    ("ssl.truststore.location", SET, "/etc/t.jks"),
                                                    ("ssl.keystore.password", SET, "secret")])])
    assert (r.error_code, r.error_message) == (ErrorCode.invalid_request, PREFIX_ONLY + (
        "HashSet(ssl.truststore.location, ssl.keystore.password, ssl.keystore.location)"))  # Scala's order
    r = await legacy(node, BROKER, name, {"ssl.truststore.certificates": "x"})
    assert (r.error_code, r.error_message) == (ErrorCode.invalid_request,
                                               PREFIX_ONLY + "HashSet(ssl.truststore.certificates)")
    kept = by_name(await describe(node, BROKER, name, ("ssl.keystore.location", "ssl.truststore.certificates")))
    dynamic = {ConfigSource.DYNAMIC_BROKER_CONFIG, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG}
    assert not {c.config_source for c in kept.values()} & dynamic, kept  # nothing kept
    (ok,) = await incremental(node, [(BROKER, "0", [("listener.name.plaintext.ssl.keystore.type", SET, "PKCS12")])])
    assert ok.error_code == ErrorCode.none


async def test_validate_only_changes_nothing(node):
    node.logs.create_topic("t", 1)
    (r,) = await incremental(node, [(TOPIC, "t", [("retention.ms", SET, "1")]),
                                    ], validate_only=True)
    assert r.error_code == ErrorCode.none
    assert node.logs.topic("t").configs == {} and node.logs.get("t", 0).config.retention_ms != 1
    (b,) = await incremental(node, [(BROKER, "0", [("log.retention.ms", SET, "1")])], validate_only=True)
    assert b.error_code == ErrorCode.none and node.broker_configs.per_broker == {}


async def test_incremental_operations_on_a_topic(node):
    node.logs.create_topic("t", 1, {"retention.ms": "1000"})
    name = "follower.replication.throttled.replicas"
    responses = await incremental(node, [(TOPIC, "t", [(name, APPEND, "0:0"), ("retention.ms", DELETE, None)])])
    assert responses[0].error_code == ErrorCode.none
    (r,) = await incremental(node, [(TOPIC, "t", [(name, APPEND, "1:0,0:0")])])
    assert node.logs.topic("t").configs == {name: "0:0,1:0"}
    await incremental(node, [(TOPIC, "t", [(name, SUBTRACT, "0:0")])])
    assert node.logs.topic("t").configs == {name: "1:0"}
    (bad,) = await incremental(node, [(TOPIC, "t", [("retention.ms", APPEND, "5")])])
    assert (bad.error_code, bad.error_message) == (
        ErrorCode.invalid_config, "Can't APPEND to key retention.ms because its type is not LIST.")
    (missing,) = await incremental(node, [(TOPIC, "nope", [("retention.ms", SET, "5")])])
    assert (missing.error_code, missing.error_message) == (ErrorCode.unknown_topic_or_partition,
                                                           "The topic 'nope' does not exist.")
    (unknown,) = await incremental(node, [(TOPIC, "t", [("no.such", SET, "5")])])
    assert (unknown.error_code, unknown.error_message) == (ErrorCode.invalid_config, "Unknown topic config name: no.such")


async def test_legacy_alter_configs_replaces_the_whole_set(node):
    node.logs.create_topic("t", 1, {"retention.ms": "1000"})
    r = await legacy(node, TOPIC, "t", {"segment.ms": "60000"})
    assert r.error_code == ErrorCode.none
    assert node.logs.topic("t").configs == {"segment.ms": "60000"}
    assert node.logs.get("t", 0).config.segment_ms == 60000
    logger = await legacy(node, BROKER_LOGGER, "0", {"shim": "DEBUG"})
    assert (logger.error_code, logger.error_message) == (ErrorCode.invalid_request, "Unknown resource type 8")


async def test_a_resource_named_twice_fails_both(node):
    node.logs.create_topic("t", 1)
    responses = await incremental(node, [(TOPIC, "t", [("retention.ms", SET, "1")]),
                                         (TOPIC, "t", [("retention.ms", SET, "2")])])
    assert [r.error_code for r in responses] == [ErrorCode.invalid_request] * 2
    assert node.logs.topic("t").configs == {}


async def test_cleanup_policy_compact_is_accepted_and_applied(node):
    node.logs.create_topic("t", 1)
    assert not node.logs.get("t", 0).config.compact
    (r,) = await incremental(node, [(TOPIC, "t", [("cleanup.policy", SET, "compact,delete"),
                                                  ("min.cleanable.dirty.ratio", SET, "0.1")])])
    assert r.error_code == ErrorCode.none
    config = node.logs.get("t", 0).config
    assert config.compact and config.delete and config.min_cleanable_dirty_ratio == 0.1
    (r,) = await incremental(node, [(TOPIC, "t", [("cleanup.policy", SET, "compact")])])
    assert r.error_code == ErrorCode.none and not node.logs.get("t", 0).config.delete


@pytest.fixture
def shim_logger():
    lg = logging.getLogger("shim.test-logger")
    before = lg.level
    yield lg
    lg.setLevel(before)


async def test_a_client_metrics_subscription_never_made_has_no_entries(node):
    # Kafka's ConfigHelper answers a CLIENT_METRICS name from its config repository: no error, no
    # entries when nothing was set (PlaintextAdminIntegrationTest.testDescribeConfigsNonexistentForKraft)
    result = await describe(node, CLIENT_METRICS, "none_metric")
    assert (result.error_code, result.configs) == (ErrorCode.none, ())
    empty = await describe(node, CLIENT_METRICS, "")
    assert (empty.error_code, empty.error_message) == (
        ErrorCode.invalid_request, "Client metrics subscription name must not be empty")


async def test_broker_logger_levels(node, shim_logger):
    (r,) = await incremental(node, [(BROKER_LOGGER, "0", [("shim.test-logger", SET, "DEBUG")])])
    assert r.error_code == ErrorCode.none and shim_logger.level == logging.DEBUG
    configs = by_name(await describe(node, BROKER_LOGGER, "0"))
    entry = configs["shim.test-logger"]
    assert (entry.value, entry.config_source) == ("DEBUG", ConfigSource.DYNAMIC_BROKER_LOGGER_CONFIG)
    assert "root" in configs
    (bad,) = await incremental(node, [(BROKER_LOGGER, "0", [("shim.test-logger", SET, "LOUD")])])
    assert (bad.error_code, bad.error_message) == (ErrorCode.invalid_config, "Cannot set the log level of "
        "shim.test-logger to LOUD as it is not a supported log level. Valid log levels are TRACE, ERROR, INFO, "
        "FATAL, DEBUG, WARN")
    (append,) = await incremental(node, [(BROKER_LOGGER, "0", [("shim.test-logger", APPEND, "INFO")])])
    assert (append.error_code, append.error_message) == (
        ErrorCode.invalid_request, "APPEND operation is not allowed for the BROKER_LOGGER resource")
    (root,) = await incremental(node, [(BROKER_LOGGER, "0", [("root", DELETE, None)])])
    assert root.error_code == ErrorCode.invalid_request
    (other,) = await incremental(node, [(BROKER_LOGGER, "3", [("root", SET, "INFO")])])
    assert other.error_message == "Unexpected node id. Expected 0, but received 3"
    (gone,) = await incremental(node, [(BROKER_LOGGER, "0", [("no.such.logger", SET, "INFO")])])
    assert gone.error_message == "Logger no.such.logger does not exist!"
    await incremental(node, [(BROKER_LOGGER, "0", [("shim.test-logger", DELETE, None)])])
    assert shim_logger.level == logging.NOTSET


@pytest.mark.parametrize("version", [4, 5, 7])
async def test_create_topics_returns_the_configs_from_v5(node, version):
    m = module(CREATE, version)
    request = m.CreateTopicsRequest(timeout=__import__("datetime").timedelta(seconds=5), validate_only=False, topics=(
        m.CreatableTopic(name="t", num_partitions=1, replication_factor=1, assignments=(), configs=(
            m.CreatableTopicConfig(name="compression.type", value="zstd"),)),))
    (result,) = (await call(node, CREATE, version, request)).topics
    assert result.error_code == ErrorCode.none
    if version < 5:
        assert not hasattr(result, "configs")
        return
    configs = {c.name: c for c in result.configs}
    assert (configs["compression.type"].value, configs["compression.type"].config_source) == ("zstd", 1)
    assert configs["segment.ms"].config_source == ConfigSource.DEFAULT_CONFIG


async def test_create_topics_answers_configs_as_the_kraft_controller_resolves_them(node_of):
    # PlaintextAdminIntegrationTest.testCreateTopicsReturnsConfigs: the controller's
    # KafkaConfigSchema.resolveEffectiveTopicConfig takes any broker synonym of a layer, converted
    # (log.roll.hours=2: segment.ms 7200000, STATIC_BROKER_CONFIG); DescribeConfigs keeps
    # ConfigHelper's answer, whose synonyms start at log.roll.ms (so the default's source)
    node = node_of(**{"log.roll.hours": "2", "log.roll.jitter.ms": "123"})
    await incremental(node, [(BROKER, "", [("log.retention.ms", SET, "10800000")])])
    await incremental(node, [(BROKER, "0", [("log.cleaner.delete.retention.ms", SET, "34")])])
    m = module(CREATE, 7)
    request = m.CreateTopicsRequest(timeout=__import__("datetime").timedelta(seconds=5), validate_only=False, topics=(
        m.CreatableTopic(name="foo", num_partitions=1, replication_factor=1, assignments=(), configs=(
            m.CreatableTopicConfig(name="index.interval.bytes", value="9999999"),)),))
    (result,) = (await call(node, CREATE, 7, request)).topics
    configs = {c.name: (c.value, c.config_source, c.read_only, c.is_sensitive) for c in result.configs}
    assert {k: configs[k] for k in ("cleanup.policy", "retention.ms", "delete.retention.ms", "segment.jitter.ms",
                                    "segment.ms", "index.interval.bytes")} == {
        "cleanup.policy": ("delete", ConfigSource.DEFAULT_CONFIG, False, False),
        "retention.ms": ("10800000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, False, False),
        "delete.retention.ms": ("34", ConfigSource.DYNAMIC_BROKER_CONFIG, False, False),
        "segment.jitter.ms": ("123", ConfigSource.STATIC_BROKER_CONFIG, False, False),
        "segment.ms": ("7200000", ConfigSource.STATIC_BROKER_CONFIG, False, False),
        "index.interval.bytes": ("9999999", ConfigSource.TOPIC_CONFIG, False, False)}
    described = by_name(await describe(node, TOPIC, "foo"))["segment.ms"]
    assert (described.value, described.config_source) == ("7200000", ConfigSource.DEFAULT_CONFIG)


async def test_a_dynamic_value_the_broker_cannot_run_with_is_refused_before_it_is_kept(node):
    # Kafka's KafkaConfig check: max.connections.per.ip may be 0 only with overrides
    (r,) = await incremental(node, [(BROKER, "", [("max.connections.per.ip", SET, "0")])])
    assert r.error_code == ErrorCode.invalid_request and "max.connections.per.ip" in r.error_message
    assert node.broker_configs.cluster_default == {}
    assert not (node.config.data_dir / "__cluster_metadata" / FILE_NAME).exists()


def test_connection_limits_change_live_on_the_server(tmp_path):
    import asyncio

    from shim.broker import BrokerThread

    with BrokerThread(data_dir=tmp_path / "d", listen="127.0.0.1:0") as b:
        async def alter():
            return await incremental(b.node, [(BROKER, "", [("max.connections", SET, "7"),
                                                            ("max.connections.per.ip", SET, "3")])])
        (r,) = asyncio.run_coroutine_threadsafe(alter(), b.loop).result(10)
        assert r.error_code == ErrorCode.none
        quotas = b.broker._server.quotas
        assert (quotas.max_connections, quotas.max_per_ip) == (7, 3)
