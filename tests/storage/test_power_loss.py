"""Power loss: what a broker acknowledged is there when a fresh broker starts on what the disk kept.

The workload (tests/storage/workload.py) runs against a broker whose storage writes through a
:class:`power_loss.PowerLossDisk`. The power is cut after every acknowledgement, and, chosen by
hypothesis, in the middle of any request (before any one change to the disk). A fresh broker then
starts on the surviving files: with fsync "always" everything acknowledged comes back, the last
stable offset, markers and aborted-transaction index agree, and start-up never fails. With fsync
"never" the same cuts lose acknowledged writes, which shows the simulation drops what was not
fsynced (README.md, Durability).
"""

from __future__ import annotations

import asyncio
import functools
import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_codecs import ControlRecordType, iter_batches, read_control_type
from shim.config import BrokerConfig
from shim.coordinators.txn import TxnState
from shim.errors import ErrorCode as E
from shim.node import Node
from shim.storage import fs

from node_support import crash
from power_loss import PowerCut, PowerLossDisk, install
from workload import (
    TOPIC, TXN_ID, Acked, Workload, batch, committed_view, data_records, fetch, markers,
    offset_fetch, produce,
)

# Tiny segments: rolls, producer snapshots and index files happen during the workload too.
# group.initial.rebalance.delay.ms=0 instead of Kafka's 3000: the workload's group forms at once.
CONFIG = dict(offsets_topic_num_partitions=2, transaction_state_num_partitions=2, auto_create_topics=False,
              segment_bytes=200, group_initial_rebalance_delay_ms=0)


def open_node(data_dir: Path, fsync: str) -> Node:
    return Node(BrokerConfig(data_dir=data_dir, fsync=fsync, **CONFIG))


async def run(live: Path, fsync: str, cut_after: int | None = None, on_ack=None) -> tuple[PowerLossDisk, Acked, bool]:
    """The workload until it ends or the power is cut; (disk, last acknowledged state, cut)."""
    disk = PowerLossDisk(live, cut_after)
    last = [Acked()]

    def acked(step, state):
        last[0] = state
        if on_ack is not None:
            on_ack(disk, step, state)

    restore, node, cut = install(disk), None, False
    try:
        node = open_node(live, fsync)
        await Workload(node, acked).run()
    except PowerCut:
        cut = True
    finally:
        restore()
        if node is not None:
            crash(node)
    return disk, last[0], cut


# -- what the next broker must show ------------------------------------------------------------------


def check_consistent(node: Node) -> None:
    """LSO within the log, every aborted-index entry on its ABORT marker, every open transaction
    known to the coordinator as Ongoing in that partition (else it would hang the LSO forever)."""
    for (topic, p), plog in node.logs.logs.items():
        assert plog.log_start_offset <= plog.last_stable_offset <= plog.high_watermark
        for a in plog.aborted:
            raw = plog.read(a.last_offset, 1 << 20, read_committed=False).data
            pos, h = next(iter_batches(raw))
            assert (h.base_offset, h.producer_id, h.is_control) == (a.last_offset, a.producer_id, True)
            assert read_control_type(raw[pos:pos + h.size]) == ControlRecordType.ABORT
        for pid in plog.producer_state.ongoing_txns:
            m = node.txn.by_producer_id(pid)
            assert m is not None and m.state is TxnState.ONGOING and (topic, p) in m.partitions, (topic, p, pid)


