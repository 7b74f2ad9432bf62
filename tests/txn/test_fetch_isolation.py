"""Fetch and ListOffsets under both isolation levels (Kafka: UnifiedLog.read with FetchIsolation,
LocalLog.addAbortedTransactions, DelayedFetch): LSO, aborted transaction lists, empty reads above the
LSO, and parked read_committed fetches woken by markers."""

from __future__ import annotations

import asyncio
import time

import pytest

from kafka_codecs import ControlRecordType, encode_batch
from shim.errors import ErrorCode
from txn_helpers import (
    READ_COMMITTED, READ_UNCOMMITTED, TOPIC, Producer, add_partitions, call, committed_view, data_values, end_txn, fetch,
    init_producer_id, list_offset, markers, plain_batch, produce, write_marker,
)


ABORT, COMMIT = ControlRecordType.ABORT, ControlRecordType.COMMIT
MAX_TIMESTAMP = -3


class Txn:
    """A transactional producer on the wire (InitProducerId, AddPartitions, Produce, EndTxn)."""

    def __init__(self, node, txn_id):
        self.node, self.txn_id = node, txn_id

    async def begin(self, partition=0):
        if not hasattr(self, "p"):
            r = await init_producer_id(self.node, self.txn_id)
            self.p = Producer(r.producer_id, r.producer_epoch)
        await add_partitions(self.node, self.txn_id, self.p.pid, self.p.epoch, [(TOPIC, partition)])
        return self

    async def send(self, *values, partition=0):
        r = await produce(self.node, partition, self.p.batch(partition, *values), transactional_id=self.txn_id)
        assert r.error_code == ErrorCode.none
        return r.base_offset

    async def end(self, commit):
        assert await end_txn(self.node, self.txn_id, self.p.pid, self.p.epoch, commit) == ErrorCode.none


async def plain(node, *values, partition=0):
    r = await produce(node, partition, plain_batch(*values))
    assert r.error_code == ErrorCode.none
    return r.base_offset


@pytest.fixture
async def mixed_log(txn_node):
    """Partition 0:
    0 p0 | 1-2 A (a1,a2) | 3 p3 | 4 ABORT(A) | 5 B b5 | 6 COMMIT(B) | 7 C c7 (open) | 8 p8
    LSO 7, HW 9."""
    node = txn_node
    a, b, c = Txn(node, "A"), Txn(node, "B"), Txn(node, "C")
    assert await plain(node, b"p0") == 0
    await a.begin()
    assert await a.send(b"a1", b"a2") == 1
    assert await plain(node, b"p3") == 3
    await a.end(False)
    await b.begin()
    assert await b.send(b"b5") == 5
    await b.end(True)
    await c.begin()
    assert await c.send(b"c7") == 7
    assert await plain(node, b"p8") == 8
    return node, a, b, c


def aborted_of(p):
    return None if p.aborted_transactions is None else [(a.producer_id, a.first_offset) for a in p.aborted_transactions]


async def test_read_uncommitted_has_a_null_aborted_list_and_reads_to_the_high_watermark(mixed_log):
    node, a, b, c = mixed_log
    p = await fetch(node, 0, 0, isolation=READ_UNCOMMITTED)
    assert p.error_code == ErrorCode.none
    assert p.aborted_transactions is None
    assert (p.high_watermark, p.last_stable_offset, p.log_start_offset) == (9, 7, 0)
    assert data_values(p.records) == [(0, b"p0"), (1, b"a1"), (2, b"a2"), (3, b"p3"), (5, b"b5"), (7, b"c7"),
                                      (8, b"p8")]
    assert markers(p.records) == [(4, a.p.pid, ABORT), (6, b.p.pid, COMMIT)]


async def test_read_committed_reads_to_the_lso_and_lists_the_aborted_transaction(mixed_log):
    node, a, b, c = mixed_log
    p = await fetch(node, 0, 0, isolation=READ_COMMITTED)
    assert p.error_code == ErrorCode.none
    assert (p.high_watermark, p.last_stable_offset) == (9, 7)
    assert aborted_of(p) == [(a.p.pid, 1)]
    assert data_values(p.records)[-1] == (5, b"b5")  # nothing at or above the LSO
    assert markers(p.records) == [(4, a.p.pid, ABORT), (6, b.p.pid, COMMIT)]  # markers below the LSO are sent
    assert committed_view(p.records, p.aborted_transactions) == [(0, b"p0"), (3, b"p3"), (5, b"b5")]


@pytest.mark.parametrize(("offset", "expected"), [
    (0, "A"), (1, "A"), (2, "A"),  # from inside A's batch: still listed, with its first offset 1
    (4, "A"),  # the ABORT marker itself: A's last offset is 4 >= 4
    (5, None), (6, None),  # past A's marker
])
async def test_read_committed_lists_exactly_the_aborted_transactions_overlapping_the_range(mixed_log, offset, expected):
    node, a, b, c = mixed_log
    p = await fetch(node, 0, offset, isolation=READ_COMMITTED)
    assert p.aborted_transactions is not None
    assert aborted_of(p) == ([(a.p.pid, 1)] if expected else [])


