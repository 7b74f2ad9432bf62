"""What the transaction coordinator's own aborts and WriteTxnMarkers cost the event loop under --fsync always.

    python -m bench.txn_steps_sync_cost [transactions] [clients] [markers] [data_dir_parent]

An in-process node (--fsync always, a fresh data directory under ``data_dir_parent``, the system's
temporary directory by default: put it on the disk you mean to measure). First ``transactions``
(64) transactional ids, each with an ongoing transaction over one of 4 partitions, all time out
at one timeout check: the loop thread's CPU time and the wall time it spent inside fsync, per
aborted transaction, from the check until every one is CompleteAbort. Then ``clients`` (8)
concurrent WriteTxnMarkers senders, ``markers`` (100) requests each, one at a time per sender,
one ABORT marker per request: the same per request, and requests a second.
"""

from __future__ import annotations

import asyncio
import datetime
import sys
import tempfile
import time
from pathlib import Path

from bench.coordinator_sync_cost import TimedDisk, _thread_id
from shim.apis.dispatch import dispatch
from shim.config import BrokerConfig
from shim.coordinators.txn.state import TxnState
from shim.node import Node, now_ms
from shim.protocol.messages import RequestHeader, decode_response, encode_request, request_module
from shim.storage import fs

TIMEOUT_MS = 1_000


def _frame(key: int, version: int, build, client: str = "c") -> bytes:
    return encode_request(RequestHeader(key, version, 1, client), build(request_module(key, version)))


async def _call(node, key: int, version: int, build):
    return decode_response(await dispatch(node, _frame(key, version, build)), key, version)[1]


async def _open(node, txn_id: str, partition: int) -> None:
    init = await _call(node, 22, 4, lambda m: m.InitProducerIdRequest(
        transactional_id=txn_id, transaction_timeout=datetime.timedelta(milliseconds=TIMEOUT_MS), producer_id=-1,
        producer_epoch=-1))
    await _call(node, 24, 3, lambda m: m.AddPartitionsToTxnRequest(
        v3_and_below_transactional_id=txn_id, v3_and_below_producer_id=init.producer_id,
        v3_and_below_producer_epoch=init.producer_epoch,
        v3_and_below_topics=(m.AddPartitionsToTxnTopic(name="t", partitions=(partition,)),)))


async def aborts(node, disk: TimedDisk, n: int) -> dict:
    ids = [f"tx{i}" for i in range(n)]
    for i, txn_id in enumerate(ids):
        await _open(node, txn_id, i % 4)
    disk.on_loop_s, cpu, wall = 0.0, time.thread_time(), time.perf_counter()
    node.tick(now_ms() + TIMEOUT_MS + 1)
    while any(node.txn.txns[t].state is not TxnState.COMPLETE_ABORT for t in ids):
        await asyncio.sleep(0.0005)
    cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
    return {"aborts": n, "loop_cpu_us_per_abort": cpu / n * 1e6, "loop_fsync_us_per_abort": disk.on_loop_s / n * 1e6,
            "aborts_wall_ms": wall * 1e3}


async def _marker_client(node, client: int, count: int) -> None:
    for i in range(count):
        frame = _frame(27, 1, lambda m: m.WriteTxnMarkersRequest(markers=(m.WritableTxnMarker(
            producer_id=1000 + client, producer_epoch=0, transaction_result=False, coordinator_epoch=0,
            topics=(m.WritableTxnMarkerTopic(name="t", partition_indexes=(client % 4,)),)),)), f"c{client}")
        answer = decode_response(await dispatch(node, frame), 27, 1)[1]
        if answer.markers[0].topics[0].partitions[0].error_code != 0:
            raise RuntimeError(f"WriteTxnMarkers answered {answer}")


async def markers(node, disk: TimedDisk, clients: int, count: int) -> dict:
    disk.on_loop_s, cpu, wall = 0.0, time.thread_time(), time.perf_counter()
    await asyncio.gather(*(_marker_client(node, c, count) for c in range(clients)))
    cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
    n = clients * count
    return {"markers": n, "loop_cpu_us_per_marker": cpu / n * 1e6,
            "loop_fsync_us_per_marker": disk.on_loop_s / n * 1e6, "markers_per_s": n / wall}


async def run(transactions: int, clients: int, count: int, parent: str | None) -> dict:
    disk = TimedDisk()
    previous = fs.use(disk)
    try:
        with tempfile.TemporaryDirectory(prefix="txn-steps-sync-", dir=parent) as tmp:
            node = Node(BrokerConfig(data_dir=Path(tmp) / "d", fsync="always"))
            try:
                node.logs.create_topic("t", 4)
                node.logs.ensure_topic("__transaction_state", node.txn.num_partitions)
                disk.loop_thread = _thread_id()
                return {**await aborts(node, disk, transactions), **await markers(node, disk, clients, count)}
            finally:
                node.close()
    finally:
        fs.use(previous)


def main(argv: list[str]) -> None:
    transactions = int(argv[0]) if argv else 64
    clients = int(argv[1]) if len(argv) > 1 else 8
    count = int(argv[2]) if len(argv) > 2 else 100
    parent = argv[3] if len(argv) > 3 else None
    result = asyncio.run(run(transactions, clients, count, parent))
    print(" ".join(f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}" for k, v in result.items()))


if __name__ == "__main__":
    main(sys.argv[1:])
