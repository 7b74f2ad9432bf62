"""Java kafka-clients consumers over incremental fetch sessions (KIP-227): 24 partitions whose data
arrives a few at a time (compat/java/FetchSessionScenarios.java), read_committed and
read_uncommitted. The broker's control plane counts the incremental fetches it served, so the test
knows the consumers did not fall back to full requests. The same scenario runs with kafka-clients
4.x against 3.9 and 4.1 emulation (the 4.x consumer's fetch session handler and FetchRequest v13+
with topic ids where the emulated release advertises them)."""

from __future__ import annotations

import pytest

from shim.broker import BrokerThread

pytestmark = [pytest.mark.shim_only("reads the broker's fetch session counts through its control plane"),
              pytest.mark.compat(client="java", scenario="consumer.fetch_sessions")]

SCENARIO = "consumer.fetch_sessions"


@pytest.fixture
def broker(tmp_path):
    with BrokerThread(data_dir=tmp_path / "kafka-shim", listen="127.0.0.1:0", control_listen="127.0.0.1:0") as b:
        yield b


def test_consumers_of_many_partitions_read_everything_through_incremental_fetches(java_drivers, broker):
    check_incremental_fetches(java_drivers, broker)


@pytest.mark.parametrize("release", ["3.9", "4.1"])
def test_kafka_clients_4_read_everything_through_incremental_fetches(java4, tmp_path, release):
    with BrokerThread(data_dir=tmp_path / "kafka-shim", listen="127.0.0.1:0", control_listen="127.0.0.1:0",
                      kafka_version=release) as broker:
        check_incremental_fetches(java4, broker)


def check_incremental_fetches(drivers, broker) -> None:
    out = drivers.run("KafkaDriver", SCENARIO, broker.bootstrap_servers, timeout=300, timeout_s=200)
    result = out["results"][SCENARIO]
    if not result["ok"]:
        pytest.fail(f"{SCENARIO}: {result['error']}\n{result['trace']}")
    observed = result["observed"]
    written = {p: [w.rsplit(":", 1) for w in ws] for p, ws in observed["written"].items()}
    assert sum(len(ws) for ws in written.values()) == 12 * 4 + 6
    expected_ru = {p: [v for v, _ in ws] for p, ws in written.items()}
    expected_rc = {p: [v for v, kept in ws if kept == "true"] for p, ws in written.items()}
    assert {p: vs for p, vs in expected_rc.items() if vs} == observed["read"]["read_committed"]
    assert expected_ru == observed["read"]["read_uncommitted"]
    assert any(len(expected_rc[p]) < len(expected_ru[p]) for p in written)  # aborted records were skipped
    stats = broker.control.fetch_sessions()
    # two consumers, each polling through 13 catch-ups over one session of 24 partitions
    assert stats["incremental_fetches"] >= 2 * 13, stats


def test_a_consumer_of_a_cluster_keeps_a_session_with_each_broker(java_drivers, tmp_path):
    """Each simulated broker has its own session cache, as each Kafka broker has: the consumer's
    per-broker fetch session handlers each hold a session with the broker leading their partitions,
    and every broker answers its own incremental fetches."""
    with BrokerThread(data_dir=tmp_path / "kafka-shim", listen="127.0.0.1:0", control_listen="127.0.0.1:0",
                      brokers=3) as broker:
        check_incremental_fetches(java_drivers, broker)
        per_broker = broker.control.fetch_sessions()["brokers"]
        assert sorted(int(n) for n, s in per_broker.items() if s["incremental_fetches"] > 0) == [0, 1, 2], per_broker
