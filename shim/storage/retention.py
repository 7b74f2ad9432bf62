"""A partition's log start offset and the deletion of its oldest segments (Kafka: UnifiedLog's
deleteOldSegments, maybeIncrementLogStartOffset and legacyFetchOffsetsBefore).

Three things move the log start offset forward: DeleteRecords, retention (retention.ms against a
segment's largest timestamp, retention.bytes against the log's size, under cleanup.policy=delete)
and the segments they empty. The offset is written to its own file first, then whole segments
below it are removed: a crash between the two leaves segments the next load skips, never an
offset that points into deleted data. Under fsync "always" both the file and the directory entry
of each removal are fsynced; under "never" neither is, as the log itself is not.

ListOffsets v0 lives here too: its answer is made of segment base offsets and modification times.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..errors import ErrorCode, KafkaError
from . import fs
from .segment import LogSegment

if TYPE_CHECKING:
    from .partition_log import PartitionLog

LOG_START_FILE = "log-start-offset"


def delete_records(plog: PartitionLog, offset: int) -> int:
    """Advance the log start offset (DeleteRecords); -1 means the high watermark."""
    if offset == -1:
        offset = plog.high_watermark
    if offset < 0 or offset > plog.high_watermark:
        raise KafkaError(ErrorCode.offset_out_of_range, f"offset {offset} is beyond the high watermark")
    if offset > plog.log_start_offset:
        set_log_start(plog, offset)
        while len(plog.segments) > 1 and plog.segments[1].base_offset <= offset:
            delete_oldest(plog)
    return plog.log_start_offset


def enforce_retention(plog: PartitionLog, now_ms: int) -> int:
    """Delete whole segments past retention.ms or retention.bytes; returns how many.

    As Kafka (UnifiedLog.deleteOldSegments), the active segment goes too once it qualifies: a new
    empty one is rolled first, so a quiet partition still expires.
    """
    deleted = 0
    c = plog.config
    if not c.delete:  # Kafka: UnifiedLog.deleteOldSegments -- cleanup.policy=compact keeps every segment
        return 0
    while plog.segments[0].size or len(plog.segments) > 1:
        oldest = plog.segments[0]
        expired = c.retention_ms >= 0 and largest_timestamp(oldest) < now_ms - c.retention_ms
        too_big = c.retention_bytes >= 0 and plog.size_bytes() - oldest.size >= c.retention_bytes
        if not (expired or too_big):
            break
        if len(plog.segments) == 1:
            plog.roll()
        set_log_start(plog, plog.segments[1].base_offset)  # first: a lost removal is then harmless
        delete_oldest(plog)
        deleted += 1
    return deleted


def set_log_start(plog: PartitionLog, offset: int) -> None:
    plog.log_start_offset = max(plog.log_start_offset, offset)
    plog.aborted = [a for a in plog.aborted if a.last_offset >= plog.log_start_offset]
    # under fsync "never" unforced, as the log it describes (Kafka checkpoints it on its scheduler)
    fs.atomic_write(plog.directory / LOG_START_FILE, str(plog.log_start_offset).encode(), sync=plog.config.fsync)


def delete_oldest(plog: PartitionLog) -> None:
    plog.pending_rolls.settle()  # a roll's files are not renamed into place after the deletion
    plog.segments.pop(0).delete()
    if plog.config.fsync:
        fs.disk.fsync_dir(plog.directory)


def largest_timestamp(seg: LogSegment) -> int:
    """Kafka: LogSegment.largestTimestamp -- its newest record's timestamp, or the file's modification
    time when it has none (a segment the cleaner emptied keeps the time of what it replaced)."""
    if seg.max_timestamp >= 0:
        return seg.max_timestamp
    return os.stat(seg.log_path).st_mtime_ns // 1_000_000


def legacy_offsets_before(plog: PartitionLog, timestamp: int, max_num_offsets: int, now_ms: int) -> list[int]:
    """ListOffsets v0 (Kafka: UnifiedLog.legacyFetchOffsetsBefore, Partition.legacyFetchOffsetsForTimestamp
    for a consumer): segment start offsets (and the log end when the active segment holds data)
    whose segment was last modified at or before ``timestamp``, newest first, capped at the
    high watermark; -1 is the latest, -2 the earliest."""
    points = [(max(s.base_offset, plog.log_start_offset), os.stat(s.log_path).st_mtime_ns // 1_000_000)
              for s in plog.segments]
    if plog.segments[-1].size > 0:
        points.append((plog.log_end_offset, now_ms))
    if timestamp == -1:
        start = len(points) - 1
    elif timestamp == -2:
        start = 0
    else:
        start = max((i for i, (_, modified) in enumerate(points) if modified <= timestamp), default=-1)
    found = sorted((points[i][0] for i in range(start, max(start - max_num_offsets, -1), -1)), reverse=True)
    hw = plog.high_watermark
    if any(o > hw for o in found):
        found = [hw] + [o for o in found if o <= hw]
    return found
