"""Share-group membership in ``__consumer_offsets`` (Kafka 4.1: the group coordinator's
``ShareGroup*Key``/``Value`` schemas, GroupCoordinatorRecordHelpers, GroupMetadataManager.replay).

Keys are ``version int16`` (the record type) then the group id (and member id) in the classic
encoding; values ``version int16`` (0) then the flexible encoding. A null value is a tombstone.

==================================  ====  ========================================================
record                              key   value
==================================  ====  ========================================================
ShareGroupMemberMetadata            10    RackId?, ClientId, ClientHost, SubscribedTopicNames [string]
ShareGroupMetadata                  11    Epoch int32, MetadataHash int64 (not tagged, unlike
                                            ConsumerGroupMetadata's)
ShareGroupTargetAssignmentMetadata  12    AssignmentEpoch int32
ShareGroupTargetAssignmentMember    13    TopicPartitions [TopicId uuid, Partitions [int32]]
ShareGroupCurrentMemberAssignment   14    MemberEpoch, PreviousMemberEpoch int32, State int8 (0),
                                            AssignedPartitions [TopicId uuid, Partitions [int32]]
==================================  ====  ========================================================

The coordinator keeps a :class:`View` of what it last wrote of each group; after a change it writes
the records that differ (:func:`diff`), in Kafka's order: member records, then the group epoch,
then the target assignment, then current assignments; a member's removal writes its tombstones
(current, target, metadata) first. Kafka 4.1 no longer writes ShareGroupPartitionMetadata (key 9);
ShareGroupStatePartitionMetadata (key 15) is :mod:`.state_metadata`'s, decoded here with the rest.
"""

from __future__ import annotations

import struct
from typing import Callable, NamedTuple

from ..group.consumer_records import _carray, _cstr, _Flex
from ..group.records import UnknownRecord, _Reader, _str
from . import state_metadata as sm
from .group import ShareGroup, ShareMember

MEMBER_METADATA, GROUP_METADATA, TARGET_METADATA, TARGET_MEMBER, CURRENT_ASSIGNMENT = 10, 11, 12, 13, 14
STATE_PARTITION_METADATA = sm.STATE_PARTITION_METADATA
KINDS = frozenset({MEMBER_METADATA, GROUP_METADATA, TARGET_METADATA, TARGET_MEMBER, CURRENT_ASSIGNMENT,
                   STATE_PARTITION_METADATA})
_MEMBER_KEYED = frozenset({MEMBER_METADATA, TARGET_MEMBER, CURRENT_ASSIGNMENT})
_I16, _I32, _I8, _I64 = struct.Struct(">h"), struct.Struct(">i"), struct.Struct(">b"), struct.Struct(">q")
STABLE = 0

Partitions = tuple[tuple[object, tuple[int, ...]], ...]  # ((topic id, partitions), ...), sorted


class Member(NamedTuple):
    rack_id: str | None
    client_id: str
    client_host: str
    subscribed: tuple[str, ...]


class View(NamedTuple):
    epoch: int
    metadata_hash: int
    assignment_epoch: int
    members: dict[str, Member]
    target: dict[str, Partitions]
    current: dict[str, tuple[int, Partitions]]  # member -> (member epoch, assigned partitions)


class Record(NamedTuple):
    kind: int
    group_id: str
    member_id: str | None
    # Member, (epoch, metadata hash), int (assignment epoch), Partitions, (member epoch, Partitions,
    # previous epoch), sm.PartitionMetadata; None: a tombstone
    value: object


def _ids(assignment, topic_ids: tuple) -> Partitions:
    pairs = [(i, tuple(sorted(ps))) for i, ps in zip(topic_ids, assignment.values())]
    return tuple(sorted(((i, ps) for i, ps in pairs if i is not None and ps), key=lambda kv: kv[0].bytes))


