"""Under --fsync always the coordinators' appends are written on the loop and fsynced by the group
commit on the flusher's thread (shim.storage.group_commit), and a coordinator API's answer waits
for a job that started after it (shim.apis._coordinator_sync): the loop is not held by the fsync,
no answer -- to a write, or to a read of state a write not yet on disk made -- precedes it, and a
failed job answers NOT_COORDINATOR. An EndTxn's Prepare state, markers and Complete state are each
written once the one before is on disk (tests/test_txn_steps_group_commit.py: the coordinator's own
steps and WriteTxnMarkers)."""

from __future__ import annotations

import asyncio
import datetime
import itertools
from contextlib import asynccontextmanager

from shim.apis.dispatch import dispatch
from shim.errors import ErrorCode as E
from shim.protocol.messages import RequestHeader, decode_response, encode_request, request_module
from shim.storage import fs
from tests.test_produce_group_commit import FailingDisk, RecordingDisk, _node

_corr = itertools.count(1)
OFFSETS_LOG = "__consumer_offsets-"
TXN_LOG = "__transaction_state-"


def _frame(key, version, build):
    return encode_request(RequestHeader(key, version, next(_corr), "c"), build(request_module(key, version)))


def _answer(raw, key, version):
    return decode_response(raw, key, version)[1]


def _commit(group="g", offset=5):
    return _frame(8, 8, lambda m: m.OffsetCommitRequest(
        group_id=group, generation_id_or_member_epoch=-1, member_id="", group_instance_id=None,
        topics=(m.OffsetCommitRequestTopic(name="t", partitions=(m.OffsetCommitRequestPartition(
            partition_index=0, committed_offset=offset, committed_leader_epoch=-1, committed_metadata=""),)),)))


def _commit_code(raw):
    return _answer(raw, 8, 8).topics[0].partitions[0].error_code


def _fetch_offsets(group="g"):
    return _frame(9, 8, lambda m: m.OffsetFetchRequest(require_stable=False, groups=(m.OffsetFetchRequestGroup(
        group_id=group, topics=(m.OffsetFetchRequestTopics(name="t", partition_indexes=(0,)),)),)))


def _fetched_offset(raw):
    return _answer(raw, 9, 8).groups[0].topics[0].partitions[0].committed_offset


def _init_producer_id(txn_id="tx"):
    return _frame(22, 4, lambda m: m.InitProducerIdRequest(
        transactional_id=txn_id, transaction_timeout=datetime.timedelta(seconds=60), producer_id=-1,
        producer_epoch=-1))


async def _ready(node):
    """The coordinators' topics made: each first request creates one and answers COORDINATOR_NOT_AVAILABLE."""
    node.logs.ensure_topic("__consumer_offsets", node.txn.offsets_partitions)
    node.logs.ensure_topic("__transaction_state", node.txn.num_partitions)


@asynccontextmanager
async def _ready_node(tmp_path, disk):
    """A node on ``disk`` with the coordinators' topics made; closed, and the disk uninstalled, after."""
    node, previous = await _node(tmp_path, disk, 1)
    try:
        await _ready(node)
        yield node
    finally:
        disk.gate.set()  # a test that held the flusher's fsync back lets it go
        node.close()
        fs.use(previous)


def _synced_before(events, name_part, write_index, answer_index):
    """An fsync of a file named with ``name_part`` started after event ``write_index`` and ended before ``answer_index``."""
    return any(e[0] == "fsync-end" and name_part in str(e[1]) and write_index < e[2] and i < answer_index
               for i, e in enumerate(events))


async def test_an_offset_commit_is_answered_after_its_fsync_off_the_loop(tmp_path):
    disk = RecordingDisk()
    async with _ready_node(tmp_path, disk) as node:
        written = len(disk.events)
        answer = await dispatch(node, _commit())
        answered = disk.record("answer")
        assert _commit_code(answer) == E.none
        assert any(e[0] == "write" and OFFSETS_LOG in str(e[1]) for e in disk.events[written:])
        assert _synced_before(disk.events, OFFSETS_LOG, written, answered)
        assert disk.on_loop == []  # the fsync ran on the flusher's thread


async def test_a_read_of_a_commit_not_yet_on_disk_waits_for_its_fsync(tmp_path):
    disk = RecordingDisk()
    async with _ready_node(tmp_path, disk) as node:
        disk.gate.clear()  # the flusher's fsync waits
        commit = asyncio.ensure_future(dispatch(node, _commit(offset=7)))
        while not any(e[0] == "fsync-start" and OFFSETS_LOG in str(e[1]) for e in disk.events):
            await asyncio.sleep(0.001)
        # the offset is in the coordinator's memory, its record not yet on disk: the read is
        # answered only with the commit
        read = asyncio.ensure_future(dispatch(node, _fetch_offsets()))
        while node.logs.group_commit._waiters == [] and not read.done():
            await asyncio.sleep(0.001)
        assert not commit.done() and not read.done()
        disk.gate.set()
        assert _commit_code(await commit) == E.none
        assert _fetched_offset(await read) == 7


