import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_codecs import (
    CONTROL_FLAG,
    HEADER_SIZE,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG,
    Compression,
    compute_crc,
    crc_ok,
    decode_batch,
    encode_batch,
    iter_batches,
    parse_header,
    set_max_timestamp,
    stamp,
)
from kafka_codecs.batch import BatchHeader

INT32_MAX = (1 << 31) - 1


def _batch(n=3, **kwargs):
    records = [(b"k%d" % i, b"value %d" % i, [("h", b"x")], 1_000 + i) for i in range(n)]
    return encode_batch(records, **kwargs)


def test_header_fields_and_offsets():
    batch = _batch(
        3, base_offset=100, compression=Compression.GZIP, producer_id=7, producer_epoch=2,
        base_sequence=40, is_transactional=True, partition_leader_epoch=9,
    )  # fmt: skip
    h = parse_header(batch)
    assert (h.base_offset, h.partition_leader_epoch, h.magic) == (100, 9, 2)
    assert (h.producer_id, h.producer_epoch, h.base_sequence, h.records_count) == (7, 2, 40, 3)
    assert (h.base_timestamp, h.max_timestamp, h.last_offset_delta) == (1_000, 1_002, 2)
    assert h.attributes == Compression.GZIP | TRANSACTIONAL_FLAG
    assert h.size == len(batch) == 12 + h.batch_length
    assert (h.last_offset, h.next_offset) == (102, 103)
    assert h.compression == Compression.GZIP
    assert h.is_transactional and not h.is_control
    assert h.timestamp_type == 0
    assert h.last_sequence == 42
    assert h.crc == struct.unpack_from(">I", batch, 17)[0]


def test_flag_properties():
    h = parse_header(_batch(is_control=True, timestamp_type=1))
    assert h.attributes == CONTROL_FLAG | TIMESTAMP_TYPE_MASK
    assert h.is_control and not h.is_transactional
    assert h.timestamp_type == 1


def _header(**fields):
    base = dict.fromkeys(BatchHeader._fields, 0)
    return BatchHeader(**{**base, **fields})


@pytest.mark.parametrize(
    ("base_sequence", "delta", "last"),
    # DefaultRecordBatch.incrementSequence wraps to 0 after INT32_MAX.
    [(-1, 5, -1), (0, 0, 0), (10, 4, 14), (INT32_MAX, 0, INT32_MAX), (INT32_MAX, 1, 0), (INT32_MAX - 1, 3, 1)],
)
def test_last_sequence(base_sequence, delta, last):
    assert _header(base_sequence=base_sequence, last_offset_delta=delta).last_sequence == last


def test_parse_header_any_buffer_and_position():
    batch = _batch()
    expected = parse_header(batch)
    assert parse_header(b"xyz" + batch, 3) == expected
    assert parse_header(bytearray(batch)) == expected
    assert parse_header(memoryview(batch)) == expected


@pytest.mark.parametrize("size", [0, 12, HEADER_SIZE - 1])
def test_parse_header_short(size):
    with pytest.raises(ValueError):
        parse_header(_batch()[:size])
    with pytest.raises(ValueError):
        parse_header(b"\x00" * 10 + _batch()[:size], 10)


@pytest.mark.parametrize("codec", list(Compression))
def test_crc_covers_everything_from_attributes(codec):
    batch = _batch(2, compression=codec, producer_id=3, producer_epoch=0, base_sequence=0)
    assert crc_ok(batch)
    assert compute_crc(batch) == parse_header(batch).crc
    for pos in range(21, len(batch)):
        corrupted = bytearray(batch)
        corrupted[pos] ^= 0x01
        assert not crc_ok(corrupted), pos


def test_crc_does_not_cover_offset_length_epoch_or_magic():
    batch = _batch()
    for pos in range(0, 17):
        corrupted = bytearray(batch)
        corrupted[pos] ^= 0xFF
        assert crc_ok(corrupted), pos


def test_crc_field_itself_checked():
    for pos in range(17, 21):
        corrupted = bytearray(_batch())
        corrupted[pos] ^= 0x80
        assert not crc_ok(corrupted)
    assert not crc_ok(_batch()[:30])


@settings(max_examples=30)
@given(st.integers(-(1 << 63), (1 << 63) - 1), st.integers(-(1 << 31), (1 << 31) - 1))
def test_stamp_keeps_crc(base_offset, epoch):
    buf = bytearray(_batch(compression=Compression.LZ4))
    stamp(buf, base_offset, epoch)
    assert crc_ok(buf)
    h = parse_header(buf)
    assert (h.base_offset, h.partition_leader_epoch) == (base_offset, epoch)


def test_stamp_memoryview_inside_larger_buffer():
    first, second = _batch(1), _batch(2)
    buf = bytearray(first + second)
    view = memoryview(buf)[len(first) :]
    stamp(view, 50, 4)
    assert crc_ok(view)
    assert bytes(buf[: len(first)]) == first
    assert [r.offset for r in decode_batch(view)[1]] == [50, 51]


def test_set_max_timestamp_for_log_append_time():
    buf = bytearray(_batch(3))
    set_max_timestamp(buf, 5_000)
    assert crc_ok(buf)
    h = parse_header(buf)
    assert (h.max_timestamp, h.timestamp_type, h.base_timestamp) == (5_000, 1, 1_000)
    # LOG_APPEND_TIME: readers give every record the batch's MaxTimestamp.
    assert {r.timestamp for r in decode_batch(buf)[1]} == {5_000}


def test_set_max_timestamp_create_time_keeps_type():
    buf = bytearray(_batch(3))
    set_max_timestamp(buf, 7_000, timestamp_type=0)
    assert crc_ok(buf)
    assert parse_header(buf).timestamp_type == 0
    assert [r.timestamp for r in decode_batch(buf)[1]] == [1_000, 1_001, 1_002]


def test_set_max_timestamp_noop_leaves_bytes():
    buf = bytearray(_batch(3, timestamp_type=1))
    before = bytes(buf)
    set_max_timestamp(buf, parse_header(buf).max_timestamp)
    assert bytes(buf) == before


def test_iter_batches():
    batches = [_batch(n, base_offset=10 * n, compression=n % 5) for n in range(1, 5)]
    buf = b"".join(batches)
    positions = [0]
    for b in batches[:-1]:
        positions.append(positions[-1] + len(b))
    found = list(iter_batches(buf))
    assert [pos for pos, _ in found] == positions
    assert [h.base_offset for _, h in found] == [10, 20, 30, 40]
    assert list(iter_batches(memoryview(buf), positions[2])) == found[2:]


def test_iter_batches_stops_at_partial_tail():
    first, second = _batch(1), _batch(2)
    for cut in range(len(second)):
        found = list(iter_batches(first + second[:cut]))
        assert [pos for pos, _ in found] == [0]
    assert list(iter_batches(b"")) == []


def test_iter_batches_rejects_impossible_length():
    buf = bytearray(_batch(1))
    struct.pack_into(">i", buf, 8, 10)
    with pytest.raises(ValueError):
        list(iter_batches(buf))
