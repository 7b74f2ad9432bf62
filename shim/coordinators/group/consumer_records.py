"""Consumer-group records of ``__consumer_offsets`` and their replay (Kafka 4: the group
coordinator's ``ConsumerGroup*Key``/``Value`` schemas and ``GroupMetadataManager.replay``).

A key is ``version int16`` (the record type) then its fields in the classic binary encoding; a
value is ``version int16`` (0) then its fields in the flexible encoding (compact strings and
arrays, an empty tagged-field section after every struct). A null value is a tombstone.

======================================  ====  ====================================================
record                                  key   value
======================================  ====  ====================================================
ConsumerGroupMetadata                   3     Epoch int32, tagged MetadataHash int64 (tag 0)
ConsumerGroupMemberMetadata             5     InstanceId?, RackId?, ClientId, ClientHost,
                                                SubscribedTopicNames [string], SubscribedTopicRegex?,
                                                RebalanceTimeoutMs int32, ServerAssignor?, tagged
                                                ClassicMemberMetadata (tag 0): SessionTimeoutMs int32,
                                                SupportedProtocols [Name, Metadata bytes] of a
                                                classic-protocol member
ConsumerGroupTargetAssignmentMetadata   6     AssignmentEpoch int32
ConsumerGroupTargetAssignmentMember     7     TopicPartitions [TopicId uuid, Partitions [int32]]
ConsumerGroupCurrentMemberAssignment    8     MemberEpoch, PreviousMemberEpoch int32, State int8,
                                                AssignedPartitions, PartitionsPendingRevocation
======================================  ====  ====================================================

Keys 3, 6 hold the group id; 5, 7, 8 the group id and member id. Kafka 4.1 tracks subscribed
topic metadata with the hash in ConsumerGroupMetadata instead of ConsumerGroupPartitionMetadata
(key 4), which kafka-shim does not write; its hash is its own (only compared with itself).
"""

from __future__ import annotations

import struct
import uuid
from dataclasses import replace
from typing import NamedTuple

from kafka_codecs.varint import encode_uvarint

from .consumer_group import Assignment, ConsumerGroup, ConsumerGroupMember, MemberState
from .records import UnknownRecord, _Reader, _str

GROUP_METADATA, MEMBER_METADATA, TARGET_METADATA, TARGET_MEMBER, CURRENT_ASSIGNMENT = 3, 5, 6, 7, 8
KINDS = frozenset({GROUP_METADATA, MEMBER_METADATA, TARGET_METADATA, TARGET_MEMBER, CURRENT_ASSIGNMENT})
_MEMBER_KEYED = frozenset({MEMBER_METADATA, TARGET_MEMBER, CURRENT_ASSIGNMENT})
_I16, _I32, _I64, _I8 = struct.Struct(">h"), struct.Struct(">i"), struct.Struct(">q"), struct.Struct(">b")


class GroupEpoch(NamedTuple):
    epoch: int
    metadata_hash: int = 0


class MemberMetadata(NamedTuple):
    instance_id: str | None
    rack_id: str | None
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]
    subscribed_topic_regex: str | None
    rebalance_timeout_ms: int
    server_assignor: str | None
    classic_protocols: tuple[tuple[str, bytes], ...] | None = None
    classic_session_timeout_ms: int | None = None


class CurrentAssignment(NamedTuple):
    member_epoch: int
    previous_member_epoch: int
    state: MemberState
    assigned: Assignment
    pending_revocation: Assignment


class Record(NamedTuple):
    kind: int
    group_id: str
    member_id: str | None
    value: object  # GroupEpoch, MemberMetadata, int (assignment epoch), Assignment, CurrentAssignment; None deletes


def member_metadata(m: ConsumerGroupMember) -> MemberMetadata:
    return MemberMetadata(*m.metadata())


def current_assignment(m: ConsumerGroupMember) -> CurrentAssignment:
    return CurrentAssignment(*m.current())


# -- encoding -----------------------------------------------------------------------------------


def _cstr(s: str | None) -> bytes:
    if s is None:
        return b"\x00"
    raw = s.encode()
    return encode_uvarint(len(raw) + 1) + raw


def _carray(items: list[bytes]) -> bytes:
    return encode_uvarint(len(items) + 1) + b"".join(items)


