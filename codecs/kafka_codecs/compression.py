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

import cramjam

from .batch import Compression

XERIAL_MAGIC = b"\x82SNAPPY\x00"
# Magic, then version 1 and minimum compatible version 1 (SnappyCodec).
XERIAL_HEADER = XERIAL_MAGIC + struct.pack(">ii", 1, 1)
# SnappyOutputStream's default block size, in uncompressed bytes.
XERIAL_BLOCK_SIZE = 32 * 1024
_BLOCK_LENGTH = struct.Struct(">i")


def compress(codec: int, data, *, raw_snappy: bool = False) -> bytes:
    """Compress a batch payload; snappy is xerial-framed unless raw_snappy."""
    if codec == Compression.NONE:
        return bytes(data)
    if codec == Compression.GZIP:
        return bytes(cramjam.gzip.compress(data))
    if codec == Compression.SNAPPY:
        return bytes(cramjam.snappy.compress_raw(data)) if raw_snappy else _xerial_compress(data)
    if codec == Compression.LZ4:
        return _lz4_compress(data)
    if codec == Compression.ZSTD:
        return bytes(cramjam.zstd.compress(data))
    raise ValueError(f"unknown compression codec {codec}")


def decompress(codec: int, data) -> bytes:
    """Decompress a batch payload; corrupt input raises ValueError."""
    try:
        return _decompress(codec, data)
    except cramjam.DecompressionError as exc:
        raise ValueError(f"corrupt {Compression(codec).name} payload: {exc}") from None


def _decompress(codec: int, data) -> bytes:
    if codec == Compression.NONE:
        return bytes(data)
    if codec == Compression.GZIP:
        return bytes(cramjam.gzip.decompress(data))
    if codec == Compression.SNAPPY:
        if bytes(data[: len(XERIAL_MAGIC)]) == XERIAL_MAGIC:
            return _xerial_decompress(memoryview(data))
        return bytes(cramjam.snappy.decompress_raw(data))
    if codec == Compression.LZ4:
        return bytes(cramjam.lz4.decompress(data))
    if codec == Compression.ZSTD:
        return bytes(cramjam.zstd.decompress(data))
    raise ValueError(f"unknown compression codec {codec}")


def _lz4_compress(data) -> bytes:
    compressor = cramjam.lz4.Compressor(content_checksum=False, block_linked=False)
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
