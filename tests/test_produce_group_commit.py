"""Under --fsync always a Produce's appends are written on the loop and fsynced on the flusher's
thread (shim.storage.group_commit): the loop is not held by the fsync, no answer precedes an fsync
that started after its append, appends waiting meanwhile share one fsync, and no record is read
(high watermark) or trusted after a crash (recovery point) before it is on disk."""

from __future__ import annotations

import asyncio
import datetime
import errno
import os
import threading
import time

from kafka_codecs import encode_batch
from shim.apis.dispatch import dispatch
from shim.config import BrokerConfig
from shim.errors import ErrorCode
from shim.node import Node
from shim.protocol.messages import RequestHeader, decode_response, encode_request, request_module
from shim.storage import fs

SLOW_FSYNC_S = 0.2


class RecordingDisk(fs.Disk):
    """The real disk, recording in one sequence each segment write and each fsync's start and end
    (from any thread), optionally slowed or held at every fsync, and noting in ``on_loop`` the
    segment files fsynced on the thread that made it (the event loop's)."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.gate = threading.Event()
        self.gate.set()
        self.events: list[tuple] = []
        self.names: dict[int, str] = {}
        self.lock = threading.Lock()
        self.loop_thread = threading.get_ident()
        self.on_loop: list[str] = []

    def record(self, *event) -> int:
        with self.lock:
            self.events.append(event)
            return len(self.events) - 1

    def open(self, path, flags, mode=0o644):
        fd = os.open(path, flags, mode)
        self.names[fd] = str(path)
        return fd

    def writev(self, fd, chunks):
        written = os.writev(fd, chunks)
        self.record("write", self.names.get(fd))
        return written

    def fsync(self, fd):
        if threading.get_ident() == self.loop_thread and str(self.names.get(fd, "")).endswith(".log"):
            self.on_loop.append(self.names.get(fd))
        start = self.record("fsync-start", self.names.get(fd))
        self.gate.wait()
        time.sleep(self.delay)
        os.fsync(fd)
        self.record("fsync-end", self.names.get(fd), start)


WALKED = 1000  # partitions a Produce walks, each a yield of the paced walk (SLICE_S = 0)


def _produce(partitions, acks=-1, correlation_id=1):
    batch = encode_batch([(None, b"v", (), int(time.time() * 1000))])
    m = request_module(0, 9)
    request = m.ProduceRequest(transactional_id=None, acks=acks, timeout=datetime.timedelta(seconds=30), topic_data=(
        m.TopicProduceData(name="t", partition_data=tuple(
            m.PartitionProduceData(index=i, records=batch) for i in partitions)),))  # fmt: skip
    return encode_request(RequestHeader(0, 9, correlation_id, "c"), request)


def _errors(answer: bytes) -> list[int]:
    response = decode_response(answer, 0, 9)[1]
    return [p.error_code for t in response.responses for p in t.partition_responses]


async def _node(tmp_path, disk, partitions):
    previous = fs.use(disk)
    node = Node(BrokerConfig(data_dir=tmp_path / "d", fsync="always"))
    node.logs.create_topic("t", partitions)
    return node, previous


async def test_a_slow_fsync_does_not_hold_the_loop(tmp_path):
    disk = RecordingDisk()
    node, previous = await _node(tmp_path, disk, 4)
    disk.delay = SLOW_FSYNC_S
    try:
        answer = await dispatch(node, _produce(range(4)))
        assert _errors(answer) == [0] * 4
        assert all(node.logs.get("t", i).log_end_offset == 1 for i in range(4))
        # the answer waited for the fsyncs, all on the flusher's thread: none held the loop (noted
        # by thread rather than by the loop's stalls, which a busy machine lengthens too)
        assert sum(e[0] == "fsync-end" and str(e[1]).endswith(".log") for e in disk.events) >= 4
        assert disk.on_loop == []
    finally:
        node.close()
        fs.use(previous)


async def test_no_answer_precedes_an_fsync_that_started_after_its_append(tmp_path):
    disk = RecordingDisk()
    node, previous = await _node(tmp_path, disk, 3)
    disk.delay = 0.02
    answered: dict[int, int] = {}
    written: dict[int, tuple[int, str]] = {}

    async def one(k: int) -> None:
        frame = _produce([k % 3], correlation_id=k)
        task = asyncio.ensure_future(dispatch(node, frame))
        await asyncio.sleep(0)  # the handler ran to its first wait: the append is written
        # the last write to its partition's file so far: at or after its own
        written[k] = max((i, e[1]) for i, e in enumerate(disk.events) if e[0] == "write" and f"/t-{k % 3}/" in e[1])
        answer = await task
        answered[k] = disk.record("answer", k)
        assert _errors(answer) == [0]

    try:
        await asyncio.gather(*(one(k) for k in range(30)))
        events = disk.events
        for k, (write, name) in written.items():
            assert events[write] == ("write", name)
            assert any(e[0] == "fsync-end" and e[1] == name and write < e[2] and i < answered[k]
                       for i, e in enumerate(events)), k
        fsyncs = sum(e[0] == "fsync-start" and str(e[1]).endswith(".log") for e in events)
        assert fsyncs < 30, fsyncs  # appends waiting for one job shared its fsync
        assert node.logs.group_commit.jobs < 30
    finally:
        node.close()
        fs.use(previous)


async def test_a_record_is_read_and_trusted_only_once_on_disk(tmp_path):
    disk = RecordingDisk()
    node, previous = await _node(tmp_path, disk, 1)
    plog = node.logs.get("t", 0)
    try:
        disk.gate.clear()  # the flusher's fsync waits
        task = asyncio.ensure_future(dispatch(node, _produce([0])))
        while not any(e[0] == "fsync-start" and str(e[1]).endswith(".log") for e in disk.events):
            await asyncio.sleep(0.001)
        assert plog.log_end_offset == 1
        assert plog.high_watermark == 0 and plog.last_stable_offset == 0
        assert plog.recovery_point()[1] == 0
        assert not task.done()
        disk.gate.set()
        assert _errors(await task) == [0]
        assert plog.high_watermark == 1 and plog.recovery_point()[1] == 1
    finally:
        disk.gate.set()
        node.close()
        fs.use(previous)


async def test_acks_0_is_fsynced_too(tmp_path):
    disk = RecordingDisk()
    node, previous = await _node(tmp_path, disk, 1)
    plog = node.logs.get("t", 0)
    try:
        assert await dispatch(node, _produce([0], acks=0)) is None
        assert plog.log_end_offset == 1
        while plog.high_watermark < 1:  # the job runs although no answer waits for it
            await asyncio.sleep(0.001)
        assert any(e[0] == "fsync-end" and str(e[1]).endswith(".log") for e in disk.events)
    finally:
        node.close()
        fs.use(previous)


class FailingDisk(RecordingDisk):
    """The real disk whose first fsync of a segment file fails as a dying disk's does (EIO)."""

    def __init__(self) -> None:
        super().__init__()
        self.failures = 0

    def fsync(self, fd):
        if self.failures == 0 and str(self.names.get(fd, "")).endswith(".log"):
            self.failures += 1
            raise OSError(errno.EIO, "Input/output error")
        super().fsync(fd)


