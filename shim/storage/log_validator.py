"""The topic-config checks Kafka's LogValidator makes on each record of a client batch, and the
broker-side recompression it does when the topic's compression.type differs from the batch's codec.

Only called when a topic config asks for it (``RecordPass.of``): with compression.type=producer, no
compaction and no message.timestamp.before/after.max.ms the batch stays bytes, as received. The
records are looked at in the record walk's single pass (kafka_codecs.records.scan_batch), in C.
"""

from __future__ import annotations

import asyncio
import functools

from kafka_codecs.batch import (
    COMPRESSION_MASK,
    HEADER,
    HEADER_SIZE,
    LOG_OVERHEAD,
    MAGIC,
    TRANSACTIONAL_FLAG,
    BatchHeader,
    Compression,
    parse_header,
    write_crc,
)
from kafka_codecs.compression import compress
from kafka_codecs.records import _header_and_payload, _read_record, _write_record, scan_batch, walk_batch

from ..errors import ErrorCode, KafkaError
from .partition_log import LogConfig

LONG_MAX = (1 << 63) - 1
# A batch recompressed from this many bytes of records is rebuilt and compressed on a worker thread
# (gzip takes about 100 ms a mebibyte, lz4 at Kafka's level 9 about 70); smaller ones on the loop.
OFF_LOOP_BYTES = 256 << 10
# Kafka lists every bad record; past this many a response would only grow (a crafted batch can hold
# millions of records), so the rest are left out of RecordErrors (the batch is refused all the same).
MAX_RECORD_ERRORS = 1000
CODECS = {"uncompressed": Compression.NONE, "gzip": Compression.GZIP, "snappy": Compression.SNAPPY,
          "lz4": Compression.LZ4, "zstd": Compression.ZSTD}


class RecordErrors(KafkaError):
    """Kafka's RecordValidationException: the batch is refused, with one error per bad record
    (KIP-467: ProduceResponse RecordErrors, batch_index and message)."""

    def __init__(self, code: ErrorCode, message: str, record_errors: list[tuple[int, str]]) -> None:
        super().__init__(code, message)
        self.record_errors = record_errors


def _jlong(value: int) -> int:
    """Java long arithmetic (Kafka prints now + Long.MAX_VALUE as it wraps)."""
    return (value + (1 << 63)) % (1 << 64) - (1 << 63)


def target_codec(config: LogConfig, h: BatchHeader) -> int | None:
    """The codec the broker must rewrite the batch with, or None to keep it as sent."""
    codec = CODECS.get(config.compression_type)
    return None if codec is None or codec == h.compression else codec


def _checks_timestamps(config: LogConfig) -> bool:
    return not config.log_append_time and (config.timestamp_before_max_ms < LONG_MAX
                                           or config.timestamp_after_max_ms < LONG_MAX)


def _may_break_timestamp_bounds(config: LogConfig, h: BatchHeader, now_ms: int | None) -> bool:
    """Whether a record of the batch may be out of the timestamp bounds. With only the after bound
    set (Kafka 4's default of an hour, KIP-1030) the batch's MaxTimestamp answers for every record,
    so a batch within it keeps the bytes path; the records are read only to name the ones at fault.
    The header's MaxTimestamp is the producer's word until the walk has read the records' own
    (RecordPass.walk)."""
    if not _checks_timestamps(config):
        return False
    if config.timestamp_before_max_ms < LONG_MAX or now_ms is None:
        return True
    return _jlong(h.max_timestamp - now_ms) > config.timestamp_after_max_ms


def needs_record_pass(config: LogConfig, h: BatchHeader, now_ms: int | None = None) -> bool:
    if config.compression_type != "producer" and target_codec(config, h) is not None:
        return True
    return "compact" in config.cleanup_policy or _may_break_timestamp_bounds(config, h, now_ms)

