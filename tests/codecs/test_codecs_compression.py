import os
import struct

import cramjam
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_codecs import Compression, compress, decode_batch, decompress
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


def _xxh32(data: bytes, seed: int = 0) -> int:
    """XXH32, for the header checksum of an LZ4 frame descriptor (short inputs only)."""
    p1, p2, p3, p4, p5, m = 2654435761, 2246822519, 3266489917, 668265263, 374761393, 0xFFFFFFFF
    assert len(data) < 16

    def rotl(x, r):
        return ((x << r) | (x >> (32 - r))) & m

    h, pos = (seed + p5 + len(data)) & m, 0
    while pos + 4 <= len(data):
        h = (rotl((h + int.from_bytes(data[pos : pos + 4], "little") * p3) & m, 17) * p4) & m
        pos += 4
    for byte in data[pos:]:
        h = (rotl((h + byte * p5) & m, 11) * p1) & m
    h = ((h ^ (h >> 15)) * p2) & m
    h = ((h ^ (h >> 13)) * p3) & m
    return h ^ (h >> 16)


def _lz4_with_content_size(data: bytes, declared: int | None = None) -> bytes:
    """An LZ4 frame with the Content Size field, as librdkafka writes it; ``declared`` overrides
    the size written there (with a matching header checksum, which decoders check)."""
    import lz4.frame

    frame = bytearray(lz4.frame.compress(data, store_size=True))
    assert frame[4] & 0x08 and not frame[4] & 0x01  # content size; no dictionary id
    assert frame[14] == (_xxh32(bytes(frame[4:14])) >> 8) & 0xFF
    if declared is not None:
        frame[6:14] = declared.to_bytes(8, "little")
        frame[14] = (_xxh32(bytes(frame[4:14])) >> 8) & 0xFF
    return bytes(frame)


@pytest.mark.parametrize("copy", [True, False])
@pytest.mark.parametrize("declared", [None, 0, 1, "minus-one", "plus-one", 1 << 40])
def test_lz4_content_size_is_only_a_hint(declared, copy):
    # The decode sized by the frame's Content Size gives what the plain decode gives, whatever
    # the field says: the same bytes, or the same refusal (liblz4 checks the field itself).
    data = os.urandom(3000) + b"x" * 100_000
    size = {"minus-one": len(data) - 1, "plus-one": len(data) + 1}.get(declared, declared)
    frame = _lz4_with_content_size(data, size)
    try:
        expected = bytes(cramjam.lz4.decompress(frame))
    except cramjam.DecompressionError:
        with pytest.raises(ValueError, match="corrupt LZ4"):
            decompress(Compression.LZ4, frame, copy=copy)
        return
    out = decompress(Compression.LZ4, frame, copy=copy)
    assert bytes(out) == expected == data
    assert isinstance(out, bytes) == copy


def test_lz4_frame_of_librdkafka_has_its_content_size():
    from kafka_codecs.compression import _lz4_content_size

    assert _lz4_content_size(_lz4_with_content_size(b"abc" * 1000)) == 3000
    assert _lz4_content_size(compress(Compression.LZ4, b"abc" * 1000)) is None  # as Java writes it


def test_decompress_without_copy_reads_the_same(monkeypatch):
    data = b"record bytes " * 5000
    for codec in Compression:
        assert bytes(decompress(codec, compress(codec, data), copy=False)) == data
    view = memoryview(data)
    assert decompress(Compression.NONE, view, copy=False) is view


@pytest.mark.parametrize("copy", [True, False])
@pytest.mark.parametrize("data", [os.urandom(1 << 20), b"\0" * (1 << 22), b"abc" * 70_000, b""],
                         ids=["incompressible", "ratio-200", "ratio-100", "empty"])
def test_lz4_decode_into_a_guessed_buffer(data, copy):
    # No Content Size (as Java and librdkafka write frames): the size is guessed, and a frame
    # that does not fit is decoded again into a larger buffer.
    frame = compress(Compression.LZ4, data)
    assert bytes(decompress(Compression.LZ4, frame, copy=copy)) == data


def test_lz4_scratch_buffer_is_per_thread():
    import threading

    frames = {i: compress(Compression.LZ4, bytes([i]) * 300_000) for i in range(4)}
    seen, start = {}, threading.Barrier(4)

    def decode(i):
        start.wait()
        for _ in range(20):
            view = decompress(Compression.LZ4, frames[i], copy=False)
            seen.setdefault(i, set()).add(bytes(view) == bytes([i]) * 300_000)

    threads = [threading.Thread(target=decode, args=(i,)) for i in frames]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {i: {True} for i in frames}


