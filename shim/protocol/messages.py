"""Requests and responses through kio, whose classes are generated from Kafka's message schemas.

Headers come from each class's ``__header_schema__``: request header v1/v2 and response header
v0/v1 by flexibility, and kio already gives ApiVersions responses the v0 header Kafka requires.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import io
import struct
from types import ModuleType
from typing import Any, NamedTuple

from kio.index import load_payload_module
from kio.serial import entity_reader, entity_writer
from kio.serial._introspect import is_optional
from kio.static.constants import EntityType

from .fastwrite import compiled_writer
from .framing import FrameError
from .legacy_schemas import LEGACY
from .wirecheck import compile_checker

_PEEK = struct.Struct(">hhi")


class RequestHeader(NamedTuple):
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None


def peek(frame: bytes) -> tuple[int, int, int]:
    """(api_key, api_version, correlation_id) from the fixed start of every request header."""
    if len(frame) < _PEEK.size:
        raise FrameError(f"request of {len(frame)} bytes is shorter than a request header")
    return _PEEK.unpack_from(frame)


# Versions kio does not generate whose wire form is that of a neighbour, as Kafka's schemas say:
# DescribeLogDirs and AlterReplicaLogDirs "Version 1 is the same as version 0" (v1 only changed
# throttling, KIP-219), and so is version 1 of DescribeDelegationToken (and of the other
# delegation-token APIs, see legacy_schemas). OffsetFetch v0 is v1 both ways ("Version 1 is the
# same as version 0"; v0 only read the offsets from ZooKeeper).
SAME_WIRE_AS = {(9, 0): 1, (34, 0): 1, (35, 0): 1, (41, 0): 1}


@functools.cache
def request_module(api_key: int, version: int) -> ModuleType:
    if (api_key, version) in LEGACY:
        return LEGACY[(api_key, version)](EntityType.request)
    version = SAME_WIRE_AS.get((api_key, version), version)
    return load_payload_module(api_key, version, EntityType.request)


@functools.cache
def response_module(api_key: int, version: int) -> ModuleType:
    if (api_key, version) in LEGACY:
        return LEGACY[(api_key, version)](EntityType.response)
    version = SAME_WIRE_AS.get((api_key, version), version)
    return load_payload_module(api_key, version, EntityType.response)


def _payload_class(module: ModuleType, entity: EntityType) -> type:
    return next(
        v for v in vars(module).values()
        if isinstance(v, type) and getattr(v, "__type__", None) is entity
    )


@functools.cache
def request_class(api_key: int, version: int) -> type:
    return _payload_class(request_module(api_key, version), EntityType.request)


@functools.cache
def response_class(api_key: int, version: int) -> type:
    return _payload_class(response_module(api_key, version), EntityType.response)


@functools.cache
def request_checker(api_key: int, version: int):
    """Raises MalformedRequest unless every length in the frame fits it (see wirecheck)."""
    cls = request_class(api_key, version)
    return compile_checker(cls.__header_schema__, cls)


@functools.cache
def _reader(cls: type):
    return entity_reader(cls)


@functools.cache
def _writer(cls: type):
    return entity_writer(cls)


def decode_request(frame: bytes, api_key: int, version: int) -> tuple[RequestHeader, Any]:
    """Parse header and body; any parse failure is a malformed frame.

    kio's parser trusts declared lengths (a huge array count aborts the process in its
    preallocation), so the frame is checked against them first.
    """
    cls = request_class(api_key, version)
    request_checker(api_key, version)(frame)
    retention = _wide_retention(frame) if api_key == OFFSET_COMMIT and version in RETENTION_VERSIONS else None
    if retention is not None:
        frame = frame[:retention[0]] + bytes(8) + frame[retention[0] + 8:]
    try:
        header, used = _reader(cls.__header_schema__)(frame, 0)
        body, _ = _reader(cls)(frame, used)
    except Exception as exc:  # kio raises several types for truncated or invalid input
        raise FrameError(f"cannot parse {cls.__name__} v{version}: {exc}") from exc
    except BaseException as exc:
        # A panic in kio's native parser reaches Python as pyo3's PanicException, which derives
        # from BaseException: it is one malformed frame too, not a reason to stop the broker.
        if type(exc).__name__ != "PanicException":
            raise
        raise FrameError(f"kio panicked parsing {cls.__name__} v{version}: {exc}") from exc
    if retention is not None:
        body = dataclasses.replace(body, retention_time=retention[1])  # integer ms, as shim.apis._groups.ms reads
    return (
        RequestHeader(api_key, version, header.correlation_id, header.client_id),
        body,
    )


SENDFILE_MIN_BYTES = 128 * 1024


class _Parts:
    """A kio output buffer that leaves large file regions (records read for Fetch) in their files.

    kio writes a records field as its length then ``buffer.write(value)``: a large records object
    (``__len__``, ``read()``, ``open()``) is opened here, while the response is encoded and before
    anything can delete its segment, and becomes a part of its own (``file``, ``position``,
    ``size``, ``close()``) sent later with sendfile; a small one is read in place, where a copy
    costs less than a sendfile call.
    """

    def __init__(self) -> None:
        self.parts: list = []
        self._buf = bytearray()

    def write(self, data) -> None:
        if isinstance(data, (bytes, bytearray, memoryview)):
            self._buf += data
        elif len(data) < SENDFILE_MIN_BYTES:
            self._buf += data.read()
        else:
            self._flush()
            self.parts.append(data.open())

    def _flush(self) -> None:
        if self._buf:
            self.parts.append(bytes(self._buf))
            self._buf = bytearray()

    def done(self) -> list:
        self._flush()
        return self.parts


def encode_response_parts(correlation_id: int, response: Any) -> list:
    """Header and body, without the size prefix: bytes and file regions, in order."""
    out = _Parts()
    header_cls = type(response).__header_schema__
    compiled_writer(header_cls)(out, header_cls(correlation_id=correlation_id))
    compiled_writer(type(response))(out, response)
    return out.done()


def encode_response(correlation_id: int, response: Any) -> bytes:
    """Header and body, without the size prefix, all in memory."""
    return join_parts(encode_response_parts(correlation_id, response))


def encoded_size(entity: Any) -> int:
    """The bytes ``entity`` (a response's nested entity) takes on the wire."""
    out = _Parts()
    compiled_writer(type(entity))(out, entity)
    return sum(len(p) for p in out.done())


def join_parts(parts: list) -> bytes:
    out = []
    for p in parts:
        if isinstance(p, bytes):
            out.append(p)
        else:
            out.append(p.read())
            p.close()
    return b"".join(out)


def encode_request(header: RequestHeader, request: Any) -> bytes:
    """Used by tests and tools that speak to a broker directly."""
    buf = io.BytesIO()
    header_cls = type(request).__header_schema__
    _writer(header_cls)(
        buf,
        header_cls(
            request_api_key=header.api_key,
            request_api_version=header.api_version,
            correlation_id=header.correlation_id,
            client_id=header.client_id,
        ),
    )
    _writer(type(request))(buf, request)
    return buf.getvalue()


OFFSET_COMMIT, RETENTION_VERSIONS = 8, range(2, 5)
_I16, _I64 = struct.Struct(">h"), struct.Struct(">q")


def _wide_retention(frame: bytes) -> tuple[int, int] | None:
    """OffsetCommit v2-4's RetentionTimeMs when kio's timedelta may not hold it (it cannot from
    999,999,999 days either way; Kafka takes any int64): (its position in the frame, its value), else None. The
    frame's lengths are checked already; the header and body before it are strings and an int32."""
    position = 8  # api key, version, correlation id
    try:
        for skip in (0, 0, 4):  # client id; group id; generation id, then member id
            position += skip
            position += 2 + max(_I16.unpack_from(frame, position)[0], 0)
        value = _I64.unpack_from(frame, position)[0]
    except struct.error:
        return None  # cut short: kio refuses it
    if abs(value) < _TIMEDELTA_MAX_MS:
        return None
    return position, value


_TIMEDELTA_MAX_MS = 2**53  # kio's timedelta overflows from 999,999,999 days (about 2**56 ms)


def decode_response(data: bytes, api_key: int, version: int) -> tuple[int, Any]:
    cls = response_class(api_key, version)
    header, used = _reader(cls.__header_schema__)(data, 0)
    body, _ = _reader(cls)(data, used)
    return header.correlation_id, body


def _ms_to_datetime(ms: Any) -> Any:
    if isinstance(ms, int):
        return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc)
    return ms


