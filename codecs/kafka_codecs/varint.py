"""Kafka's variable-length integers (org.apache.kafka.common.utils.ByteUtils).

Record fields use zig-zag encoded varints (int32) and varlongs (int64);
flexible protocol versions use plain unsigned varints.  Decoders take
``(buf, pos)`` and return ``(value, new_pos)`` so callers can walk a buffer
without slicing it, and read as ByteUtils does (see _decode_unsigned).
Truncated or overlong input raises ValueError.
"""

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
UINT32_MAX = (1 << 32) - 1


def encode_uvarint(value: int) -> bytes:
    """Unsigned varint of a value in 0..2**32-1 (ByteUtils.writeUnsignedVarint)."""
    if not 0 <= value <= UINT32_MAX:
        raise ValueError(f"unsigned varint out of range: {value}")
    return _encode_unsigned(value)


def decode_uvarint(buf, pos: int = 0) -> tuple[int, int]:
    return _decode_unsigned(buf, pos, 32)


def encode_varint(value: int) -> bytes:
    """Zig-zag varint of an int32 (ByteUtils.writeVarint)."""
    if not INT32_MIN <= value <= INT32_MAX:
        raise ValueError(f"varint out of int32 range: {value}")
    return _encode_unsigned((value << 1) ^ (value >> 31))


def decode_varint(buf, pos: int = 0) -> tuple[int, int]:
    raw, pos = _decode_unsigned(buf, pos, 32)
    return (raw >> 1) ^ -(raw & 1), pos


def encode_varlong(value: int) -> bytes:
    """Zig-zag varlong of an int64 (ByteUtils.writeVarlong)."""
    if not INT64_MIN <= value <= INT64_MAX:
        raise ValueError(f"varlong out of int64 range: {value}")
    return _encode_unsigned((value << 1) ^ (value >> 63))


def decode_varlong(buf, pos: int = 0) -> tuple[int, int]:
    raw, pos = _decode_unsigned(buf, pos, 64)
    return (raw >> 1) ^ -(raw & 1), pos


def _encode_unsigned(value: int) -> bytes:
    if value < 0x80:
        return bytes((value,))
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _decode_unsigned(buf, pos: int, bits: int) -> tuple[int, int]:
    # As ByteUtils reads them: at most 5 bytes for 32 bits and 10 for 64 (one more is an error),
    # and bits past the type's width are dropped, not treated as corruption.
    byte = buf[pos] if pos < len(buf) else 0x80
    if byte < 0x80:
        return byte, pos + 1
    value = shift = 0
    for _ in range((bits + 6) // 7):
        if pos >= len(buf):
            raise ValueError("truncated varint")
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value & ((1 << bits) - 1), pos
        shift += 7
    raise ValueError("varint is too long")
