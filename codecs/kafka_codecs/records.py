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
from .compression import DecompressedTooLarge, compress, decompress
from .varint import decode_varint, decode_varlong, encode_varint, encode_varlong


class InvalidBatch(ValueError):
    """A batch that Kafka would reject as corrupt (InvalidRecordException)."""


class UndecodablePayload(InvalidBatch):
    """A compressed batch whose payload does not decompress."""


class PayloadTooLarge(InvalidBatch):
    """A compressed batch whose payload decompresses past the limit it was read with."""


class Header(NamedTuple):
    key: str
    value: bytes | None


class Record(NamedTuple):
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...] = ()


def _header_and_payload(batch, copy: bool = True, header: BatchHeader | None = None, limit: int | None = None):
    """The batch's header and its records section, decompressed; InvalidBatch for a bad frame or
    a payload that does not decompress, PayloadTooLarge past ``limit`` bytes decompressed. With
    ``copy=False`` the section may be a view into ``batch`` or the decompressor's own buffer
    rather than bytes."""
    if header is None:
        try:
            header = parse_header(batch)
        except ValueError as exc:
            raise InvalidBatch(str(exc)) from None
    _check_frame(header, len(batch))
    body = memoryview(batch)[HEADER_SIZE : header.size]
    try:
        return header, decompress(header.compression, body, copy=copy, limit=limit)
    except DecompressedTooLarge as exc:
        raise PayloadTooLarge(str(exc)) from None
    except ValueError as exc:
        raise (UndecodablePayload if header.compression else InvalidBatch)(str(exc)) from None


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
    except ValueError as exc:
        raise InvalidBatch(f"malformed record: {exc}") from None
    return header, records


def _check_frame(header: BatchHeader, available: int) -> None:
    if header.magic != MAGIC:
        raise InvalidBatch(f"unsupported magic {header.magic}")
    size = LOG_OVERHEAD + header.batch_length
    if size < HEADER_SIZE or size != available:
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
    # Kafka's rules (DefaultRecord.readFrom), as validate_batch walks them.
    length, pos = decode_varint(buf, pos)
    start = pos
    if length < 0 or length > len(buf) - pos:
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
        size, pos = decode_varint(buf, pos)
        if size < 0:
            raise InvalidBatch(f"negative header key length {size}")
        key_end = _skip(pos, size, len(buf))
        h_key, pos = buf[pos:key_end], key_end
        h_value, pos = _read_bytes(buf, pos)
        # Java decodes header keys as new String(bytes, UTF_8): malformed bytes become U+FFFD.
        headers.append(Header(bytes(h_key).decode("utf-8", "replace"), h_value))
    if pos - start != length:
        raise InvalidBatch(f"record declares {length} bytes but holds {pos - start}")
    timestamp = header.base_timestamp + ts_delta if log_append_time is None else log_append_time
    return Record(header.base_offset + offset_delta, timestamp, key, value, tuple(headers)), pos


def validate_batch(batch, header: BatchHeader | None = None) -> bool:
    """Accept or reject one whole batch exactly as decode_batch does, without decoding it.

    Raises InvalidBatch in the same cases as decode_batch (bad frame, corrupt payload, record
    count, record lengths, malformed varints, field lengths, negative header counts or header key
    lengths, trailing bytes; UndecodablePayload when a compressed payload does not decompress) but
    builds no Record or Header objects: field bodies are skipped by their lengths. The CRC is not
    checked here either. Returns whether the records' offset deltas run 0, 1, 2, ..., which Kafka
    requires of a compressed batch it keeps as it came (LogValidator's in-place assignment).
    ``header``: the batch's header when the caller parsed it already (it is not parsed again).
    """
    return walk_batch(batch, header)[0]


def walk_batch(batch, header: BatchHeader | None = None, limit: int | None = None) -> tuple[bool, int, int]:
    """validate_batch, the size of the records section it walked (decompressed) and the batch's
    true MaxTimestamp (the largest record timestamp, at least -1, as LogValidator computes it
    whatever the header says); a compressed payload that decompresses past ``limit`` bytes raises
    PayloadTooLarge before it is all held."""
    if header is not None and not header.attributes & COMPRESSION_MASK:
        _check_frame(header, len(batch))
        body = memoryview(batch)[HEADER_SIZE:]  # uncompressed records are walked where they lie
    else:
        header, body = _header_and_payload(batch, copy=False, header=header, limit=limit)
    # The C walk reads any buffer in place; the Python one indexes bytes a third faster than a view.
    payload = bytes(body) if _walk is _walk_records_py else memoryview(body)
    try:
        in_order, max_timestamp = _walk(payload, header.records_count, header.base_timestamp)
    except InvalidBatch:
        raise
    except ValueError as exc:  # from the C walk, or a varint of the Python one
        raise InvalidBatch(str(exc)) from None
    return in_order, len(payload), max_timestamp