def _idempotent_produce(partition, correlation_id):
    batch = encode_batch([(None, b"v", (), int(time.time() * 1000))], producer_id=7, producer_epoch=0,
                         base_sequence=0)
    m = request_module(0, 9)
    request = m.ProduceRequest(transactional_id=None, acks=-1, timeout=datetime.timedelta(seconds=30), topic_data=(
        m.TopicProduceData(name="t", partition_data=(m.PartitionProduceData(index=partition, records=batch),)),))
    return encode_request(RequestHeader(0, 9, correlation_id, "c"), request)


async def test_a_failed_fsync_is_answered_kafka_storage_error_and_never_acknowledged(tmp_path):
    disk = FailingDisk()
    node, previous = await _node(tmp_path, disk, 2)
    try:
        assert _errors(await dispatch(node, _idempotent_produce(0, 1))) == [ErrorCode.kafka_storage_error]
        assert disk.failures == 1
        plog = node.logs.get("t", 0)
        assert plog.log_end_offset == 1 and plog.high_watermark == 0  # written, never readable
        # the producer's retry of the same batch: a duplicate of bytes never known on disk
        assert _errors(await dispatch(node, _idempotent_produce(0, 2))) == [ErrorCode.kafka_storage_error]
        # the data directory is offline: another partition's append is refused too
        assert _errors(await dispatch(node, _produce([1], correlation_id=3))) == [ErrorCode.kafka_storage_error]
        assert node.logs.get("t", 1).log_end_offset == 0
        assert plog.high_watermark == 0
    finally:
        node.close()
        fs.use(previous)


