"""A segment roll fsyncs nothing under fsync "never", and everything it wrote under "always",
off the appending thread.

Kafka's UnifiedLog.roll writes the producer snapshot without forcing it and leaves the flush of the
sealed segment, its indexes and that snapshot to a "flush-log" task on the scheduler, so appends
never wait on it. Under "never" kafka-shim skips those fsyncs altogether: the sealed segment's index
files and the snapshot only spare a restart some work, which recovery redoes from the log when they
are missing (kill -9 before they were written).
"""

from __future__ import annotations

import threading
from concurrent.futures import Future

import pytest

from shim.storage import fs
from shim.storage.log_manager import LogManager
from shim.storage.partition_log import LogConfig
from tests.storage.test_clean_shutdown import CountingDisk, disk  # noqa: F401 (a fixture)
from tests.storage.test_recovery_point import crash
from tests.test_storage_partition_log import PID, append, batch

SEGMENT = 4_000  # a roll every few batches below
SEALED = "00000000000000000000"


def _produce_until_roll(plog) -> int:
    """Idempotent batches (sequence = offset) until the first roll; the sealed segment's end."""
    while len(plog.segments) == 1:
        first = plog.log_end_offset
        assert append(plog, batch(first, pid=PID, epoch=0, seq=first, pad=500)).base_offset == first
    return plog.active.base_offset


def _open(tmp_path, fsync: bool) -> LogManager:
    logs = LogManager(tmp_path, LogConfig(segment_bytes=SEGMENT, fsync=fsync))
    if "t" not in logs.topics:
        logs.create_topic("t", 1)
    return logs


def test_roll_under_never_does_not_fsync(tmp_path, disk):
    plog = _open(tmp_path, fsync=False).get("t", 0)
    disk.files.clear(), disk.dirs.clear()
    end = _produce_until_roll(plog)
    assert not disk.files and not disk.dirs
    # still written, for the next start to use
    for name in (f"{SEALED}.index", f"{SEALED}.timeindex", f"{end:020d}.snapshot"):
        assert (plog.directory / name).stat().st_size > 0, name


class ThreadRecordingDisk(CountingDisk):
    """Counts syncs per file name, and records the threads each file's syncs ran on."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: dict[str, set[int]] = {}

    def fsync(self, fd):
        name = self._names[fd]
        super().fsync(fd)
        with self._lock:
            self.threads.setdefault(name, set()).add(threading.get_ident())

    def fsync_dir(self, path):
        super().fsync_dir(path)
        with self._lock:
            self.threads.setdefault(path.name + "/", set()).add(threading.get_ident())


@pytest.fixture
def threads_disk():
    recording = ThreadRecordingDisk()
    previous = fs.use(recording)
    yield recording
    fs.use(previous)


class HeldFlusher:
    """A flusher that runs a roll's job only when told (the disk slow, or a kill -9 before it ran)."""

    def __init__(self) -> None:
        self.jobs: list[tuple[Future, object]] = []

    def submit(self, job) -> Future:
        future = Future()
        self.jobs.append((future, job))
        return future

    def run(self) -> None:
        for future, job in self.jobs:
            job()
            future.set_result(None)
        self.jobs.clear()

    def close(self) -> None:
        pass


def test_roll_under_always_syncs_its_files_off_the_appending_thread(tmp_path, threads_disk):
    """Kafka: UnifiedLog.roll schedules "flush-log" for the sealed segment and the snapshot. The
    append that rolled fsyncs the new segment and the directory (its name) before it returns, on
    its own thread; the sealed segment's index files and the snapshot at the roll are fsynced on the
    flusher's thread (they held the loop 20-60 ms a roll), their names then made durable by one more
    directory sync there. The sealed segment's records were fsynced by the appends that wrote them."""
    logs = _open(tmp_path, fsync=True)
    plog = logs.get("t", 0)
    disk = threads_disk
    disk.files.clear(), disk.dirs.clear(), disk.threads.clear()
    me = threading.get_ident()
    end = _produce_until_roll(plog)
    new, directory = f"{end:020d}.log", plog.directory.name + "/"
    assert me in disk.threads[new] and me in disk.threads[directory]
    plog.pending_rolls.settle()
    for name in (f"{SEALED}.index", f"{SEALED}.timeindex", f"{end:020d}.snapshot"):
        assert disk.files[name] == 1 and me not in disk.threads[name], (name, disk.threads[name])
    assert len(disk.threads[directory] - {me}) == 1  # the flusher's own directory sync
    assert disk.threads[f"{SEALED}.log"] == {me}  # each append's, never the roll's
    logs.close()


