"""Records inside a v2 batch (org.apache.kafka.common.record.DefaultRecord).

Record layout, all varints zig-zag encoded::

    Length varint             bytes after this field
    Attributes int8           unused, written as 0
    TimestampDelta varlong    relative to BaseTimestamp
    OffsetDelta varint        relative to BaseOffset
    KeyLength varint, Key     negative length means null
    ValueLength varint, Value
    HeaderCount varint, then [KeyLength varint, Key utf-8, ValueLength varint, Value]
"""

from collections.abc import Sequence
from typing import NamedTuple

from .batch import (
    COMPRESSION_MASK,
    CONTROL_FLAG,
    HEADER,
    HEADER_SIZE,
    LOG_OVERHEAD,
    MAGIC,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG,
    BatchHeader,
    Compression,
    parse_header,
    write_crc,
)
from .compression import compress, decompress
from .varint import decode_varint, decode_varlong, encode_varint, encode_varlong


class InvalidBatch(ValueError):
    """A batch that Kafka would reject as corrupt (InvalidRecordException)."""


class Header(NamedTuple):
    key: str
    value: bytes | None


class Record(NamedTuple):
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...] = ()


def _header_and_payload(batch):
    """The batch's header and its records section, decompressed; InvalidBatch for a bad frame or
    a payload that does not decompress."""
    try:
        header = parse_header(batch)
    except ValueError as exc:
        raise InvalidBatch(str(exc)) from None
    _check_frame(header, len(batch))
    body = memoryview(batch)[HEADER_SIZE : header.size]
    try:
        return header, decompress(header.compression, body)
    except ValueError as exc:
        raise InvalidBatch(str(exc)) from None


def decode_batch(batch) -> tuple[BatchHeader, list[Record]]:
    """Validate and decode one whole batch (exactly one, nothing after it).

    The CRC is not checked here: the broker runs crc_ok on every batch anyway,
    and only needs this full decode for compressed ones.
    """
    header, body = _header_and_payload(batch)
    # With LOG_APPEND_TIME every record carries the batch's MaxTimestamp
    # (DefaultRecordBatch: logAppendTime passed to DefaultRecord.readFrom).
    log_append_time = header.max_timestamp if header.timestamp_type else None
    try:
        records = _read_records(body, header, log_append_time)
    except InvalidBatch:
        raise
    except ValueError as exc:  # truncated varints, bad utf-8 header keys
        raise InvalidBatch(f"malformed record: {exc}") from None
    return header, records


def _check_frame(header: BatchHeader, available: int) -> None:
    if header.magic != MAGIC:
        raise InvalidBatch(f"unsupported magic {header.magic}")
    if header.size < HEADER_SIZE or header.size != available:
        raise InvalidBatch(f"batch length {header.batch_length} does not match the {available} bytes given")
    if header.records_count < 0:
        raise InvalidBatch(f"negative record count {header.records_count}")


def _read_records(body: bytes, header: BatchHeader, log_append_time: int | None) -> list[Record]:
    records = []
    pos, end = 0, len(body)
    for _ in range(header.records_count):
        if pos >= end:
            raise InvalidBatch(f"batch declares {header.records_count} records, found {len(records)}")
        record, pos = _read_record(body, pos, header, log_append_time)
        records.append(record)
    if pos != end:
        raise InvalidBatch(f"{end - pos} bytes left after {header.records_count} records")
    return records