async def test_a_transactional_state_is_answered_after_its_fsync_off_the_loop(tmp_path):
    disk = RecordingDisk()
    async with _ready_node(tmp_path, disk) as node:
        written = len(disk.events)
        raw = await dispatch(node, _init_producer_id())
        answered = disk.record("answer")
        answer = _answer(raw, 22, 4)
        assert answer.error_code == E.none and answer.producer_id >= 0
        assert _synced_before(disk.events, TXN_LOG, written, answered)
        assert disk.on_loop == []  # the fsync ran on the flusher's thread


async def test_a_failed_fsync_answers_an_offset_commit_not_coordinator(tmp_path):
    disk = FailingDisk()
    disk.failures = -1  # set to 0 below: the next segment fsync fails
    async with _ready_node(tmp_path, disk) as node:
        assert _commit_code(await dispatch(node, _commit(offset=1))) == E.none
        disk.failures = 0
        # Kafka: a coordinator append's KAFKA_STORAGE_ERROR is answered NOT_COORDINATOR
        assert _commit_code(await dispatch(node, _commit(offset=2))) == E.not_coordinator
        assert disk.failures == 1 and node.logs.offline
        assert _commit_code(await dispatch(node, _commit(offset=3))) == E.not_coordinator  # resigned


def _add_partitions(pid, epoch, txn_id="tx"):
    return _frame(24, 3, lambda m: m.AddPartitionsToTxnRequest(
        v3_and_below_transactional_id=txn_id, v3_and_below_producer_id=pid, v3_and_below_producer_epoch=epoch,
        v3_and_below_topics=(m.AddPartitionsToTxnTopic(name="t", partitions=(0,)),)))


def _end_txn(pid, epoch, txn_id="tx"):
    return _frame(26, 3, lambda m: m.EndTxnRequest(transactional_id=txn_id, producer_id=pid, producer_epoch=epoch,
                                                   committed=True))


async def test_end_txn_writes_each_step_once_the_one_before_is_on_disk_off_the_loop(tmp_path):
    disk = RecordingDisk()
    async with _ready_node(tmp_path, disk) as node:
        init = _answer(await dispatch(node, _init_producer_id()), 22, 4)
        pid, epoch = init.producer_id, init.producer_epoch
        await dispatch(node, _add_partitions(pid, epoch))
        start = len(disk.events)
        raw = await dispatch(node, _end_txn(pid, epoch))
        answered = disk.record("answer")
        assert _answer(raw, 26, 3).error_code == E.none
        assert node.txn.txns["tx"].state.kafka_name == "CompleteCommit" and node.logs.get("t", 0).log_end_offset == 1
        events = disk.events

        def first_write(name, after):
            return next(i for i in range(after + 1, len(events)) if events[i][0] == "write" and name in str(events[i][1]))
        prepare = first_write(TXN_LOG, start - 1)
        marker = first_write("/t-0/", prepare)
        complete = first_write(TXN_LOG, marker)
        # the marker is written once the Prepare state is on disk, the Complete state once the
        # marker is, the answer once the Complete state is
        assert _synced_before(events, TXN_LOG, prepare, marker)
        assert _synced_before(events, "/t-0/", marker, complete)
        assert _synced_before(events, TXN_LOG, complete, answered)
        assert disk.on_loop == []  # three fsyncs, none on the loop


async def test_a_failed_fsync_of_a_prepare_commit_answers_end_txn_not_coordinator(tmp_path):
    disk = FailingDisk()
    disk.failures = -1
    async with _ready_node(tmp_path, disk) as node:
        init = _answer(await dispatch(node, _init_producer_id()), 22, 4)
        pid, epoch = init.producer_id, init.producer_epoch
        added = _answer(await dispatch(node, _add_partitions(pid, epoch)), 24, 3)
        assert added.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code == E.none
        disk.failures = 0  # the PrepareCommit's fsync, made before any marker is written, fails
        assert _answer(await dispatch(node, _end_txn(pid, epoch)), 26, 3).error_code == E.not_coordinator
        assert disk.failures == 1 and node.logs.offline
        assert node.logs.get("t", 0).log_end_offset == 0  # no marker was written
        assert node.txn.txns["tx"].state.kafka_name == "PrepareCommit" and not node.txn.staged


async def _commit_held_in_fsync(node, disk):
    """An OffsetCommit (offset 7) dispatched with the gate closed, once the flusher's fsync of its
    __consumer_offsets segment has started and waits there: the task that answers it."""
    disk.gate.clear()
    first = asyncio.ensure_future(dispatch(node, _commit(offset=7)))
    while not any(e[0] == "fsync-start" and OFFSETS_LOG in str(e[1]) for e in disk.events):
        await asyncio.sleep(0.001)
    return first


