"""After an unclean stop every segment from the one holding the recovery point to the log end is
recovered, sealed ones too (Kafka: LogLoader.recoverLog): a corrupt batch in a segment rolled since
the last checkpoint cuts the log there and deletes every later segment; segments before the
recovery point are not read; producer state is rebuilt to the new log end."""

from __future__ import annotations

import os

from shim.storage import recovery_point
from shim.storage.log_manager import LogManager
from shim.storage.partition_log import LogConfig
from tests.storage.test_recovery_point import crash
from tests.test_storage_partition_log import PID, append, assert_records_are_offsets, batch, read_all

SEGMENT = 10_000  # about nine of the batches below


def open_logs(tmp_path) -> LogManager:
    return LogManager(tmp_path, LogConfig(segment_bytes=SEGMENT))


def produce(plog, batches: int) -> None:
    """Idempotent batches of two records, sequence = offset."""
    for _ in range(batches):
        first = plog.log_end_offset
        assert append(plog, batch(first, pid=PID, epoch=0, seq=first, pad=500)).base_offset == first


def corrupt(path, batch_index: int) -> int:
    """Flip a byte in the records of the ``batch_index``-th batch of a segment file; its base offset."""
    data = path.read_bytes()
    position = 0
    for _ in range(batch_index):
        position += 12 + int.from_bytes(data[position + 8:position + 12], "big")
    with open(path, "r+b") as f:
        f.seek(position + 100)
        byte = f.read(1)
        f.seek(position + 100)
        f.write(bytes([byte[0] ^ 0xFF]))
    return int.from_bytes(data[position:position + 8], "big")


def checkpointed_then_rolled(tmp_path):
    """A log of sealed segments, a checkpoint inside the active one, then several rolls; crashed.
    Returns (the recovery point, the segment files by base offset, the log end offset)."""
    logs = open_logs(tmp_path)
    logs.create_topic("t", 1)
    plog = logs.get("t", 0)
    produce(plog, 25)  # two sealed segments and part of a third
    assert len(plog.segments) == 3
    logs.checkpoint_recovery_points()
    point = recovery_point.read(tmp_path)[("t", 0)]
    assert point[0] == plog.active.base_offset and point[2] == plog.active.size > 0
    produce(plog, 40)  # rolls several segments after the recovery point
    files = {seg.base_offset: seg.log_path for seg in plog.segments}
    end = plog.log_end_offset
    assert len([b for b in files if b > point[0]]) >= 4
    crash(logs)
    return point, files, end


def test_a_corrupt_batch_in_a_segment_sealed_after_the_recovery_point_cuts_the_log_there(tmp_path):
    point, files, end = checkpointed_then_rolled(tmp_path)
    after = sorted(b for b in files if b > point[0])
    corrupt_base = after[1]  # sealed, two rolls after the checkpoint
    cut_at = corrupt(files[corrupt_base], 3)

    logs = open_logs(tmp_path)
    try:
        plog = logs.get("t", 0)
        assert plog.log_end_offset == cut_at < end
        assert [s.base_offset for s in plog.segments] == sorted(b for b in files if b <= corrupt_base)
        for base in after[2:]:  # every later segment is gone, with its files
            assert not files[base].exists() and not files[base].with_suffix(".index").exists()
        assert os.path.getsize(files[corrupt_base]) == plog.active.size
        # the segment holding the point, the one after it and the corrupt one were read; no other
        assert plog.recovery_segments == 3
        assert_records_are_offsets(read_all(plog), 0, cut_at)
        # producer state rebuilt to the new log end: the batch after it is new, not a duplicate
        retried = append(plog, batch(cut_at, pid=PID, epoch=0, seq=cut_at, pad=500))
        assert not retried.duplicate and retried.base_offset == cut_at
        assert append(plog, batch(cut_at - 2, pid=PID, epoch=0, seq=cut_at - 2, pad=500)).duplicate
        assert not any(p.name.endswith(".snapshot") and int(p.name[:20]) > plog.log_end_offset
                       for p in (tmp_path / "t-0").iterdir())
    finally:
        logs.close()
    logs = open_logs(tmp_path)  # and a clean start afterwards finds the same log
    try:
        assert_records_are_offsets(read_all(logs.get("t", 0)), 0, cut_at + 2)
    finally:
        logs.close()


def test_segments_before_the_recovery_point_are_not_read(tmp_path):
    point, files, end = checkpointed_then_rolled(tmp_path)
    before = sorted(b for b in files if b < point[0])
    rechecked = sorted(b for b in files if b >= point[0])
    corrupt(files[before[0]], 2)  # not re-read, so not noticed: the bytes before the point are trusted

    logs = open_logs(tmp_path)
    try:
        plog = logs.get("t", 0)
        assert plog.log_end_offset == end
        assert plog.recovery_segments == len(rechecked) == logs.recovery_segments
        expected = os.path.getsize(files[point[0]]) - point[2] + sum(os.path.getsize(files[b]) for b in rechecked[1:])
        assert plog.recovery_scanned == expected
    finally:
        logs.close()


def test_without_a_recovery_point_every_segment_is_recovered(tmp_path):
    logs = open_logs(tmp_path)
    logs.create_topic("t", 1)
    plog = logs.get("t", 0)
    produce(plog, 30)
    files = [seg.log_path for seg in plog.segments]
    sizes = sum(seg.size for seg in plog.segments)
    crash(logs)  # before any checkpoint
    assert ("t", 0) not in recovery_point.read(tmp_path)

    logs = open_logs(tmp_path)
    try:
        assert logs.get("t", 0).recovery_scanned == sizes
        assert logs.get("t", 0).recovery_segments == len(files)
    finally:
        crash(logs)
    cut_at = corrupt(files[0], 1)  # the recovery just made wrote a point in the last segment
    os.unlink(tmp_path / recovery_point.FILE)  # without it, the first segment is read again
    logs = open_logs(tmp_path)
    try:
        plog = logs.get("t", 0)
        assert plog.log_end_offset == cut_at and len(plog.segments) == 1
        assert_records_are_offsets(read_all(plog), 0, cut_at)
    finally:
        logs.close()


def test_a_crash_while_later_segments_are_deleted_finds_the_corruption_again(tmp_path, monkeypatch):
    """The later segments are deleted newest first and the corrupt one is cut only after: a crash
    in between leaves the bad batch and a contiguous run of segments, never a hole in the offsets."""
    from shim.storage import fs

    point, files, end = checkpointed_then_rolled(tmp_path)
    after = sorted(b for b in files if b > point[0])
    cut_at = corrupt(files[after[0]], 2)
    real_unlink, deleted = fs.disk.unlink, []

    def crash_after_one_segment(path):
        if path.suffix == ".log" and deleted:
            raise OSError("killed")
        real_unlink(path)
        if path.suffix == ".log":
            deleted.append(path)

    monkeypatch.setattr(fs.disk, "unlink", crash_after_one_segment)
    try:
        open_logs(tmp_path)
    except OSError:
        pass
    monkeypatch.undo()
    assert deleted == [files[after[-1]]] and files[after[-2]].exists()

    logs = open_logs(tmp_path)
    try:
        plog = logs.get("t", 0)
        assert plog.log_end_offset == cut_at
        assert [s.base_offset for s in plog.segments] == sorted(b for b in files if b <= after[0])
        assert_records_are_offsets(read_all(plog), 0, cut_at)
    finally:
        logs.close()
