"""One partition's log (Kafka: UnifiedLog + LocalLog): segments, offsets, producer state.

The high watermark is the log end offset after every append, unless the simulated cluster
(shim.cluster) holds it back at a slowed follower's log end (``high_watermark_limit``); the last
stable offset is the first offset of the oldest open transaction, else the high watermark. Batches
are stamped with the partition's current ``leader_epoch``, which the cluster bumps on a leader change.
The log start offset and the deletion of old segments (DeleteRecords, retention) are
shim.storage.retention's; a roll's file work under fsync "always" is shim.storage.roll_flush's.
"""

from __future__ import annotations

import bisect
import functools
import logging
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, NamedTuple

from kafka_codecs.batch import (
    LOG_OVERHEAD,
    MAX_TIMESTAMP_OFFSET,
    BatchHeader,
    TimestampType,
    parse_header,
    set_max_timestamp,
    stamp,
)
from kafka_codecs.control import ControlRecordType, encode_end_txn_marker, read_end_txn_marker
from kafka_codecs.records import decode_batch

from ..errors import ErrorCode, KafkaError
from . import fs, log_loader, recovery_point, retention, snapshot, swap, txn_index
from .roll_flush import PendingRolls
from .producer_state import AbortedTxn, Origin, ProducerAppend, ProducerStateManager
from .segment import FileRecords, LogSegment
from .segment import file_name as segment_file_name
from .time_search import TimestampSearch

log = logging.getLogger(__name__)

# BaseOffset, BatchLength and PartitionLeaderEpoch: the first 16 bytes of a batch, before the CRC
_STAMPED_PREFIX = struct.Struct(">qii")
_MAX_TIMESTAMP = struct.Struct(">q")
LEADER_EPOCH = 0  # the leader epoch of a partition whose leader never changed


@dataclass(frozen=True, slots=True)
class LogConfig:
    segment_bytes: int = 1024 * 1024 * 1024
    index_interval_bytes: int = 4096
    max_message_bytes: int = 1_048_588
    retention_bytes: int = -1
    retention_ms: int = 7 * 24 * 3600 * 1000
    log_append_time: bool = False  # message.timestamp.type=LogAppendTime
    # The sync policy, the broker's fsync="always": every append is fsynced before it is answered
    # (before it returns, or by the group commit), as are the directory entries of new segments
    # and the removal of old ones.
    fsync: bool = False
    # Honoured on the produce path (shim.storage.log_validator, shim.storage.roll), see shim.configs.topic.
    compression_type: str = "producer"
    timestamp_before_max_ms: int = (1 << 63) - 1
    timestamp_after_max_ms: int = (1 << 63) - 1
    segment_ms: int = 7 * 24 * 3600 * 1000
    segment_jitter_ms: int = 0
    segment_index_bytes: int = 10 * 1024 * 1024
    min_insync_replicas: int = 1
    compression_levels: tuple = (-1, 9, 3)  # compression.gzip.level, .lz4.level, .zstd.level
    # Log compaction (shim.storage.cleaner): cleanup.policy and the topic's cleaner settings
    cleanup_policy: tuple = ("delete",)
    delete_retention_ms: int = 86_400_000
    min_cleanable_dirty_ratio: float = 0.5
    min_compaction_lag_ms: int = 0
    max_compaction_lag_ms: int = (1 << 63) - 1

    @property
    def compact(self) -> bool:
        return "compact" in self.cleanup_policy

    @property
    def delete(self) -> bool:
        return "delete" in self.cleanup_policy


class AppendResult(NamedTuple):
    base_offset: int
    log_append_time: int  # -1 unless the topic uses LogAppendTime
    log_start_offset: int
    duplicate: bool = False


# Built once per append: a NamedTuple's own __new__ is a Python function, twice the cost of this.
_append_result = functools.partial(tuple.__new__, AppendResult)
# An enum member read from its class costs a lookup of EnumType's (0.2-0.3 us on Python 3.11),
# and the append reads it for every batch.
_CLIENT = Origin.CLIENT


class ReadResult(NamedTuple):
    records: FileRecords | bytes
    high_watermark: int
    last_stable_offset: int
    log_start_offset: int
    aborted: list[AbortedTxn] | None  # None unless read_committed

    @property
    def data(self) -> bytes:
        """The records read into memory (the wire layer sends large ones from the file instead)."""
        return self.records if isinstance(self.records, bytes) else self.records.read()


