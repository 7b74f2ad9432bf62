"""KIP-966 under 4.x emulation: with eligible.leader.replicas.version finalized (4.1's default, or
turned on by UpdateFeatures) the cluster has a cluster-level min.insync.replicas, as Kafka's
controller writes it (ConfigurationControlManager.maybeGenerateElrSafetyRecords), and refuses to
remove it or to set a broker-level one."""

from __future__ import annotations

import datetime

import pytest

from shim.config import BrokerConfig
from shim.configs.describe import ConfigSource
from shim.errors import ErrorCode
from shim.node import Node

from .support import call, module
from .test_config_apis import BROKER, DELETE, SET, TOPIC, by_name, describe, incremental, legacy

MIN_ISR = "min.insync.replicas"


def make_node(tmp_path, release, **extra):
    return Node(BrokerConfig(data_dir=tmp_path / "data", kafka_version=release, **extra))


@pytest.fixture
def node41(tmp_path):
    n = make_node(tmp_path, "4.1")
    yield n
    n.close()


async def topic_min_isr(node):
    (c,) = (await describe(node, TOPIC, "t", (MIN_ISR,), synonyms=True)).configs
    return c.value, c.config_source, [(s.source, s.value) for s in c.synonyms]


async def update_elr(node, level):
    m = module(57, 1)
    request = m.UpdateFeaturesRequest(timeout=datetime.timedelta(seconds=5), validate_only=False,
                                      feature_updates=(m.FeatureUpdateKey(
                                          feature="eligible.leader.replicas.version", max_version_level=level,
                                          upgrade_type=1 if level else 2),))  # upgrade, safe downgrade
    r = await call(node, 57, 1, request)
    assert [x.error_code for x in r.results] == [ErrorCode.none]


async def test_a_4_1_cluster_has_a_cluster_level_min_isr(node41):
    node41.logs.create_topic("t", 1)
    default = by_name(await describe(node41, BROKER, ""))
    assert (default[MIN_ISR].value, default[MIN_ISR].config_source) == ("1", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)
    value, source, synonyms = await topic_min_isr(node41)
    assert (value, source) == ("1", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)
    assert synonyms[0] == (ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, "1")
    (broker,) = (await describe(node41, BROKER, "0", (MIN_ISR,))).configs
    assert (broker.value, broker.config_source) == ("1", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)


@pytest.mark.parametrize("release", ["3.9", "4.0"])
async def test_without_elr_min_isr_stays_a_default(tmp_path, release):
    node = make_node(tmp_path, release)
    try:
        node.logs.create_topic("t", 1)
        assert MIN_ISR not in by_name(await describe(node, BROKER, ""))
        value, source, _ = await topic_min_isr(node)
        assert (value, source) == ("1", ConfigSource.DEFAULT_CONFIG)
        (r,) = await incremental(node, [(BROKER, "0", [(MIN_ISR, SET, "2")])])  # allowed without ELR
        assert r.error_code == ErrorCode.none
    finally:
        node.close()


async def test_the_static_value_becomes_the_cluster_level_one(tmp_path):
    node = make_node(tmp_path, "4.1", extra={MIN_ISR: "2"})
    try:
        assert node.broker_configs.cluster_default == {MIN_ISR: "2"}
    finally:
        node.close()


async def test_refusals_while_elr_is_enabled(node41):
    node41.logs.create_topic("t", 1)
    for ops in ([(MIN_ISR, SET, "2")], [(MIN_ISR, DELETE, None)]):
        (r,) = await incremental(node41, [(BROKER, "0", ops)])
        assert (r.error_code, r.error_message) == (
            ErrorCode.invalid_config, "Broker-level min.insync.replicas cannot be altered while ELR is enabled.")
    (r,) = await incremental(node41, [(BROKER, "", [(MIN_ISR, DELETE, None)])])
    assert (r.error_code, r.error_message) == (
        ErrorCode.invalid_config, "Cluster-level min.insync.replicas cannot be removed while ELR is enabled.")
    r = await legacy(node41, BROKER, "", {"log.retention.ms": "5000"})  # drops every other cluster-level config
    assert r.error_code == ErrorCode.invalid_config
    assert node41.broker_configs.cluster_default == {MIN_ISR: "1"}
    assert (await legacy(node41, BROKER, "", {MIN_ISR: "1", "log.retention.ms": "5000"})).error_code == ErrorCode.none
    # setting it at cluster level is allowed, and every topic without an override follows
    (r,) = await incremental(node41, [(BROKER, "", [(MIN_ISR, SET, "2")])])
    assert r.error_code == ErrorCode.none
    assert (await topic_min_isr(node41))[:2] == ("2", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)
    assert node41.logs.get("t", 0).config.min_insync_replicas == 2


async def test_enabling_elr_writes_the_cluster_level_value_and_drops_broker_level_ones(tmp_path):
    node = make_node(tmp_path, "4.0")
    try:
        node.logs.create_topic("t", 1)
        (r,) = await incremental(node, [(BROKER, "0", [(MIN_ISR, SET, "2")])])
        assert r.error_code == ErrorCode.none
        assert await topic_min_isr(node) == ("2", ConfigSource.DYNAMIC_BROKER_CONFIG, [
            (ConfigSource.DYNAMIC_BROKER_CONFIG, "2"), (ConfigSource.DEFAULT_CONFIG, "1")])
        await update_elr(node, 1)
        assert (node.broker_configs.per_broker, node.broker_configs.cluster_default) == ({}, {MIN_ISR: "1"})
        assert (await topic_min_isr(node))[:2] == ("1", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)
        assert node.logs.get("t", 0).config.min_insync_replicas == 1
        await update_elr(node, 0)  # turning ELR off keeps the record, and lifts the refusals
        (r,) = await incremental(node, [(BROKER, "0", [(MIN_ISR, SET, "2")])])
        assert r.error_code == ErrorCode.none
        assert node.broker_configs.cluster_default == {MIN_ISR: "1"}
    finally:
        node.close()
    reopened = make_node(tmp_path, "4.0")
    try:
        assert (reopened.broker_configs.per_broker, reopened.broker_configs.cluster_default) == (
            {MIN_ISR: "2"}, {MIN_ISR: "1"})
    finally:
        reopened.close()