async def test_a_range_that_ends_before_an_aborted_transaction_does_not_list_it(mixed_log):
    """max_bytes=1 returns the first batch only (KIP-74); A starts after it."""
    node, a, b, c = mixed_log
    p = await fetch(node, 0, 0, isolation=READ_COMMITTED, max_bytes=1)
    assert data_values(p.records) == [(0, b"p0")]
    assert aborted_of(p) == []
    p = await fetch(node, 0, 1, isolation=READ_COMMITTED, max_bytes=1)
    assert data_values(p.records) == [(1, b"a1"), (2, b"a2")]
    assert aborted_of(p) == [(a.p.pid, 1)]


@pytest.mark.parametrize("offset", [7, 8, 9])
async def test_read_committed_at_or_above_the_lso_is_empty_not_out_of_range(mixed_log, offset):
    node, *_ = mixed_log
    p = await fetch(node, 0, offset, isolation=READ_COMMITTED)
    assert (p.error_code, bytes(p.records or b""), p.last_stable_offset, p.high_watermark) == (ErrorCode.none, b"", 7, 9)
    assert aborted_of(p) == []  # an empty read_committed answer still carries a (non-null) list


async def test_beyond_the_log_end_is_out_of_range(mixed_log):
    node, *_ = mixed_log
    for isolation in (READ_COMMITTED, READ_UNCOMMITTED):
        p = await fetch(node, 0, 10, isolation=isolation)
        assert p.error_code == ErrorCode.offset_out_of_range


async def test_list_offsets_latest_is_the_lso_under_read_committed(mixed_log):
    node, a, b, c = mixed_log
    assert await list_offset(node, 0, -1, isolation=READ_COMMITTED) == 7
    assert await list_offset(node, 0, -1, isolation=READ_UNCOMMITTED) == 9
    assert await list_offset(node, 0, -2, isolation=READ_COMMITTED) == 0
    await c.end(True)
    assert await list_offset(node, 0, -1, isolation=READ_COMMITTED) == 10  # past C's marker at 9
    assert await list_offset(node, 0, -1, isolation=READ_UNCOMMITTED) == 10


async def test_list_offsets_by_timestamp_stays_below_the_lso(mixed_log):
    node, *_ = mixed_log
    # Every record has a timestamp <= now: the first one at or after 0 is offset 0 for both ...
    assert await list_offset(node, 0, 0, isolation=READ_COMMITTED) == 0
    # ... and a timestamp only C's and p8's records could match is not found under read_committed.
    future = int(time.time() * 1000) + 3_600_000
    assert await list_offset(node, 0, future, isolation=READ_COMMITTED) == -1


async def test_list_offsets_max_timestamp_stays_below_the_fetchable_end(mixed_log):
    """Kafka's ReplicaManager.fetchOffset drops a MAX_TIMESTAMP answer at or past the last fetchable
    offset, as it drops a timestamp's: the LSO under read_committed, the high watermark otherwise."""
    node, a, b, c = mixed_log
    future = int(time.time() * 1000) + 3_600_000
    r = await produce(node, 0, encode_batch([(None, b"late", (), future)]))
    assert (r.error_code, r.base_offset) == (ErrorCode.none, 9)  # past the LSO (7), below the high watermark
    assert await list_offset(node, 0, MAX_TIMESTAMP, isolation=READ_UNCOMMITTED) == 9
    assert await list_offset(node, 0, MAX_TIMESTAMP, isolation=READ_COMMITTED) == -1
    await c.end(True)
    assert await list_offset(node, 0, MAX_TIMESTAMP, isolation=READ_COMMITTED) == 9


async def test_delete_records_past_an_open_transaction_moves_the_lso_with_it(mixed_log):
    """Kafka: UnifiedLog.maybeIncrementFirstUnstableOffset -- the first unstable offset never stays
    below the log start offset, so once DeleteRecords removed the start of C's open transaction (7)
    the LSO is the new log start offset, not an offset read_committed clients can no longer fetch."""
    import datetime

    from shim.protocol.messages import request_module

    node, a, b, c = mixed_log
    m = request_module(21, 2)
    r = await call(node, 21, 2, timeout=datetime.timedelta(seconds=5), topics=(m.DeleteRecordsTopic(
        name=TOPIC, partitions=(m.DeleteRecordsPartition(partition_index=0, offset=8),)),))
    assert (r.topics[0].partitions[0].error_code, r.topics[0].partitions[0].low_watermark) == (ErrorCode.none, 8)
    assert await list_offset(node, 0, -2, isolation=READ_COMMITTED) == 8
    assert await list_offset(node, 0, -1, isolation=READ_COMMITTED) == 8
    p = await fetch(node, 0, 8)
    assert (p.error_code, p.last_stable_offset, p.log_start_offset) == (ErrorCode.none, 8, 8)
    await c.end(True)  # the COMMIT marker at 9
    assert await list_offset(node, 0, -1, isolation=READ_COMMITTED) == 10


