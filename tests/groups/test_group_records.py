"""The __consumer_offsets record format (shim.coordinators.group.records): round trips, nulls,
unknown versions, and the consumer-protocol subscription prefix."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shim.coordinators.group import records as rec
from shim.coordinators.group.records import GroupRecord, MemberRecord, OffsetAndMetadata

from group_helpers import subscription

names = st.text(min_size=0, max_size=20)


@given(names, names, st.integers(0, 2**31 - 1), st.integers(-1, 2**63 - 1), st.integers(-1, 2**31 - 1), names,
       st.integers(-1, 2**63 - 1))
def test_offset_records_round_trip(group, topic, partition, offset, epoch, metadata, ts):
    assert rec.read_key(rec.offset_key(group, topic, partition)) == rec.OffsetKey(group, topic, partition)
    o = OffsetAndMetadata(offset, epoch, metadata, ts)
    assert rec.read_offset_value(rec.offset_value(o)) == o


@given(names, st.lists(st.tuples(names, st.none() | names, st.binary(max_size=30), st.binary(max_size=30)),
                       max_size=4),
       st.none() | names, st.none() | names)
def test_group_records_round_trip(group, members, protocol, leader):
    value = GroupRecord("consumer", 7, protocol, leader, 123,
                        tuple(MemberRecord(m, i, "client", "/10.0.0.1", 300_000, 45_000, s, a) for m, i, s, a in members))
    assert rec.read_key(rec.group_key(group)) == rec.GroupKey(group)
    assert rec.read_group_value(rec.group_value(value)) == value


def test_the_layout_is_kafkas():
    assert rec.offset_key("g", "t", 3) == b"\x00\x01\x00\x01g\x00\x01t\x00\x00\x00\x03"
    assert rec.offset_value(OffsetAndMetadata(5, -1, "", 9)) == struct.pack(">hqihq", 3, 5, -1, 0, 9)
    assert rec.group_key("g") == b"\x00\x02\x00\x01g"


def test_an_offset_with_an_expire_timestamp_is_an_offset_commit_value_v1():
    """Kafka: MetadataVersion.offsetCommitValueVersion(expireTimestampPresent) -- v1, the only
    version with expireTimestamp (and no leader epoch)."""
    o = OffsetAndMetadata(5, 7, "m", 9, 1_000)
    assert rec.offset_value(o) == struct.pack(">hqh", 1, 5, 1) + b"m" + struct.pack(">qq", 9, 1_000)
    assert rec.read_offset_value(rec.offset_value(o)) == OffsetAndMetadata(5, -1, "m", 9, 1_000)


@pytest.mark.parametrize("version", [0, 2])
def test_offset_values_of_versions_0_and_2_are_read(version):
    raw = struct.pack(">hqh", version, 5, 1) + b"m" + struct.pack(">q", 9)
    assert rec.read_offset_value(raw) == OffsetAndMetadata(5, -1, "m", 9, -1)


def test_unknown_versions_are_reported():
    with pytest.raises(rec.UnknownRecord):
        rec.read_key(b"\x00\x07\x00\x00")
    with pytest.raises(rec.UnknownRecord):
        rec.read_offset_value(b"\x00\x04" + bytes(30))  # the flexible version of Kafka 4.x is not read
    with pytest.raises(rec.UnknownRecord):
        rec.read_group_value(b"\x00\x02" + bytes(30))


def test_subscribed_topics_reads_any_consumer_protocol_version():
    assert rec.subscribed_topics(subscription("a", "b", user_data=b"xyz")) == {"a", "b"}
    v3 = struct.pack(">hi", 3, 1) + struct.pack(">h", 1) + b"c" + b"later fields"
    assert rec.subscribed_topics(v3) == {"c"}
    assert rec.subscribed_topics(b"\x00") is None
    assert rec.subscribed_topics(b"\xff\xff\x00\x00\x00\x00") is None
