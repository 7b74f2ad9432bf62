"""Recovery points: after an unclean stop only the active segment's bytes after the partition's
recovery point are CRC-checked (shim.storage.recovery_point); the index below it comes from the
index files, a torn tail after it is still cut, and under fsync "always" a recovery point never
covers bytes that were not fsynced."""

from __future__ import annotations

import os

import pytest

from shim.storage import fs, recovery_point
from shim.storage.log_manager import LogManager
from shim.storage.partition_log import LogConfig
from tests.storage.power_loss import PowerLossDisk
from tests.test_storage_partition_log import append, assert_records_are_offsets, batch, fill, read_all

BIG = 1 << 30  # Kafka's default segment size: everything below stays in one active segment


def crash(logs: LogManager) -> None:
    """Abandon the broker as kill -9 does: no flush, no index files, no clean-shutdown marker."""
    logs._worker.shutdown(wait=True)
    if logs.flusher is not None:  # a roll's files written or not: both are what a kill -9 may leave
        logs.flusher.close()
    for plog in logs.logs.values():
        for seg in plog.segments:
            os.close(seg.fileno())
            seg._fd = -1


def segment_file(logs: LogManager, partition: int = 0):
    return logs.get("t", partition).active.log_path


@pytest.fixture
def open_logs(tmp_path, monkeypatch):
    # These logs are small: their index files are brought up to every checkpoint, as a segment's
    # are once they lag INDEX_LAG_BYTES (test_index_files_are_written_once_they_lag_and_a_restart_walks_the_rest)
    monkeypatch.setattr(recovery_point, "INDEX_LAG_BYTES", 0)
    opened = []

    def opener(**config) -> LogManager:
        logs = LogManager(tmp_path, LogConfig(**{"segment_bytes": BIG, **config}))
        opened.append(logs)
        return logs

    yield opener
    for logs in opened:
        if any(not seg.closed for plog in logs.logs.values() for seg in plog.segments):
            logs.close()


def test_a_start_after_a_crash_checks_only_the_bytes_after_the_recovery_point(open_logs):
    logs = open_logs()
    logs.create_topic("t", 2)
    plog = logs.get("t", 0)
    fill(plog, 300, pad=2000)  # ~600 KB: well over a hundred offset index entries
    logs.checkpoint_recovery_points()
    fill(plog, 200, pad=2000)  # the index files grow by what was added since
    logs.checkpoint_recovery_points()
    checked = plog.active.size
    fill(plog, 3, pad=2000)
    tail = plog.active.size - checked
    fill(logs.get("t", 1), 2)  # never in a checkpoint: checked whole
    whole = logs.get("t", 1).active.size
    crash(logs)

    logs = open_logs()
    assert not logs.clean_start
    plog = logs.get("t", 0)
    assert plog.recovery_scanned == tail
    assert logs.recovery_scanned == tail + whole
    assert plog.log_end_offset == 1006
    # the index read from the files finds every offset, below the recovery point and after it
    assert_records_are_offsets(read_all(plog), 0, 1006)
    for offset in (0, 1, 333, 599, 999, 1000, 1005):
        assert plog.read(offset, 1, False).data  # at least the batch holding it
        assert_records_are_offsets(read_all(plog, offset)[:1], offset, offset + 1)
    assert plog.max_timestamp_offset() == (1005, batch_ts(1005))
    assert plog.offset_for_timestamp(batch_ts(500), False) == (500, batch_ts(500))
    assert_records_are_offsets(read_all(logs.get("t", 1)), 0, 4)


def batch_ts(offset: int) -> int:
    from tests.test_storage_partition_log import TS

    return TS + offset  # batch() stamps each record with TS + its intended offset