# -- bounded decompression: a zip bomb is refused before it is all held -------------------------

from kafka_codecs.compression import DecompressedTooLarge  # noqa: E402

from zip_bombs import ZSTD_MAGIC, zero_value_bomb, zstd_rle_frame  # noqa: E402


def test_the_zstd_rle_frame_is_what_it_says():
    assert bytes(cramjam.zstd.decompress(zstd_rle_frame(b"ab", 300_000, b"cd"))) == b"ab" + bytes(300_000) + b"cd"
    (record,) = decode_batch(zero_value_bomb(300_000))[1]
    assert (record.key, record.value, record.headers) == (None, bytes(300_000), ())


BOMB = 4 << 20  # decompressed bytes; each case's limit is 1 MiB


def _bombs():
    zeros = bytes(BOMB)
    yield "gzip", Compression.GZIP, compress(Compression.GZIP, zeros)
    yield "gzip-two-members", Compression.GZIP, compress(Compression.GZIP, zeros[:BOMB // 2]) * 2
    yield "snappy-raw", Compression.SNAPPY, compress(Compression.SNAPPY, zeros, raw_snappy=True)
    yield "snappy-xerial", Compression.SNAPPY, compress(Compression.SNAPPY, zeros)
    yield "lz4", Compression.LZ4, compress(Compression.LZ4, zeros)
    yield "lz4-content-size", Compression.LZ4, _lz4_with_content_size(zeros)
    yield "zstd", Compression.ZSTD, compress(Compression.ZSTD, zeros)  # declares its content size
    yield "zstd-undeclared", Compression.ZSTD, zstd_rle_frame(b"", BOMB)


@pytest.mark.parametrize("copy", [True, False])
@pytest.mark.parametrize("name,codec,packed", list(_bombs()), ids=lambda v: v if isinstance(v, str) else "")
def test_a_payload_past_the_limit_is_refused(name, codec, packed, copy):
    with pytest.raises(DecompressedTooLarge):
        decompress(codec, packed, copy=copy, limit=1 << 20)
    assert len(decompress(codec, packed, copy=copy, limit=BOMB)) == BOMB  # exactly at the limit
    assert bytes(decompress(codec, packed, copy=copy, limit=BOMB + 1)) == bytes(BOMB)


@pytest.mark.parametrize("codec", [c for c in Compression if c != Compression.NONE])
def test_garbage_under_a_limit_is_still_corrupt_not_too_large(codec):
    with pytest.raises(ValueError) as caught:
        decompress(codec, b"\x00garbage-garbage-garbage" * 4, limit=1 << 20)
    assert not isinstance(caught.value, DecompressedTooLarge)


def test_a_zstd_frame_declaring_a_terabyte_is_refused_from_its_header():
    frame = ZSTD_MAGIC + bytes([0xE0]) + struct.pack("<Q", 1 << 40) + b"\x01\x00\x00"
    with pytest.raises(DecompressedTooLarge, match="declares 1099511627776 bytes"):
        decompress(Compression.ZSTD, frame, limit=64 << 20)


FORGED = {
    # a raw snappy block of two bytes whose preamble declares 4 GiB: the decoder allocated it first
    "snappy-raw": (Compression.SNAPPY, b"\xfe\xff\xff\xff\x0f\x00a"),
    "snappy-xerial": (Compression.SNAPPY, XERIAL_HEADER + struct.pack(">i", 7) + b"\xfe\xff\xff\xff\x0f\x00a"),
}


@pytest.mark.parametrize("name", sorted(FORGED))
def test_a_forged_snappy_length_allocates_nothing_even_without_a_limit(name):
    """Run under a 1 GiB address-space limit, where an allocation of what the payload declares
    fails: a failed allocation in the native decoder aborts the process (Rust's handle_alloc_error),
    which took the whole broker down for one Produce. The payload is now refused as corrupt."""
    import subprocess
    import sys

    codec, packed = FORGED[name]
    script = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n"
              "from kafka_codecs import decompress\n"
              "try:\n    decompress(int(sys.argv[1]), bytes.fromhex(sys.argv[2]))\n"
              "except ValueError as exc:\n    print('refused:', exc)\n")
    done = subprocess.run([sys.executable, "-c", script, str(int(codec)), packed.hex()], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("refused:"), (done.returncode, done.stderr[-500:])
