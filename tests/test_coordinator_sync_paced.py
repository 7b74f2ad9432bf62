"""A coordinator API whose handler yields after writing its record (a paced walk of the request's
partitions, a wait for a rebalance or for records) is answered under --fsync always only once that
record is on disk (shim.apis._coordinator_sync): a group-commit job that fails while the handler
yields marks every coordinator append settled (GroupCommit.fail), and the answer is then the API's
NOT_COORDINATOR -- Kafka's mapping of a coordinator append's KAFKA_STORAGE_ERROR
(CoordinatorOperationExceptionHelper, TransactionStateManager.appendTransactionToLog) -- never NONE
for a record that is not on disk."""

from __future__ import annotations

import asyncio
import datetime
import errno
import threading

from shim.apis import _pace
from shim.apis.dispatch import dispatch
from shim.errors import ErrorCode as E
from tests.test_coordinator_group_commit import (
    OFFSETS_LOG, TXN_LOG, _add_partitions, _answer, _commit, _end_txn, _frame, _init_producer_id, _ready_node,
)
from tests.test_produce_group_commit import FailingDisk, _produce

PARTITIONS = 100_000  # named in the request, each a yield of the paced walk (SLICE_S = 0)


async def _fails_while_answering(node, disk, monkeypatch, frame) -> bytes:
    """``frame``'s raw answer, the job that has the coordinator record it wrote having failed while
    its handler was still walking the request."""
    commit = node.logs.group_commit
    disk.gate.clear()  # the flusher's fsync of another group's commit waits: the next job queues
    first = asyncio.ensure_future(dispatch(node, _commit(group="other", offset=7)))
    while not any(e[0] == "fsync-start" and OFFSETS_LOG in str(e[1]) for e in disk.events):
        await asyncio.sleep(0.001)
    written = commit.coordinator_written
    monkeypatch.setattr(_pace, "SLICE_S", 0.0)  # the handler yields after every entry
    request = asyncio.ensure_future(dispatch(node, frame))
    while commit.coordinator_written == written and not request.done():
        await asyncio.sleep(0)
    assert not request.done()  # its record is written, its walk goes on
    disk.failures = 0  # the next segment fsync fails: the job after the gated one, which has the record
    disk.gate.set()
    await first
    while not node.logs.offline and not request.done():
        await asyncio.sleep(0.001)
    assert node.logs.offline and not request.done()  # the job failed while the request was being answered
    return await request


def _paced_commit(m, topic_type, partition_type):
    return (m.__dict__[topic_type](name="t", partitions=tuple(m.__dict__[partition_type](
        partition_index=0, committed_offset=9, committed_leader_epoch=-1, committed_metadata="")
        for _ in range(PARTITIONS))),)


def _codes(answer) -> set:
    return {p.error_code for t in answer.topics for p in t.partitions}


async def test_an_offset_commit_yielding_while_its_job_fails_answers_not_coordinator(tmp_path, monkeypatch):
    disk = FailingDisk()
    disk.failures = -1
    async with _ready_node(tmp_path, disk) as node:
        raw = await _fails_while_answering(node, disk, monkeypatch, _frame(8, 8, lambda m: m.OffsetCommitRequest(
            group_id="g", generation_id_or_member_epoch=-1, member_id="", group_instance_id=None,
            topics=_paced_commit(m, "OffsetCommitRequestTopic", "OffsetCommitRequestPartition"))))
        assert _codes(_answer(raw, 8, 8)) == {E.not_coordinator}


async def test_a_txn_offset_commit_yielding_while_its_job_fails_answers_not_coordinator(tmp_path, monkeypatch):
    disk = FailingDisk()
    disk.failures = -1
    async with _ready_node(tmp_path, disk) as node:
        init = _answer(await dispatch(node, _init_producer_id()), 22, 4)
        added = _answer(await dispatch(node, _frame(25, 3, lambda m: m.AddOffsetsToTxnRequest(
            transactional_id="tx", producer_id=init.producer_id, producer_epoch=init.producer_epoch,
            group_id="g"))), 25, 3)
        assert added.error_code == E.none
        raw = await _fails_while_answering(node, disk, monkeypatch, _frame(28, 3, lambda m: m.TxnOffsetCommitRequest(
            transactional_id="tx", group_id="g", producer_id=init.producer_id, producer_epoch=init.producer_epoch,
            generation_id=-1, member_id="", group_instance_id=None,
            topics=_paced_commit(m, "TxnOffsetCommitRequestTopic", "TxnOffsetCommitRequestPartition"))))
        assert _codes(_answer(raw, 28, 3)) == {E.not_coordinator}


