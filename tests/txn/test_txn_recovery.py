"""Transactions across broker restarts, clean and as after kill -9 (Kafka:
TransactionStateManager.loadTransactionsForTxnTopicPartition resumes PrepareCommit/PrepareAbort;
UnifiedLog.rebuildProducerState + the .txnindex keep the LSO and the aborted set)."""

from __future__ import annotations

import struct

import pytest

import shim.coordinators.txn.coordinator as coordinator_module
from kafka_codecs import ControlRecordType, iter_batches, parse_header, read_end_txn_marker
from shim.coordinators.txn.markers import write_markers as real_write_markers
from shim.coordinators.txn.state import TxnState
from shim.errors import ErrorCode
from txn_helpers import (
    READ_COMMITTED, READ_UNCOMMITTED, TOPIC, Producer, committed_view, data_values, fetch, plain_batch, produce,
    wall_ms,
)

S = TxnState
TP0, TP1 = (TOPIC, 0), (TOPIC, 1)
ABORT, COMMIT = ControlRecordType.ABORT, ControlRecordType.COMMIT


class Crash(BaseException):
    """The broker process dying at this point."""


def control_batches(node, tp):
    out = []
    for raw in node.logs.get(*tp).iter_batches():
        h = parse_header(raw)
        if h.is_control:
            out.append((h.base_offset, h.producer_id, read_end_txn_marker(raw)[0]))
    return out


def txnindex_entries(node, tp):
    """Every entry of every .txnindex file of the partition: (pid, first, last, lso)."""
    out = []
    for path in sorted(node.logs.get(*tp).directory.glob("*.txnindex")):
        raw = path.read_bytes()
        assert len(raw) % 34 == 0
        for version, pid, first, last, lso in struct.iter_unpack(">hqqqq", raw):
            assert version == 0
            out.append((pid, first, last, lso))
    return out


def aborted(node, tp):
    return [(a.producer_id, a.first_offset, a.last_offset, a.last_stable_offset) for a in node.logs.get(*tp).aborted]


async def open_transaction(node, txn_id="tx", partitions=(TP0, TP1), timeout_ms=60_000, start=None):
    """plain p0 at 0, then the transaction's t1, t2 at 1-2 in partition 0, then plain p3 at 3."""
    coord = node.txn
    pid, epoch = coord.init_producer_id(txn_id, timeout_ms, -1, -1, wall_ms())
    coord.add_partitions(txn_id, pid, epoch, set(partitions), wall_ms() if start is None else start)
    assert (await produce(node, 0, plain_batch(b"p0"))).error_code == ErrorCode.none
    p = Producer(pid, epoch)
    r = await produce(node, 0, p.batch(0, b"t1", b"t2"), transactional_id=txn_id)
    assert (r.error_code, r.base_offset) == (ErrorCode.none, 1)
    assert (await produce(node, 0, plain_batch(b"p3"))).error_code == ErrorCode.none
    return pid, epoch


async def views(node, partition=0):
    rc = await fetch(node, partition, 0, isolation=READ_COMMITTED)
    ru = await fetch(node, partition, 0, isolation=READ_UNCOMMITTED)
    return committed_view(rc.records, rc.aborted_transactions), data_values(ru.records), rc.last_stable_offset, \
        rc.high_watermark


class DyingMarkers:
    """Makes the coordinator die after PrepareX is persisted, having written markers to the first
    ``written`` partitions (in the coordinator's order, sorted) only."""

    def __init__(self, monkeypatch) -> None:
        self.monkeypatch = monkeypatch

    def arm(self, written: int) -> None:
        def dying(logs, listeners, pid, epoch, coordinator_epoch, commit, partitions, now_ms, check_min_isr=None,
                  durable=True):
            partitions = list(partitions)
            real_write_markers(logs, listeners, pid, epoch, coordinator_epoch, commit, partitions[:written], now_ms,
                               check_min_isr, durable)
            raise Crash()
        self.monkeypatch.setattr(coordinator_module, "write_markers", dying)

    def disarm(self) -> None:
        """The restarted process runs the real code."""
        self.monkeypatch.undo()
        assert coordinator_module.write_markers is real_write_markers


