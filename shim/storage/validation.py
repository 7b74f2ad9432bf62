"""Checks on a batch a client produced, in Kafka's order (ProduceRequest.validateRecords,
UnifiedLog.analyzeAndValidateRecords, LogValidator.validateBatch)."""

from __future__ import annotations

from kafka_codecs.batch import (
    COMPRESSION_MASK,
    CONTROL_FLAG,
    HEADER,
    HEADER_SIZE,
    LOG_OVERHEAD,
    MAGIC,
    TIMESTAMP_TYPE_MASK,
    BatchHeader,
    Compression,
    compute_crc,
)
from kafka_codecs.native import check_batch
from kafka_codecs.records import InvalidBatch, PayloadTooLarge, UndecodablePayload, walk_batch

from ..errors import ErrorCode, KafkaError

# What the compressed batches of one Produce may decompress to: RATIO times the request's bytes,
# and never less than FLOOR. Kafka reads a compressed batch as a stream, so a zip bomb costs it time
# but no memory; here a batch's records are walked decompressed and on the event loop, so the
# amount is bounded: a few kilobytes of zstd hold gigabytes of zeros.
DECOMPRESSED_FLOOR_BYTES = 64 << 20
DECOMPRESSED_RATIO = 32
# A message set of magic 0/1 is read into a Python object per message, several times its bytes.
LEGACY_DECOMPRESSED_BYTES = 8 << 20


class DecompressionBudget:
    """The decompressed bytes one request's batches may still take (DECOMPRESSED_FLOOR_BYTES,
    DECOMPRESSED_RATIO); a batch may take at most its own share, so memory stays bounded by the
    largest batch max.message.bytes lets in, and the time by the request's size."""

    __slots__ = ("_request_bytes", "_remaining")

    def __init__(self, request_bytes: int) -> None:
        # worked out at the first compressed batch: every Produce makes one, few spend from it
        self._request_bytes, self._remaining = request_bytes, None

    @property
    def remaining(self) -> int:
        if self._remaining is None:
            self._remaining = _allowance(self._request_bytes)
        return self._remaining

    def limit(self, batch_bytes: int) -> int:
        return min(self.remaining, _allowance(batch_bytes))

    def spend(self, nbytes: int) -> None:
        self._remaining = self.remaining - nbytes


def _allowance(nbytes: int) -> int:
    return max(DECOMPRESSED_FLOOR_BYTES, DECOMPRESSED_RATIO * nbytes)


_ZSTD = int(Compression.ZSTD)  # the highest codec id


def validate_client_batch(batch: bytes | bytearray, max_message_bytes: int, allow_zstd: bool = True,
                          budget: DecompressionBudget | None = None, record_pass=None) -> BatchHeader:
    """The batch's header, parsed once here and passed along (to the record walk, the roll check
    and the append) rather than parsed again at each step; raises KafkaError in Kafka's order.
    ``budget``: the request's DecompressionBudget (a budget of its own when None). ``record_pass``:
    a log_validator.RecordPass whose facts the record walk gathers in the same pass."""
    if record_pass is None and check_batch is not None:
        # The common batch (uncompressed, valid, no record checks of a topic config) checked and
        # walked in C; any other, or one that fails there, is checked below, which says why. The
        # CRC first, as below: its pass streams the batch into the cache, where the walk, which
        # reads only each record's first bytes, then finds them (1 MB batches: about 20 µs).
        crc = compute_crc(batch)
        h = check_batch(batch, max_message_bytes, BatchHeader)
        if h is not None and h.crc == crc:
            return h
    return _validate(batch, max_message_bytes, allow_zstd, budget, record_pass)