def view(group: ShareGroup, topic_id: Callable) -> View:
    """What the group's records say now. An assignment is replaced, never changed in place, so its
    encoding is kept on the group while the group holds it and its topics keep their ids: a
    heartbeat that changes no assignment sorts none of their partitions."""
    kept, now = group.encoded, {}

    def ids(assignment) -> Partitions:
        topic_ids = tuple(topic_id(t) for t in assignment)
        hit = kept.get(id(assignment))
        if hit is None or hit[0] is not assignment or hit[1] != topic_ids:
            hit = (assignment, topic_ids, _ids(assignment, topic_ids))
        now[id(assignment)] = hit
        return hit[2]

    out = View(group.group_epoch, group.metadata_hash, group.assignment_epoch,
               {m.member_id: Member(m.rack_id, m.client_id, m.client_host, m.subscribed)
                for m in group.members.values()},
               {m: ids(a) for m, a in group.target.items()},
               {m.member_id: (m.member_epoch, ids(m.assignment)) for m in group.members.values()})
    group.encoded = now
    return out


def diff(group_id: str, old: View | None, new: View | None) -> list[Record]:
    """The records that take ``__consumer_offsets`` from ``old`` to ``new`` (None: no group)."""
    out: list[Record] = []
    before = old.members if old is not None else {}
    after = new.members if new is not None else {}
    for member_id in sorted(set(before) - set(after)):
        out += [Record(k, group_id, member_id, None) for k in (CURRENT_ASSIGNMENT, TARGET_MEMBER, MEMBER_METADATA)]
    out += [Record(MEMBER_METADATA, group_id, m, v) for m, v in sorted(after.items()) if before.get(m) != v]
    if new is None:
        if old is not None:
            out += [Record(TARGET_METADATA, group_id, None, None), Record(GROUP_METADATA, group_id, None, None)]
        return out
    if old is None or (old.epoch, old.metadata_hash) != (new.epoch, new.metadata_hash):
        out.append(Record(GROUP_METADATA, group_id, None, (new.epoch, new.metadata_hash)))
    old_target = old.target if old is not None else {}
    out += [Record(TARGET_MEMBER, group_id, m, a) for m, a in sorted(new.target.items())
            if m in after and old_target.get(m) != a]
    if old is None or old.assignment_epoch != new.assignment_epoch:
        out.append(Record(TARGET_METADATA, group_id, None, new.assignment_epoch))
    old_current = old.current if old is not None else {}
    out += [Record(CURRENT_ASSIGNMENT, group_id, m, (*c, old_current.get(m, (0,))[0]))
            for m, c in sorted(new.current.items()) if old_current.get(m) != c]
    return out


# -- encoding -----------------------------------------------------------------------------------


def _partitions(p: Partitions) -> bytes:
    return _carray([i.bytes + _carray([_I32.pack(x) for x in ps]) + b"\x00" for i, ps in p])


def encode(r: Record) -> tuple[bytes, bytes | None]:
    if r.kind == STATE_PARTITION_METADATA:
        return sm.encode_key(r.group_id), sm.encode_value(r.value)
    key = _I16.pack(r.kind) + _str(r.group_id) + (_str(r.member_id) if r.kind in _MEMBER_KEYED else b"")
    v = r.value
    if v is None:
        return key, None
    head = _I16.pack(0)
    if r.kind == MEMBER_METADATA:
        return key, (head + _cstr(v.rack_id) + _cstr(v.client_id) + _cstr(v.client_host)
                     + _carray([_cstr(t) for t in v.subscribed]) + b"\x00")
    if r.kind == GROUP_METADATA:
        return key, head + _I32.pack(v[0]) + _I64.pack(v[1]) + b"\x00"
    if r.kind == TARGET_METADATA:
        return key, head + _I32.pack(v) + b"\x00"
    if r.kind == TARGET_MEMBER:
        return key, head + _partitions(v) + b"\x00"
    epoch, partitions, previous_epoch = v
    return key, head + _I32.pack(epoch) + _I32.pack(previous_epoch) + _I8.pack(STABLE) + _partitions(partitions) + b"\x00"