@pytest.mark.parametrize("commit", [True, False], ids=["commit", "abort"])
@pytest.mark.parametrize("written", [0, 1], ids=["no-marker", "one-of-two-markers"])
async def test_a_crash_between_prepare_and_markers_completes_on_load(nodes, monkeypatch, commit, written):
    node = nodes()
    node.logs.create_topic(TOPIC, 2)
    pid, epoch = await open_transaction(node)
    dying = DyingMarkers(monkeypatch)
    dying.arm(written)
    with pytest.raises(Crash):
        node.txn.end_txn("tx", pid, epoch, commit, wall_ms())
    assert node.txn.txns["tx"].state is (S.PREPARE_COMMIT if commit else S.PREPARE_ABORT)
    assert node.logs.get(*TP0).last_stable_offset == (1 if written == 0 else 5)
    assert control_batches(node, TP1) == []
    nodes.crash(node)
    dying.disarm()

    node = nodes()
    m = node.txn.txns["tx"]
    assert (m.state, m.producer_id, m.producer_epoch, m.partitions) == (
        S.COMPLETE_COMMIT if commit else S.COMPLETE_ABORT, pid, epoch, set())
    kind = COMMIT if commit else ABORT
    # Markers are (re)sent to every partition on load; a repeated one is harmless.
    assert [(p, k) for _, p, k in control_batches(node, TP0)] == [(pid, kind)] * (1 + written)
    assert [(p, k) for _, p, k in control_batches(node, TP1)] == [(pid, kind)]
    rc, ru, lso, hw = await views(node)
    assert lso == hw == 5 + written  # p0, t1, t2, p3, marker(s)
    assert ru == [(0, b"p0"), (1, b"t1"), (2, b"t2"), (3, b"p3")]
    if commit:
        assert rc == ru
        assert aborted(node, TP0) == [] and txnindex_entries(node, TP0) == []
    else:
        assert rc == [(0, b"p0"), (3, b"p3")]
        assert aborted(node, TP0) == txnindex_entries(node, TP0) == [(pid, 1, 4, 5)]
    assert (await views(node, 1))[2:] == (1, 1)  # partition 1: just the marker, LSO == HW

    # Another restart changes nothing: no new markers, same state, same views.
    before = (control_batches(node, TP0), control_batches(node, TP1))
    nodes.close(node)
    node = nodes()
    assert (control_batches(node, TP0), control_batches(node, TP1)) == before
    assert node.txn.txns["tx"].state is m.state
    assert (await views(node))[:2] == (rc, ru)


async def test_an_open_transaction_survives_a_crash_then_times_out(nodes):
    node = nodes()
    node.logs.create_topic(TOPIC, 2)
    start = wall_ms()
    pid, epoch = await open_transaction(node, timeout_ms=10_000, start=start)
    nodes.crash(node)

    node = nodes()
    m = node.txn.txns["tx"]
    assert (m.state, m.producer_epoch, m.txn_start_ms, m.partitions) == (S.ONGOING, epoch, start, {TP0, TP1})
    rc, ru, lso, hw = await views(node)
    assert (lso, hw) == (1, 4)  # held at the transaction's first offset, rebuilt from the log
    assert rc == [(0, b"p0")]
    assert node.txn.abort_timed_out(start + 10_000) == []
    assert node.txn.abort_timed_out(start + 10_001) == ["tx"]
    rc, ru, lso, hw = await views(node)
    assert (lso, hw) == (5, 5)
    assert rc == [(0, b"p0"), (3, b"p3")]
    assert ru == [(0, b"p0"), (1, b"t1"), (2, b"t2"), (3, b"p3")]
    assert control_batches(node, TP0) == [(4, pid, ABORT)]
    assert aborted(node, TP0) == txnindex_entries(node, TP0) == [(pid, 1, 4, 5)]

    # kill -9 again: the aborted set is rebuilt (replay of the log, or the index files).
    nodes.crash(node)
    node = nodes()
    assert aborted(node, TP0) == txnindex_entries(node, TP0) == [(pid, 1, 4, 5)]
    rc, ru, lso, hw = await views(node)
    assert (rc, lso, hw) == ([(0, b"p0"), (3, b"p3")], 5, 5)
    assert node.txn.txns["tx"].state is S.COMPLETE_ABORT


