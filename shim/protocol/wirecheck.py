"""Every length and count of a request checked against its frame before kio parses it.

kio's native parser trusts declared lengths: a compact array that claims 2^32 elements makes it
preallocate tens of gigabytes and the allocator aborts the whole process. So before kio sees a
request, a checker walks the header and body, reading only lengths, counts, varints and tag
sizes and skipping everything else, and refuses any that claims more than the bytes left: an
array of N elements needs N times its element's smallest encoding, a string or bytes field its
length, a varint at most 5 bytes, a tagged field's data must end inside the frame (and be used up
exactly by a known tag). A compact string may hold at most 32767 bytes, as a legacy one can: Kafka's
generated readers refuse a longer one, so the request does not parse and the connection closes. A
frame that passes holds what it claims, so kio allocates no more than a small multiple of its size;
one that fails is malformed (:class:`MalformedRequest`).

The checkers are generated once per (api, version) from kio's own schema classes (the dataclass
fields' ``kafka_type`` / ``tag`` metadata, ``__flexible__``, nested entities) as straight-line
Python, compiled, and cached: no objects are built, the Produce hot path pays a few microseconds.
"""

from __future__ import annotations

import dataclasses
import functools
import struct
from typing import Callable

from kio.serial._introspect import EntityField, EntityTupleField
from kio.serial._introspect import classify_field, get_field_tag, is_optional

from .framing import FrameError

Checker = Callable[[bytes], None]

_FIXED = {
    "int8": 1, "uint8": 1, "bool": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4,
    "timedelta_i32": 4, "int64": 8, "uint64": 8, "float64": 8, "timedelta_i64": 8,
    "datetime_i64": 8, "uuid": 16,
}
_BYTES_LIKE = ("string", "bytes", "records")
MAX_STRING = 0x7FFF  # a string's length in bytes: a compact one may claim more, which Kafka refuses


class MalformedRequest(FrameError):
    """A length, count or varint of a request disagrees with the bytes its frame holds."""


def _bad(what: str, value: int, left: int) -> MalformedRequest:
    return MalformedRequest(f"{what}: {value} does not fit the {max(left, 0)} bytes left")


_I16 = struct.Struct(">h").unpack_from
_I32 = struct.Struct(">i").unpack_from


def _uvarint(b, p: int, e: int, what: str) -> tuple[int, int]:
    """An unsigned varint of at most 5 bytes whose value fits 32 bits (Kafka: ByteUtils)."""
    value = shift = 0
    while True:
        if p >= e:
            raise MalformedRequest(f"{what}: varint runs past the end of the frame")
        byte = b[p]
        p += 1
        if shift == 28:
            if byte > 0x0F:
                raise MalformedRequest(f"{what}: varint longer than 5 bytes or above 2^32")
            return value | byte << 28, p
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, p
        shift += 7


def min_size(cls: type) -> int:
    """The fewest bytes an entity of ``cls`` can be encoded in."""
    return _min_size(cls)


@functools.cache
def _min_size(cls: type) -> int:
    flexible = cls.__flexible__
    total = 1 if flexible else 0  # the tagged-field count
    for f in dataclasses.fields(cls):
        if get_field_tag(f) is None:
            total += _field_min(f, flexible, _is_request_header(cls))
    return total


def _field_min(f: dataclasses.Field, flexible: bool, header: bool) -> int:
    kind = classify_field(f)
    if kind.is_array:
        return 1 if flexible else 4
    if isinstance(kind, EntityField):
        return 1 if is_optional(f) else _min_size(kind.type_)
    kafka_type = f.metadata["kafka_type"]
    if kafka_type in _FIXED:
        return _FIXED[kafka_type]
    if header and f.name == "client_id":
        return 2
    if flexible:
        return 1
    return 2 if kafka_type == "string" else 4


def _is_request_header(cls: type) -> bool:
    # kio and Kafka: RequestHeader.client_id is a legacy nullable string in every header version.
    return cls.__name__ == "RequestHeader"


