"""Which compacted log to clean and how far (Kafka: LogCleanerManager, LogToClean, CleanerConfig),
and one cleaning round of a partition from its plan to the swap.

A partition's first dirty offset, where the last round stopped, is kept in its directory's
``cleaner-offset-checkpoint`` (Kafka keeps one such file per log directory).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Iterator, NamedTuple

from . import fs, swap
from .cleaner import (
    CleanerStats, GroupCleaner, GroupResult, LastRecord, LogChanged, OffsetMap, TransactionMetadata, build_offset_map,
)
from .partition_log import PartitionLog
from .segment import LogSegment

CHECKPOINT_FILE = "cleaner-offset-checkpoint"
LONG_MAX = (1 << 63) - 1
# A round gives the event loop back at least this often (bytes read and written in between): about
# a few milliseconds of decoding, whatever log.cleaner.io.buffer.size says.
MAX_STEP_BYTES = 64 * 1024


@dataclass(frozen=True)
class CleanerConfig:
    """The broker's log.cleaner.* settings (Kafka: CleanerConfig)."""

    enable: bool = True
    backoff_ms: int = 15_000
    dedupe_buffer_size: int = 128 * 1024 * 1024
    io_buffer_load_factor: float = 0.9
    io_buffer_size: int = 512 * 1024
    io_max_bytes_per_second: float = float("inf")

    @classmethod
    def from_properties(cls, props: dict) -> "CleanerConfig":
        """From typed broker properties (log.cleaner.enable, log.cleaner.backoff.ms, ...)."""
        names = {"enable": "log.cleaner.enable", "backoff_ms": "log.cleaner.backoff.ms",
                 "dedupe_buffer_size": "log.cleaner.dedupe.buffer.size",
                 "io_buffer_load_factor": "log.cleaner.io.buffer.load.factor",
                 "io_buffer_size": "log.cleaner.io.buffer.size",
                 "io_max_bytes_per_second": "log.cleaner.io.max.bytes.per.second"}
        return cls(**{f: props[p] for f, p in names.items() if props.get(p) is not None})

    @property
    def map_memory(self) -> int:
        return int(self.dedupe_buffer_size * self.io_buffer_load_factor)


class LogToClean(NamedTuple):
    """Kafka: LogToClean -- the clean and dirty parts of a log and whether it must be cleaned now."""

    first_dirty_offset: int
    first_uncleanable_offset: int
    clean_bytes: int
    cleanable_bytes: int
    need_compaction_now: bool

    @property
    def total_bytes(self) -> int:
        return self.clean_bytes + self.cleanable_bytes

    @property
    def cleanable_ratio(self) -> float:
        return self.cleanable_bytes / self.total_bytes if self.total_bytes else 0.0


def read_checkpoint(plog: PartitionLog) -> int | None:
    path = plog.directory / CHECKPOINT_FILE
    try:
        return int(path.read_text())
    except (FileNotFoundError, ValueError):
        return None


def write_checkpoint(plog: PartitionLog, offset: int) -> None:
    fs.atomic_write(plog.directory / CHECKPOINT_FILE, str(offset).encode())


def first_dirty_offset(plog: PartitionLog) -> int:
    """Kafka: LogCleanerManager.cleanableOffsets -- the checkpoint, or the log start when it is
    missing or out of the log's range."""
    checkpoint = read_checkpoint(plog)
    if checkpoint is None or checkpoint < plog.log_start_offset or checkpoint > plog.log_end_offset:
        return plog.log_start_offset
    return checkpoint


def _first_batch_timestamp(seg: LogSegment) -> int:
    h = seg.header_at(0)
    return h.max_timestamp if h is not None else -1


def plan(plog: PartitionLog, now_ms: int) -> LogToClean:
    """Kafka: cleanableOffsets and LogToClean for one log at ``now_ms``."""
    c = plog.config
    first_dirty = first_dirty_offset(plog)
    segments = plog.segments
    uncleanable = min(plog.last_stable_offset, plog.active.base_offset)
    dirty = [s for s in segments[:-1] if s.next_offset > first_dirty]
    if c.min_compaction_lag_ms > 0:  # the first dirty segment with a record younger than the lag
        young = next((s.base_offset for s in dirty if s.max_timestamp > now_ms - c.min_compaction_lag_ms), None)
        if young is not None:
            uncleanable = min(uncleanable, young)
    # cleaning works on whole segments: up to the start of the one holding the uncleanable offset
    bases = [s.base_offset for s in segments]
    first_uncleanable = bases[max(bisect.bisect_right(bases, uncleanable) - 1, 0)]
    # Kafka: logSegments(-1, firstDirtyOffset) -- a segment cleaned part way counts as clean and as dirty
    clean_bytes = sum(s.size for s in segments if s.base_offset < first_dirty)
    cleanable_bytes = sum(s.size for s in dirty if s.base_offset < first_uncleanable)
    need_now = False
    if c.max_compaction_lag_ms < LONG_MAX and dirty:
        # Kafka: maxCompactionDelay -- the oldest first batch of any dirty segment (timestamps <= 0 ignored)
        firsts = [t for t in map(_first_batch_timestamp, dirty) if t > 0]
        need_now = bool(firsts) and min(firsts) < now_ms - max(c.max_compaction_lag_ms, 0)
    return LogToClean(first_dirty, first_uncleanable, clean_bytes, cleanable_bytes, need_now)