class PartitionLog:
    def __init__(self, directory: Path, topic: str, partition: int, config: LogConfig, *, clean: bool,
                 read_only: bool = False, checkpoint: recovery_point.Point | None = None) -> None:
        self.directory = directory
        self.read_only = read_only  # inspect a data directory without changing a byte of it
        self.topic = topic
        self.partition = partition
        self.key = (topic, partition)  # what on_append is told
        self.config = config
        self.producer_state = ProducerStateManager()
        self.aborted: list[AbortedTxn] = []  # sorted by last_offset (marker offset)
        self.on_append: Callable[[tuple], None] | None = None  # called with (topic, partition)
        self.leader_epoch = LEADER_EPOCH  # stamped on appended batches (set by shim.cluster)
        self.high_watermark_limit: int | None = None  # a slowed ISR follower's log end (shim.cluster)
        self._dir_dirty = False  # a file was created in the directory since its last fsync
        self._closed_state: tuple | None = None  # what the files of the last clean close describe
        self.flusher = None  # the LogManager's roll_flush.Flusher under fsync "always"; None: a roll's files inline
        self.pending_rolls = PendingRolls()
        self.group_commit = None  # the LogManager's group_commit.GroupCommit: client appends synced off the loop
        self.synced_end = 0  # with group_commit: the offset up to which the log is fsynced (bounds the HW)
        if not read_only:
            fs.make_dirs(directory, sync=config.fsync)
        self.segments: list[LogSegment] = []
        self.log_start_offset = 0
        self.checkpointed: tuple[int, int, int] | None = None  # the recovery point last handed out
        self.unchecked = recovery_point.Unchecked()  # the LogManager's, once registered
        self.recovery_scanned = 0  # bytes the load CRC-checked after an unclean stop
        self.recovery_segments = 0  # segments it read to check them (shim.storage.log_loader)
        self._load(clean, checkpoint)

    # -- offsets ----------------------------------------------------------------------------

    @property
    def active(self) -> LogSegment:
        return self.segments[-1]

    @property
    def log_end_offset(self) -> int:
        return self.active.next_offset

    @property
    def high_watermark(self) -> int:
        limit = self.high_watermark_limit
        end = self.active.next_offset
        if self.group_commit is not None and self.synced_end < end:  # no record is read before it is on disk
            end = self.synced_end
        return end if limit is None or limit >= end else max(limit, self.log_start_offset)

    @property
    def last_stable_offset(self) -> int:
        first_unstable = self.producer_state.first_unstable_offset()
        hw = self.high_watermark
        return hw if first_unstable is None else min(max(first_unstable, self.log_start_offset), hw)

    def size_bytes(self) -> int:
        return sum(s.size for s in self.segments)

    # -- appends ----------------------------------------------------------------------------

    def append(self, batch: bytes | bytearray, h: BatchHeader, now_ms: int, *, origin: Origin,
               durable: bool = False) -> AppendResult:
        """The one write path (Kafka: UnifiedLog.append with its AppendOrigin).

        Every batch, a client's or a coordinator's, data or COMMIT/ABORT marker, is checked against
        the producer state, stamped with its offset, written, applied, and, when the log's sync
        policy is ``fsync`` always, made durable before any answer: left to the group commit
        (shim.storage.group_commit) whose job the answer waits for, or, when ``durable`` asks for it
        (a step of the transaction coordinator the next one depends on), before this returns.
        Duplicates and sequence numbers are checked for CLIENT appends only: a coordinator writes
        its records with whatever sequence it likes (Kafka: analyzeAndValidateProducerState,
        ProducerAppendInfo.maybeValidateDataBatch); producer and coordinator epochs are checked
        for both.
        """
        if self.group_commit is not None and self.group_commit.failed is not None:  # before a duplicate's answer
            raise KafkaError(ErrorCode.kafka_storage_error, f"{self.directory.parent} is offline after a failed fsync")
        # Kafka checks coordinator appends too; a client's batch was checked by validate_client_batch
        if origin is not _CLIENT and h.size > self.config.max_message_bytes:
            raise KafkaError(ErrorCode.message_too_large,
                             f"batch of {h.size} bytes exceeds max.message.bytes {self.config.max_message_bytes}")
        data = marker = None
        if h.producer_id >= 0:
            if origin is _CLIENT:
                dup = self.producer_state.find_duplicate(h)
                if dup is not None:
                    # Kafka: appendInfo.setLogAppendTime(duplicate.timestamp) -- the stored batch's time
                    append_time = dup.timestamp if self.config.log_append_time else -1
                    return _append_result((dup.first_offset, append_time, self.log_start_offset, True))
            data, marker = self._validate_producer(batch, h, origin)
        base = self.segments[-1].next_offset
        append_time, chunks, max_timestamp = self._stamped(batch, h, base, now_ms)
        size = LOG_OVERHEAD + h.batch_length
        seg = self.segments[-1]
        if seg.size and seg.size + size > self.config.segment_bytes:
            seg = self._rolled_for(size)
        last = base + h.last_offset_delta
        seg.append(chunks, size, base, last, max_timestamp)
        unchecked = self.unchecked
        unchecked.bytes += size
        if unchecked.bytes >= unchecked.alarm_at:  # a recovery-point checkpoint is due sooner
            unchecked.alarm()
        if data is not None:
            self.producer_state.apply_data(data, base, last, max_timestamp)
        elif marker is not None:
            self._complete_marker(h.producer_id, h.producer_epoch, marker[1], marker[0] == ControlRecordType.ABORT,
                                  base, max_timestamp, seg)
        if self.config.fsync:
            self._sync_append(seg, base, origin, durable)
        if self.on_append is not None:
            self.on_append(self.key)
        return _append_result((base, append_time, self.log_start_offset, False))

    def _validate_producer(self, batch: bytes | bytearray, h: BatchHeader,
                           origin: Origin) -> tuple[ProducerAppend | None, tuple | None]:
        """(the data batch's producer append info, or the marker's (type, coordinator epoch)):
        checked against the producer state before anything is written."""
        if h.is_control:
            marker = read_end_txn_marker(batch)
            self.producer_state.validate_marker(h.producer_id, h.producer_epoch, marker[1], origin)
            return None, marker
        return self.producer_state.validate_data(h, origin), None

    def _sync_append(self, seg: LogSegment, base: int, origin: Origin, durable: bool) -> None:
        """Under fsync "always": the append is left to the group commit, or fsynced now."""
        if not durable and self.group_commit is not None and self.group_commit.attach():
            self.synced_end = min(self.synced_end, base)
            # the answer waits for its job (GroupCommit.barrier, shim.apis._coordinator_sync)
            self.group_commit.wrote(self, seg, origin is not Origin.CLIENT)
        else:
            self._flush_now()

    def _rolled_for(self, size: int) -> LogSegment:
        """The segment a batch of ``size`` bytes goes to when it would take the non-empty active one
        past segment.bytes: a new one (Kafka: LogSegment.shouldRoll's size condition, checked by
        append; the others are shim.storage.roll's)."""
        self.roll()
        return self.segments[-1]

    def _stamped(self, batch: bytes | bytearray, h: BatchHeader, base: int, now_ms: int) -> tuple[int, tuple, int]:
        """(log append time or -1, the batch as buffers to write with its offset stamped, its max
        timestamp as stored). ``h.max_timestamp`` is the records' own, which a client's header
        may have stated otherwise (validation.validate_client_batch)."""
        if self.config.log_append_time:  # the CRC covers MaxTimestamp: rewrite the whole batch
            whole = bytearray(batch)
            stamp(whole, base, self.leader_epoch)
            set_max_timestamp(whole, now_ms)
            return now_ms, (whole,), now_ms
        if _MAX_TIMESTAMP.unpack_from(batch, MAX_TIMESTAMP_OFFSET)[0] != h.max_timestamp:
            # Kafka: LogValidator's batch.setMaxTimestamp(CREATE_TIME, the records' largest), CRC anew
            whole = bytearray(batch)
            stamp(whole, base, self.leader_epoch)
            set_max_timestamp(whole, h.max_timestamp, TimestampType.CREATE_TIME)
            return -1, (whole,), h.max_timestamp
        # base offset and leader epoch are outside the CRC: written anew in front of the rest as received
        prefix = _STAMPED_PREFIX.pack(base, h.batch_length, self.leader_epoch)
        return -1, (prefix, memoryview(batch)[_STAMPED_PREFIX.size:]), h.max_timestamp

    def append_marker(self, producer_id: int, producer_epoch: int, coordinator_epoch: int, commit: bool,
                      now_ms: int, durable: bool = True) -> int:
        """Write a COMMIT/ABORT control batch as the coordinator (Kafka: MemoryRecords.writeEndTransactionalMarker)."""
        batch = encode_end_txn_marker(
            producer_id=producer_id, producer_epoch=producer_epoch, coordinator_epoch=coordinator_epoch,
            commit=commit, timestamp=now_ms, base_offset=0, partition_leader_epoch=self.leader_epoch,
        )
        # on disk before the coordinator's next step (its Complete state) is written, unless the
        # coordinator waits for the group commit itself
        return self.append(batch, parse_header(batch), now_ms, origin=Origin.COORDINATOR, durable=durable).base_offset

    def _complete_marker(
        self, pid: int, epoch: int, coord_epoch: int, is_abort: bool, offset: int, ts: int, seg: LogSegment,
    ) -> None:
        """Close the producer's transaction; an aborted one goes to the marker segment's txn index."""
        completed = self.producer_state.apply_marker(pid, epoch, coord_epoch, is_abort, offset, ts)
        if completed is not None and completed.is_aborted:
            entry = AbortedTxn(pid, completed.first_offset, offset, self.producer_state.last_stable_offset_for(completed))
            self.aborted.append(entry)
            if not self.read_only:
                txn_index.append(seg.log_path.with_suffix(".txnindex"), entry, sync=self.config.fsync)

    def roll(self) -> None:
        """Seal the active segment and start a new one at the log end offset, with a producer
        snapshot there (Kafka: UnifiedLog.roll). Under fsync "never" nothing is fsynced: Kafka
        writes the snapshot unforced and flushes segment, indexes and snapshot later on its
        scheduler ("flush-log"), so appends never wait on them; here they only spare a restart
        work that recovery redoes from the log when they are missing or torn. Under "always" the
        sealed segment's records are on disk already (each append fsynced them), the new
        segment's name is fsynced with the directory by the append that follows (``_dir_dirty``),
        and the index files and snapshot are written and fsynced on the flusher's thread while
        the recovery point stays at the old segment's end (shim.storage.roll_flush)."""
        old = self.active
        sync = self.config.fsync
        if sync and self.group_commit is None:  # otherwise sealed segments are left to the OS, like the active one
            old.flush()  # nothing to do unless something was written without an append's fsync
        old.release_reserved()
        held = (old.base_offset, old.durable[1], old.durable[0])
        self.segments.append(LogSegment(self.directory, old.next_offset, self.config.index_interval_bytes,
                                        max_size=self.config.segment_bytes))
        self._dir_dirty = True
        self.active.next_offset = old.next_offset
        job = functools.partial(self._roll_files, old, snapshot.encode(self.producer_state), old.next_offset,
                                sync, sync and self.flusher is not None and fs.disk.parallel)
        if job.args[-1]:
            self.pending_rolls.add(self.flusher.submit(job), held, str(self.directory))
        else:
            job()

    def _roll_files(self, old: LogSegment, state: bytes, offset: int, sync: bool, sync_dir: bool) -> None:
        """The sealed segment's index files and the snapshot at ``offset``; with ``sync_dir`` (on the
        flusher's thread) their names made durable here, else by the next append's flush. Under
        group commit its last appends may still wait for their job: its records are synced first."""
        if sync_dir and self.group_commit is not None and old.fileno() >= 0:
            fs.disk.fsync(old.fileno())
        old.write_index_files(sync_dir=False, sync=sync)
        snapshot.write_encoded(self.directory, offset, state, sync_dir=False, sync=sync)
        self._prune_snapshots(keep=2)
        if sync_dir:
            fs.disk.fsync_dir(self.directory)

    def recovery_point(self) -> recovery_point.Point:
        """(active segment's base offset, offset, position in it) up to which the log is known good
        after a crash (Kafka: UnifiedLog.recoveryPoint, advanced by flushes): under fsync "always"
        what was fsynced, under "never" what was written, which a kill -9 leaves in the page cache
        ("never" does not promise to survive a power loss). The active segment's index files are
        brought up to it only when they lag by recovery_point.INDEX_LAG_BYTES: a start after a crash
        reads the index below the point from them, walks the batch headers between their last
        entry and the point, and CRC-checks only what follows it."""
        held = self.pending_rolls.held()
        if held is not None:  # a roll's files are still on their way to the disk
            return held
        seg = self.active
        position, offset = seg.durable if self.config.fsync else (seg.size, seg.next_offset)
        point = (seg.base_offset, offset, position)
        if point != self.checkpointed:
            if not self.read_only and seg.index_lag(position) >= recovery_point.INDEX_LAG_BYTES:
                seg.save_index(sync=self.config.fsync)
            self.checkpointed = point
        return point

    def flush(self) -> None:
        """fsync the active segment and, if a segment file was created since, the directory
        (Kafka: LocalLog.flush flushes the directory once segments were rolled); under group
        commit a sealed segment whose last appends wait for their job too."""
        if self.group_commit is not None:
            for seg in self.segments[:-1]:
                if seg._dirty:
                    seg.flush()
        self.active.flush()
        if self._dir_dirty:
            fs.disk.fsync_dir(self.directory)
            self._dir_dirty = False
        self.synced(self.active.next_offset)

    def _flush_now(self) -> None:
        """:meth:`flush` before an append returns; under group commit a failure takes the data
        directory offline as a failed job does (shim.storage.group_commit) and the append fails
        with KAFKA_STORAGE_ERROR (Kafka: LocalLog.flush's IOException, LogDirFailureChannel)."""
        try:
            self.flush()
        except OSError as e:
            if self.group_commit is None:
                raise
            self.group_commit.fail(e)
            raise KafkaError(ErrorCode.kafka_storage_error, f"fsync failed: {e}") from None

    def synced(self, offset: int) -> None:
        """The log is fsynced up to ``offset``: the high watermark may move there."""
        if offset > self.synced_end:
            self.synced_end = offset
            if self.group_commit is not None and self.on_append is not None:
                self.on_append((self.topic, self.partition))  # fetches waiting for the high watermark

    # -- reads ------------------------------------------------------------------------------

    def read(self, offset: int, max_bytes: int, read_committed: bool, min_one: bool = True) -> ReadResult:
        if offset < self.log_start_offset or offset > self.log_end_offset:
            raise KafkaError(
                ErrorCode.offset_out_of_range,
                f"offset {offset} is outside [{self.log_start_offset}, {self.log_end_offset}]",
            )
        hw, lso = self.high_watermark, self.last_stable_offset
        upper = lso if read_committed else hw
        records, end = self._read_records(offset, upper, max_bytes, min_one) if offset < upper else (b"", offset)
        aborted = None
        if read_committed:
            aborted = [a for a in self._aborted_from(offset) if a.first_offset < end]
        return ReadResult(records, hw, lso, self.log_start_offset, aborted)

    def _segment_index(self, offset: int) -> int:
        return max(bisect.bisect_right([s.base_offset for s in self.segments], offset) - 1, 0)

    def _read_records(self, offset: int, upper: int, max_bytes: int, min_one: bool) -> tuple[FileRecords | bytes, int]:
        """Whole batches from the one containing ``offset``, below ``upper`` and within ``max_bytes``
        (at least one batch when ``min_one``: KIP-74); returns them and the offset after them."""
        for seg in self.segments[self._segment_index(offset):]:
            found = seg.find(offset)
            if found is None:
                continue
            start, first = found
            if first.base_offset >= upper:
                break
            end_found = seg.find(upper) if upper < seg.next_offset else None
            limit = min(end_found[0] if end_found else seg.size, start + max_bytes)
            if limit - start >= first.size:
                end, end_offset = seg.batch_boundary(start, limit)
            elif min_one:
                end, end_offset = start + first.size, first.next_offset
            else:
                break
            return FileRecords(seg, start, end - start), end_offset
        return b"", offset

    def _aborted_from(self, offset: int) -> list[AbortedTxn]:
        i = bisect.bisect_left([a.last_offset for a in self.aborted], offset)
        return self.aborted[i:]

    def aborted_between(self, start: int, end: int) -> list[AbortedTxn]:
        """Aborted transactions with records in [start, end) (Kafka: collectAbortedTransactions)."""
        return [a for a in self.aborted if a.first_offset < end and a.last_offset >= start]

    def cleaned_segment(self, base: int) -> LogSegment:
        """A new, empty ``<base>.log.cleaned`` for the cleaner to write (shim.storage.swap)."""
        if (self.directory / swap.SWAP_FILE).exists():  # a swap failed after its commit: the next load ends it
            raise OSError(f"{self.directory}: a committed swap is waiting for the next start")
        path = swap.cleaned_path(self.directory, base, ".log")
        fs.disk.unlink(path)  # what an abandoned round left
        return LogSegment(self.directory, base, self.config.index_interval_bytes, max_size=self.config.segment_bytes,
                          log_path=path)

    def replace_segments(self, old: list[LogSegment], cleaned: LogSegment, aborted: list[AbortedTxn],
                         crash_point=None) -> bool:
        """Put the cleaned segment in place of ``old`` (shim.storage.swap), or return False if ``old``
        is no longer part of the log (retention or DeleteRecords removed some)."""
        i = next((n for n, s in enumerate(self.segments) if s is old[0]), None)
        if i is None or self.segments[i:i + len(old)] != old or self.segments[-1] in old:
            return False
        self.pending_rolls.settle()  # a roll's index files are not written over the cleaned ones
        base, end = old[0].base_offset, old[-1].next_offset
        cleaned.release_reserved()
        cleaned.flush()
        cleaned._dirty = True  # fsync even an empty file: its creation is made durable with the directory
        cleaned.flush()
        # Kafka: cleaned.setLastModified(segments.last.lastModified) -- what retention judges a segment
        # the cleaner emptied by, and what ListOffsets v0 reports
        last = os.stat(old[-1].log_path)
        os.utime(cleaned.log_path, ns=(last.st_atime_ns, last.st_mtime_ns))
        swap.write_cleaned_index(self.directory, base, b"".join(txn_index.pack(a) for a in aborted))
        swap.commit(self.directory, base, end, crash_point)
        cleaned.log_path = self.directory / segment_file_name(base, ".log")  # renamed under its open fd
        cleaned.next_offset = end
        cleaned.write_index_files()
        for seg in old:
            seg.close()
        self.segments[i:i + len(old)] = [cleaned]
        kept = [a for a in self.aborted if not base <= a.last_offset < end]
        self.aborted = sorted(kept + [a for a in aborted if a.last_offset >= self.log_start_offset],
                              key=lambda a: a.last_offset)
        return True

    def iter_batches(self) -> Iterator[bytes]:
        """Every batch from the log start, as stored (used to load internal topics)."""
        for seg in self.segments:
            for position, h in seg.iter_headers():
                if h.next_offset > self.log_start_offset:
                    yield seg.read(position, h.size)

    def timestamp_search(self, ts: int, read_committed: bool) -> TimestampSearch | None:
        """Plan the search for the first (offset, timestamp) with timestamp >= ``ts`` below the
        fetchable end (shim.storage.time_search), or None when no segment reaches ``ts``.
        Its ``run()`` may go to another thread; run it, or its descriptor stays open."""
        seg = next((s for s in self.segments if s.max_timestamp >= ts), None)
        start = seg.timestamp_search_start(ts, self.log_start_offset) if seg is not None else None
        if start is None:
            return None
        upper = self.last_stable_offset if read_committed else self.high_watermark
        return TimestampSearch(os.dup(seg.fileno()), start, seg.size, ts, self.log_start_offset, upper)

    def offset_for_timestamp(self, ts: int, read_committed: bool) -> tuple[int, int] | None:
        """The same search, run here and now."""
        search = self.timestamp_search(ts, read_committed)
        return search.run() if search is not None else None

    def max_timestamp_offset(self) -> tuple[int, int] | None:
        """(offset, timestamp) of the first record with the largest timestamp (KAFKA-16310)."""
        best = max(self.segments, key=lambda s: s.max_timestamp)
        found = best.find(best.offset_of_max_timestamp) if best.max_timestamp >= 0 else None
        if found is None:
            return None
        position, h = found
        _, records = decode_batch(best.read(position, h.size))
        top = max(records, key=lambda r: r.timestamp)
        return top.offset, top.timestamp

    # -- the log start offset and retention (shim.storage.retention) ---------------------------

    def legacy_offsets_before(self, timestamp: int, max_num_offsets: int, now_ms: int) -> list[int]:
        return retention.legacy_offsets_before(self, timestamp, max_num_offsets, now_ms)

    def delete_records(self, offset: int) -> int:
        return retention.delete_records(self, offset)

    def enforce_retention(self, now_ms: int) -> int:
        return retention.enforce_retention(self, now_ms)

    # -- load, recovery and close ------------------------------------------------------------

    def _load(self, clean: bool, checkpoint: recovery_point.Point | None) -> None:
        # one listing of the directory, read every way below (a start over 10,000 partitions
        # spent a third of its time in globs)
        names = os.listdir(self.directory)
        self.log_start_offset = log_loader.read_log_start(self, retention.LOG_START_FILE, names)
        if not self.read_only:
            tmps = [n for n in names if n.endswith(fs.TMP_SUFFIX)]  # atomic writes the broker did not finish
            for tmp in tmps:
                fs.disk.unlink(self.directory / tmp)
            # a cleaned segment's swap: completed if committed, else undone
            if swap.recover(self.directory, names) or tmps:
                names = os.listdir(self.directory)
        bases = fs.numbered(names, ".log")
        if not bases:
            bases = [self.log_start_offset]
            self._dir_dirty = not self.read_only  # its first segment file is created below
        log_loader.load_segments(self, bases, names, clean, checkpoint)
        self.log_start_offset = max(self.log_start_offset, self.segments[0].base_offset)
        log_loader.rebuild_producer_state(self, names)
        if self._dir_dirty or (clean and self._close_files_present(names)):
            self._closed_state = self._close_state()  # a new log, or one a clean close left: nothing to rewrite

    def _prune_snapshots(self, keep: int) -> None:
        for off in snapshot.offsets(self.directory)[:-keep]:
            fs.disk.unlink(snapshot.path_for(self.directory, off))

    def _close_state(self) -> tuple:
        """What a clean close writes depends on: while it is unchanged, so are those files
        (Kafka: ProducerStateManager.takeSnapshot skips a snapshot at an offset it already has)."""
        act = self.active
        return self.log_start_offset, len(self.segments), act.base_offset, act.size, self.log_end_offset

    def _close_files_present(self, names: list[str]) -> bool:
        if len(self.segments) == 1 and not self.active.size and not self.producer_state.producers:
            return True  # an empty log needs neither index files nor a snapshot to start from
        index = self.active.log_path.with_suffix(".index").name
        return (index in names and self.log_end_offset in snapshot.offsets(self.directory, names)
                and self.active.log_path.with_suffix(".timeindex").name in names)

    def close(self) -> None:
        """Clean close: everything fsynced, index files and a producer snapshot at the log end.
        Only what changed since the log was loaded or last closed is written and synced: an idle
        partition costs no fsync at all."""
        self.pending_rolls.settle()
        for seg in self.segments:
            seg.flush()  # only segments written since their last fsync
        changed = self._closed_state != self._close_state()
        if changed:
            self.active.write_index_files(sync_dir=False)
            snapshot.write(self.directory, self.log_end_offset, self.producer_state, sync_dir=False)
            self._prune_snapshots(keep=2)
        # a log created empty and left so holds nothing to lose: its names need no sync
        if changed or (self._dir_dirty and self.active.size):
            fs.disk.fsync_dir(self.directory)
            self._dir_dirty = False
        self._closed_state = self._close_state()
        for seg in self.segments:
            seg.close()

    def abandon(self) -> None:
        """Close the files and write nothing: the data directory failed (Kafka's
        LogManager.handleLogDirFailure closes the handlers of its logs, flushing none)."""
        self.pending_rolls.settle()
        for seg in self.segments:
            seg.close()

    def delete(self) -> None:
        """Remove the partition's directory (the caller makes the removal durable if it must be)."""
        self.pending_rolls.settle()
        for seg in self.segments:
            seg.close()
        fs.disk.rmtree(self.directory)
