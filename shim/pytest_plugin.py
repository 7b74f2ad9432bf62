"""pytest plugin (entry point ``pytest11``): the ``kafka_shim`` fixture, a fresh broker per test."""

from __future__ import annotations

import pytest

from .broker import BrokerThread


@pytest.fixture
def kafka_shim(tmp_path):
    """A broker on 127.0.0.1 (free port) over a fresh data directory; ``.bootstrap_servers``."""
    # group.initial.rebalance.delay.ms=0 instead of Kafka's 3000: a test's first rebalance need not wait.
    with BrokerThread(data_dir=tmp_path / "kafka-shim", listen="127.0.0.1:0",
                      group_initial_rebalance_delay_ms=0) as broker:
        yield broker
