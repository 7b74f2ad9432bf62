"""Message sets of magic 0 and 1 (Kafka's LegacyRecord and AbstractLegacyRecordBatch), read and written.

A message set is a run of (offset int64, size int32, message); a message is crc int32 (CRC-32 of
what follows), magic int8, attributes int8 (codec in the low 3 bits, bit 3 LogAppendTime for magic
1), timestamp int64 (magic 1 only), key and value as int32-length bytes. A compressed message wraps
a whole message set in its value; the wrapped messages are returned in order, one level deep, as
Kafka allows.
"""

from __future__ import annotations

import struct
import zlib
from typing import NamedTuple

from .compression import DecompressedTooLarge, decompress
from .records import InvalidBatch, PayloadTooLarge

NO_TIMESTAMP = -1
LOG_APPEND_TIME_FLAG = 0x08
CODEC_MASK = 0x07
_ENTRY = struct.Struct(">qi")
_V0 = struct.Struct(">IbB")
_V1 = struct.Struct(">IbBq")
LOG_OVERHEAD = _ENTRY.size


class LegacyRecord(NamedTuple):
    offset: int
    magic: int
    timestamp: int  # NO_TIMESTAMP for magic 0
    log_append_time: bool
    key: bytes | None
    value: bytes | None
    codec: int  # of the wrapper this record came in, 0 when not compressed


class CorruptMessage(InvalidBatch):
    """A message whose CRC does not match (Kafka: CORRUPT_MESSAGE)."""


def is_legacy(data) -> bool:
    """True when ``data`` starts with a message of magic 0 or 1 (the magic byte sits at offset 16 in
    both formats: after offset, size and, for messages, the CRC; a v2 batch has its magic there too)."""
    return len(data) > 16 and data[16] in (0, 1)


def read_message_set(data, *, inner: bool = False, codec: int = 0, limit: int | None = None) -> list[LegacyRecord]:
    """Every message of ``data``, compressed ones unwrapped; raises InvalidBatch on malformed input,
    PayloadTooLarge when the compressed messages decompress to more than ``limit`` bytes in all."""
    view, pos, out = memoryview(data), 0, []
    while pos < len(view):
        if len(view) - pos < LOG_OVERHEAD:
            raise InvalidBatch("truncated message set entry")
        offset, size = _ENTRY.unpack_from(view, pos)
        start, end = pos + LOG_OVERHEAD, pos + LOG_OVERHEAD + size
        if size < _V0.size + 8 or end > len(view):
            raise InvalidBatch(f"message size {size} does not fit the message set")
        record = _read_message(view[start:end], offset, codec)
        if record.codec and not codec:
            if inner:
                raise InvalidBatch("compressed message inside a compressed message")
            inner_records, size = _unwrap(record, limit)
            out.extend(inner_records)
            limit = None if limit is None else limit - size
        else:
            out.append(record)
        pos = end
    return out


def _read_message(msg: memoryview, offset: int, wrapper_codec: int) -> LegacyRecord:
    crc, magic, attributes = _V0.unpack_from(msg, 0)
    if magic not in (0, 1):
        raise InvalidBatch(f"magic {magic} in a message set of magic 0/1")
    if zlib.crc32(msg[4:]) != crc:
        raise CorruptMessage(f"message at offset {offset} fails its CRC check")
    pos, timestamp = _V0.size, NO_TIMESTAMP
    if magic == 1:
        timestamp = _V1.unpack_from(msg, 0)[3]
        pos = _V1.size
    key, pos = _bytes(msg, pos)
    value, pos = _bytes(msg, pos)
    if pos != len(msg):
        raise InvalidBatch(f"message at offset {offset} has {len(msg) - pos} bytes after its value")
    codec = attributes & CODEC_MASK
    return LegacyRecord(offset, magic, timestamp, bool(magic and attributes & LOG_APPEND_TIME_FLAG), key, value,
                        codec or wrapper_codec)


def _bytes(msg: memoryview, pos: int) -> tuple[bytes | None, int]:
    if pos + 4 > len(msg):
        raise InvalidBatch("truncated message")
    (n,) = struct.unpack_from(">i", msg, pos)
    pos += 4
    if n < 0:
        return None, pos
    if pos + n > len(msg):
        raise InvalidBatch("message field runs past its end")
    return bytes(msg[pos : pos + n]), pos + n