async def test_interleaved_transactions_hold_the_lso_at_the_oldest_open_one(txn_node):
    node = txn_node
    x, y = await Txn(node, "X").begin(), await Txn(node, "Y").begin()
    assert await x.send(b"x0") == 0
    assert await y.send(b"y1") == 1
    assert await x.send(b"x2") == 2
    assert (await fetch(node, 0, 0)).last_stable_offset == 0
    await y.end(True)  # marker at 3; X still open at 0
    p = await fetch(node, 0, 0)
    assert (p.last_stable_offset, p.high_watermark, bytes(p.records or b"")) == (0, 4, b"")
    await x.end(False)  # marker at 4
    p = await fetch(node, 0, 0)
    assert (p.last_stable_offset, p.high_watermark) == (5, 5)
    assert aborted_of(p) == [(x.p.pid, 0)]
    assert committed_view(p.records, p.aborted_transactions) == [(1, b"y1")]
    # The txn index entry of X records the LSO at its completion (Kafka: lastStableOffset(completedTxn)).
    (entry,) = node.logs.get(TOPIC, 0).aborted
    assert (entry.first_offset, entry.last_offset, entry.last_stable_offset) == (0, 4, 5)


async def test_last_stable_offset_of_an_abort_while_another_transaction_is_open(txn_node):
    node = txn_node
    x, y = await Txn(node, "X").begin(), await Txn(node, "Y").begin()
    await x.send(b"x0")
    await y.send(b"y1")
    await x.end(False)  # marker at 2, Y open from 1
    (entry,) = node.logs.get(TOPIC, 0).aborted
    assert (entry.first_offset, entry.last_offset, entry.last_stable_offset) == (0, 2, 1)
    assert (await fetch(node, 0, 0)).last_stable_offset == 1


@pytest.mark.parametrize("by", ["EndTxn", "WriteTxnMarkers"])
async def test_a_parked_read_committed_fetch_wakes_when_a_marker_moves_the_lso(txn_node, by):
    """WriteTxnMarkers writes only the marker (no __transaction_state record follows): the marker
    itself must wake the fetch."""
    node = txn_node
    t = await Txn(node, "T").begin()
    await t.send(b"held")
    started = time.monotonic()
    parked = asyncio.ensure_future(fetch(node, 0, 0, isolation=READ_COMMITTED, max_wait_ms=10_000, min_bytes=1))
    await plain(node, b"after")  # an append that does not move the LSO: the fetch stays parked
    for _ in range(20):
        await asyncio.sleep(0.01)
    assert not parked.done()
    if by == "EndTxn":
        await t.end(True)
    else:
        assert await write_marker(node, t.p.pid, t.p.epoch, True, [(TOPIC, 0)]) == {(TOPIC, 0): ErrorCode.none}
    p = await asyncio.wait_for(parked, 5)
    assert time.monotonic() - started < 5
    assert data_values(p.records) == [(0, b"held"), (1, b"after")]
    assert markers(p.records) == [(2, t.p.pid, COMMIT)]
    assert (p.last_stable_offset, p.high_watermark) == (3, 3)


async def test_a_parked_read_uncommitted_fetch_wakes_on_an_append(txn_node):
    node = txn_node
    t = await Txn(node, "T").begin()
    parked = asyncio.ensure_future(fetch(node, 0, 0, isolation=READ_UNCOMMITTED, max_wait_ms=10_000, min_bytes=1))
    for _ in range(5):
        await asyncio.sleep(0.01)
    assert not parked.done()
    await t.send(b"open")
    p = await asyncio.wait_for(parked, 5)
    assert data_values(p.records) == [(0, b"open")]
    assert (p.last_stable_offset, p.high_watermark) == (0, 1)


async def test_a_marker_in_another_partition_does_not_answer_a_parked_fetch_early(txn_node):
    node = txn_node
    t = await Txn(node, "T").begin(partition=1)
    await t.send(b"one", partition=1)
    started = time.monotonic()
    parked = asyncio.ensure_future(fetch(node, 0, 0, isolation=READ_COMMITTED, max_wait_ms=300, min_bytes=1))
    await asyncio.sleep(0)
    await t.end(True)  # moves partition 1's LSO only
    p = await asyncio.wait_for(parked, 5)
    assert bytes(p.records or b"") == b""
    assert time.monotonic() - started >= 0.29  # answered at max_wait, not at the marker
