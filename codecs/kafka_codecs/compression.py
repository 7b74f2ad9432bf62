"""Record-batch payload codecs (org.apache.kafka.common.compress.*).

All codecs come from cramjam.  Two details matter for Java interop:

* snappy: the Java client writes snappy-java's SnappyOutputStream framing
  ("xerial": a 16-byte header, then length-prefixed raw snappy blocks), while
  some other clients write plain raw snappy.  Readers must accept both.
* lz4: Kafka's Lz4BlockInputStream rejects frames with dependent blocks
  ("Dependent block stream is unsupported"), and cramjam.lz4.compress emits
  linked blocks, so compression goes through a Compressor with
  block_linked=False (KIP-57 frame format, as Lz4BlockOutputStream writes).
"""

import struct
import threading

import cramjam

from .batch import Compression

XERIAL_MAGIC = b"\x82SNAPPY\x00"
# Magic, then version 1 and minimum compatible version 1 (SnappyCodec).
XERIAL_HEADER = XERIAL_MAGIC + struct.pack(">ii", 1, 1)
# SnappyOutputStream's default block size, in uncompressed bytes.
XERIAL_BLOCK_SIZE = 32 * 1024
_BLOCK_LENGTH = struct.Struct(">i")


def compress(codec: int, data, *, raw_snappy: bool = False, level: int | None = None) -> bytes:
    """Compress a batch payload; snappy is xerial-framed unless raw_snappy. ``level`` is the codec's
    compression level (Kafka's compression.gzip/lz4/zstd.level; gzip -1 is zlib's default); None
    keeps each library's default."""
    if codec == Compression.NONE:
        return bytes(data)
    if codec == Compression.GZIP:
        return bytes(cramjam.gzip.compress(data, level=None if level == -1 else level))
    if codec == Compression.SNAPPY:
        return bytes(cramjam.snappy.compress_raw(data)) if raw_snappy else _xerial_compress(data)
    if codec == Compression.LZ4:
        return _lz4_compress(data, level)
    if codec == Compression.ZSTD:
        return bytes(cramjam.zstd.compress(data, level=level))
    raise ValueError(f"unknown compression codec {codec}")


def decompress(codec: int, data, *, copy: bool = True):
    """Decompress a batch payload; corrupt input raises ValueError.

    With ``copy=False`` the result may be any object with the buffer protocol rather than bytes
    (a cramjam Buffer, ``data`` itself for NONE, or for LZ4 a view of a buffer that the next
    call in the same thread reuses), which saves copies when it is read at once and let go."""
    try:
        out = _decompress(codec, data, copy)
    except cramjam.DecompressionError as exc:
        raise ValueError(f"corrupt {Compression(codec).name} payload: {exc}") from None
    return bytes(out) if copy and not isinstance(out, bytes) else out


def _decompress(codec: int, data, copy: bool):
    if codec == Compression.NONE:
        return data
    if codec == Compression.GZIP:
        return cramjam.gzip.decompress(data)
    if codec == Compression.SNAPPY:
        if bytes(data[: len(XERIAL_MAGIC)]) == XERIAL_MAGIC:
            return _xerial_decompress(memoryview(data))
        return cramjam.snappy.decompress_raw(data)
    if codec == Compression.LZ4:
        return _lz4_decompress(data, copy)
    if codec == Compression.ZSTD:
        return cramjam.zstd.decompress(data)
    raise ValueError(f"unknown compression codec {codec}")


LZ4_MAGIC = b"\x04\x22\x4d\x18"
_scratch = threading.local()


def _lz4_decompress(data, copy: bool):
    # cramjam decodes an LZ4 frame about three times faster into a buffer that is large enough
    # than into one it grows. The frame's Content Size field (librdkafka and Java do not write
    # it; Kafka's reader ignores it) gives the size when present; otherwise a guess, four times
    # larger on each miss. The buffer is reused within a thread when the caller only reads the
    # result before its next call (copy=False).
    size = _lz4_content_size(data)
    guess = size + 1 if size is not None and size <= 255 * len(data) + 1024 else 4 * len(data) + 1024
    while guess <= 255 * len(data) + 1024:
        buf = bytearray(guess) if copy else _scratch_buffer(guess)
        try:
            n = cramjam.lz4.decompress_into(data, memoryview(buf)[:guess])
        except cramjam.DecompressionError:
            guess *= 4  # too small, or corrupt: the plain decode below tells which
            continue
        return bytes(memoryview(buf)[:n]) if copy else memoryview(buf)[:n]
    return cramjam.lz4.decompress(data)


def _scratch_buffer(size: int) -> bytearray:
    buf = getattr(_scratch, "buf", None)
    if buf is None or len(buf) < size:
        buf = _scratch.buf = bytearray(max(size, 1 << 20))
    return buf


def _lz4_content_size(data) -> int | None:
    """The Content Size field of an LZ4 frame header, if the frame has one."""
    if len(data) < 14 or bytes(data[:4]) != LZ4_MAGIC or not data[4] & 0x08:
        return None
    return int.from_bytes(data[6:14], "little")


def _lz4_compress(data, level: int | None = None) -> bytes:
    options = {} if level is None else {"level": level}
    compressor = cramjam.lz4.Compressor(content_checksum=False, block_linked=False, **options)
    # The streaming Compressor accepts only bytes (bytes(b) is b, no copy).
    compressor.compress(bytes(data))
    return bytes(compressor.finish())


def _xerial_compress(data) -> bytes:
    view = memoryview(data)
    out = bytearray(XERIAL_HEADER)
    for start in range(0, len(view), XERIAL_BLOCK_SIZE):
        block = cramjam.snappy.compress_raw(view[start : start + XERIAL_BLOCK_SIZE])
        out += _BLOCK_LENGTH.pack(len(block))
        out += block
    return bytes(out)


def _xerial_decompress(view: memoryview) -> bytes:
    # The version fields after the magic are not checked: some producers are
    # known to write them little-endian, and the block format is the same.
    pos, end = len(XERIAL_HEADER), len(view)
    if end < pos:
        raise ValueError("truncated xerial snappy header")
    out = bytearray()
    while pos < end:
        if end - pos < _BLOCK_LENGTH.size:
            raise ValueError("truncated xerial snappy block length")
        (length,) = _BLOCK_LENGTH.unpack_from(view, pos)
        pos += _BLOCK_LENGTH.size
        if length < 0 or end - pos < length:
            raise ValueError("truncated xerial snappy block")
        out += cramjam.snappy.decompress_raw(view[pos : pos + length])
        pos += length
    return bytes(out)
