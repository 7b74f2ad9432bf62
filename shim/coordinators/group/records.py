"""Records of ``__consumer_offsets``: committed offsets and group metadata.

The fields follow Kafka's own records (GroupMetadataManager; OffsetCommitKey v1,
GroupMetadataKey v2, OffsetCommitValue v3, GroupMetadataValue v3), in Kafka's plain binary
encoding: big-endian integers, strings as int16 length + UTF-8 (-1 = null), bytes as int32
length + data, arrays as int32 count. Every key and value starts with an int16 version.

Offset commit (one per group and partition)::

    key   = version 1 | group string | topic string | partition int32
    value = version 3 | offset int64 | leader_epoch int32 | metadata string | commit_timestamp int64
    value = version 1 | offset int64 | metadata string | commit_timestamp int64 | expire_timestamp int64

Version 1 is written for an offset with an explicit expire timestamp (OffsetCommit v2-4's
RetentionTimeMs), as Kafka writes it (MetadataVersion.offsetCommitValueVersion); versions 0-3 are
read (0 and 2 have neither a leader epoch nor an expire timestamp).

Group metadata (one per group)::

    key   = version 2 | group string
    value = version 3 | protocol_type string | generation int32 | protocol string? | leader string?
            | current_state_timestamp int64
            | members [member_id string | group_instance_id string? | client_id string
                       | client_host string | rebalance_timeout int32 | session_timeout int32
                       | subscription bytes | assignment bytes]

A null value is a tombstone: the offset, or the whole group, was deleted. Plain commits are
written in non-transactional batches; TxnOffsetCommit writes the same offset records in a
transactional batch of the producer (its producer id and epoch), whose fate the COMMIT/ABORT
marker of that producer in the same partition decides, both live and on replay.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

OFFSET_KEY_VERSION = 1
GROUP_KEY_VERSION = 2
OFFSET_VALUE_VERSION = 3
EXPIRING_OFFSET_VALUE_VERSION = 1  # the only version with an expire timestamp
GROUP_VALUE_VERSION = 3

_I16, _I32, _I64 = struct.Struct(">h"), struct.Struct(">i"), struct.Struct(">q")


class OffsetAndMetadata(NamedTuple):
    offset: int
    leader_epoch: int = -1
    metadata: str = ""
    commit_timestamp: int = -1
    expire_timestamp: int = -1  # -1: none; else OffsetCommit v2-4's commit time + RetentionTimeMs


class MemberRecord(NamedTuple):
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    subscription: bytes
    assignment: bytes


class GroupRecord(NamedTuple):
    protocol_type: str
    generation_id: int
    protocol_name: str | None
    leader_id: str | None
    state_timestamp: int
    members: tuple[MemberRecord, ...]


class OffsetKey(NamedTuple):
    group_id: str
    topic: str
    partition: int


class GroupKey(NamedTuple):
    group_id: str


# -- writing ------------------------------------------------------------------------------------


def _str(s: str | None) -> bytes:
    if s is None:
        return _I16.pack(-1)
    raw = s.encode()
    return _I16.pack(len(raw)) + raw


def _bytes(b: bytes) -> bytes:
    return _I32.pack(len(b)) + b


def offset_key(group_id: str, topic: str, partition: int) -> bytes:
    return _I16.pack(OFFSET_KEY_VERSION) + _str(group_id) + _str(topic) + _I32.pack(partition)


def group_key(group_id: str) -> bytes:
    return _I16.pack(GROUP_KEY_VERSION) + _str(group_id)


def offset_value(o: OffsetAndMetadata) -> bytes:
    if o.expire_timestamp != -1:
        return (_I16.pack(EXPIRING_OFFSET_VALUE_VERSION) + _I64.pack(o.offset) + _str(o.metadata)
                + _I64.pack(o.commit_timestamp) + _I64.pack(o.expire_timestamp))
    return (_I16.pack(OFFSET_VALUE_VERSION) + _I64.pack(o.offset) + _I32.pack(o.leader_epoch)
            + _str(o.metadata) + _I64.pack(o.commit_timestamp))


def group_value(g: GroupRecord) -> bytes:
    out = [_I16.pack(GROUP_VALUE_VERSION), _str(g.protocol_type), _I32.pack(g.generation_id),
           _str(g.protocol_name), _str(g.leader_id), _I64.pack(g.state_timestamp), _I32.pack(len(g.members))]
    for m in g.members:
        out += [_str(m.member_id), _str(m.group_instance_id), _str(m.client_id), _str(m.client_host),
                _I32.pack(m.rebalance_timeout_ms), _I32.pack(m.session_timeout_ms),
                _bytes(m.subscription), _bytes(m.assignment)]
    return b"".join(out)


# -- reading ------------------------------------------------------------------------------------


class _Reader:
    """Reads a record's key or value; whatever does not parse is an UnknownRecord (skipped)."""

    def __init__(self, buf: bytes | None) -> None:
        if buf is None:
            raise UnknownRecord("a null key or value where one is required")
        self.buf, self.pos = buf, 0

    def _unpack(self, s: struct.Struct) -> int:
        try:
            (v,) = s.unpack_from(self.buf, self.pos)
        except struct.error:
            raise UnknownRecord(f"record of {len(self.buf)} bytes ends early") from None
        self.pos += s.size
        return v

    def i16(self) -> int:
        return self._unpack(_I16)

    def i32(self) -> int:
        return self._unpack(_I32)

    def i64(self) -> int:
        return self._unpack(_I64)

    def str(self) -> str | None:
        n = self.i16()
        if n < 0:
            return None
        if self.pos + n > len(self.buf):
            raise UnknownRecord(f"a string of {n} bytes passes the end of its record")
        try:
            s = bytes(self.buf[self.pos : self.pos + n]).decode()
        except UnicodeDecodeError:
            raise UnknownRecord("a string that is not UTF-8") from None
        self.pos += n
        return s

    def bytes(self) -> bytes:
        n = self.i32()
        b = bytes(self.buf[self.pos : self.pos + max(n, 0)])
        self.pos += max(n, 0)
        return b


