"""compat/crash_soak.py, two cycles with a fixed seed: confluent-kafka's idempotent and
transactional producers, offset commits and a compacted topic while kill -9 hits the broker; after
each restart everything acknowledged is there exactly once and in order, and no aborted record shows
under read_committed. ``python -m compat.crash_soak --cycles 20 --seed N`` runs it longer."""

from __future__ import annotations

import os

import pytest

from compat.crash_soak import soak
from compat.soak_books import TxnBook
from compat.soak_groups import GroupMembers
from compat.soak_topics import TopicLives

pytestmark = pytest.mark.shim_only("kills the broker with SIGKILL, cycle after cycle")


def test_kill9_at_random_moments_loses_nothing_acknowledged(tmp_path, request):
    seed = int(os.environ.get("KAFKA_SHIM_SOAK_SEED", 20261127))
    cycles = int(os.environ.get("KAFKA_SHIM_SOAK_CYCLES", 2))
    extra = os.environ.get("KAFKA_SHIM_SOAK_WORKERS", "java,aiokafka").split(",")
    drivers = None
    if "java" in extra:
        try:  # the java_drivers fixture: compiled beside the collection, skipped without a JDK
            drivers = request.getfixturevalue("java_drivers")
        except pytest.skip.Exception:
            extra.remove("java")
    reports = []
    ledger = soak(cycles, seed, tmp_path / "data", run_s=(1.5, 3.0), report=reports.append, extra=tuple(extra),
                  java_drivers=drivers)  # fmt: skip
    assert ledger.problems == [], "\n".join(ledger.problems)
    assert len(reports) == cycles
    # The kills landed on real work: records, both transaction outcomes, commits and compacted keys.
    assert ledger.idem_acked and ledger.txn.committed and ledger.txn.aborted, reports
    assert ledger.kafka_python.acked, reports
    assert ledger.last_commit and len(ledger.compact_acked) == 40, reports
    assert ledger.topics.created and ledger.topics.deleted, reports
    assert ledger.members.commits and len(ledger.members.recover_s) == 2 * cycles, reports
    for workers in (ledger.java, ledger.aiokafka):
        if workers is not None:
            assert workers.txn.committed and workers.members.commits, reports
            assert len(workers.members.recover_s) == cycles, reports
    assert ledger.java is None or ledger.java.idem.acked, reports


def test_kill9_under_fsync_always_loses_nothing_acknowledged(tmp_path):
    """The same under --fsync always, where a Produce's batches and the coordinators' group offsets
    and transaction states are fsynced by the group commit off the loop before their answers."""
    seed = int(os.environ.get("KAFKA_SHIM_SOAK_SEED", 20261128))
    ledger = soak(2, seed, tmp_path / "data", run_s=(1.5, 3.0), fsync="always")
    assert ledger.problems == [], "\n".join(ledger.problems)
    assert ledger.idem_acked and ledger.txn.committed and ledger.last_commit


def test_the_lifecycle_check_finds_a_deleted_topics_records_and_lost_ones():
    """The lifecycle check can fail: records of an earlier incarnation of the name, an acknowledged
    record missing, and a value twice are each reported."""
    lives = TopicLives()
    lives.acked = {3: {b"L3-0": (0, 0), b"L3-1": (1, 0)}, 4: {b"L4-0": (0, 0), b"L4-1": (1, 0)}}
    healthy = {0: {0: (None, b"L4-0")}, 1: {0: (None, b"L4-1")}}
    found: list[str] = []
    lives._verify_records("soak-life-0", 4, healthy, found)
    assert found == []
    resurrected = {0: {0: (None, b"L3-0"), 1: (None, b"L4-0")}, 1: {0: (None, b"L4-1"), 1: (None, b"L4-1")}}
    lives._verify_records("soak-life-0", 4, resurrected, found)
    assert any("records of [b'L3'] reappeared" in f for f in found), found
    assert any("acknowledged b'L4-0' at 0" in f for f in found), found
    assert any("1 values twice" in f for f in found), found


def test_the_group_check_finds_an_offset_gone_back_or_never_sent():
    members = GroupMembers()
    members.acked, members.tried = {0: 50, 1: 7}, {0: {40, 50, 60}, 1: {7}}
    assert members.verify({0: 60, 1: 7}) == []  # 60: a commit cut by the kill, taken
    assert members.verify({0: 40, 1: 7}) == ["soak-members-0: committed 40, highest acknowledged 50"]
    assert members.verify({0: 50, 1: 9}) == ["soak-members-1: committed 9, highest acknowledged 7"]


def test_the_transaction_check_finds_aborted_missing_partial_and_offsets_behind():
    """TxnBook (every transactional producer's check: librdkafka's, Java's, aiokafka's) can fail on each count."""
    book = TxnBook("soak-txn-x", "soak-eos-x")
    for n, k in ((1, 2), (2, 1), (3, 2), (4, 1)):
        book.begin(n, [(i % 2, b"at-%d-%d" % (n, i)) for i in range(k)])
    book.settled(1, committed=True)
    book.settled(2, committed=False)
    book.asking(3)  # its commit cut by the kill
    healthy = {0: {0: (None, b"at-1-0")}, 1: {1: (None, b"at-1-1")}}
    assert book.verify(healthy, 1) == []
    cut = {0: {0: (None, b"at-1-0"), 5: (None, b"at-3-0")}, 1: {1: (None, b"at-1-1"), 6: (None, b"at-3-1")}}
    assert book.verify(cut, 3) == []  # the cut commit happened, whole, with its offset
    bad = {0: {0: (None, b"at-2-0"), 3: (None, b"at-3-0")}, 1: {}}
    assert book.verify(bad, 0) == [
        "soak-txn-x: aborted transaction 2 is visible under read_committed",
        "soak-txn-x: transaction 3: 1 records visible, 2 written",
        "soak-txn-x: committed transaction 1 is missing",
        "soak-eos-x: committed offset 0, last committed transaction 1",
        "soak-eos-x: offset 0 committed by a transaction that is not visible"]
    assert book.verify(healthy, 4) == ["soak-eos-x: committed offset 4, last committed transaction 1",
                                       "soak-eos-x: offset 4 committed by a transaction that is not visible"]