def test_a_torn_tail_after_the_recovery_point_is_still_cut(open_logs):
    logs = open_logs()
    logs.create_topic("t", 1)
    fill(logs.get("t", 0), 50, pad=500)
    logs.checkpoint_recovery_points()
    plog = logs.get("t", 0)
    point = plog.active.size
    fill(plog, 5, pad=500)
    whole_end = plog.active.size
    torn = batch(110, 2, pad=500)
    path = segment_file(logs)
    crash(logs)
    with open(path, "ab") as f:  # a batch cut short by the kill
        f.write(torn[: len(torn) // 2])

    logs = open_logs()
    plog = logs.get("t", 0)
    assert plog.log_end_offset == 110 and plog.active.size == whole_end == os.path.getsize(path)
    assert plog.recovery_scanned == whole_end - point
    assert_records_are_offsets(read_all(plog), 0, 110)
    assert append(plog, batch(110)).base_offset == 110


def test_a_corrupt_batch_after_the_recovery_point_is_cut_with_what_follows(open_logs):
    logs = open_logs()
    logs.create_topic("t", 1)
    plog = logs.get("t", 0)
    fill(plog, 20, pad=500)
    logs.checkpoint_recovery_points()
    point = plog.active.size
    fill(plog, 6, pad=500)
    path = segment_file(logs)
    crash(logs)
    with open(path, "r+b") as f:  # one byte of the 23rd batch's records
        f.seek(point + 2 * (os.path.getsize(path) - point) // 6 + 100)
        byte = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([byte[0] ^ 0xFF]))

    logs = open_logs()
    plog = logs.get("t", 0)
    assert plog.log_end_offset == 44  # 20 batches before the point and 2 whole after it
    assert_records_are_offsets(read_all(plog), 0, 44)


@pytest.mark.parametrize("damage", ["point past the end", "point inside a batch"])
def test_a_recovery_point_that_does_not_fit_the_log_means_checking_it_whole(open_logs, tmp_path, damage):
    logs = open_logs()
    logs.create_topic("t", 1)
    plog = logs.get("t", 0)
    fill(plog, 40, pad=300)
    logs.checkpoint_recovery_points()
    size, seg = plog.active.size, plog.active
    crash(logs)
    points = recovery_point.read(tmp_path)
    base, offset, position = points[("t", 0)]
    points[("t", 0)] = (base, offset, position + (1000 if damage == "point past the end" else -7))
    recovery_point.write(tmp_path, points)

    logs = open_logs()
    assert logs.get("t", 0).recovery_scanned == size
    assert_records_are_offsets(read_all(logs.get("t", 0)), 0, 80)


def test_an_unreadable_checkpoint_file_means_checking_every_partition_whole(open_logs, tmp_path):
    logs = open_logs()
    logs.create_topic("t", 1)
    fill(logs.get("t", 0), 10)
    logs.checkpoint_recovery_points()
    size = logs.get("t", 0).active.size
    crash(logs)
    (tmp_path / recovery_point.FILE).write_text("0\n7\nt 0 0")

    logs = open_logs()
    assert logs.recovery_scanned == size and logs.get("t", 0).log_end_offset == 20


def test_the_partitions_count_the_bytes_written_since_the_last_checkpoint(open_logs, tmp_path):
    logs = open_logs()
    logs.create_topic("t", 3)
    for p in range(3):
        fill(logs.get("t", p), 10, pad=200)
    assert logs.unchecked.bytes == sum(logs.get("t", p).active.size for p in range(3))
    logs.checkpoint_recovery_points()
    assert logs.unchecked.bytes == 0
    written = recovery_point.read(tmp_path)
    assert {k: v[1:] for k, v in written.items()} == {
        ("t", p): (logs.get("t", p).log_end_offset, logs.get("t", p).active.size) for p in range(3)}
    before = logs.get("t", 2).active.size
    fill(logs.get("t", 2), 1, pad=0)
    assert logs.unchecked.bytes == logs.get("t", 2).active.size - before


def test_under_fsync_always_a_recovery_point_covers_only_fsynced_bytes(open_logs, tmp_path):
    """A write whose fsync failed is in the file (and the page cache) but not on the disk: the
    recovery point stays before it, so a start after a power loss still checks what follows."""
    disk = PowerLossDisk(tmp_path)
    previous = fs.use(disk)
    try:
        logs = open_logs(fsync=True)
        logs.create_topic("t", 1)
        plog = logs.get("t", 0)
        fill(plog, 10, pad=300)
        synced = plog.active.size
        real_fsync = disk.fsync

        def failing(fd):
            raise OSError(5, "EIO")

        disk.fsync = failing
        with pytest.raises(OSError):
            append(plog, batch(20, 2, pad=300))
        disk.fsync = real_fsync
        assert plog.active.size > synced  # written, not fsynced
        logs.checkpoint_recovery_points()
        assert recovery_point.read(tmp_path)[("t", 0)] == (0, 20, synced)
        crash(logs)
        survivors = disk.survivors(tmp_path.parent / "after-power-loss", seed=None)
    finally:
        fs.use(previous)
    logs = LogManager(survivors, LogConfig(segment_bytes=BIG, fsync=True))
    try:
        assert logs.get("t", 0).log_end_offset == 20
        assert_records_are_offsets(read_all(logs.get("t", 0)), 0, 20)
    finally:
        logs.close()


def test_a_node_writes_recovery_points_after_the_interval_or_at_once_past_the_byte_bound(node, monkeypatch):
    from shim.cluster import FOREVER

    data_dir = node.config.data_dir
    assert node._checkpoint_due() == FOREVER  # nothing written: an idle broker is not woken for it
    node.logs.create_topic("t", 1)
    plog = node.logs.get("t", 0)
    recent = [node._last_checkpoint] * 2  # records retention keeps
    fill(plog, 3, ts=recent)
    due = node._checkpoint_due()
    assert due == node._last_checkpoint + 60_000  # log.flush.offset.checkpoint.interval.ms, Kafka's default
    node.tick(due - 1)
    assert ("t", 0) not in recovery_point.read(data_dir)
    node.tick(due)
    assert recovery_point.read(data_dir)[("t", 0)] == (0, 6, plog.active.size)
    assert node._checkpoint_due() == FOREVER

    told = []  # what the shell's timer hears while appends are handled
    node.watch_deadlines(told.append)
    monkeypatch.setattr(recovery_point, "CHECKPOINT_AFTER_BYTES", plog.active.size)
    fill(plog, 1, ts=recent)
    assert told == [node._last_checkpoint + 60_000]  # the first byte since the last checkpoint
    fill(plog, 2, ts=recent)
    assert told[1:] == [0] and node._checkpoint_due() == 0  # due at once: the timer runs the tick now
    fill(plog, 1, ts=recent)
    assert len(told) == 2  # nothing more to tell until the next checkpoint
    node.tick(due + 1)
    assert recovery_point.read(data_dir)[("t", 0)] == (0, 14, plog.active.size)
    node.watch_deadlines(None)


def test_a_clean_start_under_fsync_always_keeps_the_recovery_points_of_the_clean_stop(open_logs, tmp_path):
    logs = open_logs(fsync=True)
    logs.create_topic("t", 1)
    fill(logs.get("t", 0), 5)
    size = logs.get("t", 0).active.size
    logs.close()
    logs = open_logs(fsync=True)
    assert logs.clean_start
    logs.checkpoint_recovery_points()  # nothing appended: everything the clean stop fsynced is covered
    assert recovery_point.read(tmp_path)[("t", 0)] == (0, 10, size)
    crash(logs)
    assert open_logs(fsync=True).get("t", 0).recovery_scanned == 0


def test_what_a_recovery_checked_is_not_checked_again_after_the_next_crash(open_logs):
    logs = open_logs()
    logs.create_topic("t", 1)
    fill(logs.get("t", 0), 20)
    size = logs.get("t", 0).active.size
    crash(logs)
    logs = open_logs()
    assert logs.recovery_scanned == size
    crash(logs)  # before anything else was written or checkpointed
    logs = open_logs()
    assert logs.recovery_scanned == 0 and logs.get("t", 0).log_end_offset == 40


def index_of(seg) -> tuple[list, list, list, list]:
    return list(seg._offsets), list(seg._positions), list(seg._time_ts), list(seg._time_offsets)


def test_index_files_are_written_once_they_lag_and_a_restart_walks_the_rest(tmp_path):
    """A checkpoint appended every partition's new index entries to its files: ~10% of a broker's
    CPU under a 1,000-partition produce stream, and two new files per partition for 1,000
    partitions just created. The files are now brought up to a checkpoint only once they lag
    INDEX_LAG_BYTES behind it; a start after a crash walks the batch headers from their last entry
    (or the segment's start) to the point, rebuilding the same index, and CRC-checks only what
    follows the point."""
    logs = LogManager(tmp_path, LogConfig(segment_bytes=BIG))
    logs.create_topic("t", 40)
    for p in range(40):
        fill(logs.get("t", p), 3, pad=1000)
    big = logs.get("t", 0)
    fill(big, 600, pad=2000)  # ~1.2 MB, past INDEX_LAG_BYTES
    assert big.active.size >= recovery_point.INDEX_LAG_BYTES
    logs.checkpoint_recovery_points()
    indexed = sorted(path.parent.name for path in tmp_path.glob("t-*/*.index"))
    assert indexed == ["t-0"]
    index_file = big.active.log_path.with_suffix(".index")
    saved = index_file.read_bytes()
    assert len(saved) == 8 * len(big.active._offsets)  # up to the point
    fill(big, 100, pad=2000)  # ~200 KB: under INDEX_LAG_BYTES behind the files
    logs.checkpoint_recovery_points()
    assert index_file.read_bytes() == saved  # nothing appended
    point = big.active.size
    assert recovery_point.read(tmp_path)[("t", 0)] == (0, 1406, point)
    fill(big, 2, pad=2000)
    sizes = {p: logs.get("t", p).active.size for p in range(40)}
    index_before = index_of(big.active)
    small_before = index_of(logs.get("t", 5).active)
    crash(logs)

    logs = LogManager(tmp_path, LogConfig(segment_bytes=BIG))
    try:
        assert logs.get("t", 0).recovery_scanned == sizes[0] - point
        assert index_of(logs.get("t", 0).active) == index_before  # the walk indexed what the files lacked
        assert index_of(logs.get("t", 5).active) == small_before
        assert logs.recovery_scanned == sizes[0] - point  # the small partitions' points are at their ends
        for p in range(1, 40):
            assert_records_are_offsets(read_all(logs.get("t", p)), 0, 6)
        assert_records_are_offsets(read_all(logs.get("t", 0)), 0, 1410)
        plog = logs.get("t", 0)
        for offset in (0, 777, 1300, 1405, 1409):
            assert_records_are_offsets(read_all(plog, offset)[:1], offset, offset + 1)
        assert plog.offset_for_timestamp(batch_ts(1300), False) == (1300, batch_ts(1300))
    finally:
        logs.close()


def test_missing_index_files_under_a_recovery_point_are_rebuilt_by_the_walk(open_logs):
    logs = open_logs()
    logs.create_topic("t", 1)
    plog = logs.get("t", 0)
    fill(plog, 40, pad=300)
    logs.checkpoint_recovery_points()
    seg, before = plog.active, index_of(plog.active)
    crash(logs)
    seg.log_path.with_suffix(".index").unlink()

    logs = open_logs()
    assert logs.get("t", 0).recovery_scanned == 0
    assert index_of(logs.get("t", 0).active) == before
    assert_records_are_offsets(read_all(logs.get("t", 0)), 0, 80)