def decode(key: bytes, value: bytes | None) -> Record:
    r = _Reader(key)
    kind = r.i16()
    if kind not in KINDS:
        raise UnknownRecord(f"not a share group record: key version {kind}")
    group_id, member_id = r.str(), (r.str() if kind in _MEMBER_KEYED else None)
    if value is None:
        return Record(kind, group_id, member_id, None)
    if kind == STATE_PARTITION_METADATA:
        return Record(kind, group_id, None, sm.decode_value(value))
    v = _Flex(value)
    if v.i16() != 0:
        raise UnknownRecord(f"unknown value version of record type {kind}")
    if kind == MEMBER_METADATA:
        return Record(kind, group_id, member_id, Member(v.cstr(), v.cstr() or "", v.cstr() or "",
                                                        tuple(v.cstr() or "" for _ in range(v.count()))))
    if kind == GROUP_METADATA:
        epoch = v.i32()
        # older kafka-shim wrote the epoch alone: only the tagged-field section follows it
        return Record(kind, group_id, None, (epoch, v._unpack(_I64) if len(v.buf) - v.pos > 1 else 0))
    if kind == TARGET_METADATA:
        return Record(kind, group_id, None, v.i32())
    if kind == TARGET_MEMBER:
        return Record(kind, group_id, member_id, _read_partitions(v))
    epoch, previous, _state = v.i32(), v.i32(), v._unpack(_I8)
    return Record(kind, group_id, member_id, (epoch, _read_partitions(v), previous))


def _read_partitions(v: _Flex) -> Partitions:
    out = []
    for _ in range(v.count()):
        topic_id = v.uuid()
        out.append((topic_id, tuple(v.i32() for _ in range(v.count()))))
        v.tags()
    return tuple(out)


# -- replay -------------------------------------------------------------------------------------


def replay(groups: dict[str, ShareGroup], views: dict[str, View], r: Record) -> None:
    """Apply one record (Kafka: GroupMetadataManager.replay of the share-group records); ``views``
    follows what is written."""
    group = groups.get(r.group_id)
    if group is None:
        if r.value is None:
            return
        group = groups[r.group_id] = ShareGroup(r.group_id)
    v = views.get(r.group_id) or View(0, 0, 0, {}, {}, {})
    if r.kind == GROUP_METADATA:
        if r.value is None:
            groups.pop(r.group_id, None)
            views.pop(r.group_id, None)
            return
        (group.group_epoch, group.metadata_hash), v = r.value, v._replace(epoch=r.value[0], metadata_hash=r.value[1])
    elif r.kind == TARGET_METADATA:
        group.assignment_epoch, v = r.value or 0, v._replace(assignment_epoch=r.value or 0)
    elif r.kind == MEMBER_METADATA:
        v = v._replace(members=_put(v.members, r.member_id, r.value))
    elif r.kind == TARGET_MEMBER:
        v = v._replace(target=_put(v.target, r.member_id, r.value))
    else:
        v = v._replace(current=_put(v.current, r.member_id, r.value[:2] if r.value is not None else None))
    views[r.group_id] = v


def _put(d: dict, k, value) -> dict:
    d = dict(d)
    if value is None:
        d.pop(k, None)
    else:
        d[k] = value
    return d


def rebuild(group: ShareGroup, v: View, topic_name: Callable, deadline: int) -> None:
    """The group's members, target and current assignments from its replayed view; every member
    must heartbeat within its session timeout from now (Kafka: onLoaded)."""
    names = lambda p: {n: frozenset(ps) for i, ps in p if (n := topic_name(i)) is not None}  # noqa: E731
    group.members = {}
    for member_id, m in v.members.items():
        epoch, assigned = v.current.get(member_id, (0, ()))
        group.members[member_id] = ShareMember(member_id, epoch, m.subscribed, m.rack_id, m.client_id, m.client_host,
                                               deadline, names(assigned))
    group.target = {m: names(p) for m, p in v.target.items() if m in group.members}