def _read_record(buf: bytes, pos: int, header: BatchHeader, log_append_time: int | None) -> tuple[Record, int]:
    length, pos = decode_varint(buf, pos)
    start = pos
    if length < 0 or start + length > len(buf):
        raise InvalidBatch(f"record length {length} exceeds the batch")
    pos += 1  # Attributes: unused since magic 2
    ts_delta, pos = decode_varlong(buf, pos)
    offset_delta, pos = decode_varint(buf, pos)
    key, pos = _read_bytes(buf, pos)
    value, pos = _read_bytes(buf, pos)
    count, pos = decode_varint(buf, pos)
    if count < 0:
        raise InvalidBatch(f"negative header count {count}")
    headers = []
    for _ in range(count):
        h_key, pos = _read_bytes(buf, pos)
        if h_key is None:
            raise InvalidBatch("null header key")
        h_value, pos = _read_bytes(buf, pos)
        headers.append(Header(h_key.decode(), h_value))
    if pos - start != length:
        raise InvalidBatch(f"record declares {length} bytes but holds {pos - start}")
    timestamp = header.base_timestamp + ts_delta if log_append_time is None else log_append_time
    return Record(header.base_offset + offset_delta, timestamp, key, value, tuple(headers)), pos


def validate_batch(batch) -> None:
    """Accept or reject one whole batch exactly as decode_batch does, without decoding it.

    Raises InvalidBatch in the same cases as decode_batch (bad frame,
    corrupt payload, record count, record lengths, malformed varints, field
    lengths, null or non-utf-8 header keys, trailing bytes) but builds no
    Record or Header objects: field bodies are skipped by their lengths.
    The CRC is not checked here either.
    """
    header, body = _header_and_payload(batch)
    try:
        _walk_records(body, header.records_count)
    except InvalidBatch:
        raise
    except IndexError:  # a varint ran off the end of the payload
        raise InvalidBatch("malformed record: truncated varint") from None
    except ValueError as exc:  # bad utf-8 header keys
        raise InvalidBatch(f"malformed record: {exc}") from None


def _walk_records(buf: bytes, count: int) -> None:
    # The hot loop of validate_batch, so varints are read inline: a zig-zag
    # value is negative exactly when its raw low bit is set, so lengths need
    # no full decode, and only varints of 3 bytes or more (2 for the
    # timestamp delta) leave the loop for _skip_uvarint.  Reads past the end
    # raise IndexError; a field skipped past the end is caught by the read
    # after it or by the record length check, as in _read_record.
    pos, end = 0, len(buf)
    for n in range(count):
        if pos >= end:
            raise InvalidBatch(f"batch declares {count} records, found {n}")
        # Length varint
        raw = buf[pos]
        if raw < 0x80:
            pos += 1
        else:
            b = buf[pos + 1]
            if b < 0x80:
                raw = (raw & 0x7F) | (b << 7)
                pos += 2
            else:
                raw, pos = _uvarint(buf, pos, 32)
        if raw & 1 or pos + (raw >> 1) > end:
            raise InvalidBatch(f"record length {(raw >> 1) ^ -(raw & 1)} exceeds the batch")
        length = raw >> 1
        record_end = pos + length
        pos += 1  # Attributes
        # TimestampDelta varlong, OffsetDelta varint: values unused
        if buf[pos] < 0x80:
            pos += 1
        elif buf[pos + 1] < 0x80:
            pos += 2
        else:
            pos = _uvarint(buf, pos, 64)[1]
        if buf[pos] < 0x80:
            pos += 1
        else:
            pos = _uvarint(buf, pos, 32)[1]
        # KeyLength, Key, then ValueLength, Value: negative is null
        for _ in (0, 1):
            raw = buf[pos]
            if raw < 0x80:
                pos += 1
            else:
                b = buf[pos + 1]
                if b < 0x80:
                    raw = (raw & 0x7F) | (b << 7)
                    pos += 2
                else:
                    raw, pos = _uvarint(buf, pos, 32)
            if not raw & 1:
                pos += raw >> 1
        # HeaderCount, then the headers
        raw = buf[pos]
        if raw < 0x80:
            pos += 1
        else:
            raw, pos = _uvarint(buf, pos, 32)
        if raw & 1:
            raise InvalidBatch(f"negative header count {(raw >> 1) ^ -1}")
        for _ in range(raw >> 1):
            raw = buf[pos]
            if raw < 0x80:
                pos += 1
            else:
                raw, pos = _uvarint(buf, pos, 32)
            if raw & 1:
                raise InvalidBatch("null header key")
            if raw:
                # decode_batch decodes header keys, so a key that is not
                # utf-8 is corrupt for both.
                buf[pos : pos + (raw >> 1)].decode()
                pos += raw >> 1
            raw = buf[pos]
            if raw < 0x80:
                pos += 1
            else:
                raw, pos = _uvarint(buf, pos, 32)
            if not raw & 1:
                pos += raw >> 1
        if pos != record_end:
            raise InvalidBatch(f"record declares {length} bytes but holds {pos - (record_end - length)}")
    if pos != end:
        raise InvalidBatch(f"{end - pos} bytes left after {count} records")


