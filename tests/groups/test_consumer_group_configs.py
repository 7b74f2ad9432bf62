"""KIP-848 GROUP configs (consumer.session.timeout.ms, consumer.heartbeat.interval.ms) through
IncrementalAlterConfigs, AlterConfigs and DescribeConfigs, checked against the broker's
group.consumer.min/max bounds, durable across kill -9 and in force on the group's members; and the
broker's own group.consumer.* bounds checked at start-up."""

from __future__ import annotations

import pytest

from configs.support import call, module
from group_helpers import T0, TOPIC
from shim.config import BrokerConfig
from shim.configs.describe import ConfigSource
from shim.coordinators.group.consumer_coordinator import HeartbeatRequest
from shim.errors import ErrorCode as E

DESCRIBE, ALTER, INCREMENTAL = 32, 33, 44
GROUP, SET, DELETE = 32, 0, 1


async def incremental(node, group, ops, validate_only=False):
    m = module(INCREMENTAL, 1)
    request = m.IncrementalAlterConfigsRequest(validate_only=validate_only, resources=(m.AlterConfigsResource(
        resource_type=GROUP, resource_name=group, configs=tuple(
            m.AlterableConfig(name=k, config_operation=op, value=v) for k, op, v in ops)),))
    (r,) = (await call(node, INCREMENTAL, 1, request)).responses
    return r


async def legacy(node, group, configs):
    m = module(ALTER, 2)
    request = m.AlterConfigsRequest(validate_only=False, resources=(m.AlterConfigsResource(
        resource_type=GROUP, resource_name=group, configs=tuple(m.AlterableConfig(name=k, value=v)
                                                                for k, v in configs.items())),))
    (r,) = (await call(node, ALTER, 2, request)).responses
    return r


async def described(node, group, synonyms=False):
    m = module(DESCRIBE, 4)
    request = m.DescribeConfigsRequest(include_synonyms=synonyms, include_documentation=False, resources=(
        m.DescribeConfigsResource(resource_type=GROUP, resource_name=group, configuration_keys=None),))
    (r,) = (await call(node, DESCRIBE, 4, request)).results
    assert r.error_code == E.none
    if synonyms:
        return {c.name: [(s.name, s.value, s.source) for s in c.synonyms] for c in r.configs}
    return {c.name: (c.value, c.config_source) for c in r.configs}


def join(gc, member="m", group="g", now=T0):
    return gc.consumer.heartbeat(HeartbeatRequest(group, member, 0, rebalance_timeout_ms=30_000,
                                                  subscribed_topic_names=(TOPIC,), owned={}), now)


async def test_the_group_heartbeat_interval_is_what_its_members_are_told(gc, node):
    r = await incremental(node, "g", [("consumer.heartbeat.interval.ms", SET, "7000")])
    assert (r.error_code, r.error_message) == (E.none, None)
    assert join(gc).heartbeat_interval_ms == 7000
    assert join(gc, group="other").heartbeat_interval_ms == 5000  # the broker's, for another group


async def test_the_group_session_timeout_fences_its_members(gc, node):
    await incremental(node, "g", [("consumer.session.timeout.ms", SET, "55000")])
    assert join(gc).error == E.none and join(gc, group="h").error == E.none
    gc.tick(T0 + 45_000)  # the broker's timeout: only the other group's member goes
    assert "m" in gc.consumer.groups["g"].members and "m" not in gc.consumer.groups["h"].members
    gc.tick(T0 + 55_000)
    assert "m" not in gc.consumer.groups["g"].members


@pytest.mark.parametrize("name, value, message", [
    ("consumer.session.timeout.ms", "44999",
     "consumer.session.timeout.ms must be greater than or equal to group.consumer.min.session.timeout.ms"),
    ("consumer.session.timeout.ms", "60001",
     "consumer.session.timeout.ms must be less than or equal to group.consumer.max.session.timeout.ms"),
    ("consumer.heartbeat.interval.ms", "4999",
     "consumer.heartbeat.interval.ms must be greater than or equal to group.consumer.min.heartbeat.interval.ms"),
    ("consumer.heartbeat.interval.ms", "15001",
     "consumer.heartbeat.interval.ms must be less than or equal to group.consumer.max.heartbeat.interval.ms"),
    ("consumer.heartbeat.interval.ms", "0", "Invalid value 0 for configuration consumer.heartbeat.interval.ms: "
     "Value must be at least 1"),
    ("consumer.session.timeout.ms", "soon", "Invalid value soon for configuration consumer.session.timeout.ms: "
     "Not a number of type INT"),
    ("consumer.rebalance.timeout.ms", "1", "Unknown group config name: consumer.rebalance.timeout.ms"),
])
async def test_values_outside_the_brokers_bounds_are_invalid_config(gc, node, name, value, message):
    r = await incremental(node, "g", [(name, SET, value)])
    assert (r.error_code, r.error_message) == (E.invalid_config, message)
    assert join(gc).heartbeat_interval_ms == 5000


