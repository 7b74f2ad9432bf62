"""Produce requests read and their common answers written straight from and to the wire.

librdkafka sends one ProduceRequest per partition batch: a broker taking 100,000 records over 1,000
partitions reads about 5,000 of them, each one topic, one partition and one batch. kio's path for
each (the frame checked against its lengths by wirecheck, then parsed into frozen dataclasses, the
answer built as dataclasses and encoded field by field) costs more than the append itself. Here:

* :func:`decode` reads header and body of every version (v0-13) in one pass (in C where
  kafka_codecs' extension was built: kafka_codecs/_produce.c; :func:`decode_py` is its Python
  twin, held to the same answers by tests/codecs/test_codecs_native_produce.py) and returns light
  objects with the attribute names of kio's (``topic_data``, ``partition_data``, ``index``,
  ``records``...), the records a view of the frame. It reads only the plain, well-formed shape: a
  frame with anything else -- a tagged field, a null where a value is required, a non-ASCII
  string, a varint longer than four bytes or not in its shortest form, a length that does not fit,
  bytes after the body -- makes it return None, and the caller takes kio's path, which decides as
  it always did (a malformed frame closes the connection). So it accepts a subset of what kio
  accepts and reads it as kio does (tests/test_protocol_produce_wire.py holds it to that).
* :func:`encode_answer` writes the answer of a request whose partitions carry no error message, no
  record errors and no leader hint, header included, byte for byte as kio encodes it.
"""

from __future__ import annotations

import datetime
import functools
import struct
import uuid
from typing import NamedTuple

from kafka_codecs import native

from .fastwrite import _uv  # the unsigned varint writer, with its table for small numbers
from .messages import RequestHeader
from .wirecheck import MAX_STRING

PRODUCE = 0
FLEXIBLE_VERSION = 9  # request header v2, compact strings and arrays, tagged fields
TRANSACTIONAL_ID_VERSION = 3
TOPIC_ID_VERSION = 13

_START = struct.Struct(">hhih")  # api_key, api_version, correlation_id, client_id length
_I16 = struct.Struct(">h").unpack_from
_I32 = struct.Struct(">i").unpack_from
_ACKS_TIMEOUT = struct.Struct(">hi").unpack_from
_INDEX_AND_SIZE = struct.Struct(">ii").unpack_from


class PartitionData(NamedTuple):
    index: int
    records: memoryview


class TopicData(NamedTuple):
    name: str | None  # None from v13, which names topics by id
    topic_id: uuid.UUID | None  # None before v13
    partition_data: tuple[PartitionData, ...]


class ProduceRequest(NamedTuple):
    """kio's ProduceRequest as the handler reads it; the timeout stays in milliseconds until asked."""

    transactional_id: str | None
    acks: int
    timeout_ms: int
    topic_data: tuple

    @property
    def timeout(self) -> datetime.timedelta:
        return datetime.timedelta(milliseconds=self.timeout_ms)


class _Other(Exception):
    """The frame is not of the plain shape read here: kio's path decides."""


def decode_py(frame, version: int) -> tuple[RequestHeader, ProduceRequest] | None:
    """Header and body of a ProduceRequest frame of ``version``, or None for kio's path: the
    Python twin of kafka_codecs' C reader, :data:`decode` where the extension was not built."""
    try:
        return _decode(frame, version)
    except (_Other, IndexError, struct.error, UnicodeDecodeError):
        return None


def _decode(frame, version: int) -> tuple[RequestHeader, ProduceRequest]:
    _, _, correlation_id, n = _START.unpack_from(frame)  # key and version: as the dispatcher peeked them
    p = _START.size
    if n == -1:
        client_id = None
    else:
        client_id = _ascii(frame, p, n)
        p += n
    header = RequestHeader(PRODUCE, version, correlation_id, client_id)
    if version >= FLEXIBLE_VERSION:
        return header, _flexible_body(frame, version, p)
    return header, _legacy_body(frame, version, p)