def _partitions(a: Assignment) -> bytes:
    return _carray([t.bytes + _carray([_I32.pack(p) for p in sorted(ps)]) + b"\x00"
                    for t, ps in sorted(a.items(), key=lambda kv: kv[0].bytes)])


def _classic_tag(protocols, session_timeout_ms) -> bytes:
    """The tagged-field section of a member: tag 0 holds ClassicMemberMetadata when there is one."""
    if protocols is None:
        return b"\x00"
    body = (_I32.pack(session_timeout_ms if session_timeout_ms is not None else -1)
            + _carray([_cstr(name) + encode_uvarint(len(meta) + 1) + meta + b"\x00" for name, meta in protocols]) + b"\x00")
    return b"\x01" + encode_uvarint(0) + encode_uvarint(len(body)) + body


def encode_key(r: Record) -> bytes:
    key = _I16.pack(r.kind) + _str(r.group_id)
    return key + _str(r.member_id) if r.kind in _MEMBER_KEYED else key


def encode_value(r: Record) -> bytes | None:
    v = r.value
    if v is None:
        return None
    head = _I16.pack(0)
    if r.kind == GROUP_METADATA:
        return head + _I32.pack(v.epoch) + b"\x01\x00\x08" + _I64.pack(v.metadata_hash)  # one tagged field
    if r.kind == MEMBER_METADATA:
        return (head + _cstr(v.instance_id) + _cstr(v.rack_id) + _cstr(v.client_id) + _cstr(v.client_host)
                + _carray([_cstr(t) for t in v.subscribed_topic_names]) + _cstr(v.subscribed_topic_regex)
                + _I32.pack(v.rebalance_timeout_ms) + _cstr(v.server_assignor)
                + _classic_tag(v.classic_protocols, v.classic_session_timeout_ms))
    if r.kind == TARGET_METADATA:
        return head + _I32.pack(v) + b"\x00"
    if r.kind == TARGET_MEMBER:
        return head + _partitions(v) + b"\x00"
    return (head + _I32.pack(v.member_epoch) + _I32.pack(v.previous_member_epoch) + _I8.pack(v.state.value)
            + _partitions(v.assigned) + _partitions(v.pending_revocation) + b"\x00")


# -- decoding -----------------------------------------------------------------------------------


class _Flex(_Reader):
    def uvarint(self) -> int:
        shift = n = 0
        while True:
            if self.pos >= len(self.buf) or shift > 28:
                raise UnknownRecord("a varint passes the end of its record")
            b = self.buf[self.pos]
            self.pos += 1
            n |= (b & 0x7F) << shift
            if not b & 0x80:
                return n
            shift += 7

    def cstr(self) -> str | None:
        n = self.uvarint() - 1
        if n < 0:
            return None
        if self.pos + n > len(self.buf):
            raise UnknownRecord("a string passes the end of its record")
        try:
            s = bytes(self.buf[self.pos:self.pos + n]).decode()
        except UnicodeDecodeError:
            raise UnknownRecord("a string that is not UTF-8") from None
        self.pos += n
        return s

    def count(self) -> int:
        n = self.uvarint() - 1
        if n > len(self.buf):
            raise UnknownRecord("an array longer than its record")
        return max(n, 0)

    def uuid(self) -> uuid.UUID:
        if self.pos + 16 > len(self.buf):
            raise UnknownRecord("a uuid passes the end of its record")
        u = uuid.UUID(bytes=bytes(self.buf[self.pos:self.pos + 16]))
        self.pos += 16
        return u

    def tags(self) -> dict[int, bytes]:
        out = {}
        for _ in range(self.uvarint()):
            tag, size = self.uvarint(), self.uvarint()
            out[tag] = bytes(self.buf[self.pos:self.pos + size])
            self.pos += size
        return out

    def partitions(self) -> Assignment:
        out = {}
        for _ in range(self.count()):
            topic_id = self.uuid()
            out[topic_id] = frozenset(self.i32() for _ in range(self.count()))
            self.tags()
        return {t: ps for t, ps in out.items() if ps}