async def test_a_read_waiting_for_a_failed_fsync_answers_offset_fetch_not_coordinator(tmp_path):
    """An OffsetFetch (v8, groups) waiting for a coordinator append's fsync that fails is answered
    NOT_COORDINATOR on each group it names (Kafka: OffsetFetchRequest.getErrorResponse), not
    failed inside the broker."""
    disk = FailingDisk()
    disk.failures = -1
    async with _ready_node(tmp_path, disk) as node:
        first = await _commit_held_in_fsync(node, disk)
        second = asyncio.ensure_future(dispatch(node, _commit(offset=8)))  # left to the next job
        read = asyncio.ensure_future(dispatch(node, _fetch_offsets()))
        while len(node.logs.group_commit._waiters) < 2 and not read.done():
            await asyncio.sleep(0.001)
        disk.failures = 0  # the next job's segment fsync fails
        disk.gate.set()
        await first  # its job may fsync another segment after the gate, and fail
        assert _commit_code(await second) == E.not_coordinator
        answer = _answer(await read, 9, 8)
        assert [(g.group_id, g.error_code, g.topics) for g in answer.groups] == [("g", E.not_coordinator, ())]
        assert node.logs.offline


async def test_an_add_partitions_yielding_while_a_job_fails_answers_not_coordinator(tmp_path, monkeypatch):
    """AddPartitionsToTxn is answered paced: its transaction state is written, then the answer is
    built over many turns of the loop. A job that fails meanwhile leaves no answer waiting for a
    job (GroupCommit.fail), so the dispatcher asks what the failure lost (GroupCommit.lost_since):
    the state it wrote is not on disk, and the answer is NOT_COORDINATOR, never NONE."""
    from shim.apis import _pace

    disk = FailingDisk()
    disk.failures = -1
    async with _ready_node(tmp_path, disk) as node:
        init = _answer(await dispatch(node, _init_producer_id()), 22, 4)
        first = await _commit_held_in_fsync(node, disk)
        monkeypatch.setattr(_pace, "SLICE_S", 0.0)  # the handler yields after every entry
        add = asyncio.ensure_future(dispatch(node, _frame(24, 3, lambda m: m.AddPartitionsToTxnRequest(
            v3_and_below_transactional_id="tx", v3_and_below_producer_id=init.producer_id,
            v3_and_below_producer_epoch=init.producer_epoch,
            v3_and_below_topics=(m.AddPartitionsToTxnTopic(name="t", partitions=(0,) * 200_000),)))))
        while node.txn.txns["tx"].state.kafka_name != "Ongoing":
            await asyncio.sleep(0)
        disk.failures = 0  # the next segment fsync fails: the job after the gated one, which has the add's state
        disk.gate.set()
        await first
        while not node.logs.offline and not add.done():
            await asyncio.sleep(0.001)
        assert node.logs.offline and not add.done()  # the job failed while the add was being answered
        answer = _answer(await add, 24, 3)
        assert {p.partition_error_code for t in answer.results_by_topic_v3_and_below
                for p in t.results_by_partition} == {E.not_coordinator}


async def test_a_paced_read_during_which_a_job_fails_answers_not_coordinator(tmp_path, monkeypatch):
    """An OffsetFetch of many groups is answered paced: it reads an offset whose record is not yet
    on disk, yields, and the job with that record fails meanwhile. A failed job marks every
    coordinator append settled (GroupCommit.fail), so nothing is left for the answer to wait on;
    it is NOT_COORDINATOR on each group, never the offset whose commit was itself refused."""
    from shim.apis import _pace

    disk = FailingDisk()
    disk.failures = -1
    async with _ready_node(tmp_path, disk) as node:
        first = await _commit_held_in_fsync(node, disk)
        second = asyncio.ensure_future(dispatch(node, _commit(offset=8)))  # left to the next job
        while node.logs.group_commit._waiters == []:
            await asyncio.sleep(0.001)
        monkeypatch.setattr(_pace, "SLICE_S", 0.0)  # the read yields after every group
        fetched, fetch_offsets = [], node.groups.fetch_offsets
        monkeypatch.setattr(node.groups, "fetch_offsets", lambda *a: fetched.append(fetch_offsets(*a)) or fetched[-1])
        read = asyncio.ensure_future(dispatch(node, _frame(9, 8, lambda m: m.OffsetFetchRequest(
            require_stable=False, groups=(m.OffsetFetchRequestGroup(  # read on the loop (DECODE_INLINE_BYTES)
                group_id="g", topics=(m.OffsetFetchRequestTopics(name="t", partition_indexes=(0,)),)),) * 15_000))))
        while not fetched:
            await asyncio.sleep(0)
        assert fetched[0][0][1].offset == 8  # the read has the offset whose record is not on disk
        disk.failures = 0  # the next job's segment fsync fails
        disk.gate.set()
        await first  # its job may fsync another segment after the gate, and fail
        assert _commit_code(await second) == E.not_coordinator
        assert node.logs.offline and not read.done()  # the job failed while the read was being answered
        answer = _answer(await read, 9, 8)
        assert {(g.error_code, g.topics) for g in answer.groups} == {(E.not_coordinator, ())}
