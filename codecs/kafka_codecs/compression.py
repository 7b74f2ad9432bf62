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
import zlib

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


class DecompressedTooLarge(ValueError):
    """The payload decompresses to more than the limit the caller gave."""


def decompress(codec: int, data, *, copy: bool = True, limit: int | None = None):
    """Decompress a batch payload; corrupt input raises ValueError.

    With ``copy=False`` the result may be any object with the buffer protocol rather than bytes
    (a cramjam Buffer, ``data`` itself for NONE, or for LZ4 a view of a buffer that the next
    call in the same thread reuses), which saves copies when it is read at once and let go.

    ``limit``: the most bytes the result may have. Past it DecompressedTooLarge is raised, and no
    more than about ``limit`` bytes were ever allocated: a few kilobytes of zstd can claim (or
    really hold) gigabytes, and neither the output nor a size the payload declares is trusted."""
    try:
        out = _decompress(codec, data, copy, limit)
    except cramjam.DecompressionError as exc:
        raise ValueError(f"corrupt {Compression(codec).name} payload: {exc}") from None
    except zlib.error as exc:
        raise ValueError(f"corrupt GZIP payload: {exc}") from None
    return bytes(out) if copy and not isinstance(out, bytes) else out


def _decompress(codec: int, data, copy: bool, limit: int | None):
    if codec == Compression.NONE:
        return data
    if codec == Compression.GZIP:
        return cramjam.gzip.decompress(data) if limit is None else _gzip_decompress(data, limit)
    if codec == Compression.SNAPPY:
        if bytes(data[: len(XERIAL_MAGIC)]) == XERIAL_MAGIC:
            return _xerial_decompress(memoryview(data), limit)
        _check_declared(_snappy_length(data), limit)
        return cramjam.snappy.decompress_raw(data)
    if codec == Compression.LZ4:
        return _lz4_decompress(data, copy, limit)
    if codec == Compression.ZSTD:
        return cramjam.zstd.decompress(data) if limit is None else _zstd_decompress(data, limit)
    raise ValueError(f"unknown compression codec {codec}")


def _check_declared(size: int, limit: int | None) -> None:
    if limit is not None and size > limit:
        raise DecompressedTooLarge(f"the payload declares {size} bytes decompressed, more than the limit of {limit}")


def _gzip_decompress(data, limit: int) -> bytes:
    """GZIP members one after another (Java's GZIPInputStream reads them so), at most ``limit``
    bytes in all: zlib stops at max_length instead of inflating the rest."""
    out = bytearray()
    rest = data
    while True:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        out += inflater.decompress(rest, limit + 1 - len(out))
        if len(out) > limit:
            raise DecompressedTooLarge(f"the payload decompresses to more than the limit of {limit} bytes")
        if not inflater.eof:
            raise ValueError("corrupt GZIP payload: truncated")
        rest = inflater.unused_data
        if not rest:
            return out


def _decompress_bounded(decompress_into, data, guess: int, limit: int | None, ceiling: int | None = None,
                        alloc=bytearray):
    """``decompress_into`` with buffers growing fourfold from ``guess`` up to ``limit`` + 1 bytes
    or ``ceiling`` (the most the format can make of ``data``), whichever is less. A payload that
    does not fit the last buffer is corrupt, or too large when that buffer was the limit's."""
    top = min(t for t in (None if limit is None else limit + 1, ceiling) if t is not None)
    size = min(guess, top)
    while True:
        buf = alloc(size)
        try:
            n = decompress_into(data, memoryview(buf)[:size])
        except cramjam.DecompressionError as exc:
            if size < top:
                size = min(4 * size, top)  # too small, or corrupt: the last buffer tells which
                continue
            if limit is not None and size > limit and "failed to write whole buffer" in str(exc):
                raise DecompressedTooLarge(f"the payload decompresses to more than the limit of {limit} bytes") from None
            raise
        if limit is not None and n > limit:
            raise DecompressedTooLarge(f"the payload decompresses to more than the limit of {limit} bytes")
        return memoryview(buf)[:n]


def _zstd_decompress(data, limit: int):
    size = _zstd_content_size(data)
    if size is not None:
        _check_declared(size, limit)
    return _decompress_bounded(cramjam.zstd.decompress_into, data,
                               8 * len(data) + 1024 if size is None else size + 1, limit)


def _zstd_content_size(data) -> int | None:
    """The Frame_Content_Size of the first zstd frame (RFC 8878 3.1.1.1), if it has one."""
    if len(data) < 6 or bytes(data[:4]) != ZSTD_MAGIC:
        return None
    fhd = data[4]
    single_segment = fhd >> 5 & 1
    width = (single_segment, 2, 4, 8)[fhd >> 6]
    start = 5 + (0 if single_segment else 1) + (0, 1, 2, 4)[fhd & 3]
    if width == 0 or len(data) < start + width:
        return None
    size = int.from_bytes(bytes(data[start : start + width]), "little")
    return size + 256 if width == 2 else size


def _snappy_length(data) -> int:
    """The uncompressed length a raw snappy block declares (a varint before the block), which
    the decoder allocates before it decodes anything: refused when no block of this size could
    hold it (a snappy element expands at most 64 bytes from 3), as a bad allocation aborts."""
    size = shift = 0
    for i in range(min(5, len(data))):
        b = data[i]
        size |= (b & 0x7F) << shift
        if b < 0x80:
            if size > SNAPPY_MAX_EXPANSION * len(data):
                raise ValueError(f"corrupt SNAPPY payload: {len(data)} bytes cannot hold the {size} declared")
            return size
        shift += 7
    raise ValueError("corrupt SNAPPY payload: bad length preamble")


SNAPPY_MAX_EXPANSION = 22
LZ4_MAGIC = b"\x04\x22\x4d\x18"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_scratch = threading.local()


def _lz4_decompress(data, copy: bool, limit: int | None = None):
    # cramjam decodes an LZ4 frame about three times faster into a buffer that is large enough
    # than into one it grows. The frame's Content Size field (librdkafka and Java do not write
    # it; Kafka's reader ignores it) gives the size when present; otherwise a guess, four times
    # larger on each miss. The buffer is reused within a thread when the caller only reads the
    # result before its next call (copy=False). An LZ4 block expands at most 255-fold, so a
    # frame that does not fit 255 times its size is corrupt (cramjam.lz4.decompress would
    # allocate whatever Content Size a corrupt frame claims).
    ceiling = 255 * len(data) + 1024
    size = _lz4_content_size(data)
    if size is not None:
        _check_declared(size, limit)
    guess = size + 1 if size is not None and size < ceiling else 4 * len(data) + 1024
    out = _decompress_bounded(cramjam.lz4.decompress_into, data, guess, limit, ceiling,
                              bytearray if copy else _scratch_buffer)
    return bytes(out) if copy else out


SCRATCH_KEPT_BYTES = 16 << 20  # a thread keeps its LZ4 buffer up to this size between calls


def _scratch_buffer(size: int) -> bytearray:
    if size > SCRATCH_KEPT_BYTES:
        return bytearray(size)
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


def _xerial_decompress(view: memoryview, limit: int | None = None) -> bytes:
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
        _check_declared(len(out) + _snappy_length(view[pos : pos + length]), limit)
        out += cramjam.snappy.decompress_raw(view[pos : pos + length])
        pos += length
    return bytes(out)
