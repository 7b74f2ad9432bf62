"""Log compaction of one partition (Kafka: LogCleaner's Cleaner, CleanedTransactionMetadata,
MemoryRecords.filterTo), synchronous and clock-free.

A round keeps, for every key, the record with the highest offset, up to the first uncleanable
offset (the last stable offset, the active segment, min.compaction.lag.ms: see
shim.storage.cleaner_manager). It is transaction-aware as Kafka's: batches of aborted transactions
are removed; an ABORT marker stays while any batch of its transaction is still seen, a COMMIT
marker while a batch of its transaction is seen in the same group, and afterwards until their
delete horizon; the last data batch of every producer is kept (empty if all its records go) so
sequence numbers survive. Tombstones and markers get a delete horizon (KIP-534: the batch's
BaseTimestamp becomes now + delete.retention.ms and attribute bit 6 says so) the first time a round
keeps them; a round after the horizon removes them. Offsets never change: gaps appear.

A round is a generator: it yields the bytes it has read and written since the last yield, after
each chunk, so the asyncio shell can bound the I/O rate and let the event loop run in between.
"""

from __future__ import annotations

import hashlib
import heapq
from dataclasses import dataclass, field
from typing import Iterator

from kafka_codecs.batch import (
    COMPRESSION_MASK, CONTROL_FLAG, DELETE_HORIZON_FLAG, HEADER, HEADER_SIZE, LOG_OVERHEAD, MAGIC,
    TIMESTAMP_TYPE_MASK, TRANSACTIONAL_FLAG, BatchHeader, parse_header, write_crc,
)
from kafka_codecs.compression import compress
from kafka_codecs.control import ControlRecordType, read_end_txn_marker
from kafka_codecs.records import _header_and_payload, _read_record, _write_record

from .producer_state import AbortedTxn
from .segment import LogSegment

class LogChanged(Exception):
    """A segment the round reads was deleted while the round yielded: it gives up."""


def _check(seg: LogSegment) -> None:
    if seg.closed:
        raise LogChanged(f"{seg.log_path.name} was removed during the round")


MAP_ENTRY_BYTES = 140  # what one key -> offset entry of OffsetMap costs in Python (measured: ~133)


def has_delete_horizon(h: BatchHeader) -> bool:
    return bool(h.attributes & DELETE_HORIZON_FLAG)


