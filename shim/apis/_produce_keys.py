"""A Produce request keyed by partition, as Kafka keys it.

Kafka's KafkaApis.handleProduceRequest (3.9 and 4.x alike) sorts a request's partitions into maps
keyed by topic-partition (by TopicIdPartition from 4.0): the records to append, and the refusals
found before the append (topic not authorized, partition unknown, ProduceRequest.validateRecords
failing). A partition the request names more than once therefore counts once: the last copy's
records are the ones appended, and ProduceResponse groups the answer by topic, one entry per
partition. The maps are merged answer first, then the refusals, so a copy refused by
validateRecords answers for the partition even when another copy of it was appended.

Requests naming every partition once (every client's) pass through untouched.
"""

from __future__ import annotations

import dataclasses
import struct
from typing import NamedTuple

from ..errors import ErrorCode, KafkaError

LOG_OVERHEAD = 12  # offset + length
MAGIC_OFFSET = 16
ATTRIBUTES_OFFSET = 21  # a 16-bit field: its codec bits in the second byte
RECORD_OVERHEAD_V0 = 14  # Kafka: LegacyRecord.RECORD_OVERHEAD_V0, the smallest size a batch may claim
ZSTD = 4
ZSTD_MIN_VERSION = 7
ONE_BATCH_VERSION = 3
_LENGTH = struct.Struct(">i").unpack_from


class RefusedCopy(NamedTuple):
    """The entry of a partition named more than once, one of whose copies validateRecords refused:
    ``append`` is the last copy that passed (None when none did), ``refusal`` the last refusal;
    ``records`` are the last copy's, for code that reads any entry."""

    index: int
    records: object
    append: object | None
    refusal: KafkaError


def keyed(request, version: int):
    """``request`` with each topic (by name, by id from v13) and each of its partitions named once,
    in the order they first appear, each partition carrying its last copy (a RefusedCopy when
    validateRecords refused one); the request itself when it names each once."""
    topics = request.topic_data
    if len(topics) == 1 and len(topics[0].partition_data) == 1 or not _repeats(topics):  # librdkafka's, then any
        return request
    by_topic: dict = {}  # topic key -> (first topic entry, {partition index -> [copies]})
    for t in topics:
        parts = by_topic.setdefault(_key(t), (t, {}))[1]
        for p in t.partition_data:
            parts.setdefault(p.index, []).append(p)
    return _replace(request, topic_data=tuple(
        _replace(t, partition_data=tuple(copies[0] if len(copies) == 1 else _sorted(copies, version)
                                         for copies in parts.values()))
        for t, parts in by_topic.values()))


def _key(t):
    topic_id = getattr(t, "topic_id", None)
    return getattr(t, "name", None) if topic_id is None else topic_id


def _repeats(topics) -> bool:
    """Whether some topic or partition is named twice (cheap for the requests clients send)."""
    if len(topics) > 1 and len({_key(t) for t in topics}) < len(topics):
        return True
    for t in topics:
        parts = t.partition_data
        if len(parts) > 1 and len({p.index for p in parts}) < len(parts):
            return True
    return False


def _sorted(copies, version: int):
    """The partition's entry: its last copy, or a RefusedCopy when validateRecords refused one."""
    passed, refusal = None, None
    for p in copies:
        error = validate_records(p.records, version)
        if error is None:
            passed = p
        else:
            refusal = error
    if refusal is None:
        return passed
    last = copies[-1]
    return RefusedCopy(last.index, last.records, passed, refusal)


def validate_records(records, version: int) -> KafkaError | None:
    """Kafka's ProduceRequest.validateRecords: from v3 exactly one batch, of magic 2, not zstd
    before v7; the batches found as MemoryRecords finds them (ByteBufferLogInputStream)."""
    if version < ONE_BATCH_VERSION or records is None:
        return None
    n = len(records)
    first = _batch_size(records, 0, n)
    if isinstance(first, KafkaError):
        return first
    if first is None:
        return KafkaError(ErrorCode.invalid_record, f"Produce requests with version {version} must have at "
                                                    "least one record batch per partition")
    if records[MAGIC_OFFSET] != 2:
        return KafkaError(ErrorCode.invalid_record, f"Produce requests with version {version} are only allowed to "
                                                    "contain record batches with magic version 2")
    if version < ZSTD_MIN_VERSION and n > ATTRIBUTES_OFFSET + 1 and records[ATTRIBUTES_OFFSET + 1] & 7 == ZSTD:
        return KafkaError(ErrorCode.unsupported_compression_type, f"Produce requests with version {version} are "
                                                                  "not allowed to use ZStandard compression")
    second = _batch_size(records, first, n)
    if isinstance(second, KafkaError):
        return second
    if second is not None:
        return KafkaError(ErrorCode.invalid_record, f"Produce requests with version {version} are only allowed to "
                                                    "contain exactly one record batch per partition")
    return None


def _batch_size(records, pos: int, n: int):
    """The size of the batch at ``pos``, None when there is none whole, a KafkaError for a size
    below the smallest or a magic above 2 (Kafka: ByteBufferLogInputStream.nextBatchSize)."""
    if n - pos < LOG_OVERHEAD:
        return None
    length = _LENGTH(records, pos + 8)[0]
    if length < RECORD_OVERHEAD_V0:
        return KafkaError(ErrorCode.corrupt_message, f"Record size {length} is less than the minimum record "
                                                     f"overhead ({RECORD_OVERHEAD_V0})")
    if n - pos <= MAGIC_OFFSET:
        return None
    magic = struct.unpack_from(">b", records, pos + MAGIC_OFFSET)[0]
    if not 0 <= magic <= 2:
        return KafkaError(ErrorCode.corrupt_message, f"Invalid magic found in record: {magic}")
    size = LOG_OVERHEAD + length
    return None if n - pos < size else size


def _replace(obj, **changes):
    return obj._replace(**changes) if hasattr(obj, "_replace") else dataclasses.replace(obj, **changes)
