"""Replaces tests/conftest.py of an aiokafka checkout (tag v0.14.0) so that its integration tests
run against kafka-shim instead of the Kafka it starts in Docker.

The fixtures keep their names and shapes (``kafka_server``, ``setup_test_class``, ``loop``...): a
session-wide ``kafka-shim serve`` with the two settings of the suite's Docker image that its tests
rely on (``NUM_PARTITIONS=2``; topics created on first use). Only the PLAINTEXT listener exists:
the suite's SSL, SASL and Kerberos fixtures exec into the container (keytool, kafka-acls.sh,
kafka-configs.sh, kadmin), so the tests that use them skip with that reason.

Usage: compat/README.md, "aiokafka's own suite (manual)".
"""
import asyncio
import gc
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, os.environ["KAFKA_SHIM_ROOT"])
from compat.peers.runner import BrokerProcess  # noqa: E402

KAFKA_VERSION = os.environ.get("AIOKAFKA_KAFKA_VERSION", "3.9.0")


def pytest_addoption(parser):
    parser.addoption("--docker-image", action="store", default=f"shim:{KAFKA_VERSION}")
    parser.addoption("--no-pull", action="store_true")


@dataclass
class KafkaServer:
    host: str
    port: int
    ssl_port: int
    sasl_plain_port: int
    sasl_ssl_port: int
    container: object = None

    @property
    def hosts(self):
        return [f"{self.host}:{self.port}"]


class _NeedsContainer:
    """ACLManager / KafkaConfig / KerberosUtils stand-in: they run Kafka's shell tools in the container."""

    def __init__(self, what):
        self._what = what

    def __getattr__(self, name):
        pytest.skip(f"needs {self._what} inside the suite's Kafka container")


@pytest.fixture(scope="session")
def kafka_server(tmp_path_factory):
    data = tmp_path_factory.mktemp("shim")
    args = ["--num-partitions", "2", "--group-min-session-timeout-ms", "1000"]
    with BrokerProcess(data / "data", data / "broker.log", args) as broker:
        host, port = broker.bootstrap_servers.rsplit(":", 1)
        # the SSL and SASL listeners are absent: a closed port, so those tests fail fast
        yield KafkaServer(host, int(port), 1, 1, 1)


@pytest.fixture(scope="session")
def ssl_folder():
    pytest.skip("SSL certificates are made by the suite's Kafka container (gen-ssl-certs.sh)")


@pytest.fixture(scope="class")
def loop(request):
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    yield loop
    if not loop._closed:
        loop.call_soon(loop.stop)
        loop.run_forever()
        loop.close()
    gc.collect()
    asyncio.set_event_loop(None)


@pytest.fixture(autouse=True)
def collect_garbage():
    yield
    gc.collect()


@pytest.fixture(scope="class")
def setup_test_class_serverless(request, loop):
    request.cls.loop = loop


@pytest.fixture(scope="class")
def setup_test_class(request, loop, kafka_server):
    cls = request.cls
    cls.loop = loop
    cls.kafka_host, cls.kafka_port = kafka_server.host, kafka_server.port
    cls.kafka_ssl_port = kafka_server.ssl_port
    cls.kafka_sasl_plain_port = kafka_server.sasl_plain_port
    cls.kafka_sasl_ssl_port = kafka_server.sasl_ssl_port
    cls.ssl_folder = Path("tests/ssl_cert")
    cls.acl_manager = _NeedsContainer("kafka-acls.sh")
    cls.kerberos_utils = _NeedsContainer("a Kerberos KDC")
    cls.kafka_config = _NeedsContainer("kafka-configs.sh")
    cls.hosts = kafka_server.hosts
    cls.kafka_version = KAFKA_VERSION