async def test_an_end_txn_whose_marker_fsync_fails_is_answered_once_prepared(tmp_path):
    """Kafka answers EndTxn once its Prepare state is durable and writes the markers after
    (TransactionCoordinator.endTransaction's sendTxnMarkersCallback): a marker's failed fsync, after
    the Prepare state is on disk, leaves the transaction prepared for a restart to complete and the
    EndTxn answered NONE -- the failure lost an append the request made, but not one its answer reports."""
    disk = FailingDisk()
    disk.failures = -1
    async with _ready_node(tmp_path, disk) as node:
        init = _answer(await dispatch(node, _init_producer_id()), 22, 4)
        pid, epoch = init.producer_id, init.producer_epoch
        await dispatch(node, _add_partitions(pid, epoch))
        disk.gate.clear()  # the Prepare state's fsync starts, and waits
        start = len(disk.events)
        end = asyncio.ensure_future(dispatch(node, _end_txn(pid, epoch)))
        while not any(e[0] == "fsync-start" and TXN_LOG in str(e[1]) for e in disk.events[start:]):
            await asyncio.sleep(0.001)
        disk.failures = 0  # the next segment fsync fails: the marker's
        disk.gate.set()
        assert _answer(await end, 26, 3).error_code == E.none
        assert disk.failures == 1 and node.logs.offline
        assert node.logs.get("t", 0).log_end_offset == 1  # the marker was written, never known on disk
        assert node.txn.txns["tx"].state.kafka_name == "PrepareCommit"


class _HoldingDisk(FailingDisk):
    """Holds the second fsync of a __transaction_state segment once armed (an EndTxn's Complete
    state), and fails every fsync of a __consumer_offsets segment once ``fail_offsets`` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.armed, self.txn_fsyncs, self.fail_offsets = False, 0, False
        self.hold, self.held = threading.Event(), threading.Event()

    def fsync(self, fd):
        name = str(self.names.get(fd, ""))
        if self.armed and TXN_LOG in name:
            self.txn_fsyncs += 1
            if self.txn_fsyncs == 2:
                self.held.set()
                self.hold.wait()
        if self.fail_offsets and OFFSETS_LOG in name:
            raise OSError(errno.EIO, "Input/output error")
        super().fsync(fd)


async def test_an_end_txn_on_disk_is_not_failed_by_another_request_s_job(tmp_path):
    """An EndTxn answered once its Complete state is on disk reports only its own writes: a job
    that fails with another request's offsets, written while the Complete state's fsync ran, fails
    that request (NOT_COORDINATOR) and leaves the EndTxn's NONE, as Kafka answers each from its
    own append."""
    disk = _HoldingDisk()
    disk.failures = -1
    async with _ready_node(tmp_path, disk) as node:
        init = _answer(await dispatch(node, _init_producer_id()), 22, 4)
        await dispatch(node, _add_partitions(init.producer_id, init.producer_epoch))
        disk.armed = True
        end = asyncio.ensure_future(dispatch(node, _end_txn(init.producer_id, init.producer_epoch)))
        while not disk.held.is_set():
            await asyncio.sleep(0.001)
        commit = asyncio.ensure_future(dispatch(node, _commit(offset=3)))  # its record waits for the next job
        while node.logs.group_commit._waiters == []:
            await asyncio.sleep(0.001)
        disk.fail_offsets = True
        disk.hold.set()
        assert _answer(await end, 26, 3).error_code == E.none
        assert _answer(await commit, 8, 8).topics[0].partitions[0].error_code == E.not_coordinator
        assert node.logs.offline and node.txn.txns["tx"].state.kafka_name == "CompleteCommit"


async def test_a_join_group_parked_when_the_directory_goes_offline_is_answered_not_coordinator(tmp_path):
    """A JoinGroup parked in a rebalance (here the new group's initial delay) when a failed fsync
    takes the data directory offline is answered NOT_COORDINATOR at once, as Kafka's coordinator
    answers it when it resigns the offline partition's groups (onResignation, onUnloaded); it was
    answered NONE once the rebalance completed, by a coordinator that had resigned."""
    disk = FailingDisk()
    disk.failures = -1
    async with _ready_node(tmp_path, disk) as node:
        node.groups.initial_rebalance_delay_ms = 60_000
        join = asyncio.ensure_future(dispatch(node, _frame(11, 3, lambda m: m.JoinGroupRequest(
            group_id="g", session_timeout=datetime.timedelta(seconds=10), rebalance_timeout=datetime.timedelta(seconds=60),
            member_id="", protocol_type="consumer",
            protocols=(m.JoinGroupRequestProtocol(name="range", metadata=b""),)))))
        while "g" not in node.groups.groups or not any(
                m.awaiting_join for m in node.groups.groups["g"].members.values()):
            await asyncio.sleep(0.001)
        disk.failures = 0  # a Produce's fsync fails
        await dispatch(node, _produce([0], correlation_id=99))
        assert node.logs.offline
        assert _answer(await asyncio.wait_for(join, 10), 11, 3).error_code == E.not_coordinator
