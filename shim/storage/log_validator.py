"""The topic-config checks Kafka's LogValidator makes on each record of a client batch, and the
broker-side recompression it does when the topic's compression.type differs from the batch's codec.

Only called when a topic config asks for it (``needs_record_pass``): with compression.type=producer
and no message.timestamp.before/after.max.ms the batch stays bytes, as received.
"""

from __future__ import annotations

from kafka_codecs.batch import BatchHeader, Compression, parse_header
from kafka_codecs.records import decode_batch, encode_batch

from ..errors import ErrorCode, KafkaError
from .partition_log import LogConfig

LONG_MAX = (1 << 63) - 1
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


def needs_record_pass(config: LogConfig, h: BatchHeader) -> bool:
    return _checks_timestamps(config) or target_codec(config, h) is not None


def validate_records(batch: bytes | bytearray, h: BatchHeader, config: LogConfig, now_ms: int,
                     topic_partition: str) -> tuple[bytes | bytearray, BatchHeader]:
    """The batch to append (rebuilt with the topic's codec when it differs) and its header; raises
    RecordErrors (INVALID_TIMESTAMP) as LogValidator.validateTimestamp and processRecordErrors do."""
    _, records = decode_batch(batch)
    if _checks_timestamps(config):
        _check_timestamps(records, config, now_ms)
    codec = target_codec(config, h)
    if codec is None:
        return batch, h
    rebuilt = encode_batch(records, compression=codec, producer_id=h.producer_id, producer_epoch=h.producer_epoch,
                           base_sequence=h.base_sequence, is_transactional=h.is_transactional,
                           partition_leader_epoch=h.partition_leader_epoch)
    new = parse_header(rebuilt)
    if new.size > config.max_message_bytes:  # Kafka: LogValidator, after recompression
        raise KafkaError(ErrorCode.message_too_large,
                         f"Message batch size is {new.size} bytes in append to partition {topic_partition} which "
                         f"exceeds the maximum configured size of {config.max_message_bytes}.")
    return rebuilt, new


def _check_timestamps(records, config: LogConfig, now_ms: int) -> None:
    before, after = config.timestamp_before_max_ms, config.timestamp_after_max_ms
    errors = []
    for index, r in enumerate(records):
        if r.timestamp == -1:  # RecordBatch.NO_TIMESTAMP
            continue
        diff = _jlong(now_ms - r.timestamp)
        if diff > before or _jlong(-diff) > after:
            errors.append((index, f"Timestamp {r.timestamp} of message with offset {r.offset} is out of range. "
                                  f"The timestamp should be within [{_jlong(now_ms - before)}, "
                                  f"{_jlong(now_ms + after)}]"))
    if errors:
        raise RecordErrors(ErrorCode.invalid_timestamp,
                           "One or more records have been rejected due to invalid timestamp", errors)