async def check_acked(node: Node, acked: Acked, exact: bool) -> None:
    """Everything in ``acked`` is there; ``exact``: the cut fell right after the last acknowledgement,
    so the transaction is in exactly the state that was acknowledged."""
    for name, partitions in acked.topics.items():
        if not exact and name in acked.doomed and name not in node.logs.topics:
            continue  # the cut fell inside its DeleteTopics, which may have been applied
        assert node.logs.topics[name].partitions == partitions
    for name in acked.deleted:
        assert name not in node.logs.topics and not (node.config.data_dir / f"{name}-0").exists()
    for tp, records in acked.records.items():
        stored = data_records((await fetch(node, *tp, read_committed=False))[0])
        visible = committed_view(*await fetch(node, *tp, read_committed=True))
        for offset, value in records.items():
            assert stored.get(offset) == value and visible.get(offset) == value, (tp, offset, value)
    for tp, records in acked.aborted.items():
        assert not set(records) & set(committed_view(*await fetch(node, *tp, read_committed=True))), tp
    for topic, p, pid in acked.committed_markers:
        found = markers((await fetch(node, topic, p, read_committed=False))[0])
        assert any(m[1:] == (pid, ControlRecordType.COMMIT) for m in found), (topic, p)
    for (group, topic, p), offset in acked.offsets.items():
        assert await offset_fetch(node, group, topic, p) == offset, (group, topic, p)
    for group, (generation, member) in acked.generations.items():
        g = node.groups.groups[group]
        assert g.generation_id == generation and member in g.members
    if acked.producer is not None:
        await check_transaction(node, acked, exact)


async def check_transaction(node: Node, acked: Acked, exact: bool) -> None:
    m = node.txn.txns[TXN_ID]  # what DescribeTransactions answers
    assert m.producer_id == acked.producer[0] and m.producer_epoch >= acked.producer[1]
    if exact and not acked.txn_open:
        assert m.state in (TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT), m.state
        for p in range(acked.topics[TOPIC]):
            plog = node.logs.get(TOPIC, p)
            assert plog.last_stable_offset == plog.high_watermark


async def check_writable(node: Node) -> None:
    if TOPIC in node.logs.topics:
        end = node.logs.get(TOPIC, 0).log_end_offset
        assert await produce(node, 0, batch(b"after the power cut")) == (E.none, end)


async def restart(data_dir: Path, acked: Acked, exact: bool, fsync: str = "always") -> None:
    node = open_node(data_dir, fsync)  # must not fail, whatever the cut left
    try:
        check_consistent(node)
        await check_acked(node, acked, exact)
        await check_writable(node)
    finally:
        node.close()


# -- the tests --------------------------------------------------------------------------------------


async def test_fsync_always_keeps_every_acknowledgement(tmp_path):
    """A cut after each acknowledgement, losing everything not fsynced or keeping a random part."""
    cuts = []

    def on_ack(disk, step, acked):
        i = len(cuts)
        cuts.append((step, acked, disk.survivors(tmp_path / f"lost-{i}"), disk.survivors(tmp_path / f"mixed-{i}", seed=i)))

    _, _, cut = await run(tmp_path / "live", "always", on_ack=on_ack)
    assert not cut and {"commit", "abort", "sync group", "offset commit", "txn offset commit"} <= {c[0] for c in cuts}
    for step, acked, lost, mixed in cuts:
        for survivors in (lost, mixed):
            try:
                await restart(survivors, acked, exact=True)
            except AssertionError as e:
                raise AssertionError(f"power cut after {step}: {e}") from e


@functools.cache
def changes_of_a_whole_run(fsync: str) -> int:
    with tempfile.TemporaryDirectory() as d:
        disk, _, _ = asyncio.run(run(Path(d), fsync))
        return disk.changes


async def cut_during_recovery(survivors: Path, target: Path, fsync: str, cut_after: int, seed: int | None) -> Path:
    """Start a broker on ``survivors`` and cut the power again before its ``cut_after``-th change
    (recovery truncates, rewrites indexes, completes prepared transactions, takes an append);
    returns what that second cut leaves."""
    disk = PowerLossDisk(survivors, cut_after)
    restore, node = install(disk), None
    try:
        node = open_node(survivors, fsync)
        await check_writable(node)
    except PowerCut:
        pass
    finally:
        restore()
        if node is not None:
            crash(node)
    return disk.survivors(target, seed)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), seed=st.none() | st.integers(0, 2**32 - 1), fsync=st.sampled_from(["always", "never"]),
       recovery_cut=st.none() | st.integers(0, 40))