def decode(key: bytes, value: bytes | None) -> Record:
    """A record of one of :data:`KINDS`; UnknownRecord otherwise."""
    r = _Reader(key)
    kind = r.i16()
    if kind not in KINDS:
        raise UnknownRecord(f"not a consumer group record: key version {kind}")
    group_id = r.str()
    member_id = r.str() if kind in _MEMBER_KEYED else None
    if value is None:
        return Record(kind, group_id, member_id, None)
    v = _Flex(value)
    if v.i16() != 0:
        raise UnknownRecord(f"unknown value version of record type {kind}")
    if kind == GROUP_METADATA:
        epoch = v.i32()
        tagged = v.tags().get(0)
        return Record(kind, group_id, None, GroupEpoch(epoch, _I64.unpack(tagged)[0] if tagged and len(tagged) == 8
                                                       else 0))
    if kind == MEMBER_METADATA:
        fields = (v.cstr(), v.cstr(), v.cstr() or "", v.cstr() or "",
                  tuple(v.cstr() or "" for _ in range(v.count())), v.cstr(), v.i32(), v.cstr())
        classic = v.tags().get(0)
        return Record(kind, group_id, member_id, MemberMetadata(*fields, *_read_classic(classic)))
    if kind == TARGET_METADATA:
        return Record(kind, group_id, None, v.i32())
    if kind == TARGET_MEMBER:
        return Record(kind, group_id, member_id, v.partitions())
    epoch, previous, state = v.i32(), v.i32(), MemberState.of(v._unpack(_I8))
    return Record(kind, group_id, member_id, CurrentAssignment(epoch, previous, state, v.partitions(), v.partitions()))


def _read_classic(raw: bytes | None) -> tuple[tuple[tuple[str, bytes], ...] | None, int | None]:
    """(supported protocols, session timeout) of a ClassicMemberMetadata, or (None, None)."""
    if raw is None:
        return None, None
    v = _Flex(raw)
    session = v.i32()
    out = []
    for _ in range(v.count()):
        name = v.cstr() or ""
        n = v.uvarint() - 1
        out.append((name, bytes(v.buf[v.pos:v.pos + max(n, 0)])))
        v.pos += max(n, 0)
        v.tags()
    return tuple(out), session


# -- replay -------------------------------------------------------------------------------------


def replay(groups: dict[str, ConsumerGroup], r: Record, now_ms: int) -> None:
    """Apply one record to the consumer groups (Kafka: GroupMetadataManager.replay)."""
    group = groups.get(r.group_id)
    if group is None:
        if r.value is None:
            return
        group = groups[r.group_id] = ConsumerGroup(r.group_id, state_timestamp=now_ms)
    if r.kind == GROUP_METADATA:
        if r.value is None:
            del groups[r.group_id]
        else:
            group.group_epoch, group.metadata_hash = r.value.epoch, r.value.metadata_hash
    elif r.kind == TARGET_METADATA:
        group.assignment_epoch = r.value if r.value is not None else 0
    elif r.kind == TARGET_MEMBER:
        if r.value is None:
            group.target.pop(r.member_id, None)
        else:
            group.target[r.member_id] = r.value
    elif r.kind == MEMBER_METADATA:
        _replay_member_metadata(group, r)
    else:
        _replay_current(group, r)


def _replay_member_metadata(group: ConsumerGroup, r: Record) -> None:
    old = group.members.get(r.member_id)
    if r.value is None:
        if old is not None:
            group.set_partition_epochs(old, None)
            del group.members[r.member_id]
            if old.instance_id is not None and group.static_members.get(old.instance_id) == r.member_id:
                del group.static_members[old.instance_id]
        return
    member = replace(old, **r.value._asdict()) if old is not None else ConsumerGroupMember(
        r.member_id, **r.value._asdict())
    group.members[r.member_id] = member
    if member.instance_id is not None:
        group.static_members[member.instance_id] = r.member_id


def _replay_current(group: ConsumerGroup, r: Record) -> None:
    member = group.members.get(r.member_id)
    if member is None:
        member = group.members[r.member_id] = ConsumerGroupMember(r.member_id)
    group.set_partition_epochs(member, None)
    if r.value is None:  # Kafka: the member's assignment is reset, its epoch back to 0
        member.member_epoch = member.previous_member_epoch = 0
        member.state, member.assigned, member.pending_revocation = MemberState.STABLE, {}, {}
        return
    v = r.value
    member.member_epoch, member.previous_member_epoch, member.state = v.member_epoch, v.previous_member_epoch, v.state
    member.assigned, member.pending_revocation = v.assigned, v.pending_revocation
    group.set_partition_epochs(member, member.member_epoch)
