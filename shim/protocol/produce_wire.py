"""Produce requests read and their common answers written straight from and to the wire.

librdkafka sends one ProduceRequest per partition batch: a broker taking 100,000 records over 1,000
partitions reads about 5,000 of them, each one topic, one partition and one batch. kio's path for
each (the frame checked against its lengths by wirecheck, then parsed into frozen dataclasses, the
answer built as dataclasses and encoded field by field) costs more than the append itself. Here:

* :func:`decode` reads header and body of every version (v0-13) in one pass and returns light
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
import struct
import uuid
from typing import NamedTuple

from .messages import RequestHeader

PRODUCE = 0
FLEXIBLE_VERSION = 9  # request header v2, compact strings and arrays, tagged fields
TRANSACTIONAL_ID_VERSION = 3
TOPIC_ID_VERSION = 13

_START = struct.Struct(">hhih")  # api_key, api_version, correlation_id, client_id length
_I16 = struct.Struct(">h").unpack_from
_I32 = struct.Struct(">i").unpack_from
_ACKS_TIMEOUT = struct.Struct(">hi").unpack_from


class PartitionData(NamedTuple):
    index: int
    records: memoryview


class TopicData(NamedTuple):
    name: str | None  # None from v13, which names topics by id
    topic_id: uuid.UUID | None  # None before v13
    partition_data: tuple[PartitionData, ...]


class ProduceRequest:
    """kio's ProduceRequest as the handler reads it; the timeout stays in milliseconds until asked."""

    __slots__ = ("transactional_id", "acks", "timeout_ms", "topic_data")

    def __init__(self, transactional_id: str | None, acks: int, timeout_ms: int, topic_data: tuple) -> None:
        self.transactional_id = transactional_id
        self.acks = acks
        self.timeout_ms = timeout_ms
        self.topic_data = topic_data

    @property
    def timeout(self) -> datetime.timedelta:
        return datetime.timedelta(milliseconds=self.timeout_ms)


class _Other(Exception):
    """The frame is not of the plain shape read here: kio's path decides."""


def decode(frame, version: int) -> tuple[RequestHeader, ProduceRequest] | None:
    """Header and body of a ProduceRequest frame of ``version``, or None for kio's path."""
    try:
        return _decode(frame, version)
    except (_Other, IndexError, struct.error, UnicodeDecodeError):
        return None


def _decode(frame, version: int) -> tuple[RequestHeader, ProduceRequest]:
    _, _, correlation_id, n = _START.unpack_from(frame)  # key and version: as the dispatcher peeked them
    p = _START.size
    if n < 0:
        if n != -1:
            raise _Other
        client_id = None
    else:
        client_id = _ascii(frame, p, n)
        p += n
    flexible = version >= FLEXIBLE_VERSION
    if flexible:
        p = _no_tags(frame, p)
    transactional_id = None
    if version >= TRANSACTIONAL_ID_VERSION:
        transactional_id, p = _string(frame, p, flexible, nullable=True)
    acks, timeout_ms = _ACKS_TIMEOUT(frame, p)
    p += 6
    count, p = _count(frame, p, flexible)
    view = memoryview(frame)
    topics = []
    for _ in range(count):
        if version >= TOPIC_ID_VERSION:
            if len(frame) - p < 16:
                raise _Other
            name, topic_id = None, _uuid(bytes(view[p:p + 16]))
            p += 16
        else:
            (name, p), topic_id = _string(frame, p, flexible, nullable=False), None
        parts, p = _partitions(frame, view, p, flexible)
        if flexible:
            p = _no_tags(frame, p)
        topics.append(TopicData(name, topic_id, parts))
    if flexible:
        p = _no_tags(frame, p)
    if p != len(frame):
        raise _Other
    header = RequestHeader(PRODUCE, version, correlation_id, client_id)
    return header, ProduceRequest(transactional_id, acks, timeout_ms, tuple(topics))


def _partitions(frame, view: memoryview, p: int, flexible: bool) -> tuple[tuple[PartitionData, ...], int]:
    count, p = _count(frame, p, flexible)
    parts = []
    for _ in range(count):
        (index,) = _I32(frame, p)
        p += 4
        if flexible:
            n, p = _uvarint(frame, p)
            n -= 1
        else:
            (n,) = _I32(frame, p)
            p += 4
        if n < 0 or n > len(frame) - p:  # a null batch included: kio's path answers it
            raise _Other
        parts.append(PartitionData(index, view[p:p + n]))
        p += n
        if flexible:
            p = _no_tags(frame, p)
    return tuple(parts), p


