"""Kafka's variable-length integers (org.apache.kafka.common.utils.ByteUtils).

Record fields use zig-zag encoded varints (int32) and varlongs (int64);
flexible protocol versions use plain unsigned varints.  Decoders take
``(buf, pos)`` and return ``(value, new_pos)`` so callers can walk a buffer
without slicing it.  Malformed input raises ValueError.
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
    # Stricter than ByteUtils, which silently drops bits past 32/64: a value
    # that does not fit is treated as corruption rather than truncated.
    try:
        byte = buf[pos]
        if byte < 0x80:
            return byte, pos + 1
        value, shift = byte & 0x7F, 7
        while True:
            pos += 1
            byte = buf[pos]
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                break
            shift += 7
            if shift >= bits:
                raise ValueError("varint is too long")
    except IndexError:
        raise ValueError("truncated varint") from None
    if value >> bits:
        raise ValueError("varint overflows its type")
    return value, pos + 1