def should_clean(plog: PartitionLog, ltc: LogToClean) -> bool:
    """Kafka: grabFilthiestCompactedLog's filter."""
    if not plog.config.compact or ltc.cleanable_bytes <= 0:
        return False
    return ltc.need_compaction_now or ltc.cleanable_ratio > plog.config.min_cleanable_dirty_ratio


def _group_by_size(segments: list[LogSegment], max_size: int) -> list[list[LogSegment]]:
    """Kafka: groupSegmentsBySize -- consecutive segments whose data fits in one segment."""
    groups: list[list[LogSegment]] = []
    for seg in segments:
        if groups and sum(s.size for s in groups[-1]) + seg.size <= max_size:
            groups[-1].append(seg)
        else:
            groups.append([seg])
    return groups


def _abandon(output: LogSegment) -> None:
    """Drop a cleaned segment that will not be swapped in. Once a swap is committed its files are
    the log's (the next load completes it), whatever failed after."""
    output.close()
    if output.log_path.name.endswith(swap.CLEANED) and not (output.directory / swap.SWAP_FILE).exists():
        fs.disk.unlink(output.log_path)


@dataclass
class Progress:
    """What a round is doing, for ``kafka-shim inspect`` and tests."""

    topic: str = ""
    partition: int = -1
    phase: str = "idle"  # idle | mapping | cleaning | swapping
    stats: CleanerStats | None = None


def clean(plog: PartitionLog, ltc: LogToClean, now_ms: int, config: CleanerConfig,
          progress: Progress | None = None, crash_point=None) -> Iterator[int]:
    """One round (Kafka: Cleaner.doClean): map the dirty part, clean every group of segments below
    the end of what was mapped, swap each in. Yields bytes of I/O per chunk; returns the stats.

    The log may change between yields: appends land in the active segment, which is never cleaned;
    if retention or DeleteRecords removed a segment of a group meanwhile, that group is skipped.
    """
    stats = CleanerStats()
    progress = progress or Progress()
    progress.topic, progress.partition, progress.phase, progress.stats = plog.topic, plog.partition, "mapping", stats
    offset_map = OffsetMap(config.map_memory)
    start, end = ltc.first_dirty_offset, ltc.first_uncleanable_offset
    chunk = max(min(config.io_buffer_size, MAX_STEP_BYTES), 1)
    try:
        yield from build_offset_map(list(plog.segments[:-1]), start, end, plog.aborted_between(start, end),
                                    offset_map, stats, chunk)
    except LogChanged:
        progress.phase = "idle"
        return stats  # the next round starts again from the checkpoint
    end_offset = offset_map.latest_offset + 1 if offset_map.full else end
    progress.phase = "cleaning"
    txns = TransactionMetadata()  # carried from group to group, as Kafka's cleanSegments does
    for group in _group_by_size([s for s in plog.segments[:-1] if s.base_offset < end_offset],
                                plog.config.segment_bytes):
        producers = {e.producer_id: LastRecord(e.last_data_offset, e.producer_epoch)
                     for e in plog.producer_state.active_producers()}
        result = GroupResult(group, plog.cleaned_segment(group[0].base_offset))
        cleaner = GroupCleaner(offset_map, producers, now_ms, plog.config.delete_retention_ms, stats, end)
        try:
            yield from cleaner.clean(result, txns, plog.aborted_between, chunk)
            progress.phase = "swapping"
            swapped = plog.replace_segments(result.segments, result.output, result.aborted, crash_point)
        except LogChanged:
            swapped = False
        except BaseException:
            _abandon(result.output)
            raise
        if not swapped:
            _abandon(result.output)
            break  # the log changed under the round: the next one starts again from the checkpoint
        progress.phase = "cleaning"
    else:
        write_checkpoint(plog, end_offset)
    progress.phase = "idle"
    return stats

