"""Record batch v2 header (org.apache.kafka.common.record.DefaultRecordBatch).

Everything here works on the fixed 61-byte header with struct, so the broker
can route, stamp and check batches without touching the records.

Layout (offsets in bytes)::

     0 BaseOffset int64              27 BaseTimestamp int64
     8 BatchLength int32             35 MaxTimestamp int64
    12 PartitionLeaderEpoch int32    43 ProducerId int64
    16 Magic int8                    51 ProducerEpoch int16
    17 CRC uint32 (CRC-32C)          53 BaseSequence int32
    21 Attributes int16              57 RecordsCount int32
    23 LastOffsetDelta int32         61 Records...

The CRC covers Attributes to the end, so Magic is not protected by it.
"""

import struct
from enum import IntEnum
from typing import Iterator, NamedTuple

HEADER = struct.Struct(">qiibIhiqqqhii")
HEADER_SIZE = HEADER.size  # 61
MAGIC = 2

# BatchLength counts the bytes after itself (DefaultRecordBatch.LOG_OVERHEAD).
LOG_OVERHEAD = 12
BASE_OFFSET_OFFSET = 0
LENGTH_OFFSET = 8
PARTITION_LEADER_EPOCH_OFFSET = 12
CRC_OFFSET = 17
# The CRC starts at Attributes so that the broker can assign BaseOffset and
# PartitionLeaderEpoch without recomputing it.
ATTRIBUTES_OFFSET = 21
MAX_TIMESTAMP_OFFSET = 35

COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_FLAG = 0x10
CONTROL_FLAG = 0x20
DELETE_HORIZON_FLAG = 0x40

NO_SEQUENCE = -1
INT32_MAX = (1 << 31) - 1

_INT64 = struct.Struct(">q")
_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_UINT32 = struct.Struct(">I")
_ATTRS_AND_MAX_TS = struct.Struct(">h12xq")


class Compression(IntEnum):
    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4


class TimestampType(IntEnum):
    CREATE_TIME = 0
    LOG_APPEND_TIME = 1


class BatchHeader(NamedTuple):
    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int

    @property
    def size(self) -> int:
        return LOG_OVERHEAD + self.batch_length

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1

    @property
    def compression(self) -> int:
        return self.attributes & COMPRESSION_MASK

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_FLAG)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_FLAG)

    @property
    def timestamp_type(self) -> int:
        return (self.attributes & TIMESTAMP_TYPE_MASK) >> 3

    @property
    def last_sequence(self) -> int:
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return increment_sequence(self.base_sequence, self.last_offset_delta)


def increment_sequence(sequence: int, increment: int) -> int:
    """Sequence numbers wrap from INT32_MAX to 0 (DefaultRecordBatch.incrementSequence)."""
    if sequence > INT32_MAX - increment:
        return increment - (INT32_MAX - sequence) - 1
    return sequence + increment


def parse_header(buf, pos: int = 0) -> BatchHeader:
    if len(buf) - pos < HEADER_SIZE:
        raise ValueError(f"need {HEADER_SIZE} bytes for a batch header, have {len(buf) - pos}")
    return BatchHeader._make(HEADER.unpack_from(buf, pos))


_crc32c = None


def compute_crc(batch) -> int:
    global _crc32c
    if _crc32c is None:
        # Imported at the first CRC, not at start: the crc32c package looks its own version up
        # with importlib.metadata when imported, about a tenth of a broker's start-up work.
        from crc32c import crc32c as _crc32c
    return _crc32c(memoryview(batch)[ATTRIBUTES_OFFSET:])


def write_crc(batch) -> None:
    _UINT32.pack_into(batch, CRC_OFFSET, compute_crc(batch))


def crc_ok(batch) -> bool:
    if len(batch) < HEADER_SIZE:
        return False
    return _UINT32.unpack_from(batch, CRC_OFFSET)[0] == compute_crc(batch)


def stamp(batch, base_offset: int, partition_leader_epoch: int) -> None:
    """Assign the broker-owned fields in place; the CRC stays valid."""
    _INT64.pack_into(batch, BASE_OFFSET_OFFSET, base_offset)
    _INT32.pack_into(batch, PARTITION_LEADER_EPOCH_OFFSET, partition_leader_epoch)


def set_max_timestamp(batch, ts: int, timestamp_type: int = TimestampType.LOG_APPEND_TIME) -> None:
    """Rewrite MaxTimestamp and the timestamp-type bit, then the CRC.

    Mirrors DefaultRecordBatch.setMaxTimestamp: with LOG_APPEND_TIME readers
    take every record's timestamp from MaxTimestamp, so both must change
    together.  Does nothing (no CRC pass) when neither would change.
    """
    attributes, current = _ATTRS_AND_MAX_TS.unpack_from(batch, ATTRIBUTES_OFFSET)
    new_attributes = (attributes & ~TIMESTAMP_TYPE_MASK) | (TIMESTAMP_TYPE_MASK if timestamp_type else 0)
    if new_attributes == attributes and current == ts:
        return
    _INT16.pack_into(batch, ATTRIBUTES_OFFSET, new_attributes)
    _INT64.pack_into(batch, MAX_TIMESTAMP_OFFSET, ts)
    write_crc(batch)


def iter_batches(buf, pos: int = 0) -> Iterator[tuple[int, BatchHeader]]:
    """Yield (position, header) for each complete batch from pos on.

    Stops at a trailing partial batch, which fetch responses may legitimately
    end with (the broker cuts at max_bytes).  A length too small to hold a
    header is corruption, not truncation, and raises ValueError.
    """
    end = len(buf)
    while end - pos >= LOG_OVERHEAD:
        length = _INT32.unpack_from(buf, pos + LENGTH_OFFSET)[0]
        if length < HEADER_SIZE - LOG_OVERHEAD:
            raise ValueError(f"batch at {pos} has invalid length {length}")
        size = LOG_OVERHEAD + length
        if end - pos < size:
            return
        yield pos, BatchHeader._make(HEADER.unpack_from(buf, pos))
        pos += size


def _seek_timestamp_py(buf, target: int) -> tuple[int, int]:
    """kafka_codecs._walk.seek_timestamp in Python: (position of the first batch wholly in ``buf``
    whose MaxTimestamp is >= ``target``, or -1; where the walk stopped). Only headers are read."""
    end, pos = len(buf), 0
    length_of, max_ts_of = _INT32.unpack_from, _INT64.unpack_from
    while end - pos >= HEADER_SIZE:
        length = length_of(buf, pos + LENGTH_OFFSET)[0]
        if length < HEADER_SIZE - LOG_OVERHEAD:
            raise ValueError(f"batch at {pos} has an invalid length")
        size = LOG_OVERHEAD + length
        if size > end - pos:
            break
        if max_ts_of(buf, pos + MAX_TIMESTAMP_OFFSET)[0] >= target:
            return pos, pos + size
        pos += size
    return -1, pos


try:
    from ._walk import seek_timestamp
except ImportError:  # not built: the same answers, a few hundred times slower per batch
    seek_timestamp = _seek_timestamp_py