def _flexible_body(frame, version: int, p: int) -> ProduceRequest:
    """v9+: compact strings and arrays (length + 1 as an unsigned varint, 0 for null), and a
    tagged-field count after the header and each struct, which must be zero here."""
    end = len(frame)
    view = memoryview(frame)
    if frame[p]:
        raise _Other
    n, p = _uvarint(frame, p + 1)
    transactional_id = None if n == 0 else _ascii(frame, p, n - 1)
    p += max(n - 1, 0)
    acks, timeout_ms = _ACKS_TIMEOUT(frame, p)
    count, p = _uvarint(frame, p + 6)
    if not 0 < count <= end - p + 1:  # a null array: kio's path
        raise _Other
    topics = []
    for _ in range(count - 1):
        if version >= TOPIC_ID_VERSION:
            name, topic_id = None, _uuid(frame, p)
            p += 16
        else:
            n, p = _uvarint(frame, p)
            name, topic_id = _ascii(frame, p, n - 1), None  # a null name (n = 0): kio's path
            p += n - 1
        count, p = _uvarint(frame, p)
        if not 0 < count <= end - p + 1:
            raise _Other
        parts = []
        for _ in range(count - 1):
            (index,) = _I32(frame, p)
            n, p = _uvarint(frame, p + 4)
            if not 0 < n <= end - p + 1:  # a null batch included: kio's path answers it
                raise _Other
            q = p + n - 1
            parts.append(PartitionData(index, view[p:q]))
            if frame[q]:
                raise _Other
            p = q + 1
        if frame[p]:
            raise _Other
        p += 1
        topics.append(TopicData(name, topic_id, tuple(parts)))
    if frame[p] or p + 1 != end:  # tagged fields, or bytes after the body
        raise _Other
    return ProduceRequest(transactional_id, acks, timeout_ms, tuple(topics))


def _legacy_body(frame, version: int, p: int) -> ProduceRequest:
    """v0-8: int16-length strings, int32-length bytes and arrays (-1 for null)."""
    end = len(frame)
    view = memoryview(frame)
    transactional_id = None
    if version >= TRANSACTIONAL_ID_VERSION:
        (n,) = _I16(frame, p)
        p += 2
        if n != -1:
            transactional_id = _ascii(frame, p, n)
            p += n
    acks, timeout_ms = _ACKS_TIMEOUT(frame, p)
    (count,) = _I32(frame, p + 6)
    p += 10
    if not 0 <= count <= end - p:  # a null array: kio's path
        raise _Other
    topics = []
    for _ in range(count):
        (n,) = _I16(frame, p)
        name = _ascii(frame, p + 2, n)  # a null name (n = -1): kio's path
        (count,) = _I32(frame, p + 2 + n)
        p += 6 + n
        if not 0 <= count <= end - p:
            raise _Other
        parts = []
        for _ in range(count):
            index, n = _INDEX_AND_SIZE(frame, p)
            p += 8
            if not 0 <= n <= end - p:  # a null batch included: kio's path answers it
                raise _Other
            parts.append(PartitionData(index, view[p:p + n]))
            p += n
        topics.append(TopicData(name, None, tuple(parts)))
    if p != end:  # bytes after the body
        raise _Other
    return ProduceRequest(transactional_id, acks, timeout_ms, tuple(topics))


def _uvarint(frame, p: int) -> tuple[int, int]:
    """An unsigned varint of at most four bytes in its shortest form (wider ones go to kio).
    Unrolled: a batch's length takes three bytes, and this runs five times a request."""
    b = frame[p]
    if b < 0x80:
        return b, p + 1
    c = frame[p + 1]
    if c < 0x80:
        if c == 0:
            raise _Other  # an overlong form
        return b & 0x7F | c << 7, p + 2
    d = frame[p + 2]
    if d < 0x80:
        if d == 0:
            raise _Other
        return b & 0x7F | (c & 0x7F) << 7 | d << 14, p + 3
    e = frame[p + 3]
    if 0 < e < 0x80:
        return b & 0x7F | (c & 0x7F) << 7 | (d & 0x7F) << 14 | e << 21, p + 4
    raise _Other  # overlong, or wider than four bytes


def _ascii(frame, p: int, n: int) -> str:
    if n < 0 or n > MAX_STRING or n > len(frame) - p:
        raise _Other
    return str(frame[p:p + n], "ascii")  # UnicodeDecodeError: kio's path decodes UTF-8


def _uuid(frame, p: int) -> uuid.UUID | None:
    raw = bytes(frame[p:p + 16])
    if len(raw) < 16:
        raise _Other
    return None if raw == _ZERO_UUID else uuid.UUID(bytes=raw)


_ZERO_UUID = bytes(16)
_CLASSES = (RequestHeader, ProduceRequest, TopicData, PartitionData, uuid.UUID)
# decode(frame, version): header and body of a ProduceRequest frame of ``version``, or None for
# kio's path; kafka_codecs' C reader where it was built, else its Python twin. A string over
# MAX_STRING bytes (a transactional id or topic name) is kio's path too, where wirecheck refuses
# it as Kafka's generated readers do.
decode = decode_py if native.produce_request is None else functools.partial(native.produce_request, _CLASSES)

# -- answers --------------------------------------------------------------------------------

