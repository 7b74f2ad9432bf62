"""Response encoding, compiled per entity class: the bytes kio's entity_writer writes, faster.

kio writes an entity field by field, each through a writer function that packs one value and
calls ``buffer.write``: about 2 µs per small nested entity, which is most of the cost of a
Metadata answer over 10,000 partitions or a Produce answer over 1,000. Here each entity class
gets one Python function, generated once from the same schema metadata kio reads (field order,
Kafka types, nullability, flexible versions, tags): runs of fixed-size fields become one
``struct.pack``, strings and arrays are written inline, and nested entities call their own
compiled writer. Tagged fields, and the records of Fetch responses (which may be file regions
sent with sendfile), go through kio's own writers, so both stay exactly kio's.

The target is ``messages._Parts``: bytes are appended to its ``_buf``; records go through its
``write``. tests/test_protocol_fastwrite.py checks every response class of every API and
version against kio byte for byte.
"""

from __future__ import annotations

import io
import struct
import uuid
from dataclasses import MISSING, fields
from typing import Any, Callable

from kio.serial import entity_writer
from kio.serial._implicit_defaults import get_tagged_field_default
from kio.serial._introspect import (
    EntityField,
    EntityTupleField,
    PrimitiveField,
    PrimitiveTupleField,
    classify_field,
    get_field_tag,
    get_schema_field_type,
    is_optional,
)
from kio.serial._serialize import get_field_writer
from kio.serial.errors import OutOfBoundValue
from kio.serial.writers import write_tagged_field

_ZERO_UUID = uuid.UUID(int=0).bytes
# Kafka type -> (struct code, expression turning the field's value into what is packed)
_FIXED = {
    "int8": ("b", "{}"), "int16": ("h", "{}"), "int32": ("i", "{}"), "int64": ("q", "{}"),
    "uint8": ("B", "{}"), "uint16": ("H", "{}"), "uint32": ("I", "{}"), "uint64": ("Q", "{}"),
    "float64": ("d", "{}"), "bool": ("?", "{}"), "error_code": ("h", "{}.value"),
    "timedelta_i32": ("i", "round({}.total_seconds() * 1000)"),
    "timedelta_i64": ("q", "round({}.total_seconds() * 1000)"),
    "datetime_i64": ("q", "round({}.timestamp() * 1000)"),
    "uuid": ("16s", "_uuid_bytes({})"),
}
_UV = [bytes([n]) for n in range(128)]


def _uv(n: int) -> bytes:
    """An unsigned varint."""
    if n < 128:
        return _UV[n]
    out = bytearray()
    while n > 0x7F:
        out.append(0x80 | (n & 0x7F))
        n >>= 7
    out.append(n)
    return bytes(out)


def _uuid_bytes(value) -> bytes:
    return _ZERO_UUID if value is None else value.bytes


def _text(value) -> bytes:
    return value.encode() if isinstance(value, str) else value


_I16 = struct.Struct(">h").pack
_I32 = struct.Struct(">i").pack


def _len16(n: int) -> bytes:
    """A legacy string's length: kio refuses one over 32767 bytes with OutOfBoundValue."""
    if n > 0x7FFF:
        raise OutOfBoundValue(f"String is too long for legacy string format ({n} > 32767)")
    return _I16(n)


def _len32(n: int) -> bytes:
    if n > 0x7FFFFFFF:
        raise OutOfBoundValue(f"Bytes is too long for legacy string format ({n} > 2147483647)")
    return _I32(n)


class _Source:
    """The generated function's text and the names it refers to."""

    def __init__(self, cls: type) -> None:
        self.cls = cls
        self.lines: list[str] = []
        self.env: dict[str, Any] = {"_uv": _uv, "_text": _text, "_uuid_bytes": _uuid_bytes, "_I16": _I16,
                                    "_I32": _I32, "_len16": _len16, "_len32": _len32,
                                    "_NULL_ARRAY": _I32(-1)}
        self.run: list[tuple[str, str]] = []  # pending fixed fields: (struct code, value expression)

    def name(self, value: Any) -> str:
        key = f"_k{len(self.env)}"
        self.env[key] = value
        return key

    def emit(self, line: str) -> None:
        self.flush()
        self.lines.append(line)

    def flush(self) -> None:
        if self.run:
            pack = self.name(struct.Struct(">" + "".join(c for c, _ in self.run)).pack)
            self.lines.append(f"p._buf += {pack}({', '.join(v for _, v in self.run)})")
            self.run = []


def _string(src: _Source, kind: str, flexible: bool, optional: bool, value: str, indent: str = "") -> None:
    """Strings and bytes: compact (length + 1 as an unsigned varint, 0 for null) or legacy (int16
    length for strings, int32 for bytes, -1 for null)."""
    if flexible:
        prefix, null = "_uv(len(b) + 1)", "b'\\x00'"
    else:
        size = "_len16" if kind == "string" else "_len32"
        prefix, null = f"{size}(len(b))", src.name(_I16(-1) if kind == "string" else _I32(-1))
    src.emit(f"{indent}b = {value}")
    if optional:
        src.emit(f"{indent}if b is None:")
        src.emit(f"{indent}    p._buf += {null}")
        src.emit(f"{indent}else:")
        indent += "    "
    src.emit(f"{indent}b = _text(b)")
    src.emit(f"{indent}p._buf += {prefix}")
    src.emit(f"{indent}p._buf += b")


