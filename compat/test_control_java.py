"""Java kafka-clients under faults armed through the control plane (compat/java/ControlDriver.java
drives it over HTTP itself; the idempotent producer is KafkaDriver's, with the fault armed first)."""

from __future__ import annotations

import pytest

from compat.wire import Wire
from shim.broker import BrokerThread

pytestmark = pytest.mark.shim_only("drives the broker's control plane")


@pytest.fixture
def broker(tmp_path):
    with BrokerThread(data_dir=tmp_path / "kafka-shim", listen="127.0.0.1:0", control_listen="127.0.0.1:0",
                      group_initial_rebalance_delay_ms=0) as b:
        yield b


def run(java_drivers, broker, driver, scenario, **options):
    out = java_drivers.run(driver, scenario, broker.bootstrap_servers, timeout=300, timeout_s=200,
                           control=broker.broker.control_url, **options)
    result = out["results"][scenario]
    if not result["ok"]:
        pytest.fail(f"{scenario}: {result['error']}\n{result['trace']}")
    return result["observed"]


def values(records):
    return [r["v"] for r in records]


def test_idempotent_producer_across_lost_responses(java_drivers, broker):
    n, topic = 1500, "control-java-idempotent"
    rule = broker.control.close(api="Produce", when="after", skip=3, count=4)["rule"]
    observed = run(java_drivers, broker, "KafkaDriver", "producer.idempotent_retries", topic=topic, records=n)
    assert broker.control.wait(rule=rule, fired=4)["fired"] == 4
    assert observed["callbacks_per_record"] == {"1": n}
    assert observed["offsets"] == list(range(n))
    wire = Wire(broker.bootstrap_servers)
    try:
        headers = wire.fetch_batches(topic, 0, n)
        expected = 0
        for h in headers:  # each sequence once, no gap
            assert h.base_sequence == expected
            expected += h.records_count
        assert expected == n == wire.list_offset(topic, 0, 0)
    finally:
        wire.close()


@pytest.mark.parametrize("error", ["NOT_COORDINATOR", "COORDINATOR_LOAD_IN_PROGRESS"])
def test_transaction_survives_a_failing_coordinator(java_drivers, broker, error):
    o = run(java_drivers, broker, "ControlDriver", "control.txn_coordinator_failing", error=error)
    assert (o["offset_0"], o["offset_1"], o["mid_fired"], o["end_fired"]) == (0, 0, 2, 1)
    assert (values(o["rc_0"]), values(o["rc_1"])) == (["one"], ["two"])
    assert (o["rc_position_0"], o["rc_position_1"]) == (2, 2)


def test_a_producer_whose_commit_response_is_lost(java_drivers, broker):
    broker.control.log_requests()
    o = run(java_drivers, broker, "ControlDriver", "control.lost_commit")
    assert (o["offset_once"], o["fired"], o["offset_next"]) == (0, 1, 2)
    assert values(o["rc"]) == ["once", "next"]
    outcomes = [e["outcome"] for e in broker.control.requests(api="EndTxn")["requests"]]
    assert outcomes == ["closed after", "answered", "answered"]


def test_held_markers_keep_read_committed_at_the_lso(java_drivers, broker):
    o = run(java_drivers, broker, "ControlDriver", "control.markers_held")
    assert (o["held_records"], o["held_position"], o["held_lso"], o["held_hw"]) == ([], 0, 0, 2)
    assert '"released": [' in o["released"]
    assert values(o["after_records"]) == ["a", "b"] and o["after_position"] == 3


def test_transaction_expires_when_the_clock_advances(java_drivers, broker):
    o = run(java_drivers, broker, "ControlDriver", "control.txn_expires")
    assert "control-expire-T" in o["advanced"]
    assert o["lso_after"] == 2  # the ABORT marker at 1
    assert any(name.endswith(("ProducerFencedException", "InvalidProducerEpochException"))
               for name in o["commit_error"]["chain"]), o["commit_error"]
    assert (o["rc"], o["rc_position"]) == ([], 2)


@pytest.mark.parametrize("error", ["NOT_COORDINATOR", "COORDINATOR_LOAD_IN_PROGRESS"])
def test_consumer_group_survives_coordinator_errors(java_drivers, broker, error):
    o = run(java_drivers, broker, "ControlDriver", "control.group_coordinator_errors", error=error)
    assert (o["fired"], o["records"], o["committed"]) == (2, 20, 20)


def test_offsets_expire_when_the_clock_advances(java_drivers, tmp_path):
    """offsets.retention.minutes=1: the left group and the manual-assignment commits lose their
    offsets and vanish, the Stable group keeps its (README.md, Consumer groups, Offset expiration)."""
    with BrokerThread(data_dir=tmp_path / "expiry", listen="127.0.0.1:0", control_listen="127.0.0.1:0",
                      group_initial_rebalance_delay_ms=0, offsets_retention_minutes=1,
                      offsets_retention_check_interval_ms=1_000) as b:
        o = run(java_drivers, b, "ControlDriver", "control.offsets_expire")
    kept, gone, solo = (o["groups"][k] for k in ("kept", "gone", "solo"))
    assert o["gone_state_before"] == "Empty" and {kept, gone, solo} <= set(o["listed_before"])
    assert '"expired_members": []' in o["advanced"] and f'"{gone}"' in o["advanced"] and f'"{solo}"' in o["advanced"]
    assert (o["kept_offsets"], o["kept_state"], o["kept_committed"]) == ([3], "Stable", 3)
    assert (o["gone_offsets"], o["gone_state"], o["gone_committed"]) == ([], "Dead", -1)
    assert (o["solo_offsets"], o["solo_state"]) == ([], "Dead")
    assert kept in o["listed_after"] and gone not in o["listed_after"] and solo not in o["listed_after"]
