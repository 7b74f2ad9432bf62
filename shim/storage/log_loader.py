"""A partition's segments opened at start, and recovered after an unclean stop (Kafka: LogLoader).

Kafka's LogLoader.recoverLog recovers every segment from the one holding the recovery point to the
log end (``segments.values(recoveryPoint, Long.MAX_VALUE)``): each is read whole, every batch's
CRC checked, its indexes rebuilt; the first segment found corrupt or torn is truncated at its first
invalid batch and every later segment deleted, so the log ends there. kafka-shim does the same,
with its finer recovery point (shim.storage.recovery_point): in the segment holding the point only
the bytes after its position are checked, and sealed segments before it are not read at all. A
partition without a recovery point (none checkpointed yet, or the file unreadable) is recovered
from its first segment, as Kafka's recovery point 0 means. Producer state is then rebuilt
from the latest snapshot at or below the new log end (:func:`rebuild_producer_state`;
Kafka: UnifiedLog.rebuildProducerState), snapshots past it removed.
"""

from __future__ import annotations

import bisect
import logging
from typing import TYPE_CHECKING

from kafka_codecs.batch import BatchHeader
from kafka_codecs.control import ControlRecordType, read_end_txn_marker

from . import fs, recovery_point, snapshot, txn_index
from .producer_state import Origin
from .segment import INDEX_ENTRY_SIZE, TIME_ENTRY_SIZE, LogSegment
from .segment import file_name as segment_file_name

if TYPE_CHECKING:
    from .partition_log import PartitionLog

log = logging.getLogger(__name__)

SEGMENT_SUFFIXES = (".log", ".index", ".timeindex", ".txnindex")


def read_log_start(plog: PartitionLog, file_name: str, names: list[str]) -> int:
    """The log start offset its file holds, 0 when there is none, or when it cannot be read: under
    fsync "never" it is replaced unforced, so a power loss may leave it empty (Kafka: LogManager
    warns and resets an unreadable log-start-offset-checkpoint to the first segment's base offset,
    which the caller's max with that base gives)."""
    if file_name not in names:
        return 0
    text = (plog.directory / file_name).read_bytes()
    try:
        return max(int(text), 0)
    except ValueError:
        log.warning("%s: unreadable %s file %r, starting the log at its first segment", plog.directory,
                    file_name, text[:32])
        return 0


def first_to_recover(bases: list[int], checkpoint: recovery_point.Point | None) -> int:
    """The index in ``bases`` of the first segment to recover: the one holding the recovery point
    (the segment of its base, else the last one starting before it: a segment the cleaner merged it
    into), every later one after it; all of them without a recovery point."""
    if checkpoint is None:
        return 0
    return max(bisect.bisect_right(bases, checkpoint[0]) - 1, 0)


def load_segments(plog: PartitionLog, bases: list[int], names: list[str], clean: bool,
                  checkpoint: recovery_point.Point | None) -> None:
    """Open the segments at ``bases`` into ``plog.segments``; after an unclean stop recover those
    from the recovery point on, counting in ``plog.recovery_scanned``/``recovery_segments`` the
    bytes CRC-checked and the segments read."""
    first = len(bases) if clean or plog.read_only else first_to_recover(bases, checkpoint)
    max_batch = max(plog.config.max_message_bytes, 1 << 24)
    for i, base in enumerate(bases):
        seg = LogSegment(plog.directory, base, plog.config.index_interval_bytes, plog.read_only,
                         max_size=plog.config.segment_bytes)
        recover = i >= first
        # the recovery point read at start, as (position, offset), when it lies in this segment
        trusted = (checkpoint[2], checkpoint[1]) if recover and checkpoint and checkpoint[0] == base else None
        last = i == len(bases) - 1
        cut = seg.load(recover, max_batch, trusted, truncate=last)
        plog.segments.append(seg)
        if recover:
            plog.recovery_scanned += seg.scanned
            plog.recovery_segments += 1
        if cut and not last:
            _drop_after_corruption(plog, seg, bases[i + 1:])
            return
        if not last:
            seg.next_offset = bases[i + 1]
            if not plog.read_only and (recover or seg.log_path.with_suffix(".index").name not in names):
                _keep_index_files(seg)  # rebuilt by the scan: keep it for the next start


