"""The topic-config checks Kafka's LogValidator makes on each record of a client batch, and the
broker-side recompression it does when the topic's compression.type differs from the batch's codec.

Only called when a topic config asks for it (``needs_record_pass``): with compression.type=producer
and no message.timestamp.before/after.max.ms the batch stays bytes, as received.
"""

from __future__ import annotations

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
from kafka_codecs.records import _header_and_payload, _read_record, _write_record

from ..errors import ErrorCode, KafkaError
from .partition_log import LogConfig

LONG_MAX = (1 << 63) - 1
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
    set (Kafka 4's default of an hour, KIP-1030) the header's MaxTimestamp answers for every record,
    so a batch within it keeps the bytes path; the records are read only to name the ones at fault."""
    if not _checks_timestamps(config):
        return False
    if config.timestamp_before_max_ms < LONG_MAX or now_ms is None:
        return True
    return _jlong(h.max_timestamp - now_ms) > config.timestamp_after_max_ms


def needs_record_pass(config: LogConfig, h: BatchHeader, now_ms: int | None = None) -> bool:
    if config.compression_type != "producer" and target_codec(config, h) is not None:
        return True
    return "compact" in config.cleanup_policy or _may_break_timestamp_bounds(config, h, now_ms)


def _key_errors(batch, topic_partition: str) -> list[tuple[int, str]]:
    """Kafka: LogValidator.validateKey -- a compacted topic refuses records without a key."""
    errors = []
    for index, r in enumerate(_iter_records(batch)):
        if r.key is None and len(errors) < MAX_RECORD_ERRORS:
            errors.append((index, f"Compacted topic cannot accept message without key in topic partition "
                                  f"{topic_partition}."))
    return errors


def validate_records(batch: bytes | bytearray, h: BatchHeader, config: LogConfig, now_ms: int,
                     topic_partition: str) -> tuple[bytes | bytearray, BatchHeader]:
    """The batch to append (rebuilt with the topic's codec when it differs) and its header; raises
    RecordErrors (INVALID_TIMESTAMP) as LogValidator.validateTimestamp and processRecordErrors do.

    One pass over the records, each decoded and re-encoded in turn, so that memory stays within
    the decompressed payload and its copy (no list of every record of a huge batch)."""
    if config.compact:
        key_errors = _key_errors(batch, topic_partition)
        if key_errors:  # Kafka: processRecordErrors, INVALID_RECORD unless a timestamp is at fault
            shown = ", ".join(f"RecordError(batchIndex={i}, message='{m}')" for i, m in key_errors[:3])
            raise RecordErrors(ErrorCode.invalid_record, f"One or more records have been rejected due to "
                               f"{len(key_errors)} record errors in total, and only showing the first three "
                               f"errors at most: [{shown}]", key_errors)
    codec = target_codec(config, h)
    check = _checks_timestamps(config)
    before, after = config.timestamp_before_max_ms, config.timestamp_after_max_ms
    errors: list[tuple[int, str]] = []
    body = bytearray() if codec is not None else None
    base_ts = max_ts = None
    for index, r in enumerate(_iter_records(batch)):
        if check and r.timestamp != -1:  # RecordBatch.NO_TIMESTAMP is never out of range
            diff = _jlong(now_ms - r.timestamp)
            if (diff > before or _jlong(-diff) > after) and len(errors) < MAX_RECORD_ERRORS:
                errors.append((index, f"Timestamp {r.timestamp} of message with offset {r.offset} is out of range. "
                                      f"The timestamp should be within [{_jlong(now_ms - before)}, "
                                      f"{_jlong(now_ms + after)}]"))
        if body is not None and not errors:
            base_ts = r.timestamp if base_ts is None else base_ts  # MemoryRecordsBuilder: the first record's
            max_ts = r.timestamp if max_ts is None else max(max_ts, r.timestamp)
            _write_record(body, index, r.timestamp - base_ts, r.key, r.value, r.headers)
    if errors:
        raise RecordErrors(ErrorCode.invalid_timestamp,
                           "One or more records have been rejected due to invalid timestamp", errors)
    if body is None:
        return batch, h
    rebuilt = _batch(h, codec, body, base_ts, max_ts, config.compression_levels)
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