@pytest.mark.parametrize("shutdown", ["clean", "kill"])
async def test_aborted_index_across_segments_survives_restarts(nodes, shutdown):
    """Aborted transactions whose markers sit in sealed segments: one .txnindex per segment, and the
    same AbortedTransactions after a restart."""
    node = nodes(segment_bytes=200)
    node.logs.create_topic(TOPIC, 1)
    coord = node.txn
    pids = []
    for i in range(4):
        pid, epoch = coord.init_producer_id(f"tx{i}", 60_000, -1, -1, wall_ms())
        coord.add_partitions(f"tx{i}", pid, epoch, {TP0}, wall_ms())
        r = await produce(node, 0, Producer(pid, epoch).batch(0, b"x" * 60), transactional_id=f"tx{i}")
        assert r.error_code == ErrorCode.none
        await produce(node, 0, plain_batch(b"keep%d" % i))
        coord.end_txn(f"tx{i}", pid, epoch, i % 2 == 1, wall_ms())  # odd ones commit
        pids.append(pid)
    plog = node.logs.get(*TP0)
    assert len(plog.segments) > 2
    assert len(list(plog.directory.glob("*.txnindex"))) >= 2  # entries live in their marker's segment
    expected = [(pids[0], 0, 2, 3), (pids[2], 6, 8, 9)]
    assert aborted(node, TP0) == txnindex_entries(node, TP0) == expected
    if shutdown == "clean":
        nodes.close(node)
    else:
        nodes.crash(node)
    node = nodes(segment_bytes=200)
    assert aborted(node, TP0) == txnindex_entries(node, TP0) == expected
    seen, offset = [], 0
    while offset < node.logs.get(*TP0).log_end_offset:  # about one segment per response
        p = await fetch(node, 0, offset, isolation=READ_COMMITTED)
        seen += [(o, v) for o, v in committed_view(p.records, p.aborted_transactions) if o >= offset]
        offset = [h.next_offset for _, h in iter_batches(p.records)][-1]
    assert seen == [(1, b"keep0"), (3, b"x" * 60), (4, b"keep1"), (7, b"keep2"), (9, b"x" * 60), (10, b"keep3")]


async def test_kill9_after_a_clean_restart_keeps_the_older_entries_and_replays_the_newer(nodes):
    """The clean close leaves a producer snapshot at the log end; after kill -9 the log is replayed
    from that snapshot, so the active segment's .txnindex keeps the entries below it and gets the
    later ones again from the replay: each aborted transaction exactly once."""
    node = nodes()
    node.logs.create_topic(TOPIC, 1)

    async def aborted_txn(txn_id, value):
        pid, epoch = node.txn.init_producer_id(txn_id, 60_000, -1, -1, wall_ms())
        node.txn.add_partitions(txn_id, pid, epoch, {TP0}, wall_ms())
        r = await produce(node, 0, Producer(pid, epoch).batch(0, value), transactional_id=txn_id)
        assert r.error_code == ErrorCode.none
        node.txn.end_txn(txn_id, pid, epoch, False, wall_ms())
        return pid

    first = await aborted_txn("one", b"x")  # 0, ABORT at 1
    nodes.close(node)  # snapshot at 2
    node = nodes()
    second = await aborted_txn("two", b"y")  # 2, ABORT at 3
    assert txnindex_entries(node, TP0) == [(first, 0, 1, 2), (second, 2, 3, 4)]
    nodes.crash(node)

    node = nodes()
    assert aborted(node, TP0) == txnindex_entries(node, TP0) == [(first, 0, 1, 2), (second, 2, 3, 4)]
    rc, ru, lso, hw = await views(node)
    assert (rc, ru, lso, hw) == ([], [(0, b"x"), (2, b"y")], 4, 4)