def _keep_index_files(seg: LogSegment) -> None:
    """Write a sealed segment's index files unless they already hold its index (missing, torn or
    from before a recovery that rebuilt it)."""
    index, time_index = seg.log_path.with_suffix(".index"), seg.log_path.with_suffix(".timeindex")
    entries, time_entries = seg.index_entries()
    try:
        if (index.stat().st_size == entries * INDEX_ENTRY_SIZE
                and time_index.stat().st_size == time_entries * TIME_ENTRY_SIZE):
            return
    except FileNotFoundError:
        pass
    seg.write_index_files()


def _drop_after_corruption(plog: PartitionLog, seg: LogSegment, later: list[int]) -> None:
    """A sealed segment was cut at its first invalid batch: it becomes the active segment and every
    later one is deleted (Kafka: LogLoader.recoverLog's removeAndDeleteSegmentsAsync of the
    remaining unflushed segments); snapshots past the new log end go with the producer state's
    rebuild. The later segments go first, newest first, and only then is the segment cut: a crash
    in between finds the invalid batch again at the next start, with no hole in the offsets."""
    log.warning("%s: corruption found in segment %d at position %d, truncating the log to offset %d and "
                "deleting segments %s", plog.directory, seg.base_offset, seg.size, seg.next_offset,
                ", ".join(map(str, later)))
    for base in reversed(later):
        for suffix in SEGMENT_SUFFIXES:
            fs.disk.unlink(plog.directory / segment_file_name(base, suffix))
    fs.disk.fsync_dir(plog.directory)
    seg.truncate_to_position(seg.size)
    seg.write_index_files(sync_dir=False)  # the cut segment's files held entries past its new end


def rebuild_producer_state(plog: PartitionLog, names: list[str]) -> None:
    """Latest snapshot at or below the log end, then replay (Kafka: UnifiedLog.rebuildProducerState).
    ``names``: the directory's listing at load."""
    leo = plog.log_end_offset
    replay_from = plog.log_start_offset
    offsets = snapshot.offsets(plog.directory, names)
    for off in reversed(offsets):
        if off <= leo and off >= plog.log_start_offset and snapshot.read(snapshot.path_for(plog.directory, off), plog.producer_state):
            replay_from = off
            break
        plog.producer_state.truncate()
    for off in offsets:
        if off > leo and not plog.read_only:
            fs.remove(snapshot.path_for(plog.directory, off), sync=True)
    # Aborted entries below the replay point come from the index files; replay re-adds the rest.
    for seg in plog.segments:
        path = seg.log_path.with_suffix(".txnindex")
        entries = txn_index.load(path) if path.name in names else []
        kept = [a for a in entries if a.last_offset < replay_from]
        if len(kept) != len(entries) and not plog.read_only:
            txn_index.rewrite(path, kept)
        plog.aborted.extend(a for a in kept if a.last_offset >= plog.log_start_offset)
    _replay(plog, replay_from)


def _replay(plog: PartitionLog, offset: int) -> None:
    for seg in plog.segments[plog._segment_index(offset):]:
        found = seg.find(offset) if seg.base_offset < offset else (0, None)
        if found is None:
            continue
        for position, h in seg.iter_headers(found[0]):
            if h.producer_id < 0 or h.last_offset < offset:
                continue
            if h.is_control:
                _replay_marker(plog, seg, position, h)
            else:
                append = plog.producer_state.validate_data(h, Origin.REPLAY)
                plog.producer_state.apply_data(append, h.base_offset, h.last_offset)


def _replay_marker(plog: PartitionLog, seg: LogSegment, position: int, h: BatchHeader) -> None:
    if not h.records_count:  # Kafka: an empty control batch is a transaction the cleaner removed whole
        return
    kind, coordinator_epoch = read_end_txn_marker(seg.read(position, h.size))
    if kind in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
        plog._complete_marker(h.producer_id, h.producer_epoch, coordinator_epoch,
                              kind == ControlRecordType.ABORT, h.base_offset, h.max_timestamp, seg)
