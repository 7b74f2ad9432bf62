import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_codecs import (
    ControlRecordType,
    InvalidBatch,
    crc_ok,
    decode_batch,
    encode_batch,
    encode_end_txn_marker,
    parse_header,
    read_control_type,
    read_end_txn_marker,
)


def _marker(commit=True, **overrides):
    fields = dict(producer_id=4242, producer_epoch=3, coordinator_epoch=17, commit=commit, timestamp=1_700_000_000_000)
    return encode_end_txn_marker(**{**fields, **overrides})


def _control_batch(key, value=b"\x00\x00\x00\x00\x00\x00"):
    return encode_batch([(key, value, (), 0)], producer_id=1, producer_epoch=0, is_transactional=True, is_control=True)


def test_type_values_match_kafka():
    assert [(t.name, t.value) for t in ControlRecordType] == [
        ("ABORT", 0), ("COMMIT", 1), ("LEADER_CHANGE", 2), ("SNAPSHOT_HEADER", 3),
        ("SNAPSHOT_FOOTER", 4), ("KRAFT_VERSION", 5), ("KRAFT_VOTERS", 6),
    ]  # fmt: skip


@pytest.mark.parametrize(("commit", "kind"), [(True, 1), (False, 0)])
def test_marker_layout_field_by_field(commit, kind):
    batch = _marker(commit, base_offset=500, partition_leader_epoch=8)
    # A marker batch is always 78 bytes: 61 header + 17 record.
    assert len(batch) == 78
    base_offset, length, leader_epoch, magic, crc, attributes = struct.unpack_from(">qiibIh", batch)
    assert (base_offset, length, leader_epoch, magic) == (500, 66, 8, 2)
    assert attributes == 0x30  # transactional | control, no compression, create time
    assert crc_ok(batch)
    last_delta, base_ts, max_ts, pid, epoch, base_seq, count = struct.unpack_from(">iqqqhii", batch, 23)
    assert (last_delta, base_ts, max_ts) == (0, 1_700_000_000_000, 1_700_000_000_000)
    assert (pid, epoch, base_seq, count) == (4242, 3, -1, 1)
    record = batch[61:]
    assert record == bytes(
        [16 * 2, 0, 0, 0]  # length 16, attributes, timestamp delta, offset delta
        + [4 * 2, 0, 0, 0, kind]  # key: version 0, type
        + [6 * 2, 0, 0, 0, 0, 0, 17]  # value: version 0, coordinator epoch
        + [0]  # no headers
    )  # fmt: skip


def test_marker_decodes_as_record():
    header, (record,) = decode_batch(_marker(False))
    assert header.is_control and header.is_transactional
    assert record.key == b"\x00\x00\x00\x00" and record.value == b"\x00\x00\x00\x00\x00\x11"
    assert parse_header(_marker()).last_sequence == -1


@settings(max_examples=30)
@given(st.booleans(), st.integers(-(1 << 31), (1 << 31) - 1))
def test_read_end_txn_marker_round_trip(commit, coordinator_epoch):
    batch = _marker(commit, coordinator_epoch=coordinator_epoch)
    expected = ControlRecordType.COMMIT if commit else ControlRecordType.ABORT
    assert read_control_type(batch) is expected
    assert read_end_txn_marker(batch) == (expected, coordinator_epoch)


def test_other_key_versions_tolerated():
    batch = _control_batch(b"\x00\x03\x00\x01")
    assert read_control_type(batch) is ControlRecordType.COMMIT
    # Longer (future-version) marker values are read by their prefix.
    batch = _control_batch(b"\x00\x01\x00\x00", b"\x00\x01\x00\x00\x00\x09extra")
    assert read_end_txn_marker(batch) == (ControlRecordType.ABORT, 9)


def test_other_and_unknown_types():
    assert read_control_type(_control_batch(b"\x00\x00\x00\x02")) is ControlRecordType.LEADER_CHANGE
    unknown = read_control_type(_control_batch(b"\x00\x00\x01\x00"))
    assert unknown == 256 and not isinstance(unknown, ControlRecordType)
    with pytest.raises(InvalidBatch):
        read_end_txn_marker(_control_batch(b"\x00\x00\x00\x02"))


@pytest.mark.parametrize("key", [b"\xff\xff\x00\x01", b"\x00\x00\x00", None])
def test_bad_keys(key):
    with pytest.raises(InvalidBatch):
        read_control_type(_control_batch(key))


@pytest.mark.parametrize("value", [b"\x00\x00\x00\x00\x00", None, b"\x80\x00\x00\x00\x00\x01"])
def test_bad_marker_values(value):
    with pytest.raises(InvalidBatch):
        read_end_txn_marker(_control_batch(b"\x00\x00\x00\x01", value))


def test_not_a_control_batch():
    batch = encode_batch([(b"\x00\x00\x00\x01", b"\x00" * 6, (), 0)])
    with pytest.raises(InvalidBatch):
        read_control_type(batch)


def test_malformed_control_batch():
    with pytest.raises(InvalidBatch):
        read_control_type(_marker()[:70])