def _primitive(src: _Source, field, kind: str, flexible: bool, optional: bool, value: str) -> None:
    if kind == "records" or (optional and kind not in ("string", "bytes", "uuid")):
        # records may be file regions (messages._Parts.write sends them with sendfile); the rare
        # nullable numbers and datetimes: kio's writer as it is
        writer = src.name(get_field_writer(field, flexible=flexible, is_request_header=False, is_tag=False))
        src.emit(f"{writer}(p, {value})")
    elif kind in ("string", "bytes"):
        _string(src, kind, flexible, optional, value)
    else:
        code, expr = _FIXED[kind]
        src.run.append((code, expr.format(value)))


def _array_length(src: _Source, flexible: bool, value: str) -> None:
    src.emit(f"items = {value}")
    src.emit("if items is None:")
    src.emit("    p._buf += " + ("b'\\x00'" if flexible else "_NULL_ARRAY"))
    src.emit("else:")
    src.emit("    p._buf += " + ("_uv(len(items) + 1)" if flexible else "_I32(len(items))"))


def _field(src: _Source, field, flexible: bool) -> None:
    value = f"e.{field.name}"
    shape = classify_field(field)
    optional = is_optional(field)
    if isinstance(shape, PrimitiveField):
        _primitive(src, field, get_schema_field_type(field), flexible, optional, value)
    elif isinstance(shape, EntityField):
        inner = src.name(compiled_writer(shape.type_))
        if optional:
            src.emit(f"if {value} is None:")
            src.emit("    p._buf += b'\\xff'")
            src.emit("else:")
            src.emit("    p._buf += b'\\x01'")
            src.emit(f"    {inner}(p, {value})")
        else:
            src.emit(f"{inner}(p, {value})")
    elif isinstance(shape, EntityTupleField):
        inner = src.name(compiled_writer(shape.type_))
        _array_length(src, flexible, value)
        src.emit("    for it in items:")
        src.emit(f"        {inner}(p, it)")
    elif isinstance(shape, PrimitiveTupleField):
        kind = get_schema_field_type(field)
        _array_length(src, flexible, value)
        src.emit("    for it in items:")
        if kind in ("string", "bytes"):
            _string(src, kind, flexible, False, "it", indent="        ")
        else:
            code, expr = _FIXED[kind]
            src.emit(f"        p._buf += {src.name(struct.Struct('>' + code).pack)}({expr.format('it')})")
    else:  # pragma: no cover - kio knows no other shapes
        raise NotImplementedError(f"{src.cls.__name__}.{field.name}: {shape!r}")


def _tagged_writer(cls: type, tagged: list) -> Callable:
    """kio's tagged-field section, as its entity_writer writes it: fields at their default are left out."""
    entries = []
    for field in sorted(tagged, key=get_field_tag):
        writer = get_field_writer(field, flexible=True, is_request_header=False, is_tag=True)
        entries.append((get_field_tag(field), field, writer, get_tagged_field_default(field)))

    def write_tags(p, e) -> None:
        count, body = 0, io.BytesIO()
        for tag, field, writer, implicit in entries:
            value = getattr(e, field.name)
            if value == field.default or (field.default is MISSING and value == implicit):
                continue
            write_tagged_field(buffer=body, tag=tag, writer=writer, value=value)
            count += 1
        p._buf += _uv(count)
        p._buf += body.getvalue()

    return write_tags


_CACHE: dict[type, Callable] = {}


def compiled_writer(cls: type) -> Callable:
    """``writer(parts, entity)`` for entity class ``cls``, generated on first use."""
    writer = _CACHE.get(cls)
    if writer is None:
        writer = _CACHE[cls] = _compile(cls)
    return writer


def _compile(cls: type) -> Callable:
    if cls.__name__ == "RequestHeader":  # its client_id is a legacy string in every version: kio's way
        return entity_writer(cls)
    src = _Source(cls)
    flexible = cls.__flexible__
    tagged = []
    for field in fields(cls):
        if get_field_tag(field) is not None:
            tagged.append(field)
        else:
            _field(src, field, flexible)
    if flexible:
        if tagged:
            src.emit(f"{src.name(_tagged_writer(cls, tagged))}(p, e)")
        else:
            src.run.append(("B", "0"))  # no tagged fields: a count of zero
    src.flush()
    body = "\n".join("    " + line for line in src.lines) or "    pass"
    code = f"def write_{cls.__name__}(p, e):\n{body}\n"
    exec(compile(code, f"<fastwrite {cls.__module__}.{cls.__name__}>", "exec"), src.env)  # noqa: S102
    return src.env[f"write_{cls.__name__}"]
