"""CLIENT_METRICS config resources (KIP-714 subscriptions) through IncrementalAlterConfigs,
AlterConfigs, DescribeConfigs and ListConfigResources: ClientMetricsConfigs.validate's codes and
messages per emulated release, ConfigHelper's entries, removal with the last key, and kill -9."""

from __future__ import annotations

import pytest

from shim.configs.describe import ConfigSource
from shim.errors import ErrorCode as E

from node_support import NodeFactory

from .support import call, module
from .test_config_apis import describe, incremental, legacy

CLIENT_METRICS, GROUP = 16, 32
SET, DELETE, APPEND = 0, 1, 2
RANGE = "Invalid value {} for interval.ms, interval must be between 100 and 3600000 (1 hour)"


@pytest.fixture
def nodes(tmp_path):
    factory = NodeFactory(tmp_path / "data")
    yield factory
    factory.crash_all()


async def set_one(node, name, key, value, op=SET):
    (r,) = await incremental(node, [(CLIENT_METRICS, name, [(key, op, value)])])
    return r.error_code, r.error_message


async def listed(node, version=0, types=()):
    r = await call(node, 74, version, module(74, version).ListConfigResourcesRequest(
        **({"resource_types": types} if version else {})))
    assert r.error_code == E.none
    return [(c.resource_name, getattr(c, "resource_type", CLIENT_METRICS)) for c in r.config_resources]


@pytest.mark.parametrize("key, value, answer", [
    ("interval.ms", "99", (E.invalid_request, RANGE.format(99))),
    ("interval.ms", "3600001", (E.invalid_request, RANGE.format(3600001))),
    ("interval.ms", " 250 ", (E.none, None)),
    ("interval.ms", "bbb", (E.invalid_config, "Invalid value bbb for configuration interval.ms: "
                                              "Not a number of type INT")),
    ("interval.ms", "2147483648", (E.invalid_config, "Invalid value 2147483648 for configuration interval.ms: "
                                                     "Not a number of type INT")),
    ("colour", "red", (E.invalid_request, "Unknown client metrics configuration: colour")),
    ("match", "client_id=app.*, client_software_name = java", (E.none, None)),
    ("match", "", (E.none, None)),
    ("match", "client_id=", (E.invalid_config, "Illegal client matching pattern: client_id=")),
    ("match", "client_id=a=b", (E.invalid_config, "Illegal client matching pattern: client_id=a=b")),
    ("match", "client_idx=a", (E.invalid_config, "Illegal client matching pattern: client_idx=a")),
    ("match", "client_id=ok,client_source_port=(", (E.invalid_config,
                                                     "Illegal client matching pattern: client_source_port=(")),
    ("metrics", "org.apache.kafka.producer., org.apache.kafka.consumer.", (E.none, None)),
    # java.util.regex: "Illegal repetition range"; Python's re raised OverflowError out of the handler
    ("match", "client_id=a{99999999999}", (E.invalid_config, "Illegal client matching pattern: client_id=a{99999999999}")),
    # groups nested past Python's parser (RecursionError out of the handler): refused too
    ("match", "client_id=" + "(" * 1000 + ")" * 1000, (E.invalid_config, "Illegal client matching pattern: client_id="
                                                        + "(" * 1000 + ")" * 1000)),
])
async def test_validation_as_kafka_4(nodes, key, value, answer):
    node = nodes(kafka_version="4.1")
    assert await set_one(node, "sub", key, value) == answer
    assert (await listed(node)) == ([("sub", CLIENT_METRICS)] if answer[0] == E.none else [])


async def test_kafka_3_9_parses_as_it_did(nodes):
    node = nodes(kafka_version="3.9")
    # Integer.parseInt on the raw value: its NumberFormatException was an unknown server error
    assert await set_one(node, "sub", "interval.ms", " 250") == (E.unknown_server_error, None)
    # the raw value split on commas: an empty match is one empty, illegal pattern
    assert await set_one(node, "sub", "match", "") == (E.invalid_config, "Illegal client matching pattern: ")
    assert await set_one(node, "sub", "match", "client_id=a, client_id=b") == (E.none, None)


async def test_an_empty_name_and_append_are_refused(nodes):
    node = nodes(kafka_version="4.1")
    assert await set_one(node, "", "interval.ms", "1000") == (E.invalid_request, "Subscription name can't be empty")
    assert await set_one(node, "sub", "metrics", "a", op=APPEND) == (
        E.invalid_config, "Can't APPEND to key metrics because its type is not LIST.")


async def test_validate_only_and_the_whole_set_is_validated(nodes):
    node = nodes(kafka_version="4.1")
    (r,) = await incremental(node, [(CLIENT_METRICS, "sub", [("interval.ms", SET, "1000")])], validate_only=True)
    assert r.error_code == E.none and await listed(node) == []
    assert await set_one(node, "sub", "interval.ms", "1000") == (E.none, None)
    # one bad key fails the resource: nothing of it is applied
    (r,) = await incremental(node, [(CLIENT_METRICS, "sub", [("metrics", SET, "x."), ("interval.ms", SET, "5")])])
    assert (r.error_code, r.error_message) == (E.invalid_request, RANGE.format(5))
    assert {c.name: c.value for c in (await describe(node, CLIENT_METRICS, "sub")).configs}["metrics"] == ""


