"""KIP-1071's streams.* GROUP configs as Kafka 4.1 takes them while the streams rebalance protocol is
not enabled (group.coordinator.rebalance.protocols classic,consumer, 4.1's default): defined,
validated against the broker's group.streams.* bounds with Kafka's messages, stored and described;
the broker's own group.streams.* settings are checked at start-up."""

from __future__ import annotations

import pytest

from shim.config import BrokerConfig
from shim.configs.describe import ConfigSource
from shim.errors import ErrorCode as E
from test_consumer_group_configs import DELETE, SET, described, incremental


@pytest.mark.parametrize("name, value, message", [
    ("streams.session.timeout.ms", "44999",
     "streams.session.timeout.ms must be greater than or equal to group.streams.min.session.timeout.ms"),
    ("streams.session.timeout.ms", "60001",
     "streams.session.timeout.ms must be less than or equal to group.streams.max.session.timeout.ms"),
    ("streams.heartbeat.interval.ms", "4999",
     "streams.heartbeat.interval.ms must be greater than or equal to group.streams.min.heartbeat.interval.ms"),
    ("streams.heartbeat.interval.ms", "15001",
     "streams.heartbeat.interval.ms must be less than or equal to group.streams.max.heartbeat.interval.ms"),
    ("streams.num.standby.replicas", "3",
     "streams.num.standby.replicas must be less than or equal to group.streams.max.standby.replicas"),
    ("streams.num.standby.replicas", "-1",
     "Invalid value -1 for configuration streams.num.standby.replicas: Value must be at least 0"),
    ("streams.num.warmup.replicas", "1", "Unknown group config name: streams.num.warmup.replicas"),
])
async def test_values_outside_the_brokers_bounds_are_invalid_config(node, name, value, message):
    r = await incremental(node, "g", [(name, SET, value)])
    assert (r.error_code, r.error_message) == (E.invalid_config, message)
    assert node.group_configs.own("g") == {}


async def test_set_described_and_deleted(node):
    default = ConfigSource.DEFAULT_CONFIG
    configs = await described(node, "g")
    assert {k: v for k, v in configs.items() if k.startswith("streams.")} == {
        "streams.session.timeout.ms": ("45000", default), "streams.heartbeat.interval.ms": ("5000", default),
        "streams.num.standby.replicas": ("0", default)}
    r = await incremental(node, "g", [("streams.num.standby.replicas", SET, "2"),
                                      ("streams.heartbeat.interval.ms", SET, "6000")])
    assert (r.error_code, r.error_message) == (E.none, None)
    configs = await described(node, "g")
    assert configs["streams.num.standby.replicas"] == ("2", ConfigSource.GROUP_CONFIG)
    assert configs["streams.heartbeat.interval.ms"] == ("6000", ConfigSource.GROUP_CONFIG)
    await incremental(node, "g", [("streams.num.standby.replicas", DELETE, None)])
    assert (await described(node, "g"))["streams.num.standby.replicas"] == ("0", default)


async def test_the_session_timeout_must_exceed_the_heartbeat_interval(nodes):
    node = nodes(extra={"group.streams.max.heartbeat.interval.ms": "50000"})
    r = await incremental(node, "g", [("streams.heartbeat.interval.ms", SET, "45000")])
    assert (r.error_code, r.error_message) == (
        E.invalid_config, "streams.session.timeout.ms must be greater than streams.heartbeat.interval.ms")


async def test_the_brokers_values_are_the_defaults(nodes):
    node = nodes(extra={"group.streams.num.standby.replicas": "1", "group.streams.session.timeout.ms": "50000"})
    configs = await described(node, "g")
    assert configs["streams.num.standby.replicas"] == ("1", ConfigSource.DEFAULT_CONFIG)
    assert configs["streams.session.timeout.ms"] == ("50000", ConfigSource.DEFAULT_CONFIG)


@pytest.mark.parametrize("extra, message", [
    ({"group.streams.num.standby.replicas": "3"},
     "group.streams.num.standby.replicas must be less than or equal to group.streams.max.standby.replicas"),
    ({"group.streams.max.session.timeout.ms": "40000"},
     "group.streams.max.session.timeout.ms must be greater than or equal to group.streams.min.session.timeout.ms"),
    ({"group.streams.heartbeat.interval.ms": "4000"},
     "group.streams.heartbeat.interval.ms must be greater than or equal to group.streams.min.heartbeat.interval.ms"),
    ({"group.streams.min.session.timeout.ms": "6000", "group.streams.session.timeout.ms": "6000",
      "group.streams.heartbeat.interval.ms": "6000"},
     "group.streams.heartbeat.interval.ms must be less than group.streams.session.timeout.ms"),
])
def test_the_brokers_bounds_are_checked_at_start_up(tmp_path, extra, message):
    with pytest.raises(ValueError) as e:
        BrokerConfig(data_dir=tmp_path, extra=extra)
    assert str(e.value) == message
