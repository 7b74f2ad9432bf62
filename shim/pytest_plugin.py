"""pytest plugin (entry point ``pytest11``): the ``kafka_shim`` fixture, a fresh broker per test,
and ``kafka_shim_secure``, one with SASL and TLS listeners (README.md, Security)."""

from __future__ import annotations

import pytest

from .broker import BrokerThread, secure_broker


@pytest.fixture
def kafka_shim(tmp_path):
    """A broker on 127.0.0.1 (free port) over a fresh data directory; ``.bootstrap_servers``."""
    with BrokerThread(data_dir=tmp_path / "kafka-shim", listen="127.0.0.1:0") as broker:
        yield broker


@pytest.fixture
def kafka_shim_secure(tmp_path):
    """A broker with PLAINTEXT, SASL_PLAINTEXT, SSL and SASL_SSL listeners on free ports, a throwaway CA
    (``.certs``: ca.pem, client-cert.pem, client-key.pem ...) and the user ``alice``/``alice-secret``
    for PLAIN and SCRAM; ``.bootstrap("SASL_SSL")`` is that listener's address. Needs ``cryptography``."""
    with secure_broker(tmp_path) as broker:
        yield broker