async def test_the_session_timeout_must_exceed_the_heartbeat_interval(nodes):
    node = nodes(extra={"group.consumer.max.heartbeat.interval.ms": "50000"})
    r = await incremental(node, "g", [("consumer.heartbeat.interval.ms", SET, "45000")])
    assert (r.error_code, r.error_message) == (
        E.invalid_config, "consumer.session.timeout.ms must be greater than consumer.heartbeat.interval.ms")
    r = await incremental(node, "g", [("consumer.heartbeat.interval.ms", SET, "45000"),
                                      ("consumer.session.timeout.ms", SET, "50000")])
    assert r.error_code == E.none


async def test_describe_shows_the_brokers_values_as_defaults_and_the_groups_own(nodes):
    node = nodes(group_consumer_session_timeout_ms=50_000)
    configs = await described(node, "g")
    assert configs["consumer.session.timeout.ms"] == ("50000", ConfigSource.DEFAULT_CONFIG)
    assert configs["consumer.heartbeat.interval.ms"] == ("5000", ConfigSource.DEFAULT_CONFIG)
    assert configs["share.isolation.level"] == ("read_uncommitted", ConfigSource.DEFAULT_CONFIG)
    await incremental(node, "g", [("consumer.heartbeat.interval.ms", SET, "6000")])
    configs = await described(node, "g")
    assert configs["consumer.heartbeat.interval.ms"] == ("6000", ConfigSource.GROUP_CONFIG)
    found = await described(node, "g", synonyms=True)
    assert found["consumer.heartbeat.interval.ms"] == [("consumer.heartbeat.interval.ms", "6000",
                                                        ConfigSource.GROUP_CONFIG)]
    assert found["consumer.session.timeout.ms"] == []
    await incremental(node, "g", [("consumer.heartbeat.interval.ms", DELETE, None)])
    assert (await described(node, "g"))["consumer.heartbeat.interval.ms"] == ("5000", ConfigSource.DEFAULT_CONFIG)


async def test_alter_configs_replaces_the_groups_whole_set(node):
    await incremental(node, "g", [("consumer.heartbeat.interval.ms", SET, "6000"),
                                  ("share.auto.offset.reset", SET, "earliest")])
    r = await legacy(node, "g", {"consumer.session.timeout.ms": "50000"})
    assert (r.error_code, r.error_message) == (E.none, None)
    configs = await described(node, "g")
    assert configs["consumer.session.timeout.ms"] == ("50000", ConfigSource.GROUP_CONFIG)
    assert configs["consumer.heartbeat.interval.ms"] == ("5000", ConfigSource.DEFAULT_CONFIG)
    assert configs["share.auto.offset.reset"] == ("latest", ConfigSource.DEFAULT_CONFIG)
    r = await legacy(node, "g", {"consumer.session.timeout.ms": "1"})
    assert r.error_code == E.invalid_config


async def test_validate_only_changes_nothing(gc, node):
    r = await incremental(node, "g", [("consumer.heartbeat.interval.ms", SET, "7000")], validate_only=True)
    assert r.error_code == E.none
    assert join(gc).heartbeat_interval_ms == 5000


async def test_group_configs_survive_kill_9(nodes, node):
    await incremental(node, "g", [("consumer.heartbeat.interval.ms", SET, "8000")])
    nodes.crash(node)
    again = nodes()
    assert (await described(again, "g"))["consumer.heartbeat.interval.ms"] == ("8000", ConfigSource.GROUP_CONFIG)
    assert join(again.groups).heartbeat_interval_ms == 8000


@pytest.mark.parametrize("fields, extra, message", [
    ({"group_consumer_heartbeat_interval_ms": 500}, {},
     "group.consumer.heartbeat.interval.ms must be greater than or equal to group.consumer.min.heartbeat.interval.ms"),
    ({"group_consumer_session_timeout_ms": 70_000}, {},
     "group.consumer.session.timeout.ms must be less than or equal to group.consumer.max.session.timeout.ms"),
    ({}, {"group.consumer.max.session.timeout.ms": "40000"},
     "group.consumer.max.session.timeout.ms must be greater than or equal to group.consumer.min.session.timeout.ms"),
    ({"group_consumer_heartbeat_interval_ms": 6000, "group_consumer_session_timeout_ms": 6000},
     {"group.consumer.min.session.timeout.ms": "6000"},
     "group.consumer.heartbeat.interval.ms must be less than group.consumer.session.timeout.ms"),
])
def test_the_brokers_bounds_are_checked_at_start_up(tmp_path, fields, extra, message):
    with pytest.raises(ValueError) as e:
        BrokerConfig(data_dir=tmp_path, extra=extra, **fields)
    assert str(e.value) == message
    BrokerConfig(data_dir=tmp_path, group_consumer_heartbeat_interval_ms=500, group_consumer_session_timeout_ms=6000,
                 extra={"group.consumer.min.heartbeat.interval.ms": "500",
                        "group.consumer.min.session.timeout.ms": "6000"})
