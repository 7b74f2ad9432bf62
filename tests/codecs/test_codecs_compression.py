import os
import struct

import cramjam
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_codecs import Compression, compress, decompress
from kafka_codecs.compression import XERIAL_BLOCK_SIZE, XERIAL_HEADER

payloads = st.one_of(st.binary(max_size=2000), st.builds(lambda b, n: b * n, st.binary(min_size=1, max_size=20), st.integers(1, 500)))


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(list(Compression)), payloads)
def test_round_trip(codec, data):
    assert decompress(codec, compress(codec, data)) == data


@pytest.mark.parametrize("codec", list(Compression))
def test_accepts_any_buffer(codec):
    data = b"abc" * 1000
    packed = compress(codec, bytearray(data))
    assert decompress(codec, memoryview(bytearray(packed))) == data


def test_snappy_writes_xerial_framing():
    # Larger than one SnappyOutputStream block, so several blocks are written.
    data = os.urandom(1000) * 100
    packed = compress(Compression.SNAPPY, data)
    assert packed[:16] == b"\x82SNAPPY\x00" + b"\x00\x00\x00\x01" * 2 == XERIAL_HEADER
    first_len = struct.unpack_from(">i", packed, 16)[0]
    first = cramjam.snappy.decompress_raw(packed[20 : 20 + first_len])
    assert bytes(first) == data[:XERIAL_BLOCK_SIZE]


def test_snappy_reads_raw_and_xerial():
    data = b"hello snappy " * 300
    raw = compress(Compression.SNAPPY, data, raw_snappy=True)
    assert not raw.startswith(b"\x82SNAPPY")
    assert decompress(Compression.SNAPPY, raw) == data
    assert decompress(Compression.SNAPPY, bytes(cramjam.snappy.compress_raw(data))) == data


def test_snappy_xerial_version_fields_not_checked():
    data = b"x" * 100
    packed = bytearray(compress(Compression.SNAPPY, data))
    packed[8:16] = struct.pack("<ii", 1, 1)
    assert decompress(Compression.SNAPPY, packed) == data


def test_lz4_frame_is_kafka_compatible():
    # Kafka's Lz4BlockInputStream (KIP-57) only accepts independent blocks.
    data = os.urandom(500) * 400  # several 64 KiB blocks
    packed = compress(Compression.LZ4, data)
    assert packed[:4] == b"\x04\x22\x4d\x18"
    flg = packed[4]
    assert flg >> 6 == 1, "frame version 01"
    assert flg & 0x20, "block independence"
    assert decompress(Compression.LZ4, packed) == data


def test_lz4_reads_linked_blocks():
    data = os.urandom(500) * 400
    assert decompress(Compression.LZ4, bytes(cramjam.lz4.compress(data))) == data


def test_zstd_reads_concatenated_frames():
    packed = bytes(cramjam.zstd.compress(b"ab")) + bytes(cramjam.zstd.compress(b"cd"))
    assert decompress(Compression.ZSTD, packed) == b"abcd"


@pytest.mark.parametrize("codec", [5, 6, 7, -1])
def test_unknown_codec(codec):
    with pytest.raises(ValueError):
        compress(codec, b"x")
    with pytest.raises(ValueError):
        decompress(codec, b"x")


@pytest.mark.parametrize("codec", [c for c in Compression if c != Compression.NONE])
@pytest.mark.parametrize("garbage", [b"", b"\x07", b"not compressed at all", b"\xff" * 64])
def test_garbage_raises_value_error(codec, garbage):
    with pytest.raises(ValueError):
        decompress(codec, garbage)


@pytest.mark.parametrize("codec", [c for c in Compression if c != Compression.NONE])
def test_truncated_raises_value_error(codec):
    packed = compress(codec, os.urandom(100) * 50)
    for cut in (len(packed) - 1, len(packed) // 2, 17):
        with pytest.raises(ValueError):
            decompress(codec, packed[:cut])


@pytest.mark.parametrize("packed", [XERIAL_HEADER[:12], XERIAL_HEADER + b"\x00\x00", XERIAL_HEADER + b"\x00\x00\x00\x09abc", XERIAL_HEADER + b"\xff\xff\xff\xff"])
def test_truncated_xerial_raises_value_error(packed):
    with pytest.raises(ValueError):
        decompress(Compression.SNAPPY, packed)