class UnknownRecord(ValueError):
    """A key or value version this broker does not write (skipped on load, as Kafka warns and skips)."""


def read_key(buf: bytes) -> OffsetKey | GroupKey:
    r = _Reader(buf)
    version = r.i16()
    if version in (0, OFFSET_KEY_VERSION):
        return OffsetKey(r.str(), r.str(), r.i32())
    if version == GROUP_KEY_VERSION:
        return GroupKey(r.str())
    raise UnknownRecord(f"unknown key version {version}")


def read_offset_value(buf: bytes) -> OffsetAndMetadata:
    r = _Reader(buf)
    version = r.i16()
    if version == OFFSET_VALUE_VERSION:
        return OffsetAndMetadata(r.i64(), r.i32(), r.str() or "", r.i64())
    if version in (0, 1, 2):
        offset, metadata, commit_timestamp = r.i64(), r.str() or "", r.i64()
        expire_timestamp = r.i64() if version == EXPIRING_OFFSET_VALUE_VERSION else -1
        return OffsetAndMetadata(offset, -1, metadata, commit_timestamp, expire_timestamp)
    raise UnknownRecord(f"unknown offset value version {version}")


def read_group_value(buf: bytes) -> GroupRecord:
    r = _Reader(buf)
    version = r.i16()
    if version != GROUP_VALUE_VERSION:
        raise UnknownRecord(f"unknown group value version {version}")
    protocol_type, generation, protocol, leader, ts = r.str() or "", r.i32(), r.str(), r.str(), r.i64()
    members = tuple(
        MemberRecord(r.str(), r.str(), r.str(), r.str(), r.i32(), r.i32(), r.bytes(), r.bytes())
        for _ in range(r.i32())
    )
    return GroupRecord(protocol_type, generation, protocol, leader, ts, members)


def subscribed_topics(subscription: bytes) -> set[str] | None:
    """Topics of a consumer-protocol subscription (ConsumerProtocolSubscription: every version
    starts with version int16, topics [string]); None when it does not parse (Kafka:
    GroupMetadata.computeSubscribedTopics reads the v0 prefix the same way)."""
    try:
        r = _Reader(subscription)
        if r.i16() < 0:
            return None
        return {r.str() for _ in range(r.i32())}
    except UnknownRecord:
        return None
