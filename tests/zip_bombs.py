"""Compressed payloads that decompress to far more than they are, built without holding the
output anywhere (tests of bounded decompression)."""

from __future__ import annotations

from kafka_codecs import HEADER_SIZE, Compression, encode_batch
from kafka_codecs.batch import write_crc
from kafka_codecs.varint import encode_varint

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
RLE_BLOCK = 128 << 10  # zstd's largest block


def zstd_rle_frame(prefix: bytes, zeros: int, suffix: bytes = b"") -> bytes:
    """A zstd frame of ``prefix``, ``zeros`` zero bytes and ``suffix``, the zeros as RLE blocks of
    128 KiB (four bytes each, RFC 8878 3.1.1.2): 256 MiB in 8 KiB, with no content size declared."""
    out = bytearray(ZSTD_MAGIC + b"\x00\x38")  # frame header: no content size; window 128 KiB

    def block(kind: int, size: int, body: bytes, last: bool = False) -> None:
        out.extend((last | kind << 1 | size << 3).to_bytes(3, "little"))
        out.extend(body)

    block(0, len(prefix), prefix)  # raw
    for left in range(zeros, 0, -RLE_BLOCK):
        block(1, min(left, RLE_BLOCK), b"\x00")  # RLE
    block(0, len(suffix), suffix, last=True)
    return bytes(out)


def zero_value_bomb(value_bytes: int) -> bytes:
    """A valid zstd batch of one record whose value is ``value_bytes`` zeros: nothing but its
    decompressed size is wrong with it."""
    value_head = b"\x00\x00\x00\x01" + encode_varint(value_bytes)  # attributes, both deltas 0, null key
    body_length = len(value_head) + value_bytes + 1  # then no headers
    frame = zstd_rle_frame(encode_varint(body_length) + value_head, value_bytes, b"\x00")
    batch = bytearray(encode_batch([(None, b"", [], 1)], compression=Compression.ZSTD))
    del batch[HEADER_SIZE:]
    batch += frame
    batch[8:12] = (len(batch) - 12).to_bytes(4, "big")  # batch_length
    write_crc(batch)
    return bytes(batch)
