"""What a coordinator write costs the event loop under --fsync always.

    python -m bench.coordinator_sync_cost [clients] [commits] [groups] [data_dir_parent]

An in-process node (--fsync always, a fresh data directory under ``data_dir_parent``, the system's
temporary directory by default: put it on the disk you mean to measure) and ``clients`` (8)
concurrent simple-consumer OffsetCommits, ``commits`` (200) each, one at a time per client, through
the dispatcher as a connection hands them on; client c commits for group ``g<c mod groups>``
(``groups`` = clients by default: each group's offsets partition, so each commit, a file of its
own; 1: one file every commit shares). Prints the loop thread's CPU time per commit, the wall time
the loop spent inside fsync per commit, all fsyncs per commit, and commits a second.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

from shim.apis.dispatch import dispatch
from shim.config import BrokerConfig
from shim.node import Node
from shim.protocol.messages import RequestHeader, decode_response, encode_request, request_module
from shim.storage import fs


class TimedDisk(fs.Disk):
    """The real disk, adding up the wall time of the fsyncs run on the event loop's thread."""

    def __init__(self) -> None:
        self.loop_thread = None
        self.on_loop_s = 0.0
        self.fsyncs = 0  # on any thread

    def fsync(self, fd):
        started = time.perf_counter()
        os.fsync(fd)
        self.fsyncs += 1
        if self.loop_thread is not None and self.loop_thread == _thread_id():
            self.on_loop_s += time.perf_counter() - started


def _thread_id() -> int:
    import threading

    return threading.get_ident()


def _commit(client: int, offset: int, groups: int) -> bytes:
    m = request_module(8, 8)
    request = m.OffsetCommitRequest(
        group_id=f"g{client % groups}", generation_id_or_member_epoch=-1, member_id="", group_instance_id=None,
        topics=(m.OffsetCommitRequestTopic(name="t", partitions=(m.OffsetCommitRequestPartition(
            partition_index=client % 4, committed_offset=offset, committed_leader_epoch=-1,
            committed_metadata=""),)),))
    return encode_request(RequestHeader(8, 8, offset, f"c{client}"), request)


async def _client(node, client: int, commits: int, groups: int) -> None:
    for i in range(commits):
        answer = await dispatch(node, _commit(client, i, groups))
        response = decode_response(answer, 8, 8)[1]
        code = response.topics[0].partitions[0].error_code
        if code != 0:
            raise RuntimeError(f"OffsetCommit answered {code}")


async def run(clients: int, commits: int, groups: int, parent: str | None) -> dict:
    disk = TimedDisk()
    previous = fs.use(disk)
    try:
        with tempfile.TemporaryDirectory(prefix="coordinator-sync-", dir=parent) as tmp:
            node = Node(BrokerConfig(data_dir=Path(tmp) / "d", fsync="always"))
            try:
                node.logs.create_topic("t", 4)
                for c in range(groups):  # creates __consumer_offsets and the groups
                    await _client(node, c, 1, groups)
                disk.loop_thread, disk.on_loop_s, disk.fsyncs = _thread_id(), 0.0, 0
                cpu, wall = time.thread_time(), time.perf_counter()
                await asyncio.gather(*(_client(node, c, commits, groups) for c in range(clients)))
                cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
            finally:
                node.close()
    finally:
        fs.use(previous)
    n = clients * commits
    return {"commits": n, "loop_cpu_us_per_commit": cpu / n * 1e6,
            "loop_fsync_us_per_commit": disk.on_loop_s / n * 1e6, "fsyncs_per_commit": disk.fsyncs / n,
            "commits_per_s": n / wall}


def main(argv: list[str]) -> None:
    clients = int(argv[0]) if argv else 8
    commits = int(argv[1]) if len(argv) > 1 else 200
    groups = int(argv[2]) if len(argv) > 2 else clients
    parent = argv[3] if len(argv) > 3 else None
    result = asyncio.run(run(clients, commits, groups, parent))
    print(" ".join(f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}" for k, v in result.items()))


if __name__ == "__main__":
    main(sys.argv[1:])