class Scan(NamedTuple):
    """What scan_batch reports of a valid batch (see _walk.c, scan)."""

    in_order: bool
    canonical: bool  # the records are written as encode_batch would write them again
    null_keys: list  # indexes of records without a key, at most ``cap``
    null_key_count: int
    bad_timestamps: list  # (index, timestamp, offset delta) out of bounds, at most ``cap``
    bad_timestamp_count: int
    first_delta: int
    max_delta: int
    max_timestamp: int  # the largest record timestamp, at least -1 (walk_batch)
    walked: int  # bytes of the records section, decompressed
    payload: object  # the records section (a view or the decompressor's buffer)


def scan_batch(batch, header: BatchHeader, limit: int | None, compact: bool = False, check_timestamps: bool = False,
               now: int = 0, before: int = 0, after: int = 0, cap: int = 0) -> Scan:
    """walk_batch with the same verdicts, also gathering in the same pass what the record checks of a
    topic config need: records without a key, records whose timestamp is out of [now - before,
    now + after] (with check_timestamps; with compact, of records with a key only; at most ``cap`` of each, with their totals)."""
    if not header.attributes & COMPRESSION_MASK:
        _check_frame(header, len(batch))
        body = memoryview(batch)[HEADER_SIZE:]
    else:
        header, body = _header_and_payload(batch, copy=False, header=header, limit=limit)
    payload = bytes(body) if _scan is scan_records_py else memoryview(body)
    try:
        facts = _scan(payload, header.records_count, header.base_timestamp, compact, check_timestamps, now, before,
                      after, cap)
    except InvalidBatch:
        raise
    except ValueError as exc:
        raise InvalidBatch(str(exc)) from None
    return Scan(*facts, len(payload), body)


def _jlong(value: int) -> int:
    return (value + (1 << 63)) % (1 << 64) - (1 << 63)


def scan_records_py(buf, count: int, base_ts: int, compact: bool, check_ts: bool, now: int, before: int,
                    after: int, cap: int) -> tuple:
    """The scan of _walk.c in Python: _walk_records_py's verdict, then the facts record by record."""
    in_order, max_timestamp = _walk_records_py(buf, count, base_ts)
    canonical = in_order
    null_keys, bad, counts = [], [], [0, 0]
    first = top = 0
    pos = 0

    def varint(decode, encode):
        nonlocal pos, canonical
        start = pos
        value, pos = decode(buf, pos)
        canonical = canonical and encode(value) == bytes(buf[start:pos])
        return value

    for n in range(count):
        varint(decode_varint, encode_varint)  # Length
        canonical = canonical and buf[pos] == 0  # Attributes
        pos += 1
        delta = varint(decode_varlong, encode_varlong)
        offset_delta = varint(decode_varint, encode_varint)
        first, top = (delta, delta) if n == 0 else (first, max(top, delta))
        canonical = canonical and first == 0
        for field in (0, 1):  # Key, Value
            size = varint(decode_varint, encode_varint)
            pos += max(size, 0)
            if field == 1:
                continue
            if size < 0:
                counts[0] += 1
                null_keys += [n][: cap - len(null_keys)]
            ts = _jlong(base_ts + delta)
            diff = _jlong(now - ts)
            if (check_ts and not (compact and size < 0) and ts != -1
                    and (diff > before or _jlong(-diff) > after)):
                counts[1] += 1
                bad += [(n, ts, offset_delta)][: cap - len(bad)]
        for _ in range(varint(decode_varint, encode_varint)):
            size = varint(decode_varint, encode_varint)
            canonical = canonical and all(b < 0x80 for b in buf[pos : pos + size])
            pos += size
            size = varint(decode_varint, encode_varint)  # the header's value
            pos += max(size, 0)
    return in_order, canonical, null_keys, counts[0], bad, counts[1], first, top, max_timestamp