def test_power_cut_in_the_middle_of_a_request(data, seed, fsync, recovery_cut):
    """A cut before any one change to the disk, and maybe another while the next broker recovers:
    start-up never fails; with fsync "always" every acknowledgement before the first cut is kept,
    whatever part of the unsynced rest survives."""
    cut_after = data.draw(st.integers(0, changes_of_a_whole_run(fsync) - 1), label="cut_after")

    async def scenario(d: Path):
        disk, acked, cut = await run(d / "live", fsync, cut_after)
        assert cut
        survivors = disk.survivors(d / "after", seed)
        if recovery_cut is not None:
            survivors = await cut_during_recovery(survivors, d / "after-recovery", fsync, recovery_cut, seed)
        if fsync == "always":
            await restart(survivors, acked, exact=False)
        else:
            node = open_node(survivors, fsync)
            try:
                assert all(p.last_stable_offset <= p.high_watermark for p in node.logs.logs.values())
                await check_writable(node)
            finally:
                node.close()

    with tempfile.TemporaryDirectory() as d:
        asyncio.run(scenario(Path(d)))


async def test_fsync_never_loses_acknowledged_writes(tmp_path):
    """The same workload with fsync "never": a cut that keeps only what was fsynced loses the
    acknowledged produce and the acknowledged commit, and the broker still starts."""
    cuts = {}

    def on_ack(disk, step, acked):
        if step not in cuts:
            cuts[step] = acked, disk.survivors(tmp_path / f"lost-{len(cuts)}")

    await run(tmp_path / "live", "never", on_ack=on_ack)
    acked, survivors = cuts["produce b'p0'"]
    assert acked.records[(TOPIC, 0)] == {0: b"p0"}
    node = open_node(survivors, "never")
    try:
        assert node.logs.topics[TOPIC].partitions == 2  # topic metadata is always fsynced
        assert node.logs.get(TOPIC, 0).high_watermark == 0  # the acknowledged record is gone
    finally:
        node.close()
    acked, survivors = cuts["commit"]
    node = open_node(survivors, "never")
    try:
        assert TXN_ID not in node.txn.txns  # __transaction_state was not synced: the commit is gone
        assert node.logs.get(TOPIC, 1).high_watermark == 0
    finally:
        node.close()


# -- the simulation itself --------------------------------------------------------------------------


def test_the_disk_keeps_only_what_was_fsynced(tmp_path):
    disk = PowerLossDisk(tmp_path / "live")
    restore = install(disk)
    try:
        fs.make_dirs(tmp_path / "live" / "d", sync=True)
        fd = fs.disk.open(tmp_path / "live" / "d" / "f", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        fs.write_all(fd, b"synced")
        fs.disk.fsync(fd)
        fs.write_all(fd, b"+lost")
        fs.disk.close(fd)
        before_dir_sync = disk.survivors(tmp_path / "before")
        fs.disk.fsync_dir(tmp_path / "live" / "d")
        fs.atomic_write(tmp_path / "live" / "d" / "meta", b"new")
        fs.append(tmp_path / "live" / "unsynced-name", b"x", sync=False)
    finally:
        restore()
    assert not (before_dir_sync / "d" / "f").exists()  # the name of a file is durable with its directory
    after = disk.survivors(tmp_path / "after")
    assert (after / "d" / "f").read_bytes() == b"synced"
    assert (after / "d" / "meta").read_bytes() == b"new"
    assert not (after / "unsynced-name").exists()
    torn = {disk.survivors(tmp_path / f"seed-{s}", seed=s).joinpath("d", "f").read_bytes() for s in range(40)}
    assert b"synced" in torn and b"synced+lost" in torn and torn <= {b"synced" + b"+lost"[:n] for n in range(6)}
    assert len(torn) > 2  # torn at bytes in between too


def test_a_cut_stops_every_later_change(tmp_path):
    disk = PowerLossDisk(tmp_path / "live", cut_after=1)
    restore = install(disk)
    try:
        fs.make_dirs(tmp_path / "live" / "a", sync=False)
        try:
            fs.make_dirs(tmp_path / "live" / "b", sync=False)
        except PowerCut:
            pass
        else:
            raise AssertionError("the second change happened after the cut")
    finally:
        restore()
    assert (tmp_path / "live" / "a").is_dir() and not (tmp_path / "live" / "b").exists()