async def test_described_with_defaults_from_kafka_4_1(nodes):
    node = nodes(kafka_version="4.1")
    assert await set_one(node, "sub", "metrics", "a. , b.") == (E.none, None)
    result = await describe(node, CLIENT_METRICS, "sub", synonyms=True, docs=True)
    got = {c.name: (c.value, c.config_source, c.config_type, [(s.name, s.value, s.source) for s in c.synonyms])
           for c in result.configs}
    assert got == {
        "interval.ms": ("300000", ConfigSource.DEFAULT_CONFIG, 3, []),
        "match": ("", ConfigSource.DEFAULT_CONFIG, 7, []),
        "metrics": ("a.,b.", ConfigSource.CLIENT_METRICS_CONFIG, 7,
                    [("metrics", "a.,b.", ConfigSource.CLIENT_METRICS_CONFIG)]),
    }
    assert all(c.documentation for c in result.configs)
    never = await describe(node, CLIENT_METRICS, "never_made", keys=("interval.ms",))
    assert [(c.name, c.value, c.config_source) for c in never.configs] == [
        ("interval.ms", "300000", ConfigSource.DEFAULT_CONFIG)]


async def test_described_as_set_before_kafka_4_1(nodes):
    node = nodes(kafka_version="4.0")
    assert await set_one(node, "sub", "interval.ms", "1000") == (E.none, None)
    result = await describe(node, CLIENT_METRICS, "sub", synonyms=True)
    assert [(c.name, c.value, c.config_source, c.config_type, c.synonyms) for c in result.configs] == [
        ("interval.ms", "1000", ConfigSource.CLIENT_METRICS_CONFIG, 0, ())]
    assert (await describe(node, CLIENT_METRICS, "never_made")).configs == ()


async def test_deleting_the_last_key_removes_the_subscription(nodes):
    node = nodes(kafka_version="4.1")
    await incremental(node, [(CLIENT_METRICS, "b", [("interval.ms", SET, "1000"), ("metrics", SET, "x.")]),
                             (CLIENT_METRICS, "a", [("match", SET, "client_id=c")])])
    assert await listed(node) == [("a", CLIENT_METRICS), ("b", CLIENT_METRICS)]
    assert await set_one(node, "b", "interval.ms", None, op=DELETE) == (E.none, None)
    assert await listed(node) == [("a", CLIENT_METRICS), ("b", CLIENT_METRICS)]
    assert await set_one(node, "b", "metrics", None, op=DELETE) == (E.none, None)
    assert await listed(node) == [("a", CLIENT_METRICS)]
    # AlterConfigs replaces the whole set: an empty one removes the subscription
    r = await legacy(node, CLIENT_METRICS, "a", {})
    assert r.error_code == E.none and await listed(node) == []


async def test_legacy_alter_configs_validates_and_replaces(nodes):
    node = nodes(kafka_version="4.1")
    r = await legacy(node, CLIENT_METRICS, "sub", {"interval.ms": "50"})
    assert (r.error_code, r.error_message) == (E.invalid_request, RANGE.format(50))
    r = await legacy(node, CLIENT_METRICS, "sub", {"interval.ms": "500", "match": "client_id=x"})
    assert r.error_code == E.none
    r = await legacy(node, CLIENT_METRICS, "sub", {"metrics": "y."})
    own = {c.name: c.config_source for c in (await describe(node, CLIENT_METRICS, "sub")).configs}
    assert r.error_code == E.none and own == {"interval.ms": ConfigSource.DEFAULT_CONFIG,
                                              "match": ConfigSource.DEFAULT_CONFIG,
                                              "metrics": ConfigSource.CLIENT_METRICS_CONFIG}


async def test_list_config_resources_v1_lists_subscriptions_and_group_configs(nodes):
    node = nodes(kafka_version="4.1")
    assert await set_one(node, "sub", "interval.ms", "111") == (E.none, None)
    (g,) = await incremental(node, [(GROUP, "grp", [("consumer.session.timeout.ms", SET, "50000")])])
    assert g.error_code == E.none
    every = await listed(node, 1)
    assert every[:2] == [("grp", GROUP), ("sub", CLIENT_METRICS)]
    assert await listed(node, 1, (CLIENT_METRICS,)) == [("sub", CLIENT_METRICS)]
    assert await listed(node, 1, (GROUP,)) == [("grp", GROUP)]


async def test_subscriptions_survive_kill_9(nodes):
    node = nodes(kafka_version="4.1")
    assert await set_one(node, "sub", "interval.ms", "1000") == (E.none, None)
    assert await set_one(node, "gone", "metrics", "x.") == (E.none, None)
    assert await set_one(node, "gone", "metrics", None, op=DELETE) == (E.none, None)
    nodes.crash(node)
    again = nodes(kafka_version="4.1")
    assert await listed(again) == [("sub", CLIENT_METRICS)]
    values = {c.name: (c.value, c.config_source) for c in (await describe(again, CLIENT_METRICS, "sub")).configs}
    assert values["interval.ms"] == ("1000", ConfigSource.CLIENT_METRICS_CONFIG)