_CORRELATION = struct.Struct(">i").pack
_CORRELATION_FLEX = struct.Struct(">iB").pack
_COUNT = struct.Struct(">i").pack
_NAME_LEN = struct.Struct(">h").pack
_THROTTLE = struct.Struct(">i").pack
_THROTTLE_FLEX = struct.Struct(">iB").pack


def _partition_layout(version: int) -> tuple[str, int, tuple]:
    """How the version writes one partition of the answer: (struct format, how many of (index,
    error_code, base_offset, log_append_time, log_start_offset) it writes, the constants after
    them): log_append_time from v2, log_start_offset from v5, no record errors and a null error
    message from v8, a tagged-field count of zero from v9 (no current_leader)."""
    if version < 2:
        return "ihq", 3, ()
    if version < 5:
        return "ihqq", 4, ()
    if version < 8:
        return "ihqqq", 5, ()
    if version < FLEXIBLE_VERSION:
        return "ihqqqih", 5, (0, -1)
    return "ihqqqBBB", 5, (1, 0, 0)


def _partition_writer(version: int):
    """Pack one (index, error_code, base_offset, log_append_time, log_start_offset) as the version has it."""
    fmt, fields, constants = _partition_layout(version)
    pack = struct.Struct(">" + fmt).pack
    if fields == 3:
        return lambda i, e, b, t, s: pack(i, e, b)
    if fields == 4:
        return lambda i, e, b, t, s: pack(i, e, b, t)
    return pack if not constants else lambda i, e, b, t, s: pack(i, e, b, t, s, *constants)


_PARTITION = [_partition_writer(v) for v in range(TOPIC_ID_VERSION + 1)]


def encode_answer(correlation_id: int, version: int, topics, throttle_ms: int) -> bytes:
    """Header and body of a ProduceResponse, without the size prefix. ``topics``: (name, topic_id,
    partitions) each, a partition (index, error_code, base_offset, log_append_time,
    log_start_offset) with -1 for a log append time the topic does not use; no node endpoints."""
    if len(topics) == 1 and len(topics[0][2]) == 1:  # librdkafka's request: one partition of one topic
        name, topic_id, (p,) = topics[0]
        return _one_answer(version, name, topic_id)(correlation_id, p, throttle_ms)
    flexible = version >= FLEXIBLE_VERSION
    out = [_CORRELATION_FLEX(correlation_id, 0) if flexible else _CORRELATION(correlation_id)]
    out.append(_uv(len(topics) + 1) if flexible else _COUNT(len(topics)))
    partition = _PARTITION[version]
    for name, topic_id, partitions in topics:
        out.append(_topic(version, name, topic_id))
        out.append(_uv(len(partitions) + 1) if flexible else _COUNT(len(partitions)))
        for p in partitions:
            out.append(partition(*p))
        if flexible:
            out.append(b"\x00")
    if flexible:
        out.append(_THROTTLE_FLEX(throttle_ms, 0))
    elif version >= 1:
        out.append(_THROTTLE(throttle_ms))
    return b"".join(out)


@functools.lru_cache(maxsize=4096)
def _one_answer(version: int, name: str | None, topic_id: uuid.UUID | None):
    """``write(correlation_id, partition, throttle_ms)``: the whole answer of one topic with one
    partition, as encode_answer's loop writes it, in one pack (librdkafka's Produce answers, one
    per partition, each written often)."""
    topic = _topic(version, name, topic_id)
    fmt, fields, constants = _partition_layout(version)
    if version >= FLEXIBLE_VERSION:  # header tags, topics + 1, the topic, partitions + 1, the partition,
        # the topic's tags, throttle_time_ms, the answer's tags
        pack = struct.Struct(f">iBB{len(topic)}sB{fmt}BiB").pack
        return lambda c, p, throttle_ms: pack(c, 0, 2, topic, 2, *p, 1, 0, 0, 0, throttle_ms, 0)
    throttle = "i" if version >= 1 else ""
    pack = struct.Struct(f">ii{len(topic)}si{fmt}{throttle}").pack
    if version >= 1:
        return lambda c, p, throttle_ms: pack(c, 1, topic, 1, *p[:fields], *constants, throttle_ms)
    return lambda c, p, throttle_ms: pack(c, 1, topic, 1, *p[:fields], *constants)


@functools.lru_cache(maxsize=4096)
def _topic(version: int, name: str | None, topic_id: uuid.UUID | None) -> bytes:
    """A topic's name (its id from v13) as the version writes it: few topics, each written often."""
    if version >= TOPIC_ID_VERSION:
        return topic_id.bytes if topic_id is not None else _ZERO_UUID
    raw = name.encode()
    return (_uv(len(raw) + 1) if version >= FLEXIBLE_VERSION else _NAME_LEN(len(raw))) + raw
