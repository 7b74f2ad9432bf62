"""Under --fsync always the transactions the coordinator ends by itself -- a timed-out one, one whose
producer a new InitProducerId fenced, markers released or retried -- and WriteTxnMarkers' markers
are fsynced by the group commit off the loop, as an EndTxn's steps are (shim.txn_steps,
shim.apis.k27_write_txn_markers): a marker is written only once its Prepare state is on disk, the
Complete state only once every marker is, an answer only once what it reports is; a failed fsync
stops the steps with the transaction prepared."""

from __future__ import annotations

import asyncio
import datetime

import pytest

from shim.apis.dispatch import dispatch
from shim.config import BrokerConfig
from shim.coordinators.txn.state import TxnState
from shim.errors import ErrorCode as E, KafkaError
from shim.node import Node, now_ms
from shim.storage import fs
from tests.test_coordinator_group_commit import (
    TXN_LOG, _add_partitions, _answer, _end_txn, _frame, _ready_node, _synced_before,
)
from tests.test_produce_group_commit import FailingDisk, RecordingDisk

S = TxnState
MARKERS = "/t-0/"
TIMEOUT_MS = 1_000


def _init(txn_id="tx", pid=-1, epoch=-1):
    return _frame(22, 4, lambda m: m.InitProducerIdRequest(
        transactional_id=txn_id, transaction_timeout=datetime.timedelta(milliseconds=TIMEOUT_MS), producer_id=pid,
        producer_epoch=epoch))


async def _open(node, txn_id="tx"):
    """``txn_id`` with t-0 in an ongoing transaction; its producer id and epoch."""
    init = _answer(await dispatch(node, _init(txn_id)), 22, 4)
    added = _answer(await dispatch(node, _add_partitions(init.producer_id, init.producer_epoch, txn_id)), 24, 3)
    assert added.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code == E.none
    return init.producer_id, init.producer_epoch


