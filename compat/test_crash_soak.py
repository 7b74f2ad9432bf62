"""compat/crash_soak.py, two cycles with a fixed seed: confluent-kafka's idempotent and
transactional producers, offset commits and a compacted topic while kill -9 hits the broker; after
each restart everything acknowledged is there exactly once and in order, and no aborted record shows
under read_committed. ``python -m compat.crash_soak --cycles 20 --seed N`` runs it longer."""

from __future__ import annotations

import os

import pytest

from compat.crash_soak import soak

pytestmark = pytest.mark.shim_only("kills the broker with SIGKILL, cycle after cycle")


def test_kill9_at_random_moments_loses_nothing_acknowledged(tmp_path):
    seed = int(os.environ.get("KAFKA_SHIM_SOAK_SEED", 20261127))
    cycles = int(os.environ.get("KAFKA_SHIM_SOAK_CYCLES", 2))
    reports = []
    ledger = soak(cycles, seed, tmp_path / "data", run_s=(1.5, 3.0), report=reports.append)
    assert ledger.problems == [], "\n".join(ledger.problems)
    assert len(reports) == cycles
    # The kills landed on real work: records, both transaction outcomes, commits and compacted keys.
    assert ledger.idem_acked and ledger.committed_txns and ledger.aborted_txns, reports
    assert ledger.last_commit and len(ledger.compact_acked) == 40, reports


def test_kill9_under_fsync_always_loses_nothing_acknowledged(tmp_path):
    """The same under --fsync always, where a Produce's batches and the coordinators' group offsets
    and transaction states are fsynced by the group commit off the loop before their answers."""
    seed = int(os.environ.get("KAFKA_SHIM_SOAK_SEED", 20261128))
    ledger = soak(2, seed, tmp_path / "data", run_s=(1.5, 3.0), fsync="always")
    assert ledger.problems == [], "\n".join(ledger.problems)
    assert ledger.idem_acked and ledger.committed_txns and ledger.last_commit