class _Source:
    """Python source of one checker module: a function per entity class."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.names: dict[type, str] = {}
        self.consts: dict[str, object] = {
            "_I16": _I16, "_I32": _I32, "_uv": _uvarint, "_bad": _bad, "MalformedRequest": MalformedRequest,
        }

    def entity(self, cls: type) -> str:
        if cls in self.names:
            return self.names[cls]
        name = f"_c{len(self.names)}_{cls.__name__}"
        self.names[cls] = name
        body = _Body(self, cls)
        body.fields()
        self.lines += [f"def {name}(b, p, e):", *body.out, "    return p", ""]
        return name


class _Body:
    """Statements of one entity's checker; ``p`` is the position, ``e`` the end it must stay in."""

    def __init__(self, src: _Source, cls: type) -> None:
        self.src, self.cls, self.out = src, cls, []
        self.flexible = cls.__flexible__
        self.header = _is_request_header(cls)
        self.skip = 0  # fixed-size bytes not yet added to p

    def emit(self, line: str, depth: int) -> None:
        self.out.append("    " * depth + line)

    def flush(self, depth: int) -> None:
        if self.skip:
            self.emit(f"p += {self.skip}", depth)
            self.skip = 0

    def fields(self) -> None:
        tagged = []
        for f in dataclasses.fields(self.cls):
            tag = get_field_tag(f)
            if tag is None:
                self.field(f, 1)
            else:
                tagged.append((tag, f))
        self.flush(1)
        if self.flexible:
            self.tags(tagged)

    def label(self, f: dataclasses.Field) -> str:
        return f"{self.cls.__name__}.{f.name}"

    def field(self, f: dataclasses.Field, depth: int) -> None:
        kind = classify_field(f)
        nullable = is_optional(f)
        if kind.is_array:
            self.array(f, kind, nullable, depth)
        elif isinstance(kind, EntityField):
            self.flush(depth)
            call = f"p = {self.src.entity(kind.type_)}(b, p, e)"
            if not nullable:
                self.emit(call, depth)
                return
            # KIP-893: an int8 marker before a nullable struct, -1 for null and 1 for present
            self.emit("m = b[p]", depth)
            self.emit("p += 1", depth)
            self.emit("if m == 1:", depth)
            self.emit(call, depth + 1)
            self.emit(f"elif m != 255: raise MalformedRequest({self.label(f) + ': bad null marker'!r})", depth)
        else:
            self.primitive(f.metadata["kafka_type"], nullable, self.label(f), depth, f.name)

    def primitive(self, kafka_type: str, nullable: bool, what: str, depth: int, name: str = "") -> None:
        if kafka_type in _FIXED:
            self.skip += _FIXED[kafka_type]
            return
        if kafka_type not in _BYTES_LIKE:
            raise NotImplementedError(f"no check for kafka_type {kafka_type!r} ({what})")
        self.flush(depth)
        if self.header and name == "client_id":
            self.length("_I16(b, p)[0]", 2, True, what, depth)
        elif self.flexible:
            self.varint_length(nullable, what, depth)
            if kafka_type == "string":  # Kafka's generated readers: "string field ... had invalid length"
                self.emit(f"if n > {MAX_STRING}: raise MalformedRequest({what!r} + "
                          f"f': a string of {{n}} bytes, over {MAX_STRING}')", depth)
        elif kafka_type == "string":
            self.length("_I16(b, p)[0]", 2, nullable, what, depth)
        else:
            self.length("_I32(b, p)[0]", 4, nullable, what, depth)
        self.emit("p += n", depth)

    def length(self, read: str, width: int, nullable: bool, what: str, depth: int, unit: int = 1) -> None:
        """A legacy length or count (of ``unit``-byte elements at least): -1 is null (then n
        becomes 0), other negatives are malformed."""
        self.emit(f"n = {read}", depth)
        self.emit(f"p += {width}", depth)
        self.emit(f"if {_times('n', unit)} > e - p or n < 0:", depth)
        check = "n != -1" if nullable else "True"
        self.emit(f"if {check}: raise _bad({what + ' length'!r}, n, e - p)", depth + 1)
        self.emit("n = 0", depth + 1)

    def varint_length(self, nullable: bool, what: str, depth: int, unit: int = 1) -> None:
        """A compact length or count: N+1 as an unsigned varint, 0 for null (then n becomes 0)."""
        self.emit("if p < e and b[p] < 128:", depth)
        self.emit("n = b[p]", depth + 1)
        self.emit("p += 1", depth + 1)
        self.emit("else:", depth)
        self.emit(f"n, p = _uv(b, p, e, {what!r})", depth + 1)
        self.emit("if n == 0:", depth)
        if not nullable:
            self.emit(f"raise MalformedRequest({what + ': null where a value is required'!r})", depth + 1)
        else:
            self.emit("n = 1", depth + 1)
        self.emit("n -= 1", depth)
        self.emit(f"if {_times('n', unit)} > e - p: raise _bad({what + ' length'!r}, n, e - p)", depth)

    def array(self, f, kind, nullable: bool, depth: int) -> None:
        what = self.label(f)
        self.flush(depth)
        if isinstance(kind, EntityTupleField):
            element = max(1, _min_size(kind.type_))
            call = f"p = {self.src.entity(kind.type_)}(b, p, e)"
        else:
            kafka_type = f.metadata["kafka_type"]
            element = _FIXED.get(kafka_type) or (1 if self.flexible else 2 if kafka_type == "string" else 4)
            call = None
        if self.flexible:
            self.varint_length(nullable, what, depth, element)
        else:
            self.length("_I32(b, p)[0]", 4, nullable, what, depth, element)
        if call is None and f.metadata["kafka_type"] in _FIXED:
            self.emit(f"p += n * {element}", depth)
            return
        self.emit("for _ in range(n):", depth)
        if call is not None:
            self.emit(call, depth + 1)
        else:
            inner = _Body(self.src, self.cls)
            inner.primitive(f.metadata["kafka_type"], False, what + "[]", depth + 1)
            inner.flush(depth + 1)
            self.out += inner.out

    def tags(self, tagged: list) -> None:
        """The tagged-field section: a count, then (tag, size, data) each; data must fit the frame.

        kio refuses a tag the version does not know, so the walk stops at the first one, and a
        count above the known tags (which only repeats could reach) is refused before the walk:
        a megabyte of empty tagged fields walked one by one held the event loop for seconds."""
        what = f"{self.cls.__name__} tagged fields"
        self.emit(f"t, p = _uv(b, p, e, {what!r})", 1)
        self.emit(f"if t * 2 > e - p: raise _bad({what + ' count'!r}, t, e - p)", 1)
        self.emit(f"if t > {len(tagged)}: raise MalformedRequest("
                  f"{what + f': more than the {len(tagged)} this version knows'!r})", 1)
        self.emit("for _ in range(t):", 1)
        self.emit(f"k, p = _uv(b, p, e, {what!r})", 2)
        self.emit(f"s, p = _uv(b, p, e, {what!r})", 2)
        self.emit(f"if s > e - p: raise _bad({what + ' size'!r}, s, e - p)", 2)
        self.emit("q = p + s", 2)
        known = ", ".join(str(tag) for tag, _ in tagged)
        self.emit(f"if k not in ({known}{',' if len(tagged) == 1 else ''}): "
                  f"raise MalformedRequest({what!r} + f': unknown tag {{k}}')", 2)
        for tag, f in sorted(tagged, key=lambda x: x[0]):
            self.emit(f"if k == {tag}:", 2)
            self.emit("outer, e = e, q", 3)
            inner = _Body(self.src, self.cls)
            inner.field(f, 3)
            inner.flush(3)
            self.out += inner.out
            self.emit(f"if p != q: raise MalformedRequest({self.label(f) + ': tagged field size disagrees with its data'!r})", 3)
            self.emit("e = outer", 3)
        self.emit("p = q", 2)


def _times(name: str, unit: int) -> str:
    return name if unit == 1 else f"{name} * {unit}"


def compile_checker(header_cls: type, body_cls: type) -> Checker:
    """A function that raises :class:`MalformedRequest` unless ``frame`` holds what it claims."""
    src = _Source()
    header = src.entity(header_cls)
    body = src.entity(body_cls)
    src.lines += [
        "def check(b):",
        "    e = len(b)",
        "    try:",
        f"        p = {body}(b, {header}(b, 0, e), e)",
        "    except (struct_error, IndexError) as exc:",
        "        raise MalformedRequest(f'truncated request: {exc}') from None",
        "    if p > e:",
        "        raise MalformedRequest(f'request needs {p} bytes, the frame holds {e}')",
    ]
    namespace = dict(src.consts, struct_error=struct.error)
    code = compile("\n".join(src.lines), f"<wirecheck {body_cls.__module__}>", "exec")
    exec(code, namespace)  # generated from kio's schema classes only, never from input
    return namespace["check"]


def source(header_cls: type, body_cls: type) -> str:
    """The generated source, for reading and debugging."""
    src = _Source()
    src.entity(header_cls)
    src.entity(body_cls)
    return "\n".join(src.lines)
