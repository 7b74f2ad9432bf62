import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_codecs.varint import (
    INT32_MAX,
    INT32_MIN,
    INT64_MAX,
    INT64_MIN,
    UINT32_MAX,
    decode_uvarint,
    decode_varint,
    decode_varlong,
    encode_uvarint,
    encode_varint,
    encode_varlong,
)

int32s = st.integers(INT32_MIN, INT32_MAX)
int64s = st.integers(INT64_MIN, INT64_MAX)


@given(int32s, st.binary(max_size=3))
def test_varint_round_trip(value, tail):
    encoded = encode_varint(value)
    assert len(encoded) <= 5
    assert decode_varint(b"\xff" + encoded + tail, 1) == (value, 1 + len(encoded))


@given(int64s, st.binary(max_size=3))
def test_varlong_round_trip(value, tail):
    encoded = encode_varlong(value)
    assert len(encoded) <= 10
    assert decode_varlong(encoded + tail) == (value, len(encoded))


@given(st.integers(0, UINT32_MAX))
def test_uvarint_round_trip(value):
    encoded = encode_uvarint(value)
    assert decode_uvarint(bytearray(encoded)) == (value, len(encoded))


@pytest.mark.parametrize(
    ("value", "encoded"),
    # Zig-zag: 0, -1, 1, -2 ... map to 0, 1, 2, 3 (ByteUtils.writeVarint).
    [(0, b"\x00"), (-1, b"\x01"), (1, b"\x02"), (-2, b"\x03"), (63, b"\x7e"), (-64, b"\x7f"), (64, b"\x80\x01")],
)
def test_varint_known_encodings(value, encoded):
    assert encode_varint(value) == encoded
    assert encode_varlong(value) == encoded


def test_extremes():
    assert encode_varint(INT32_MIN) == b"\xff\xff\xff\xff\x0f"
    assert encode_varlong(INT64_MIN) == b"\xff" * 9 + b"\x01"
    assert encode_uvarint(300) == b"\xac\x02"


@pytest.mark.parametrize("encode", [encode_varint, encode_uvarint])
def test_encode_rejects_out_of_range(encode):
    with pytest.raises(ValueError):
        encode(1 << 32)


def test_encode_varlong_rejects_out_of_range():
    with pytest.raises(ValueError):
        encode_varlong(INT64_MAX + 1)


@pytest.mark.parametrize("buf", [b"", b"\x80", b"\xff\xff"])
def test_truncated_raises(buf):
    for decode in (decode_varint, decode_varlong, decode_uvarint):
        with pytest.raises(ValueError):
            decode(buf)


def test_too_long_raises():
    with pytest.raises(ValueError):
        decode_varint(b"\x80" * 5 + b"\x00")
    with pytest.raises(ValueError):
        decode_varlong(b"\x80" * 10 + b"\x00")


def test_overflowing_last_byte_is_dropped_as_byteutils_does():
    # ByteUtils.readVarint / readVarlong keep the low 32 / 64 bits of a 5- / 10-byte varint.
    assert decode_varint(b"\xff\xff\xff\xff\x1f") == (-(1 << 31), 5)
    assert decode_varint(b"\x90\x80\x80\x80\x10") == (8, 5)
    assert decode_varlong(b"\xff" * 9 + b"\x03") == (-(1 << 63), 10)
    assert decode_uvarint(b"\xff\xff\xff\xff\x1f") == ((1 << 32) - 1, 5)
