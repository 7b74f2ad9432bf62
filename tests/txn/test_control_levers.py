"""The control plane's coordinator levers: markers held and released, the transaction clock
advanced, a transactional id fenced, crash points -- through the dispatch seam."""

from __future__ import annotations

import pytest

from shim.control import CRASH_EXIT_CODE
from shim.control.ops import call as control
from shim.errors import ErrorCode
from txn_helpers import (
    Producer, add_partitions, end_txn, fetch, init_producer_id, list_offset, produce, READ_COMMITTED,
)


class Stopped(Exception):
    pass


async def open_transaction(node, txn_id="tx", timeout_ms=60_000):
    r = await init_producer_id(node, txn_id, timeout_ms=timeout_ms)
    p = Producer(r.producer_id, r.producer_epoch)
    assert await add_partitions(node, txn_id, p.pid, p.epoch, [("t", 0)]) == {("t", 0): ErrorCode.none}
    assert (await produce(node, 0, p.batch(0, b"a", b"b"), transactional_id=txn_id)).error_code == ErrorCode.none
    return p


async def test_held_markers_keep_the_lso_until_released(txn_node):
    node = txn_node
    await control(node.control, "hold_markers")
    p = await open_transaction(node)
    assert await end_txn(node, "tx", p.pid, p.epoch, True) == ErrorCode.none  # answered at once
    assert await list_offset(node, 0, isolation=READ_COMMITTED) == 0  # the LSO stays at the transaction
    assert (await fetch(node, 0, 0)).records in (None, b"")
    # a retry of the commit, and the producer's next transaction, wait as they do in Kafka
    assert await end_txn(node, "tx", p.pid, p.epoch, True) == ErrorCode.concurrent_transactions
    assert await add_partitions(node, "tx", p.pid, p.epoch, [("t", 1)]) == {("t", 1): ErrorCode.concurrent_transactions}
    released = await control(node.control, "release_markers")
    assert released == {"released": ["tx"], "held": [], "holding": False}
    assert await list_offset(node, 0, isolation=READ_COMMITTED) == 3  # two records and the marker
    assert await add_partitions(node, "tx", p.pid, p.epoch, [("t", 1)]) == {("t", 1): ErrorCode.none}


async def test_release_one_transactional_id_and_keep_holding(txn_node):
    node = txn_node
    await control(node.control, "hold_markers")
    a, b = await open_transaction(node, "a"), await open_transaction(node, "b")
    await end_txn(node, "a", a.pid, a.epoch, True)
    await end_txn(node, "b", b.pid, b.epoch, False)
    got = await control(node.control, "release_markers", {"transactional_id": "b", "hold": True})
    assert got == {"released": ["b"], "held": ["a"], "holding": True}
    assert node.txn.txns["a"].state.kafka_name == "PrepareCommit"
    assert node.txn.txns["b"].state.kafka_name == "CompleteAbort"


async def test_advancing_the_clock_expires_a_transaction_now(txn_node):
    node = txn_node
    p = await open_transaction(node, timeout_ms=60_000)
    assert (await control(node.control, "advance_clock", {"ms": 30_000}))["aborted_transactions"] == []
    got = await control(node.control, "advance_clock", {"ms": 60_001, "clock": "transactions"})
    assert got == {"aborted_transactions": ["tx"], "expired_transactional_ids": [], "expired_members": []}
    assert node.txn.txns["tx"].state.kafka_name == "CompleteAbort"
    assert await list_offset(node, 0, isolation=READ_COMMITTED) == 3  # aborted: the LSO moved past it
    assert await end_txn(node, "tx", p.pid, p.epoch, True) == ErrorCode.producer_fenced


async def test_advancing_the_clock_expires_an_idle_transactional_id(txn_node):
    """transactional.id.expiration.ms (7 days) judged at the last hourly check within ``ms``."""
    node = txn_node
    p = await open_transaction(node)
    assert await end_txn(node, "tx", p.pid, p.epoch, True) == ErrorCode.none
    week, hour = 7 * 24 * 3_600_000, 3_600_000
    got = await control(node.control, "advance_clock", {"ms": week - 2 * hour, "clock": "transactions"})
    assert got["expired_transactional_ids"] == [] and "tx" in node.txn.txns
    got = await control(node.control, "advance_clock", {"ms": week + hour, "clock": "groups"})
    assert got["expired_transactional_ids"] == [] and "tx" in node.txn.txns
    got = await control(node.control, "advance_clock", {"ms": week + hour})
    assert got["expired_transactional_ids"] == ["tx"] and "tx" not in node.txn.txns
    assert await add_partitions(node, "tx", p.pid, p.epoch, [("t", 0)]) == {("t", 0): ErrorCode.invalid_producer_id_mapping}


async def test_fence_bumps_the_epoch_of_a_transactional_id(txn_node):
    node = txn_node
    r = await init_producer_id(node, "tx")
    got = await control(node.control, "fence", {"transactional_id": "tx"})
    assert (got["producer_id"], got["producer_epoch"]) == (r.producer_id, r.producer_epoch + 1)
    errors = await add_partitions(node, "tx", r.producer_id, r.producer_epoch, [("t", 0)])
    assert errors == {("t", 0): ErrorCode.producer_fenced}
    old = await add_partitions(node, "tx", r.producer_id, r.producer_epoch, [("t", 0)], version=1)
    assert old == {("t", 0): ErrorCode.invalid_producer_epoch}  # as Kafka answers versions before PRODUCER_FENCED


async def test_fence_aborts_an_open_transaction(txn_node):
    node = txn_node
    p = await open_transaction(node)
    await control(node.control, "fence", {"transactional_id": "tx"})
    assert node.txn.txns["tx"].state.kafka_name == "CompleteAbort"
    assert (await produce(node, 0, p.batch(0, b"c"), transactional_id="tx")).error_code in (
        ErrorCode.invalid_producer_epoch, ErrorCode.producer_fenced)


@pytest.mark.parametrize("point, markers", [("txn.prepared", 0), ("txn.markers_written", 1)])
async def test_crash_points_stop_between_the_records(txn_node, point, markers):
    node = txn_node
    codes = []

    def stop(code):
        codes.append(code)
        raise Stopped

    node.control.exit = stop
    p = await open_transaction(node)
    await control(node.control, "crash", {"point": point})
    with pytest.raises(Stopped):
        await end_txn(node, "tx", p.pid, p.epoch, True)
    assert codes == [CRASH_EXIT_CODE]
    assert node.logs.get("t", 0).log_end_offset == 2 + markers
    assert node.txn.txns["tx"].state.kafka_name == "PrepareCommit"