def _uvarint(buf: bytes, pos: int, bits: int) -> tuple[int, int]:
    """The raw (unzig-zagged) varint at pos, as strict as varint._decode_unsigned."""
    value, shift = 0, 0
    while True:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            break
        shift += 7
        if shift >= bits:
            raise InvalidBatch("malformed record: varint is too long")
    if value >> bits:
        raise InvalidBatch("malformed record: varint overflows its type")
    return value, pos


def _read_bytes(buf: bytes, pos: int) -> tuple[bytes | None, int]:
    size, pos = decode_varint(buf, pos)
    if size < 0:
        return None, pos
    if pos + size > len(buf):
        raise InvalidBatch(f"field of {size} bytes runs past the batch")
    return buf[pos : pos + size], pos + size


def encode_batch(
    records: Sequence,
    *,
    base_offset: int = 0,
    compression: int = Compression.NONE,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    is_transactional: bool = False,
    is_control: bool = False,
    partition_leader_epoch: int = -1,
    timestamp_type: int = 0,
) -> bytes:
    """Build one batch as MemoryRecordsBuilder does, CRC included.

    records: (key, value, headers, timestamp) tuples or objects with those
    attributes; headers are Header objects or (str, bytes | None) pairs.
    """
    if not records:
        raise ValueError("a batch needs at least one record")
    fields = [_record_fields(r) for r in records]
    base_ts = fields[0][3]
    body = bytearray()
    for delta, (key, value, headers, ts) in enumerate(fields):
        _write_record(body, delta, ts - base_ts, key, value, headers)
    payload = compress(compression, body)
    attributes = (
        (compression & COMPRESSION_MASK)
        | (TIMESTAMP_TYPE_MASK if timestamp_type else 0)
        | (TRANSACTIONAL_FLAG if is_transactional else 0)
        | (CONTROL_FLAG if is_control else 0)
    )
    out = bytearray(HEADER_SIZE)
    HEADER.pack_into(
        out, 0, base_offset, HEADER_SIZE - LOG_OVERHEAD + len(payload), partition_leader_epoch,
        MAGIC, 0, attributes, len(fields) - 1, base_ts, max(f[3] for f in fields),
        producer_id, producer_epoch, base_sequence, len(fields),
    )  # fmt: skip
    out += payload
    write_crc(out)
    return bytes(out)


def _record_fields(record) -> tuple:
    if isinstance(record, Record):
        key, value, headers, timestamp = record.key, record.value, record.headers, record.timestamp
    else:
        key, value, headers, timestamp = record
    return key, value, headers or (), timestamp


def _write_record(out: bytearray, offset_delta: int, ts_delta: int, key, value, headers) -> None:
    body = bytearray(b"\x00")  # Attributes
    body += encode_varlong(ts_delta)
    body += encode_varint(offset_delta)
    _write_bytes(body, key)
    _write_bytes(body, value)
    body += encode_varint(len(headers))
    for h in headers:
        h_key, h_value = (h.key, h.value) if isinstance(h, Header) else h
        _write_bytes(body, h_key.encode())
        _write_bytes(body, h_value)
    out += encode_varint(len(body))
    out += body


def _write_bytes(out: bytearray, data) -> None:
    if data is None:
        out += b"\x01"  # zig-zag -1: null
    else:
        out += encode_varint(len(data))
        out += data
