"""pytest plugin (entry point ``pytest11``): the ``kafka_shim`` fixture, a fresh broker per test,
``kafka_shim_secure``, one with SASL and TLS listeners (README.md, Security), and
``kafka_shim_acls``, the same with Kafka's StandardAuthorizer (README.md, ACLs).

The emulated Kafka release is 3.9 unless the test says otherwise, either with a marker,
``@pytest.mark.kafka_version("4.0")``, or by parametrizing the fixture indirectly,
``@pytest.mark.parametrize("kafka_shim", ["3.9", "4.0"], indirect=True)``.

``@pytest.mark.kafka_brokers(3)`` (or the environment variable ``KAFKA_SHIM_BROKERS=3``) makes the
fixture a simulated cluster of three brokers in one process (README.md, A simulated cluster): ``.node_down(1)``, ``.move_leader(topic, p, node)``,
``.move_coordinator("group", group_id, node)``, ``.slow_follower(topic, p, node)`` ...
"""

from __future__ import annotations

import os

import pytest

from .broker import BrokerThread, authorized_broker, secure_broker
from .protocol.kafka_releases import DEFAULT_RELEASE


def pytest_configure(config):
    config.addinivalue_line("markers", "kafka_version(version): the Kafka release the kafka_shim fixture emulates")
    config.addinivalue_line("markers", "kafka_brokers(n): the kafka_shim fixture simulates n brokers")


def _kafka_version(request) -> str:
    if hasattr(request, "param"):
        return request.param
    marker = request.node.get_closest_marker("kafka_version")
    return marker.args[0] if marker else DEFAULT_RELEASE


def _brokers(request) -> int:
    marker = request.node.get_closest_marker("kafka_brokers")
    return marker.args[0] if marker else int(os.environ.get("KAFKA_SHIM_BROKERS") or 1)


@pytest.fixture
def kafka_shim(request, tmp_path):
    """A broker on 127.0.0.1 (free port) over a fresh data directory; ``.bootstrap_servers``, and
    ``.control`` to inject faults (README.md, Fault injection): ``kafka_shim.control.close(api="Produce",
    when="after")``, ``kafka_shim.control.wait(rule=1, fired=1)``."""
    # group.initial.rebalance.delay.ms=0 instead of Kafka's 3000: a test's first rebalance need not wait.
    with BrokerThread(data_dir=tmp_path / "kafka-shim", listen="127.0.0.1:0", group_initial_rebalance_delay_ms=0,
                      kafka_version=_kafka_version(request), brokers=_brokers(request)) as broker:
        yield broker


@pytest.fixture
def kafka_shim_secure(tmp_path):
    """A broker with PLAINTEXT, SASL_PLAINTEXT, SSL and SASL_SSL listeners on free ports, a throwaway CA
    (``.certs``: ca.pem, client-cert.pem, client-key.pem ...) and the user ``alice``/``alice-secret``
    for PLAIN and SCRAM; ``.bootstrap("SASL_SSL")`` is that listener's address. Needs ``cryptography``."""
    with secure_broker(tmp_path) as broker:
        yield broker


@pytest.fixture
def kafka_shim_acls(tmp_path):
    """``kafka_shim_secure`` with ACLs enforced (StandardAuthorizer): ``admin``/``admin-secret`` is a
    super user, ``alice``/``alice-secret`` may do nothing until the test gives her ACLs:
    ``kafka_shim_acls.add_acls(acl("User:alice", "WRITE", topic="orders"))`` (shim.security.acls.acl)."""
    with authorized_broker(tmp_path) as broker:
        yield broker