async def test_a_produce_walking_while_its_job_fails_answers_kafka_storage_error(tmp_path, monkeypatch):
    """A Produce appends its partitions paced. A job that fails while it walks takes the appends
    it covered with it, and leaves nothing pending (GroupCommit.pending): the partitions appended
    before the failure are KAFKA_STORAGE_ERROR, as those refused after it, never NONE."""
    from shim.apis import _pace

    disk = FailingDisk()
    disk.failures = -1
    node, previous = await _node(tmp_path, disk, WALKED)
    try:
        node.logs.create_topic("u", 1)
        disk.gate.clear()  # the flusher's fsync of u-0 waits: the next job queues
        m = request_module(0, 9)
        first = asyncio.ensure_future(dispatch(node, encode_request(RequestHeader(0, 9, 1, "c"), m.ProduceRequest(
            transactional_id=None, acks=-1, timeout=datetime.timedelta(seconds=30), topic_data=(m.TopicProduceData(
                name="u", partition_data=(m.PartitionProduceData(index=0, records=encode_batch(
                    [(None, b"v", (), int(time.time() * 1000))])),)),)))))
        while not any(e[0] == "fsync-start" and "/u-0/" in str(e[1]) for e in disk.events):
            await asyncio.sleep(0.001)
        monkeypatch.setattr(_pace, "SLICE_S", 0.0)  # the walk yields after every partition
        walk = asyncio.ensure_future(dispatch(node, _produce(range(WALKED), correlation_id=2)))
        while node.logs.get("t", 0).log_end_offset == 0:
            await asyncio.sleep(0)
        disk.failures = 0  # the next segment fsync fails: the job after the gated one, which has t-0
        disk.gate.set()
        await first
        while not node.logs.offline and not walk.done():
            await asyncio.sleep(0.001)
        assert node.logs.offline and not walk.done()  # the job failed while the walk went on
        errors = _errors(await walk)
        assert node.logs.get("t", 0).log_end_offset == 1  # appended, never known on disk
        assert set(errors) == {ErrorCode.kafka_storage_error}
    finally:
        node.close()
        fs.use(previous)


async def test_a_partition_synced_before_a_walk_s_job_fails_keeps_its_answer(tmp_path, monkeypatch):
    """Kafka flushes each partition's append on its own: those a job synced before the failure are
    NONE, the others KAFKA_STORAGE_ERROR."""
    from shim.apis import _pace

    disk = FailingDisk()
    disk.failures = -1
    node, previous = await _node(tmp_path, disk, WALKED)
    try:
        monkeypatch.setattr(_pace, "SLICE_S", 0.0)  # the walk yields after every partition
        walk = asyncio.ensure_future(dispatch(node, _produce(range(WALKED), correlation_id=2)))
        while node.logs.get("t", 0).synced_end == 0:  # a job synced t-0
            await asyncio.sleep(0)
        disk.failures = 0  # the next segment fsync fails
        while not node.logs.offline and not walk.done():
            await asyncio.sleep(0.001)
        assert node.logs.offline and not walk.done()
        errors = _errors(await walk)
        synced = [node.logs.get("t", i).synced_end > 0 for i in range(WALKED)]
        assert synced[0] and not all(synced)
        assert errors == [ErrorCode.none if s else ErrorCode.kafka_storage_error for s in synced]
    finally:
        node.close()
        fs.use(previous)