def _uvarint(frame, p: int) -> tuple[int, int]:
    """An unsigned varint of at most four bytes in its shortest form (wider ones go to kio)."""
    b = frame[p]
    if b < 0x80:
        return b, p + 1
    value, shift = b & 0x7F, 7
    for q in range(p + 1, p + 4):
        b = frame[q]
        value |= (b & 0x7F) << shift
        if b < 0x80:
            if b == 0:
                raise _Other  # an overlong form
            return value, q + 1
        shift += 7
    raise _Other


def _count(frame, p: int, flexible: bool) -> tuple[int, int]:
    """An array's element count; a null array goes to kio's path."""
    if flexible:
        n, p = _uvarint(frame, p)
        n -= 1
    else:
        (n,) = _I32(frame, p)
        p += 4
    if n < 0 or n > len(frame) - p:  # each element takes a byte at least
        raise _Other
    return n, p


def _string(frame, p: int, flexible: bool, nullable: bool) -> tuple[str | None, int]:
    if flexible:
        n, p = _uvarint(frame, p)
        n -= 1
    else:
        (n,) = _I16(frame, p)
        p += 2
    if n < 0:
        if n != -1 or not nullable:
            raise _Other
        return None, p
    return _ascii(frame, p, n), p + n


def _ascii(frame, p: int, n: int) -> str:
    if n > len(frame) - p:
        raise _Other
    return str(frame[p:p + n], "ascii")  # UnicodeDecodeError: kio's path decodes UTF-8


def _no_tags(frame, p: int) -> int:
    if frame[p] != 0:
        raise _Other
    return p + 1


def _uuid(raw: bytes) -> uuid.UUID | None:
    return None if raw == _ZERO_UUID else uuid.UUID(bytes=raw)


_ZERO_UUID = bytes(16)

# -- answers --------------------------------------------------------------------------------

_CORRELATION = struct.Struct(">i").pack
_CORRELATION_FLEX = struct.Struct(">iB").pack
_COUNT = struct.Struct(">i").pack
_NAME_LEN = struct.Struct(">h").pack
_THROTTLE = struct.Struct(">i").pack
_THROTTLE_FLEX = struct.Struct(">iB").pack


def _partition_writer(version: int):
    """Pack one (index, error_code, base_offset, log_append_time, log_start_offset) as the version
    has it: log_append_time from v2, log_start_offset from v5, no record errors and a null error
    message from v8, a tagged-field count of zero from v9 (no current_leader)."""
    if version < 2:
        pack = struct.Struct(">ihq").pack
        return lambda i, e, b, t, s: pack(i, e, b)
    if version < 5:
        pack = struct.Struct(">ihqq").pack
        return lambda i, e, b, t, s: pack(i, e, b, t)
    if version < 8:
        return struct.Struct(">ihqqq").pack
    if version < FLEXIBLE_VERSION:
        pack = struct.Struct(">ihqqqih").pack
        return lambda i, e, b, t, s: pack(i, e, b, t, s, 0, -1)
    pack = struct.Struct(">ihqqqBBB").pack
    return lambda i, e, b, t, s: pack(i, e, b, t, s, 1, 0, 0)


_PARTITION = [_partition_writer(v) for v in range(TOPIC_ID_VERSION + 1)]


def _uv(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append(0x80 | (n & 0x7F))
        n >>= 7
    out.append(n)
    return bytes(out)


def encode_answer(correlation_id: int, version: int, topics, throttle_ms: int) -> bytes:
    """Header and body of a ProduceResponse, without the size prefix. ``topics``: (name, topic_id,
    partitions) each, a partition (index, error_code, base_offset, log_append_time,
    log_start_offset) with -1 for a log append time the topic does not use; no node endpoints."""
    flexible = version >= FLEXIBLE_VERSION
    out = [_CORRELATION_FLEX(correlation_id, 0) if flexible else _CORRELATION(correlation_id)]
    out.append(_uv(len(topics) + 1) if flexible else _COUNT(len(topics)))
    partition = _PARTITION[version]
    for name, topic_id, partitions in topics:
        if version >= TOPIC_ID_VERSION:
            out.append(topic_id.bytes if topic_id is not None else _ZERO_UUID)
        else:
            raw = name.encode()
            out.append(_uv(len(raw) + 1) if flexible else _NAME_LEN(len(raw)))
            out.append(raw)
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