def _ms_to_nullable_datetime(ms: Any) -> Any:
    return None if isinstance(ms, int) and ms < 0 else _ms_to_datetime(ms)


# The most milliseconds a datetime.timedelta holds either way (about 2**56): an int64 duration past
# it (an OAUTHBEARER token's remaining life, from an "exp" far in the future) is answered as this.
_TIMEDELTA_MAX_MS = 999_999_999 * 86_400_000


def _ms_to_timedelta(ms: Any) -> Any:
    if isinstance(ms, int):
        return datetime.timedelta(milliseconds=max(min(ms, _TIMEDELTA_MAX_MS), -_TIMEDELTA_MAX_MS))
    return ms


_CONVERTERS = {
    "datetime_i64": _ms_to_datetime,
    "timedelta_i32": _ms_to_timedelta,
    "timedelta_i64": _ms_to_timedelta,
}


@functools.cache
def _fields(cls: type) -> dict[str, Any]:
    """Field name -> converter from Kafka's integer milliseconds to kio's typed value (or None).

    -1 becomes null only where the field is nullable; elsewhere it is written back as -1.
    """
    out = {}
    for name, f in cls.__dataclass_fields__.items():
        kind = f.metadata.get("kafka_type")
        if kind == "datetime_i64" and is_optional(f):
            out[name] = _ms_to_nullable_datetime
        else:
            out[name] = _CONVERTERS.get(kind)
    return out


def make(cls: type, **fields: Any) -> Any:
    """Build a kio entity from the fields this version has, dropping the ones it lacks.

    Handlers are written once for all versions of an API, in Kafka's own units: fields added in
    later versions (log_start_offset, throttle_time, ...) are simply not set on older ones, and
    millisecond integers become the datetime/timedelta values kio expects (-1 -> null).
    """
    known = _fields(cls)
    kwargs = {}
    for k, v in fields.items():
        if k in known:
            convert = known[k]
            kwargs[k] = convert(v) if convert else v
    return cls(**kwargs)


@functools.cache
def factory(cls: type, names: tuple[str, ...]):
    """``make(cls, **dict(zip(names, values)))`` as a function of the values, positionally, for an
    entity a handler builds once per partition: the fields this version lacks are dropped and the
    converters chosen once, not per call (a Produce answer over 1,000 partitions)."""
    known = _fields(cls)
    env = {"cls": cls}
    args = []
    for name in names:
        if name not in known:
            continue
        convert = known[name]
        if convert is None:
            args.append(f"{name}={name}")
        else:
            env[f"convert_{name}"] = convert
            args.append(f"{name}=convert_{name}({name})")
    exec(f"def build({', '.join(names)}):\n    return cls({', '.join(args)})", env)  # noqa: S102 -- names are field names
    return env["build"]