class RecordPass:
    """The record checks a topic config asks for (LogValidator: a compacted topic's key check,
    message.timestamp.before/after.max.ms, recompression to the topic's compression.type). Their
    facts are gathered by the record walk every produced batch gets anyway (``walk``, called by
    validation.validate_client_batch; kafka_codecs.records.scan_batch, in C when built), so that
    ``apply`` looks at no record in Python unless a batch must be rebuilt from records written
    otherwise than the broker writes them."""

    def __init__(self, config: LogConfig, now_ms: int) -> None:
        self.config, self.now, self.scan = config, now_ms, None

    @classmethod
    def of(cls, config: LogConfig, now_ms: int) -> RecordPass | None:
        """None when the topic's config asks for no record checks (the batch stays as sent)."""
        # config.compact and _checks_timestamps(config), read in place: this runs for every batch
        if config.compression_type == "producer" and "compact" not in config.cleanup_policy and (
                config.log_append_time
                or config.timestamp_before_max_ms >= LONG_MAX and config.timestamp_after_max_ms >= LONG_MAX):
            return None
        return cls(config, now_ms)

    def walk(self, batch, h: BatchHeader, limit: int | None) -> tuple[bool, int, int]:
        """walk_batch's answer (offsets in order, bytes walked, the records' MaxTimestamp), the
        facts kept for ``apply``; the plain walk when the batch's header shows that no check
        applies to it. A header understating its MaxTimestamp is found out by that pass, and the
        records are scanned again as their true MaxTimestamp asks (Kafka checks every record)."""
        c = self.config
        checked = _may_break_timestamp_bounds(c, h, self.now)
        answer = self._walk(batch, h, limit, checked)
        if answer[2] != h.max_timestamp and not checked:
            true_h = h._replace(max_timestamp=answer[2])
            if _may_break_timestamp_bounds(c, true_h, self.now):
                answer = self._walk(batch, true_h, limit, True)
        return answer

    def _walk(self, batch, h: BatchHeader, limit: int | None, check_timestamps: bool) -> tuple[bool, int, int]:
        c = self.config
        if not check_timestamps and not needs_record_pass(c, h, self.now):
            self.scan = None
            return walk_batch(batch, h, limit)
        self.scan = scan_batch(batch, h, limit, c.compact, check_timestamps, self.now, c.timestamp_before_max_ms,
                               c.timestamp_after_max_ms, MAX_RECORD_ERRORS)
        return self.scan.in_order, self.scan.walked, self.scan.max_timestamp

    def apply(self, batch: bytes | bytearray, h: BatchHeader, topic_partition: str) -> tuple[bytes | bytearray,
                                                                                              BatchHeader]:
        """The batch to append (rebuilt with the topic's codec when it differs) and its header;
        raises RecordErrors as LogValidator.processRecordErrors does."""
        if self.scan is None:
            return batch, h
        _raise_record_errors(self.scan, self.config, self.now, topic_partition)
        codec = target_codec(self.config, h)
        if codec is None:
            return batch, h
        scan = self.scan
        if scan.canonical:  # the records are already as a rebuild writes them: compress them as they are
            body, base_ts = scan.payload, h.base_timestamp
        else:
            body, base_ts = _rebuild_body(batch)
        return _recompressed(h, codec, body, base_ts, scan.max_timestamp, self.config, topic_partition)


    def off_loop(self, h: BatchHeader) -> bool:
        """Whether the batch is recompressed, and large enough to be on a worker thread."""
        return (self.scan is not None and self.scan.walked >= OFF_LOOP_BYTES
                and target_codec(self.config, h) is not None)

    def off_loop_job(self, batch, h: BatchHeader, topic_partition: str):
        """For a batch ``off_loop`` names: RecordErrors now, else the rebuild and compression to run
        on a worker thread (run_off_loop), over a copy of what it reads (a decompressor may reuse
        its buffer, and the request's frame is not kept)."""
        _raise_record_errors(self.scan, self.config, self.now, topic_partition)
        scan = self.scan
        source = bytes(scan.payload) if scan.canonical else bytes(batch)
        return functools.partial(_rebuild_off_loop, h, target_codec(self.config, h), scan.canonical,
                                 scan.max_timestamp, source, self.config.compression_levels)


async def run_off_loop(job, config: LogConfig, topic_partition: str) -> tuple[bytearray, BatchHeader]:
    """An off_loop_job's batch, built on a worker thread, and its header; its size checked here."""
    rebuilt = await asyncio.get_running_loop().run_in_executor(None, job)
    return _checked_size(rebuilt, config, topic_partition)


def _rebuild_off_loop(h: BatchHeader, codec: int, canonical: bool, max_ts: int, source: bytes,
                      levels: tuple) -> bytearray:
    body, base_ts = (source, h.base_timestamp) if canonical else _rebuild_body(source)
    return _batch(h, codec, body, base_ts, max_ts, levels)


def validate_records(batch: bytes | bytearray, h: BatchHeader, config: LogConfig, now_ms: int,
                     topic_partition: str) -> tuple[bytes | bytearray, BatchHeader]:
    """RecordPass on a batch read already: the batch to append and its header, or RecordErrors."""
    record_pass = RecordPass(config, now_ms)
    record_pass.walk(batch, h, None)
    return record_pass.apply(batch, h, topic_partition)


