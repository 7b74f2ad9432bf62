"""A segment roll fsyncs nothing under fsync "never", and everything it wrote under "always".

Kafka's UnifiedLog.roll writes the producer snapshot without forcing it and leaves the flush of the
sealed segment, its indexes and that snapshot to a "flush-log" task on the scheduler, so appends
never wait on it. Under "never" kafka-shim skips those fsyncs altogether: the sealed segment's index
files and the snapshot only spare a restart some work, which recovery redoes from the log when they
are missing (kill -9 before they were written).
"""

from __future__ import annotations

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


def test_roll_under_always_syncs_what_it_wrote_before_the_append_returns(tmp_path, disk):
    plog = _open(tmp_path, fsync=True).get("t", 0)
    disk.files.clear(), disk.dirs.clear()
    end = _produce_until_roll(plog)
    for name in (f"{SEALED}.log", f"{SEALED}.index", f"{SEALED}.timeindex", f"{end:020d}.snapshot",
                 f"{end:020d}.log"):
        assert disk.files[name] >= 1, name
    assert disk.dirs[plog.directory.name] >= 1


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
