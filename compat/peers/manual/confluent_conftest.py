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


# -- the suite's SASL clusters ---------------------------------------------------------------------
# Two fixtures start a trivup cluster of their own even with BROKERS set: ``sasl_cluster``
# (tests/integration/conftest.py's create_sasl_cluster: SASL/PLAIN, user sasl_user=sasl_user) and
# ``oauth_trivup_cluster`` (share_consumer_oauth/conftest.py, through create_trivup_cluster with
# sasl_mechanism OAUTHBEARER: trivup's unsecured-JWT listener, sub "admin", scope "requiredScope").
# With SASL_BROKERS / OAUTH_BROKERS set to a kafka-shim SASL_PLAINTEXT listener configured the same
# way (compat/README.md has the commands), both become the suite's ByoFixture with the client
# settings trivup's KafkaCluster._setup_client_conf would give.

def _sasl_fixture(bootstrap, **client_conf):
    from tests.integration.cluster_fixture import ByoFixture

    return ByoFixture({"bootstrap.servers": bootstrap, "broker.address.family": "v4",
                       "security.protocol": "SASL_PLAINTEXT", **client_conf})


def _patch_cluster_factories(module):
    import os

    create_sasl, create_trivup = module.create_sasl_cluster, module.create_trivup_cluster

    def create_sasl_cluster(conf={}):
        if not os.environ.get("SASL_BROKERS"):
            return create_sasl(conf)
        user, password = conf.get("sasl_users", "sasl_user=sasl_user").split(",")[0].split("=")
        return _sasl_fixture(os.environ["SASL_BROKERS"], **{"sasl.mechanism": "PLAIN", "sasl.username": user,
                                                             "sasl.password": password})

    def create_trivup_cluster(conf={}):
        if conf.get("sasl_mechanism") != "OAUTHBEARER" or not os.environ.get("OAUTH_BROKERS"):
            return create_trivup(conf)
        return _sasl_fixture(os.environ["OAUTH_BROKERS"], **{
            "sasl.mechanism": "OAUTHBEARER", "enable.sasl.oauthbearer.unsecure.jwt": True,
            "sasl.oauthbearer.config": "scope=requiredScope principal=admin"})

    module.create_sasl_cluster, module.create_trivup_cluster = create_sasl_cluster, create_trivup_cluster


def pytest_plugin_registered(plugin, manager):
    """Patch tests/integration/conftest.py as it is registered: before the share_consumer_oauth
    conftest imports create_trivup_cluster from it, and before any fixture runs."""
    if getattr(plugin, "__name__", "") == "tests.integration.conftest":
        _patch_cluster_factories(plugin)


# -- kafka-configs.sh ------------------------------------------------------------------------------
# test_share_consumer_callbacks.py sets client quotas with kafka-configs.sh from KAFKA_HOME, trivup's
# install or PATH, and skips without one. With KAFKA_SHIM_ROOT set, kafka_configs.py (beside this
# file in kafka-shim's repository) is that script: AlterClientQuotas for the client-id entity.

def pytest_configure(config):
    import os
    import stat
    import sys
    import tempfile

    root = os.environ.get("KAFKA_SHIM_ROOT")
    if not root or os.environ.get("KAFKA_HOME"):
        return
    bin_dir = tempfile.mkdtemp(prefix="kafka-shim-bin-")
    script = os.path.join(bin_dir, "kafka-configs.sh")
    helper = os.path.join(root, "compat", "peers", "manual", "kafka_configs.py")
    with open(script, "w") as f:
        f.write(f'#!/bin/sh\nexec "{sys.executable}" "{helper}" "$@"\n')
    os.chmod(script, os.stat(script).st_mode | stat.S_IXUSR)
    os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")