def _raise_record_errors(scan, config: LogConfig, now_ms: int, topic_partition: str) -> None:
    """Kafka: LogValidator.validateRecord gives a record without a key (compacted topic) that
    error alone, else its timestamp's; processRecordErrors refuses the batch with INVALID_TIMESTAMP
    when any timestamp is at fault, else INVALID_RECORD."""
    keys = scan.null_keys if config.compact else []
    if not keys and not scan.bad_timestamps:
        return
    before, after = config.timestamp_before_max_ms, config.timestamp_after_max_ms
    key_message = f"Compacted topic cannot accept message without key in topic partition {topic_partition}."
    errors = sorted([(i, key_message) for i in keys] + [
        (i, f"Timestamp {ts} of message with offset {offset} is out of range. The timestamp should be within "
            f"[{_jlong(now_ms - before)}, {_jlong(now_ms + after)}]") for i, ts, offset in scan.bad_timestamps])
    errors = errors[:MAX_RECORD_ERRORS]
    if scan.bad_timestamps:
        raise RecordErrors(ErrorCode.invalid_timestamp,
                           "One or more records have been rejected due to invalid timestamp", errors)
    shown = ", ".join(f"RecordError(batchIndex={i}, message='{m}')" for i, m in errors[:3])
    raise RecordErrors(ErrorCode.invalid_record, f"One or more records have been rejected due to "
                       f"{scan.null_key_count} record errors in total, and only showing the first three "
                       f"errors at most: [{shown}]", errors)


def _rebuild_body(batch) -> tuple[bytearray, int]:
    """The records section as MemoryRecordsBuilder writes it again (offset deltas 0, 1, 2, ...,
    timestamp deltas from the first record's, shortest varints), one record at a time so that
    memory stays within the decompressed payload and its copy; and its base timestamp."""
    body = bytearray()
    base_ts = None
    for index, r in enumerate(_iter_records(batch)):
        base_ts = r.timestamp if base_ts is None else base_ts  # MemoryRecordsBuilder: the first record's
        _write_record(body, index, r.timestamp - base_ts, r.key, r.value, r.headers)
    return body, base_ts


def _recompressed(h: BatchHeader, codec: int, body, base_ts: int, max_ts: int, config: LogConfig,
                  topic_partition: str) -> tuple[bytearray, BatchHeader]:
    return _checked_size(_batch(h, codec, body, base_ts, max_ts, config.compression_levels), config, topic_partition)


def _checked_size(rebuilt: bytearray, config: LogConfig, topic_partition: str) -> tuple[bytearray, BatchHeader]:
    new = parse_header(rebuilt)
    if new.size > config.max_message_bytes:  # Kafka: LogValidator, after recompression
        raise KafkaError(ErrorCode.message_too_large,
                         f"Message batch size is {new.size} bytes in append to partition {topic_partition} which "
                         f"exceeds the maximum configured size of {config.max_message_bytes}.")
    return rebuilt, new


def _iter_records(batch):
    header, payload = _header_and_payload(batch)
    pos = 0
    for _ in range(header.records_count):
        record, pos = _read_record(payload, pos, header, None)
        yield record


def _level(codec: int, levels: tuple) -> int | None:
    """The topic's level for ``codec`` (KIP-390: compression.gzip/lz4/zstd.level)."""
    gzip, lz4, zstd = levels
    return {Compression.GZIP: gzip, Compression.LZ4: lz4, Compression.ZSTD: zstd}.get(codec)


def _batch(h: BatchHeader, codec: int, body: bytearray, base_ts: int, max_ts: int, levels: tuple) -> bytearray:
    """A v2 batch of the records in ``body`` with ``h``'s producer fields (Kafka keeps them when it
    recompresses: LogValidator.buildRecordsAndAssignOffsets), CRC included."""
    payload = compress(codec, body, level=_level(codec, levels))
    attributes = (codec & COMPRESSION_MASK) | (TRANSACTIONAL_FLAG if h.is_transactional else 0)
    out = bytearray(HEADER_SIZE)
    HEADER.pack_into(out, 0, 0, HEADER_SIZE - LOG_OVERHEAD + len(payload), h.partition_leader_epoch, MAGIC, 0,
                     attributes, h.last_offset_delta, base_ts, max_ts, h.producer_id, h.producer_epoch,
                     h.base_sequence, h.records_count)
    out += payload
    write_crc(out)
    return out
