"""The recovery points of a data directory's partitions, in one file (Kafka: LogManager's
``recovery-point-offset-checkpoint``, an OffsetCheckpointFile).

Kafka's recovery point is an offset, and after an unclean stop Kafka recovers every segment from
the one holding it, whole. kafka-shim's holds the active segment's base offset, the offset and
the byte position in that segment up to which the log is known good (PartitionLog.recovery_point):
a start after a crash CRC-checks only the bytes after it, and the segments rolled since
(shim.storage.log_loader), so its cost is bounded by what was written since the last checkpoint,
not by ``segment.bytes``. Hence a file of its own, in Kafka's
layout (a version line, a count, one line per partition) with two more columns::

    0
    2
    orders 0 0 1200 65800
    orders 1 1000 1450 12000

The file is replaced atomically (shim.storage.fs.atomic_write), and fsynced under fsync "always"
only: under "never" neither it nor the log is, and both survive a kill -9 in the page cache. One
that cannot be read counts as empty: every partition is then recovered from its first segment.
"""

from __future__ import annotations

import logging
from pathlib import Path

from . import fs

log = logging.getLogger(__name__)

FILE = "recovery-point-checkpoint"
VERSION = 0
# A checkpoint is due log.flush.offset.checkpoint.interval.ms after the last one once anything was
# written, and at once when the partitions hold this many bytes written since: that bounds the work
# of a restart by bytes, whatever the write rate. Nothing written, nothing due: an idle broker
# does not wake up for it.
CHECKPOINT_AFTER_BYTES = 64 << 20
# A recovery point brings the active segment's index files up to it only once they lag this many
# bytes behind it; below, a start after a crash walks the batch headers from the files' last entry
# (or the segment's start) to the point, indexing them, and CRC-checks only what follows the point.
# Appending to two files of each partition at every checkpoint was ~10% of a broker's CPU under a
# 1,000-partition produce stream (a checkpoint every 64 MiB is 64 KiB a partition: ~16 entries),
# and creating them for 1,000 fresh partitions held the event loop 0.2-0.7 s; with the lag, a
# partition writes them once per INDEX_LAG_BYTES, and a restart walks at most that many bytes of
# headers a partition.
INDEX_LAG_BYTES = 1 << 20


class Unchecked:
    """Bytes appended since the last checkpoint over every partition of a data directory (each
    PartitionLog adds to the one its LogManager shares). When the count reaches ``alarm_at`` (its
    first byte, then CHECKPOINT_AFTER_BYTES) a checkpoint is due earlier than the shell's timer was
    told: :meth:`alarm` tells it, through ``on_alarm``."""

    __slots__ = ("bytes", "alarm_at", "on_alarm")

    def __init__(self) -> None:
        self.bytes = 0
        self.alarm_at = 1
        self.on_alarm = None

    def alarm(self) -> None:
        self.alarm_at = CHECKPOINT_AFTER_BYTES if self.bytes < CHECKPOINT_AFTER_BYTES else 1 << 62
        if self.on_alarm is not None:
            self.on_alarm()

    def reset(self) -> None:
        self.bytes, self.alarm_at = 0, 1


Point = tuple[int, int, int]  # active segment's base offset, offset, position in that segment


def read(data_dir: Path) -> dict[tuple[str, int], Point]:
    try:
        lines = (data_dir / FILE).read_text().splitlines()
    except FileNotFoundError:
        return {}
    try:
        if int(lines[0]) != VERSION or int(lines[1]) != len(lines) - 2:
            raise ValueError("unknown version or wrong count")
        points = {}
        for line in lines[2:]:
            topic, partition, base, offset, position = line.split(" ")
            points[(topic, int(partition))] = (int(base), int(offset), int(position))
        return points
    except (ValueError, IndexError) as e:
        log.warning("%s cannot be read (%s): every partition is recovered from its first segment", data_dir / FILE, e)
        return {}


def write(data_dir: Path, points: dict[tuple[str, int], Point], sync: bool = True, sync_dir: bool = True) -> None:
    """Replace the file; ``sync``: durable (fsync "always"), else only across a kill -9, as the
    log it describes (no fsync on the event loop while a producer fills the page cache)."""
    body = "".join(f"{t} {p} {b} {o} {pos}\n" for (t, p), (b, o, pos) in points.items())
    fs.atomic_write(data_dir / FILE, f"{VERSION}\n{len(points)}\n{body}".encode(), sync_dir, sync)
