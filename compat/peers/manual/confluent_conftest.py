"""Root conftest.py for a run of confluent-kafka-python's tests/integration against kafka-shim.

Put it beside the checkout's ``tests/`` and set ``BROKERS`` to kafka-shim's bootstrap address: the
suite's own ``kafka_cluster`` fixture then uses its ``ByoFixture`` (an existing cluster) instead
of starting one with trivup. Its ``cluster_fixture.py`` imports trivup and the Schema Registry
clients at module level; neither is used with BROKERS set and no SR_URL, so stand-ins are put in
``sys.modules`` (the registry's raise ``pytest.skip``: those tests need a Schema Registry).

Usage: compat/README.md, "confluent-kafka-python's own suite (manual)".
"""
import sys
import types

import pytest


def _module(name, **attrs):
    mod = types.ModuleType(name)
    mod.__dict__.update(attrs)
    sys.modules.setdefault(name, mod)
    return mod


class _NoRegistry:
    def __init__(self, *a, **k):
        pytest.skip("needs a Confluent Schema Registry")


_module("trivup")
_module("trivup.clusters")
_module("trivup.clusters.KafkaCluster", KafkaCluster=None)
try:
    import confluent_kafka.schema_registry  # noqa: F401  (installed with its extras: use it)
except ImportError:
    _module("confluent_kafka.schema_registry._async.schema_registry_client",
            AsyncSchemaRegistryClient=_NoRegistry)
    _module("confluent_kafka.schema_registry.schema_registry_client", SchemaRegistryClient=_NoRegistry)
try:
    import confluent_kafka.avro  # noqa: F401
except ImportError:  # the legacy Avro consumer needs the avro package: only Schema Registry tests use it
    _module("confluent_kafka.avro", AvroConsumer=_NoRegistry)
