"""The expiration configs as Kafka describes and alters them: transactional.id.expiration.ms and
transaction.remove.expired.transaction.cleanup.interval.ms are read-only, producer.id.expiration.ms is a
cluster-wide dynamic config (DynamicBrokerConfig.DynamicProducerStateManagerConfig), and
producer.id.expiration.check.interval.ms is internal: listed only where it is set."""

from __future__ import annotations

import pytest

from shim.config import BrokerConfig
from shim.configs.describe import ConfigSource
from shim.configs.properties import config_from_properties
from shim.errors import ErrorCode

from .test_config_apis import BROKER, SET, by_name, describe, incremental

NAMES = ("transactional.id.expiration.ms", "transaction.remove.expired.transaction.cleanup.interval.ms",
         "producer.id.expiration.ms", "producer.id.expiration.check.interval.ms")


async def test_defaults_and_the_internal_check_interval(node_of):
    node = node_of()
    configs = by_name(await describe(node, BROKER, "0", docs=True))
    assert (configs["transactional.id.expiration.ms"].value, configs["transactional.id.expiration.ms"].read_only) \
        == ("604800000", True)
    assert configs["transaction.remove.expired.transaction.cleanup.interval.ms"].value == "3600000"
    assert (configs["producer.id.expiration.ms"].value, configs["producer.id.expiration.ms"].read_only) \
        == ("86400000", False)
    assert "producer.id.expiration.check.interval.ms" not in configs  # internal (ConfigDef.defineInternal)
    assert (node.config.transactional_id_expiration_ms, node.config.producer_id_expiration_check_interval_ms) \
        == (604_800_000, 600_000)


async def test_properties_set_the_fields_and_describe_as_static(node_of):
    node = node_of(**dict(zip(NAMES, ("10000", "500", "5000", "250"))))
    c = node.config
    assert (c.transactional_id_expiration_ms, c.transaction_remove_expired_check_interval_ms,
            c.producer_id_expiration_ms, c.producer_id_expiration_check_interval_ms) == (10000, 500, 5000, 250)
    assert (node.txn.id_expiration_ms, node.txn.id_expiration_check_interval_ms) == (10000, 500)
    configs = by_name(await describe(node, BROKER, "0", NAMES, docs=True))
    check = configs["producer.id.expiration.check.interval.ms"]
    assert (check.value, check.config_source, check.read_only) == ("250", ConfigSource.STATIC_BROKER_CONFIG, True)
    assert check.config_type == 3 and "producer.id.expiration.ms" in check.documentation  # INT


def test_kafka_validation_of_the_values(tmp_path):
    for name in NAMES:
        with pytest.raises(ValueError, match=f"Invalid value 0 for configuration {name}"):
            config_from_properties({name: "0"}, BrokerConfig(data_dir=tmp_path))


async def test_only_producer_id_expiration_changes_at_runtime(node_of):
    node = node_of()
    (r,) = await incremental(node, [(BROKER, "", [("producer.id.expiration.ms", SET, "100")])])
    assert r.error_code == ErrorCode.none
    assert node.config.producer_id_expiration_ms == 100
    (r,) = await incremental(node, [(BROKER, "0", [("producer.id.expiration.ms", SET, "200")])])
    assert (r.error_code, node.config.producer_id_expiration_ms) == (ErrorCode.none, 200)
    for name in NAMES[:2] + NAMES[3:]:
        (r,) = await incremental(node, [(BROKER, "", [(name, SET, "1000")])])
        assert (r.error_code, r.error_message) == (ErrorCode.invalid_request,
                                                   f"Cannot update these configs dynamically: Set({name})")