def test_the_recovery_point_stays_at_the_sealed_segment_until_its_files_are_on_disk(tmp_path):
    """Kafka moves the recovery point to the new segment only once "flush-log" flushed the old one
    (flushUptoOffsetExclusive): until then a restart recovers from the sealed segment's end."""
    logs = _open(tmp_path, fsync=True)
    plog = logs.get("t", 0)
    plog.flusher = held = HeldFlusher()
    end = _produce_until_roll(plog)
    sealed_size = plog.segments[0].size
    append(plog, batch(end, pid=PID, epoch=0, seq=end, pad=500))
    assert len(held.jobs) == 1 and plog.recovery_point() == (0, end, sealed_size)
    held.run()
    assert plog.recovery_point() == (end, end + 2, plog.active.size)
    logs.close()


def test_kill9_before_a_roll_files_were_fsynced_recovers_from_the_sealed_segment(tmp_path):
    """The job never ran (kill -9, or a power loss before its renames reached the disk): no index
    files for the sealed segment, no snapshot at the roll. The checkpointed recovery point is the
    sealed segment's end, so the restart walks it and recovers what followed from the records: every
    acknowledged batch is there, and the producer's retry of its last batch is a duplicate."""
    logs = _open(tmp_path, fsync=True)
    plog = logs.get("t", 0)
    plog.flusher = HeldFlusher()
    end = _produce_until_roll(plog)
    for offset in range(end, end + 6, 2):
        append(plog, batch(offset, pid=PID, epoch=0, seq=offset, pad=500))
    logs.checkpoint_recovery_points()
    crash(logs)
    for name in (f"{SEALED}.index", f"{SEALED}.timeindex", f"{end:020d}.snapshot"):
        assert not (tmp_path / "t-0" / name).exists(), name

    reopened = _open(tmp_path, fsync=True)
    plog = reopened.get("t", 0)
    assert plog.log_end_offset == end + 6 and plog.recovery_segments == 2
    assert [plog.segments[0].find(o) is not None for o in (0, end - 2)] == [True, True]
    retry = append(plog, batch(end + 4, pid=PID, epoch=0, seq=end + 4, pad=500))
    assert retry.duplicate and retry.base_offset == end + 4
    reopened.close()


def test_kill9_before_the_roll_files_were_written_recovers_them_from_the_log(tmp_path):
    logs = _open(tmp_path, fsync=False)
    plog = logs.get("t", 0)
    end = _produce_until_roll(plog)
    first = plog.log_end_offset
    append(plog, batch(first, pid=PID, epoch=0, seq=first, pad=500))
    crash(logs)
    for name in (f"{SEALED}.index", f"{SEALED}.timeindex", f"{end:020d}.snapshot"):
        (tmp_path / "t-0" / name).unlink()

    plog = _open(tmp_path, fsync=False).get("t", 0)
    assert plog.log_end_offset == first + 2 and plog.segments[0].find(end - 2) is not None
    # the producer's state came back from the log: a retry of its last batch is a duplicate
    retry = append(plog, batch(first, pid=PID, epoch=0, seq=first, pad=500))
    assert retry.duplicate and retry.base_offset == first


def test_retention_and_delete_records_under_never_do_not_fsync(tmp_path, disk):
    """Retention rolls, moves the log start offset and deletes segments on the loop: under "never"
    none of it waits on the disk, and a kill -9 keeps the log start offset (the page cache holds it)."""
    logs = _open(tmp_path, fsync=False)
    plog = logs.get("t", 0)
    end = _produce_until_roll(plog)
    disk.files.clear(), disk.dirs.clear()
    assert plog.delete_records(end - 2) == end - 2
    assert plog.enforce_retention(plog.segments[-1].max_timestamp + plog.config.retention_ms + 1) == 2
    assert not disk.files and not disk.dirs
    start = plog.log_start_offset
    assert start == plog.log_end_offset > end
    crash(logs)
    assert _open(tmp_path, fsync=False).get("t", 0).log_start_offset == start


def test_an_unreadable_log_start_offset_file_starts_the_log_at_its_first_segment(tmp_path):
    """Replaced unforced under "never", the file may be empty after a power loss: the start must
    not fail on it (Kafka resets an unreadable checkpoint to the first segment's base offset)."""
    logs = _open(tmp_path, fsync=False)
    plog = logs.get("t", 0)
    end = _produce_until_roll(plog)
    plog.delete_records(end)  # the first segment goes
    assert plog.segments[0].base_offset == end and plog.log_start_offset == end
    crash(logs)
    for content in (b"", b"\x00\x00\x00", b"12x"):
        (tmp_path / "t-0" / "log-start-offset").write_bytes(content)
        reopened = _open(tmp_path, fsync=False)
        assert reopened.get("t", 0).log_start_offset == end
        crash(reopened)