async def _until(check, what, timeout_s=10.0):
    """Until ``check()`` holds, the loop serving the group commit's jobs meanwhile."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not check():
        assert asyncio.get_running_loop().time() < deadline, f"never {what}"
        await asyncio.sleep(0.001)


def _steps(events, start):
    """(Prepare state, marker, Complete state): the indexes of their writes after ``start``."""
    def first_write(name, after):
        return next(i for i in range(after + 1, len(events)) if events[i][0] == "write" and name in str(events[i][1]))
    prepare = first_write(TXN_LOG, start - 1)
    marker = first_write(MARKERS, prepare)
    return prepare, marker, first_write(TXN_LOG, marker)


def _in_order(disk, start):
    """Each step written once the one before is on disk, none fsynced on the loop."""
    prepare, marker, complete = _steps(disk.events, start)
    assert _synced_before(disk.events, TXN_LOG, prepare, marker)
    assert _synced_before(disk.events, MARKERS, marker, complete)
    assert disk.on_loop == []


async def test_a_timed_out_transaction_is_aborted_step_by_step_off_the_loop(tmp_path):
    disk = RecordingDisk()
    async with _ready_node(tmp_path, disk) as node:
        await _open(node)
        start = len(disk.events)
        node.tick(now_ms() + TIMEOUT_MS + 1)  # the timeout check, on the loop as the deadline timer runs it
        # the PrepareAbort is written; its marker waits for its fsync
        assert node.txn.txns["tx"].state is S.PREPARE_ABORT and node.logs.get("t", 0).log_end_offset == 0
        await _until(lambda: node.txn.txns["tx"].state is S.COMPLETE_ABORT, "aborted")
        assert node.logs.get("t", 0).log_end_offset == 1 and not node.txn.staged
        _in_order(disk, start)


async def test_a_fencing_init_producer_id_is_answered_once_the_prepare_abort_is_on_disk(tmp_path):
    disk = RecordingDisk()
    async with _ready_node(tmp_path, disk) as node:
        pid, epoch = await _open(node)
        start = len(disk.events)
        fencing = _answer(await dispatch(node, _init()), 22, 4)
        answered = disk.record("answer")
        assert fencing.error_code == E.concurrent_transactions  # Kafka: retried once the abort completed
        prepare = next(i for i in range(start, len(disk.events)) if disk.events[i][0] == "write"
                       and TXN_LOG in str(disk.events[i][1]))
        assert _synced_before(disk.events, TXN_LOG, prepare, answered)
        await _until(lambda: node.txn.txns["tx"].state is S.COMPLETE_ABORT, "aborted")
        _in_order(disk, start)
        again = _answer(await dispatch(node, _init()), 22, 4)
        assert (again.error_code, again.producer_id) == (E.none, pid) and again.producer_epoch > epoch + 1


async def test_write_txn_markers_is_answered_after_the_markers_fsync_off_the_loop(tmp_path):
    disk = RecordingDisk()
    async with _ready_node(tmp_path, disk) as node:
        start = len(disk.events)
        [code] = _marker_codes(await dispatch(node, _write_marker()))
        answered = disk.record("answer")
        assert code == E.none and node.logs.get("t", 0).log_end_offset == 1
        written = next(i for i in range(start, len(disk.events)) if disk.events[i][0] == "write"
                       and MARKERS in str(disk.events[i][1]))
        assert _synced_before(disk.events, MARKERS, written, answered)
        assert disk.on_loop == []


async def test_a_failed_fsync_answers_write_txn_markers_kafka_storage_error(tmp_path):
    disk = FailingDisk()
    disk.failures = -1
    async with _ready_node(tmp_path, disk) as node:
        disk.failures = 0  # the marker's fsync fails
        assert _marker_codes(await dispatch(node, _write_marker())) == [E.kafka_storage_error]
        assert disk.failures == 1 and node.logs.offline
        assert _marker_codes(await dispatch(node, _write_marker())) == [E.unknown_topic_or_partition]


async def test_a_failed_fsync_of_a_prepare_abort_writes_no_marker(tmp_path):
    disk = FailingDisk()
    disk.failures = -1
    async with _ready_node(tmp_path, disk) as node:
        await _open(node)
        disk.failures = 0  # the timed-out transaction's PrepareAbort's fsync fails
        node.tick(now_ms() + TIMEOUT_MS + 1)
        await _until(lambda: "tx" not in node.txn.staged, "unstaged")
        assert disk.failures == 1 and node.logs.offline
        assert node.logs.get("t", 0).log_end_offset == 0  # no marker: a restart completes the abort
        assert node.txn.txns["tx"].state is S.PREPARE_ABORT


async def test_retried_markers_are_fsynced_off_the_loop_before_the_complete_state(tmp_path):
    disk = RecordingDisk()
    async with _ready_node(tmp_path, disk) as node:
        refusing = {"t"}

        def check_min_isr(topic, partition, min_isr):
            if topic in refusing:
                raise KafkaError(E.not_enough_replicas, "the ISR is below min.insync.replicas")
        node.txn.check_min_isr = check_min_isr
        pid, epoch = await _open(node)
        assert _answer(await dispatch(node, _end_txn(pid, epoch)), 26, 3).error_code == E.none  # the outcome is decided
        assert node.logs.get("t", 0).log_end_offset == 0 and "tx" in node.txn.unmarked
        refusing.clear()
        start = len(disk.events)
        node.tick(now_ms())  # the retry: its marker written now, its Complete state after the marker's fsync
        assert node.logs.get("t", 0).log_end_offset == 1 and node.txn.txns["tx"].state is S.PREPARE_COMMIT
        await _until(lambda: node.txn.txns["tx"].state is S.COMPLETE_COMMIT, "committed")
        marker = next(i for i in range(start, len(disk.events)) if disk.events[i][0] == "write"
                      and MARKERS in str(disk.events[i][1]))
        complete = next(i for i in range(marker, len(disk.events)) if disk.events[i][0] == "write"
                        and TXN_LOG in str(disk.events[i][1]))
        assert _synced_before(disk.events, MARKERS, marker, complete)
        assert disk.on_loop == []


async def test_released_markers_are_fsynced_off_the_loop_before_the_complete_state(tmp_path):
    disk = RecordingDisk()
    async with _ready_node(tmp_path, disk) as node:
        pid, epoch = await _open(node)
        node.txn.markers_held = True  # shim.control's hold_markers
        assert _answer(await dispatch(node, _end_txn(pid, epoch)), 26, 3).error_code == E.none
        assert node.logs.get("t", 0).log_end_offset == 0 and "tx" in node.txn.held
        node.txn.markers_held = False
        start = len(disk.events)
        assert node.txn.release_markers(now_ms()) == ["tx"]
        assert node.logs.get("t", 0).log_end_offset == 1 and node.txn.txns["tx"].state is S.PREPARE_COMMIT
        await _until(lambda: node.txn.txns["tx"].state is S.COMPLETE_COMMIT, "committed")
        marker = next(i for i in range(start, len(disk.events)) if disk.events[i][0] == "write"
                      and MARKERS in str(disk.events[i][1]))
        complete = next(i for i in range(marker, len(disk.events)) if disk.events[i][0] == "write"
                        and TXN_LOG in str(disk.events[i][1]))
        assert _synced_before(disk.events, MARKERS, marker, complete)
        assert disk.on_loop == []


def _write_marker(pid=7, epoch=0, topic="t"):
    return _frame(27, 1, lambda m: m.WriteTxnMarkersRequest(markers=(m.WritableTxnMarker(
        producer_id=pid, producer_epoch=epoch, transaction_result=False, coordinator_epoch=0,
        topics=(m.WritableTxnMarkerTopic(name=topic, partition_indexes=(0,)),)),)))


def _marker_codes(raw):
    return [p.error_code for r in _answer(raw, 27, 1).markers for t in r.topics for p in t.partitions]


@pytest.mark.parametrize("release", ["3.9", "4.1"])
async def test_a_failed_fsync_of_a_group_coordinator_marker_answers_kafka_storage_error(tmp_path, release):
    """A marker to __consumer_offsets whose fsync fails is KAFKA_STORAGE_ERROR under both releases.
    3.9 appends it as any marker (KafkaApis.handleWriteTxnMarkersRequest, acks=-1); 4.x hands it to
    the group coordinator (GroupCoordinatorService.completeTransaction), whose
    CoordinatorPartitionWriter.append throws the append's KafkaStorageException and fails the
    future with it unmapped: KafkaApis turns only COORDINATOR_NOT_AVAILABLE,
    COORDINATOR_LOAD_IN_PROGRESS and NOT_COORDINATOR into NOT_LEADER_OR_FOLLOWER. The partition is
    then in the offline directory: UNKNOWN_TOPIC_OR_PARTITION (ReplicaManager.getMagic)."""
    disk = FailingDisk()
    disk.failures = -1
    previous = fs.use(disk)
    node = Node(BrokerConfig(data_dir=tmp_path / "d", fsync="always", kafka_version=release))
    try:
        node.logs.ensure_topic("__consumer_offsets", node.txn.offsets_partitions)
        disk.failures = 0  # the marker's fsync fails
        assert _marker_codes(await dispatch(node, _write_marker(topic="__consumer_offsets"))) == [E.kafka_storage_error]
        assert disk.failures == 1 and node.logs.offline
        assert node.logs.get("__consumer_offsets", 0).log_end_offset == 1  # written, never known on disk
        assert _marker_codes(await dispatch(node, _write_marker(topic="__consumer_offsets"))) == [
            E.unknown_topic_or_partition]
    finally:
        node.close()
        fs.use(previous)
