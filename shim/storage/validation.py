"""Checks on a batch a client produced, in Kafka's order (ProduceRequest.validateRecords,
UnifiedLog.analyzeAndValidateRecords, LogValidator.validateBatch)."""

from __future__ import annotations

from kafka_codecs.batch import HEADER_SIZE, MAGIC, BatchHeader, Compression, crc_ok, parse_header
from kafka_codecs.records import InvalidBatch, UndecodablePayload, validate_batch

from ..errors import ErrorCode, KafkaError


def validate_client_batch(batch: bytes | bytearray, max_message_bytes: int, allow_zstd: bool = True) -> BatchHeader:
    if len(batch) < HEADER_SIZE:
        raise KafkaError(ErrorCode.corrupt_message, f"{len(batch)} bytes is shorter than a record batch header")
    h = parse_header(batch)
    if h.magic != MAGIC:
        raise KafkaError(ErrorCode.invalid_record, f"magic {h.magic} is not supported; only record batch v2")
    if h.size < len(batch):
        raise KafkaError(ErrorCode.invalid_record, "one record batch per partition is allowed per request")
    if h.size > len(batch):
        raise KafkaError(ErrorCode.corrupt_message, "the record batch is truncated")
    if h.base_offset != 0:
        raise KafkaError(ErrorCode.invalid_record, f"base offset must be 0, not {h.base_offset}")
    if h.size > max_message_bytes:
        raise KafkaError(
            ErrorCode.message_too_large, f"batch of {h.size} bytes exceeds max.message.bytes {max_message_bytes}"
        )
    if not crc_ok(batch):
        raise KafkaError(ErrorCode.corrupt_message, "record batch CRC-32C mismatch")
    if h.records_count <= 0 or h.records_count != h.last_offset_delta + 1:
        raise KafkaError(
            ErrorCode.invalid_record,
            f"records count {h.records_count} does not match last offset delta {h.last_offset_delta}",
        )
    if h.is_control:
        raise KafkaError(ErrorCode.invalid_record, "clients are not allowed to write control records")
    if h.producer_id >= 0 and h.base_sequence < 0:
        raise KafkaError(ErrorCode.invalid_record, "a batch with a producer id needs a base sequence")
    if h.timestamp_type == 1:
        raise KafkaError(ErrorCode.invalid_timestamp, "clients may not set the LogAppendTime timestamp type")
    if h.compression == Compression.ZSTD and not allow_zstd:
        raise KafkaError(ErrorCode.unsupported_compression_type, "zstd needs Produce v7 or later")
    if h.compression > Compression.ZSTD:
        raise KafkaError(ErrorCode.invalid_record, f"unknown compression codec {h.compression}")
    # Every record is read, as LogValidator does (the batch is then stored as it came).
    try:
        offsets_in_order = validate_batch(batch)
    except UndecodablePayload as exc:
        # Kafka fails the append with a KafkaException ("Failed to decompress record stream"),
        # which reaches the client as UNKNOWN_SERVER_ERROR.
        raise KafkaError(ErrorCode.unknown_server_error, f"the compressed payload does not decompress: {exc}") from exc
    except InvalidBatch as exc:
        raise KafkaError(ErrorCode.invalid_record, f"malformed record: {exc}") from exc
    if not offsets_in_order and h.compression != Compression.NONE:
        # Kafka cannot keep such a batch in place and would rebuild it; Apache Kafka 3.9 fails
        # there (its records were read without keys and values) with UNKNOWN_SERVER_ERROR.
        raise KafkaError(ErrorCode.unknown_server_error,
                         "the offset deltas of a compressed batch must run 0, 1, 2, ...")
    return h
