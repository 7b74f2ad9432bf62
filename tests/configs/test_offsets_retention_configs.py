"""offsets.retention.minutes and offsets.retention.check.interval.ms as Kafka describes them
(read-only broker configs) and as they reach the group coordinator's offset expiration."""

from __future__ import annotations

import pytest

from shim.config import BrokerConfig
from shim.configs.describe import ConfigSource
from shim.configs.properties import config_from_properties
from shim.errors import ErrorCode

from .test_config_apis import BROKER, SET, by_name, describe, incremental

NAMES = ("offsets.retention.minutes", "offsets.retention.check.interval.ms")


async def test_the_defaults_are_kafkas_and_described_read_only(node_of):
    node = node_of()
    configs = by_name(await describe(node, BROKER, "0", NAMES, docs=True))
    minutes, interval = configs["offsets.retention.minutes"], configs["offsets.retention.check.interval.ms"]
    assert (minutes.value, minutes.read_only, minutes.config_source) == ("10080", True, ConfigSource.DEFAULT_CONFIG)
    assert (interval.value, interval.read_only) == ("600000", True)
    assert "becomes empty" in minutes.documentation
    assert (node.groups.expiration.retention_ms, node.groups.expiration.check_interval_ms) == (604_800_000, 600_000)


async def test_properties_reach_the_coordinator_and_describe_as_static(node_of):
    node = node_of(**{"offsets.retention.minutes": "1", "offsets.retention.check.interval.ms": "250"})
    assert (node.config.offsets_retention_minutes, node.config.offsets_retention_check_interval_ms) == (1, 250)
    assert (node.groups.expiration.retention_ms, node.groups.expiration.check_interval_ms) == (60_000, 250)
    configs = by_name(await describe(node, BROKER, "0", NAMES))
    assert [(configs[n].value, configs[n].config_source) for n in NAMES] == [
        ("1", ConfigSource.STATIC_BROKER_CONFIG), ("250", ConfigSource.STATIC_BROKER_CONFIG)]


def test_kafka_validation_of_the_values(tmp_path):
    for name in NAMES:
        with pytest.raises(ValueError, match=f"Invalid value 0 for configuration {name}"):
            config_from_properties({name: "0"}, BrokerConfig(data_dir=tmp_path))


async def test_neither_changes_at_runtime(node_of):
    node = node_of()
    for name in NAMES:
        (r,) = await incremental(node, [(BROKER, "", [(name, SET, "5")])])
        assert (r.error_code, r.error_message) == (ErrorCode.invalid_request,
                                                   f"Cannot update these configs dynamically: Set({name})")