def _validate(batch, max_message_bytes: int, allow_zstd: bool, budget, record_pass) -> BatchHeader:
    """validate_client_batch in Python: every batch, in Kafka's order of checks."""
    n = len(batch)
    if n < HEADER_SIZE:
        raise KafkaError(ErrorCode.corrupt_message, f"{n} bytes is shorter than a record batch header")
    fields = HEADER.unpack_from(batch)
    # the header's fields as locals: this runs for every batch produced
    (base_offset, batch_length, _, magic, crc, attributes, last_offset_delta, _, _, producer_id, _, base_sequence,
     records_count) = fields
    size = LOG_OVERHEAD + batch_length
    if magic != MAGIC:
        raise KafkaError(ErrorCode.invalid_record, f"magic {magic} is not supported; only record batch v2")
    if size < n:
        raise KafkaError(ErrorCode.invalid_record, "one record batch per partition is allowed per request")
    if size > n:
        raise KafkaError(ErrorCode.corrupt_message, "the record batch is truncated")
    if base_offset != 0:
        raise KafkaError(ErrorCode.invalid_record, f"base offset must be 0, not {base_offset}")
    if size > max_message_bytes:
        raise KafkaError(
            ErrorCode.message_too_large, f"batch of {size} bytes exceeds max.message.bytes {max_message_bytes}"
        )
    if crc != compute_crc(batch):
        raise KafkaError(ErrorCode.corrupt_message, "record batch CRC-32C mismatch")
    if records_count <= 0 or records_count != last_offset_delta + 1:
        raise KafkaError(
            ErrorCode.invalid_record,
            f"records count {records_count} does not match last offset delta {last_offset_delta}",
        )
    if attributes & CONTROL_FLAG:
        raise KafkaError(ErrorCode.invalid_record, "clients are not allowed to write control records")
    if producer_id >= 0 and base_sequence < 0:
        raise KafkaError(ErrorCode.invalid_record, "a batch with a producer id needs a base sequence")
    if attributes & TIMESTAMP_TYPE_MASK:
        raise KafkaError(ErrorCode.invalid_timestamp, "clients may not set the LogAppendTime timestamp type")
    compression = attributes & COMPRESSION_MASK
    if compression == _ZSTD and not allow_zstd:
        raise KafkaError(ErrorCode.unsupported_compression_type, "zstd needs Produce v7 or later")
    if compression > _ZSTD:
        raise KafkaError(ErrorCode.invalid_record, f"unknown compression codec {compression}")
    h = BatchHeader._make(fields)
    max_timestamp = _read_records(batch, h, compression, budget, record_pass)
    if max_timestamp != h.max_timestamp:
        # Kafka's LogValidator sets MaxTimestamp from the records whatever the producer wrote
        # (DefaultRecordBatch.setMaxTimestamp, in place, the CRC written again); the header given
        # here says what the log append writes (PartitionLog.append)
        h = h._replace(max_timestamp=max_timestamp)
    return h


def _read_records(batch: bytes | bytearray, h: BatchHeader, compression: int,
                  budget: DecompressionBudget | None, record_pass=None) -> int:
    """Every record is read, as LogValidator does (the batch is then stored as it came but for its
    MaxTimestamp, returned here: the largest record timestamp); what a compressed batch
    decompresses to is taken from ``budget``."""
    n = len(batch)
    if compression and budget is None:
        budget = DecompressionBudget(n)
    limit = budget.limit(n) if compression else None
    try:
        if record_pass is None:
            offsets_in_order, walked, max_timestamp = walk_batch(batch, h, limit)
        else:
            offsets_in_order, walked, max_timestamp = record_pass.walk(batch, h, limit)
    except PayloadTooLarge as exc:
        # Kafka's max.decompressed.message.bytes is refused as InvalidRecordException too
        raise KafkaError(ErrorCode.invalid_record, f"the compressed records are too large: {exc}") from exc
    except UndecodablePayload as exc:
        # Kafka fails the append with a KafkaException ("Failed to decompress record stream"),
        # which reaches the client as UNKNOWN_SERVER_ERROR.
        raise KafkaError(ErrorCode.unknown_server_error, f"the compressed payload does not decompress: {exc}") from exc
    except InvalidBatch as exc:
        raise KafkaError(ErrorCode.invalid_record, f"malformed record: {exc}") from exc
    if compression:
        budget.spend(walked)
    if not offsets_in_order and compression:
        # Kafka cannot keep such a batch in place and would rebuild it; Apache Kafka 3.9 fails
        # there (its records were read without keys and values) with UNKNOWN_SERVER_ERROR.
        raise KafkaError(ErrorCode.unknown_server_error,
                         "the offset deltas of a compressed batch must run 0, 1, 2, ...")
    return max_timestamp
