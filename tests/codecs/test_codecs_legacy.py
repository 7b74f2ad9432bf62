"""Message sets of magic 0 and 1: read, written, converted to and from v2 batches, checked against
kafka-python's own legacy-format builder (an independent writer of the same format)."""

from __future__ import annotations

import lz4.frame
import pytest
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from kafka_codecs import decode_batch, encode_batch
from kafka_codecs.legacy import (CorruptMessage, InvalidBatch, LegacyRecord, _entry, _message, _xxh32, down_convert,
                                 read_message_set, up_convert, write_message_set)

TS = 1_700_000_000_000


def built(magic, codec=0, n=3):
    b = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 20)
    for i in range(n):
        b.append(i, timestamp=TS + i if magic else None, key=b"k%d" % i, value=b"v%d" % i)
    return bytes(b.build())


@pytest.mark.parametrize("magic,codec", [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2), (1, 3)])
def test_reads_kafka_python_message_sets(magic, codec):
    records = read_message_set(built(magic, codec))
    assert [(r.key, r.value, r.timestamp, r.magic, r.codec) for r in records] == [
        (b"k%d" % i, b"v%d" % i, TS + i if magic else -1, magic, codec) for i in range(3)]


@pytest.mark.parametrize("magic,codec", [(0, 1), (1, 0), (1, 2)])
def test_up_convert_keeps_keys_values_timestamps_and_codec(magic, codec):
    header, records = decode_batch(up_convert(built(magic, codec)))
    assert header.attributes & 0x07 == codec
    assert [(r.offset, r.key, r.value, r.timestamp) for r in records] == [
        (i, b"k%d" % i, b"v%d" % i, TS + i if magic else -1) for i in range(3)]


def test_a_bad_crc_is_a_corrupt_message():
    data = bytearray(built(1))
    data[-1] ^= 1
    with pytest.raises(CorruptMessage):
        read_message_set(data)


@pytest.mark.parametrize("data", [b"\x00" * 12, built(1)[:-2], built(1) + b"\x00\x00"])
def test_malformed_message_sets_are_refused(data):
    with pytest.raises(InvalidBatch):
        read_message_set(data)


def test_magic_0_lz4_with_the_old_header_checksum():
    # Producers of magic 0 computed the LZ4 header checksum over the magic number as well
    inner = write_message_set([LegacyRecord(i, 0, -1, False, None, b"v%d" % i, 0) for i in range(2)], 0)
    frame = bytearray(lz4.frame.compress(inner, store_size=False))
    frame[6] = (_xxh32(bytes(frame[:6])) >> 8) & 0xFF
    data = _entry(1, _message(0, 3, -1, False, None, bytes(frame)))  # a wrapper message, codec 3 (lz4)
    assert [r.value for r in read_message_set(data)] == [b"v0", b"v1"]


@pytest.mark.parametrize("magic", [0, 1])
def test_down_convert_skips_control_batches_and_earlier_offsets(magic):
    data = encode_batch([(b"a", b"1", (), TS), (b"b", b"2", (), TS + 5)], base_offset=10)
    control = encode_batch([(b"\x00\x00\x00\x00", b"\x00" * 6, (), TS)], base_offset=12, is_control=True,
                           is_transactional=True, producer_id=1, producer_epoch=0)
    out = down_convert(data + control, magic, from_offset=11)
    assert [(r.offset, r.key, r.value, r.timestamp, r.magic) for r in read_message_set(out)] == [
        (11, b"b", b"2", TS + 5 if magic else -1, magic)]



def test_written_messages_read_back_by_kafka_python():
    from kafka.record import MemoryRecords

    data = write_message_set([LegacyRecord(7 + i, 1, TS + i, False, b"k", b"v%d" % i, 0) for i in range(2)], 1)
    records = MemoryRecords(data)
    got = []
    while (batch := records.next_batch()) is not None:
        assert batch.validate_crc()
        got += [(r.offset, r.timestamp, r.key, r.value) for r in batch]
    assert got == [(7, TS, b"k", b"v0"), (8, TS + 1, b"k", b"v1")]