def _walk_records_py(buf, count: int, base_ts: int) -> tuple[bool, int]:
    """The record walk of validate_batch in Python: the same checks, messages and answers as
    _walk.c, which replaces it when built (a few hundred times faster). Varints of one and two
    bytes, by far the most common, are read inline (``_two`` gives -1 for anything else, then
    ``decode_varint`` or ``decode_varlong`` reads it); a zig-zag value is negative exactly when
    its low bit is set. The largest timestamp delta stands for the largest timestamp unless a
    base + delta leaves Java's long range (``_wrapped_max``)."""
    pos, end = 0, len(buf)
    in_order = True
    low = top = None
    for n in range(count):
        if pos >= end:
            raise InvalidBatch(f"batch declares {count} records, found {n}")
        raw, pos = _two(buf, pos, end)
        if raw < 0:
            length, pos = decode_varint(buf, pos)
        else:
            length = raw >> 1 ^ -(raw & 1)
        start = pos
        if length < 0 or length > end - pos:
            raise InvalidBatch(f"record length {length} exceeds the batch")
        raw, pos = _two(buf, pos + 1, end)  # Attributes, then TimestampDelta
        if raw < 0:
            delta, pos = decode_varlong(buf, pos)
        else:
            delta = raw >> 1 ^ -(raw & 1)
        if top is None:
            low = top = delta
        elif delta > top:
            top = delta
        elif delta < low:
            low = delta
        raw, pos = _two(buf, pos, end)  # OffsetDelta
        if raw < 0:
            delta, pos = decode_varint(buf, pos)
            in_order = in_order and delta == n
        else:
            in_order = in_order and raw == n << 1
        for _ in (0, 1):  # KeyLength, Key, then ValueLength, Value
            raw, pos = _two(buf, pos, end)
            if raw < 0:
                size, pos = decode_varint(buf, pos)
                pos = _skip(pos, size, end)
            elif raw and not raw & 1:
                pos = _skip(pos, raw >> 1, end)
        headers, pos = decode_varint(buf, pos)
        if headers < 0:
            raise InvalidBatch(f"negative header count {headers}")
        for _ in range(headers):
            size, pos = decode_varint(buf, pos)
            if size < 0:
                raise InvalidBatch(f"negative header key length {size}")
            size, pos = decode_varint(buf, _skip(pos, size, end))
            pos = _skip(pos, size, end)
        if pos - start != length:
            raise InvalidBatch(f"record declares {length} bytes but holds {pos - start}")
    if pos != end:
        raise InvalidBatch(f"{end - pos} bytes left after {count} records")
    if top is None:
        return in_order, -1
    if _LONG_MIN <= base_ts + low and base_ts + top <= _LONG_MAX:
        return in_order, max(-1, base_ts + top)  # LogValidator starts from RecordBatch.NO_TIMESTAMP
    return in_order, _wrapped_max(buf, count, base_ts)


_LONG_MIN, _LONG_MAX = -(1 << 63), (1 << 63) - 1


def _wrapped_max(buf, count: int, base_ts: int) -> int:
    """The largest timestamp of records (valid ones) whose base + delta wraps around Java's long."""
    top, pos = -1, 0
    for _ in range(count):
        pos = decode_varint(buf, pos)[1] + 1  # Length, Attributes
        delta, pos = decode_varlong(buf, pos)
        top = max(top, _jlong(base_ts + delta))
        pos = decode_varint(buf, pos)[1]  # OffsetDelta
        for _ in (0, 1):
            size, pos = decode_varint(buf, pos)
            pos += max(size, 0)
        headers, pos = decode_varint(buf, pos)
        for _ in range(headers):
            size, pos = decode_varint(buf, pos)
            size, pos = decode_varint(buf, pos + size)
            pos += max(size, 0)
    return top


def _two(buf, pos: int, end: int) -> tuple[int, int]:
    """The raw value of a varint of one or two bytes at ``pos`` and the position after it; for a
    longer or truncated one, -1 and ``pos`` unchanged."""
    if pos < end:
        b = buf[pos]
        if b < 0x80:
            return b, pos + 1
        if pos + 1 < end:
            c = buf[pos + 1]
            if c < 0x80:
                return (b & 0x7F) | c << 7, pos + 2
    return -1, pos


def _skip(pos: int, size: int, end: int) -> int:
    if size > 0:
        if size > end - pos:
            raise InvalidBatch(f"field of {size} bytes runs past the batch")
        pos += size
    return pos


try:
    from . import _walk as _native

    if getattr(_native, "ABI", 1) < 2:  # built from a _walk.c whose walk and scan gave no max_timestamp
        raise ImportError("kafka_codecs._walk is older than records.py")
    _walk, _scan = _native.walk, _native.scan
except ImportError:  # not built (no C compiler at install time): same checks and answers, slower
    _walk, _scan = _walk_records_py, scan_records_py

NATIVE_WALK = _walk is not _walk_records_py


def _read_bytes(buf: bytes, pos: int) -> tuple[bytes | None, int]:
    size, pos = decode_varint(buf, pos)
    if size < 0:
        return None, pos
    end = _skip(pos, size, len(buf))
    return buf[pos:end], end


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
