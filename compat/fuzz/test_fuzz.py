"""A bounded fuzz run in the normal test suite (compat/fuzz/run.py says what is checked).

About half a minute of mutated client requests against a ``kafka-shim serve`` process, with a fixed
seed so a failure repeats; KAFKA_SHIM_FUZZ_SEED and KAFKA_SHIM_FUZZ_SECONDS change both. Longer
runs: ``python -m compat.fuzz --duration 1800 --seed N`` (compat/README.md).
"""

from __future__ import annotations

import json
import os

import pytest

from compat.fuzz.run import fuzz

pytestmark = pytest.mark.shim_only("fuzzes a kafka-shim process of its own and reads its log and /proc")


def test_half_a_minute_of_mutated_requests_leaves_the_broker_serving(tmp_path):
    seed = int(os.environ.get("KAFKA_SHIM_FUZZ_SEED", 20261123))
    result = fuzz(float(os.environ.get("KAFKA_SHIM_FUZZ_SECONDS", 30)), seed, tmp_path)
    report = json.dumps(vars(result), indent=1)  # the findings carry the bytes sent, to replay
    assert result.failures == [], report
    # Both kinds of connection were seen and checked, and the canary kept being acknowledged.
    assert result.closed_as_malformed > 0 and result.fully_answered > 0, report
    assert result.canary_acked > 0, report


def test_fuzzed_sasl_exchanges_and_tls_connections_leave_the_broker_serving(tmp_path):
    """compat/fuzz/secure.py: mutated SASL exchanges (every mechanism, v0 and v1 framing) on
    SASL_PLAINTEXT and SASL_SSL, and garbage, cut handshakes and mutated requests over TLS ended by a
    bare FIN, a close_notify or a reset, for about 15 s; no connection may stay open or leak."""
    from compat.fuzz.secure import secure_fuzz

    seed = int(os.environ.get("KAFKA_SHIM_FUZZ_SEED", 20261123))
    result = secure_fuzz(float(os.environ.get("KAFKA_SHIM_FUZZ_SECURE_SECONDS", 15)), seed, tmp_path)
    report = json.dumps({k: v for k, v in vars(result).items() if k != "findings"}, indent=1)
    assert result.failures == [], report
    # clients that finished, clients the broker refused or reset, and the canary all happened
    assert result.outcomes.get("eof", 0) > 0 and result.outcomes.get("reset", 0) > 0, report
    assert result.canary_acked > 0, report


def test_sequences_of_hostile_requests_keep_the_state_machines_sound():
    """compat/fuzz/stateful.py: every API and version each release from 3.7 to 4.1 serves, then
    seeded sequences weighted to the group, share and transaction APIs, as concurrent requests on
    an in-process node; no handler may raise, answer UNKNOWN_SERVER_ERROR where Kafka does not,
    log an error, hold the loop, or break a share partition's or a consumer group's invariants."""
    from compat.fuzz.stateful import stateful_fuzz

    seed = int(os.environ.get("KAFKA_SHIM_FUZZ_SEED", 20261123))
    results = stateful_fuzz(float(os.environ.get("KAFKA_SHIM_FUZZ_STATEFUL_SECONDS", 25)), seed)
    for result in results:
        report = json.dumps({k: v for k, v in vars(result).items() if k not in ("by_api", "served")}, indent=1)
        assert result.failures == [], report
        assert set(result.served) <= set(result.by_api), sorted(set(result.served) - set(result.by_api))
        assert result.answered > len(result.served), report  # the sequences ran past the sweep
