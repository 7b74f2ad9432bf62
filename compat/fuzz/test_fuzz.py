"""Bounded fuzz runs in the normal test suite (compat/fuzz/run.py says what is checked).

Mutated client requests against a ``kafka-shim serve`` process, with a fixed seed so a failure
repeats: every corpus frame intact, with hostile values and byte-mutated, then random cases for the
rest of 8 s; KAFKA_SHIM_FUZZ_SEED and KAFKA_SHIM_FUZZ_SECONDS change both. KAFKA_SHIM_FUZZ_DEEP=1
gives the fuzzers here longer budgets (30 s of mutated requests, 15 s of SASL and TLS, 60 s of
sequences instead of 15 s); longer runs: ``python -m compat.fuzz --duration 1800 --seed N`` (compat/README.md).
"""

from __future__ import annotations

import json
import os

import pytest

from compat.fuzz.record import load
from compat.fuzz.run import fuzz

pytestmark = pytest.mark.shim_only("fuzzes a kafka-shim process of its own and reads its log and /proc")

DEEP = os.environ.get("KAFKA_SHIM_FUZZ_DEEP", "") not in ("", "0")


def budget(variable: str, seconds: float, deep_seconds: float) -> float:
    """Seconds of fuzzing: ``variable`` if set, else the deep budget under KAFKA_SHIM_FUZZ_DEEP=1."""
    return float(os.environ.get(variable, deep_seconds if DEEP else seconds))


def test_mutated_requests_leave_the_broker_serving(tmp_path):
    seed = int(os.environ.get("KAFKA_SHIM_FUZZ_SEED", 20261123))
    result = fuzz(budget("KAFKA_SHIM_FUZZ_SECONDS", 8, 30), seed, tmp_path)
    report = json.dumps(vars(result), indent=1)  # the findings carry the bytes sent, to replay
    assert result.failures == [], report
    # every corpus frame was sent each way (mutate.sweep), then random cases followed
    assert result.swept == len(load()) and result.cases > result.swept, report
    # Both kinds of connection were seen and checked, and the canary kept being acknowledged.
    assert result.closed_as_malformed > 0 and result.fully_answered > 0, report
    assert result.canary_acked > 0, report


def test_fuzzed_sasl_exchanges_and_tls_connections_leave_the_broker_serving(tmp_path):
    """compat/fuzz/secure.py: mutated SASL exchanges (every mechanism, v0 and v1 framing) on
    SASL_PLAINTEXT and SASL_SSL, and garbage, cut handshakes and mutated requests over TLS ended by a
    bare FIN, a close_notify or a reset: each of those once (SecureRun.sweep), then random ones for
    5 s; no connection may stay open or leak."""
    from compat.fuzz.secure import SecureRun, secure_fuzz

    seed = int(os.environ.get("KAFKA_SHIM_FUZZ_SEED", 20261123))
    result = secure_fuzz(budget("KAFKA_SHIM_FUZZ_SECURE_SECONDS", 5, 15), seed, tmp_path)
    report = json.dumps({k: v for k, v in vars(result).items() if k != "findings"}, indent=1)
    assert result.failures == [], report
    # clients that finished, clients the broker refused or reset, and the canary all happened
    assert result.outcomes.get("eof", 0) > 0 and result.outcomes.get("reset", 0) > 0, report
    assert result.cases > len(SecureRun.sweep()), report  # random connections followed the sweep
    assert result.canary_acked > 0, report


def test_sequences_of_hostile_requests_keep_the_state_machines_sound():
    """compat/fuzz/stateful.py: every API and version each release from 3.7 to 4.1 serves, then
    seeded sequences weighted to the group, share and transaction APIs, as concurrent requests on
    an in-process node; no handler may raise, answer UNKNOWN_SERVER_ERROR where Kafka does not,
    log an error, hold the loop, or break a share partition's or a consumer group's invariants."""
    from compat.fuzz.stateful import stateful_fuzz

    seed = int(os.environ.get("KAFKA_SHIM_FUZZ_SEED", 20261123))
    results = stateful_fuzz(budget("KAFKA_SHIM_FUZZ_STATEFUL_SECONDS", 15, 60), seed)
    for result in results:
        report = json.dumps({k: v for k, v in vars(result).items() if k not in ("by_api", "served")}, indent=1)
        assert result.failures == [], report
        assert set(result.served) <= set(result.by_api), sorted(set(result.served) - set(result.by_api))
        assert result.answered > len(result.served), report  # the sequences ran past the sweep


def test_held_unread_connections_and_a_fuzzed_control_listener_leave_the_broker_serving(tmp_path):
    """compat/fuzz/flood.py, one round of each phase (more under KAFKA_SHIM_FUZZ_DEEP=1): connections
    holding partial frames and half TLS handshakes, connections pipelining requests they never read
    the answers of, 300 Fetches parked while records go elsewhere, and the HTTP control listener fed
    garbage and hostile arguments; memory grows by a bounded amount per connection, the broker
    closes every held connection once idle, the parked Fetches do not slow the produces down, and
    the canary keeps being acknowledged."""
    from compat.fuzz.flood import flood_fuzz

    seed = int(os.environ.get("KAFKA_SHIM_FUZZ_SEED", 20261123))
    sizes = {} if DEEP else {"loris": 100, "unread": 8, "idle_ms": 2000}
    result = flood_fuzz(budget("KAFKA_SHIM_FUZZ_FLOOD_SECONDS", 0, 60), seed, tmp_path, **sizes)
    report = json.dumps({k: v for k, v in vars(result).items() if k != "findings"}, indent=1)
    assert result.failures == [], report
    assert set(result.rounds) >= {"loris", "unread", "parked", "control"}, report
    assert {"200", "400"} <= set(result.control_statuses), report  # operations ran, and were refused
    assert result.canary_acked > 0, report