def _unwrap(wrapper: LegacyRecord, limit: int | None) -> tuple[list[LegacyRecord], int]:
    if wrapper.value is None:
        raise InvalidBatch("compressed message without a value")
    value = wrapper.value
    if wrapper.magic == 0 and wrapper.codec == LZ4:
        value = _fix_lz4_header_checksum(value)
    try:
        payload = decompress(wrapper.codec, value, limit=limit)
    except DecompressedTooLarge as exc:
        raise PayloadTooLarge(str(exc)) from None
    except ValueError as exc:
        raise InvalidBatch(str(exc)) from None
    inner = read_message_set(payload, inner=True, codec=wrapper.codec)
    if wrapper.magic == 1 and wrapper.log_append_time:
        # Kafka: the wrapper's LogAppendTime timestamp stands for every inner message
        inner = [r._replace(timestamp=wrapper.timestamp, log_append_time=True) for r in inner]
    return inner, len(payload)


LZ4 = 3
_P1, _P2, _P3, _P4, _P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393


def _fix_lz4_header_checksum(frame: bytes) -> bytes:
    """Magic 0 producers wrote the LZ4 frame's header checksum over the magic number too, and Kafka
    reads them without checking it (KafkaLZ4BlockInputStream, ignoreFlagDescriptorChecksum): the
    checksum is set right here so that a standard frame reader takes the frame."""
    if len(frame) < 7 or frame[:4] != b"\x04\x22\x4d\x18":
        return frame
    end = 6 + (8 if frame[4] & 0x08 else 0)
    if len(frame) <= end:
        return frame
    return frame[:end] + bytes([(_xxh32(frame[4:end]) >> 8) & 0xFF]) + frame[end + 1 :]


def _xxh32(data: bytes, seed: int = 0) -> int:
    """xxHash32 of a short input (an LZ4 frame descriptor: at most 10 bytes)."""
    mask = 0xFFFFFFFF

    def rotl(x, r):
        return ((x << r) | (x >> (32 - r))) & mask
    h = (seed + _P5 + len(data)) & mask
    pos = 0
    while pos + 4 <= len(data):
        (k,) = struct.unpack_from("<I", data, pos)
        h = (rotl((h + k * _P3) & mask, 17) * _P4) & mask
        pos += 4
    for b in data[pos:]:
        h = (rotl((h + b * _P5) & mask, 11) * _P1) & mask
    h ^= h >> 15
    h = (h * _P2) & mask
    h ^= h >> 13
    h = (h * _P3) & mask
    return h ^ (h >> 16)


def write_message_set(records, magic: int) -> bytes:
    """Uncompressed messages of ``magic`` at their own offsets (records: LegacyRecord-like)."""
    return b"".join(_entry(r.offset, _message(magic, 0, r.timestamp, r.log_append_time, r.key, r.value))
                    for r in records)


def _entry(offset: int, message: bytes) -> bytes:
    return _ENTRY.pack(offset, len(message)) + message


def _message(magic: int, codec: int, timestamp: int, log_append_time: bool, key, value) -> bytes:
    attributes = codec | (LOG_APPEND_TIME_FLAG if magic == 1 and log_append_time else 0)
    head = struct.pack(">bBq", magic, attributes, timestamp) if magic == 1 else struct.pack(">bB", magic, attributes)
    body = head + _field(key) + _field(value)
    return struct.pack(">I", zlib.crc32(body)) + body


def _field(data) -> bytes:
    return b"\xff\xff\xff\xff" if data is None else struct.pack(">i", len(data)) + bytes(data)


def up_convert(data, limit: int | None = None) -> bytes:
    """A magic 0/1 message set as one v2 batch (Kafka's LogValidator with toMagic 2): the records'
    keys, values and timestamps, compressed again with the codec they came in. ``limit``: as for
    read_message_set."""
    from .records import encode_batch

    records = read_message_set(data, limit=limit)
    if not records:
        raise InvalidBatch("a message set without messages")
    codec = records[0].codec
    fields = [(r.key, r.value, (), r.timestamp) for r in records]
    return encode_batch(fields, compression=codec, timestamp_type=int(records[0].log_append_time))


def down_convert(data, magic: int, from_offset: int = 0) -> bytes:
    """v2 batches as messages of ``magic`` (Kafka's RecordsUtil.downConvert for Fetch v0-3): control
    batches dropped, records before ``from_offset`` skipped, headers lost, each batch uncompressed
    (Kafka keeps each batch's codec on its wrapper message); a trailing partial batch is left out."""
    from .batch import CONTROL_FLAG, TIMESTAMP_TYPE_MASK, iter_batches
    from .records import decode_batch

    out = []
    view = memoryview(data)
    for pos, h in list(iter_batches(view)):
        if h.attributes & CONTROL_FLAG:
            continue
        _, records = decode_batch(view[pos : pos + h.size])
        log_append = bool(h.attributes & TIMESTAMP_TYPE_MASK)
        out.append(write_message_set(
            [LegacyRecord(r.offset, magic, r.timestamp if magic else NO_TIMESTAMP, log_append, r.key, r.value, 0)
             for r in records if r.offset >= from_offset], magic))
    return b"".join(out)