class OffsetMap:
    """Key digest -> latest offset (Kafka: SkimpyOffsetMap, an MD5-keyed table of bounded size)."""

    def __init__(self, memory_bytes: int) -> None:
        self.capacity = max(memory_bytes // MAP_ENTRY_BYTES, 1)
        self._map: dict[bytes, int] = {}
        self.latest_offset = -1

    @staticmethod
    def _digest(key: bytes) -> bytes:
        return hashlib.blake2b(key, digest_size=16).digest()

    def __len__(self) -> int:
        return len(self._map)

    @property
    def full(self) -> bool:
        return len(self._map) >= self.capacity

    def put(self, key: bytes, offset: int) -> None:
        self._map[self._digest(key)] = offset
        self.latest_offset = max(self.latest_offset, offset)

    def get(self, key: bytes) -> int:
        return self._map.get(self._digest(key), -1)


class TransactionMetadata:
    """Kafka: CleanedTransactionMetadata -- which transactional batches and markers may go, and the
    aborted-transaction index of what is kept."""

    def __init__(self, aborted: list[AbortedTxn] = ()) -> None:
        self._pending: list[tuple[int, int, AbortedTxn]] = []
        self._seq = 0
        self.add_aborted(aborted)
        self.ongoing_committed: set[int] = set()
        self.ongoing_aborted: dict[int, list] = {}  # pid -> [AbortedTxn, last observed batch offset]
        self.cleaned_index: list[AbortedTxn] = []

    def add_aborted(self, aborted) -> None:
        """Kafka: addAbortedTransactions -- a round adds those of each segment as it reaches it (a
        transaction spanning segments comes twice; the first one seen stands)."""
        for txn in aborted:
            heapq.heappush(self._pending, (txn.first_offset, self._seq, txn))
            self._seq += 1

    def _consume_up_to(self, offset: int) -> None:
        while self._pending and self._pending[0][0] <= offset:
            txn = heapq.heappop(self._pending)[2]
            self.ongoing_aborted.setdefault(txn.producer_id, [txn, None])

    def on_control_batch(self, h: BatchHeader, kind: int | None) -> bool:
        """True if the marker may be discarded (once its delete horizon has passed)."""
        self._consume_up_to(h.last_offset)
        if kind is None:  # Kafka: an empty control batch was already cleaned, so it may go
            return True
        if kind == ControlRecordType.ABORT:
            entry = self.ongoing_aborted.pop(h.producer_id, None)
            if entry is not None and entry[1] is not None:  # batches of it still seen: keep the marker
                self.cleaned_index.append(entry[0])
                return False
            return True
        if kind == ControlRecordType.COMMIT:
            if h.producer_id in self.ongoing_committed:
                self.ongoing_committed.discard(h.producer_id)
                return False
            return True
        return False

    def on_batch(self, h: BatchHeader) -> bool:
        """True if the data batch belongs to an aborted transaction (and may be discarded)."""
        self._consume_up_to(h.last_offset)
        if not h.is_transactional:
            return False
        entry = self.ongoing_aborted.get(h.producer_id)
        if entry is not None:
            entry[1] = h.last_offset
            return True
        self.ongoing_committed.add(h.producer_id)
        return False


@dataclass
class CleanerStats:
    bytes_read: int = 0
    bytes_written: int = 0
    messages_read: int = 0
    messages_written: int = 0
    batches_removed: int = 0


@dataclass
class GroupResult:
    """One group of segments cleaned into ``output`` (a segment being written, offsets unchanged)."""

    segments: list[LogSegment]
    output: LogSegment
    aborted: list[AbortedTxn] = field(default_factory=list)


def _marker_kind(batch: bytes, h: BatchHeader) -> int | None:
    """The control record's type; None for a control batch a round left empty."""
    return read_end_txn_marker(batch)[0] if h.records_count else None


def _records(batch: bytes):
    header, payload = _header_and_payload(batch)
    pos = 0
    for _ in range(header.records_count):
        record, pos = _read_record(payload, pos, header, None)
        yield record


def build_offset_map(segments: list[LogSegment], start: int, end: int, aborted: list[AbortedTxn],
                     offset_map: OffsetMap, stats: CleanerStats, chunk: int) -> Iterator[int]:
    """Kafka: Cleaner.buildOffsetMap -- the latest offset of every key in [start, end), skipping
    aborted batches; stops early when the map is full. Yields bytes read per chunk."""
    txns = TransactionMetadata(aborted)
    since = 0
    for seg in segments:
        _check(seg)
        found = seg.find(start) if seg.base_offset < start else (0, None)
        if found is None:
            continue
        for position, h in seg.iter_headers(found[0]):
            if h.base_offset >= end:
                return
            batch = seg.read(position, h.size)
            if h.is_control:
                txns.on_control_batch(h, _marker_kind(batch, h))
            elif not txns.on_batch(h):
                for r in _records(batch):
                    if r.key is not None and start <= r.offset < end:
                        if offset_map.full and offset_map.get(r.key) < 0:
                            return  # full: clean up to what is mapped (Kafka: the map's latest offset)
                        offset_map.put(r.key, r.offset)
                    stats.messages_read += 1
            if h.last_offset >= start:
                offset_map.latest_offset = max(offset_map.latest_offset, min(h.last_offset, end - 1))
            stats.bytes_read += h.size
            since += h.size
            if since >= chunk:
                yield since
                since = 0
                _check(seg)
    if since:
        yield since


class LastRecord:
    """Kafka: LastRecord -- what of a producer must survive cleaning."""

    __slots__ = ("last_data_offset", "producer_epoch")

    def __init__(self, last_data_offset: int, producer_epoch: int) -> None:
        self.last_data_offset, self.producer_epoch = last_data_offset, producer_epoch


def _is_last_of_producer(h: BatchHeader, producers: dict[int, LastRecord]) -> bool:
    # Kafka: isBatchLastRecordOfProducer -- the batch with the producer's last sequence, or its
    # marker when no data batch is left (it carries the epoch that fences)
    last = producers.get(h.producer_id)
    if last is None:
        return False
    if last.last_data_offset >= 0:
        return h.last_offset == last.last_data_offset
    return h.is_control and h.producer_epoch == last.producer_epoch


class GroupCleaner:
    """Kafka: Cleaner.cleanSegments/cleanInto with its RecordFilter, for one group of segments."""

    def __init__(self, offset_map: OffsetMap, producers: dict[int, LastRecord], now_ms: int,
                 delete_retention_ms: int, stats: CleanerStats, upper_bound: int = -1) -> None:
        self.map, self.producers, self.now = offset_map, producers, now_ms
        self.delete_retention_ms, self.stats = delete_retention_ms, stats
        self.upper_bound = upper_bound  # the round's first uncleanable offset

    def clean(self, group: GroupResult, txns: TransactionMetadata, aborted_of, chunk: int) -> Iterator[int]:
        """``txns`` is the round's (Kafka carries it from group to group); ``aborted_of(seg, upper)``
        gives the aborted transactions of a segment's offsets up to ``upper``."""
        txns.cleaned_index = []
        since = 0
        for i, seg in enumerate(group.segments):
            _check(seg)
            upper = group.segments[i + 1].base_offset if i + 1 < len(group.segments) else seg.next_offset
            txns.add_aborted(aborted_of(seg.base_offset, upper))
            for position, h in seg.iter_headers():
                batch = seg.read(position, h.size)
                out = self._filter(batch, h, txns)
                if out is not None:
                    oh = h if out is batch else parse_header(out)
                    group.output.append((out,), oh.size, oh.base_offset, oh.last_offset, oh.max_timestamp)
                    self.stats.bytes_written += len(out)
                else:
                    self.stats.batches_removed += 1
                self.stats.bytes_read += h.size
                since += h.size + (len(out) if out is not None else 0)
                if since >= chunk:
                    yield since
                    since = 0
                    _check(seg)
        group.aborted = txns.cleaned_index
        if since:
            yield since

    def _filter(self, batch: bytes, h: BatchHeader, txns: TransactionMetadata) -> bytes | None:
        """The batch as the cleaned segment keeps it, or None (Kafka: checkBatchRetention, filterTo)."""
        horizon = h.base_timestamp if has_delete_horizon(h) else None
        if h.is_control:
            can_discard = txns.on_control_batch(h, _marker_kind(batch, h))
            discard_records = can_discard and horizon is not None and horizon <= self.now
        else:
            can_discard = discard_records = txns.on_batch(h)
        # Kafka: RETAIN_EMPTY for a producer's last batch, and for the round's last batch so the
        # cleaned log still ends where the uncleanable part begins
        retain_empty = ((h.producer_id >= 0 and _is_last_of_producer(h, self.producers))
                        or h.next_offset == self.upper_bound)
        if discard_records and not retain_empty:
            return None
        marker_for_empty_txn = can_discard and h.is_control
        if discard_records:
            kept, total = [], h.records_count
        elif h.is_control:
            kept, total = list(_records(batch)), h.records_count
        else:
            kept, total = self._retained_records(batch, horizon)
        if not kept:
            return _empty_batch(h) if retain_empty else None
        self.stats.messages_written += len(kept)
        tombstones = any(r.value is None for r in kept) and not h.is_control
        set_horizon = (tombstones or marker_for_empty_txn) and horizon is None
        if len(kept) == total and not set_horizon:
            return batch  # as stored, byte for byte
        new_horizon = self.now + self.delete_retention_ms if set_horizon else horizon
        return _rebuild(h, kept, new_horizon)

    def _retained_records(self, batch: bytes, horizon: int | None) -> tuple[list, int]:
        """Kafka: Cleaner.shouldRetainRecord for each record."""
        kept, total = [], 0
        retain_deletes = horizon is None or self.now < horizon
        for r in _records(batch):
            total += 1
            if r.offset > self.map.latest_offset:
                kept.append(r)  # past what this round mapped
            elif r.key is not None and r.offset >= self.map.get(r.key) and (r.value is not None or retain_deletes):
                kept.append(r)
        return kept, total


def _attributes(h: BatchHeader, compression: int, horizon: bool) -> int:
    return ((compression & COMPRESSION_MASK) | (h.attributes & (TIMESTAMP_TYPE_MASK | TRANSACTIONAL_FLAG | CONTROL_FLAG))
            | (DELETE_HORIZON_FLAG if horizon else 0))


def _rebuild(h: BatchHeader, records: list, horizon: int | None) -> bytes:
    """Kafka: MemoryRecords.buildRetainedRecordsInto -- the kept records with their own offsets, the
    original base offset, last offset delta, producer fields and codec; BaseTimestamp is the delete
    horizon when there is one."""
    log_append = h.timestamp_type == 1
    timestamps = [h.max_timestamp if log_append else r.timestamp for r in records]
    base_ts = horizon if horizon is not None else timestamps[0]
    body = bytearray()
    for r, ts in zip(records, timestamps):
        _write_record(body, r.offset - h.base_offset, ts - base_ts, r.key, r.value, r.headers)
    payload = compress(h.compression, body) if h.compression else body
    max_ts = h.max_timestamp if log_append else max(timestamps)
    out = bytearray(HEADER_SIZE)
    HEADER.pack_into(out, 0, h.base_offset, HEADER_SIZE - LOG_OVERHEAD + len(payload), h.partition_leader_epoch,
                     MAGIC, 0, _attributes(h, h.compression, horizon is not None), h.last_offset_delta, base_ts,
                     max_ts, h.producer_id, h.producer_epoch, h.base_sequence, len(records))
    out += payload
    write_crc(out)
    return bytes(out)


def _empty_batch(h: BatchHeader) -> bytes:
    """Kafka: DefaultRecordBatch.writeEmptyHeader -- a batch with no records that keeps the producer's
    last sequence and epoch (BaseTimestamp -1, uncompressed)."""
    out = bytearray(HEADER_SIZE)
    HEADER.pack_into(out, 0, h.base_offset, HEADER_SIZE - LOG_OVERHEAD, h.partition_leader_epoch, MAGIC, 0,
                     _attributes(h, 0, False), h.last_offset_delta, -1, h.max_timestamp, h.producer_id,
                     h.producer_epoch, h.base_sequence, 0)
    write_crc(out)
    return bytes(out)
