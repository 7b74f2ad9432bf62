"""Records of ``__share_group_state`` (Kafka 4.1: the share coordinator's ShareSnapshot and
ShareUpdate schemas, written by ShareCoordinatorRecordHelpers through CoordinatorRecordSerde).

A key is ``version int16`` -- the record type, 0 ShareSnapshot, 1 ShareUpdate -- then GroupId
string, TopicId uuid, Partition int32 in the classic binary encoding. A value is ``version int16``
(0) then its fields in the flexible encoding (a compact array, an empty tagged-field section after
each struct). A null value (on a ShareSnapshot key) is the tombstone DeleteShareGroupState writes.

==============  ====  ==========================================================================
record          key   value
==============  ====  ==========================================================================
ShareSnapshot   0     SnapshotEpoch int32, StateEpoch int32, LeaderEpoch int32, StartOffset int64,
                        CreateTimestamp int64, WriteTimestamp int64, StateBatches [FirstOffset
                        int64, LastOffset int64, DeliveryState int8, DeliveryCount int16]
ShareUpdate     1     SnapshotEpoch int32, LeaderEpoch int32, StartOffset int64 (-1: unchanged),
                        StateBatches (as above)
==============  ====  ==========================================================================

A snapshot is a share partition's whole state; an update carries the state batches that changed,
which replace what the snapshot said of their offsets (Kafka: PersisterStateBatchCombiner).
"""

from __future__ import annotations

import bisect
import struct
import uuid
from typing import NamedTuple

from ..group.consumer_records import _carray, _Flex
from ..group.records import UnknownRecord, _str

SNAPSHOT, UPDATE = 0, 1
_I8, _I16, _I32, _I64 = struct.Struct(">b"), struct.Struct(">h"), struct.Struct(">i"), struct.Struct(">q")
_BATCH = struct.Struct(">qqbh")


class StateBatch(NamedTuple):
    first_offset: int
    last_offset: int
    delivery_state: int  # 0 AVAILABLE, 2 ACKNOWLEDGED, 4 ARCHIVED
    delivery_count: int


class ShareKey(NamedTuple):
    kind: int
    group_id: str
    topic_id: uuid.UUID
    partition: int


class ShareSnapshot(NamedTuple):
    snapshot_epoch: int
    state_epoch: int
    leader_epoch: int
    start_offset: int
    create_timestamp: int
    write_timestamp: int
    batches: tuple[StateBatch, ...]


class ShareUpdate(NamedTuple):
    snapshot_epoch: int
    leader_epoch: int
    start_offset: int
    batches: tuple[StateBatch, ...]


def encode_key(key: ShareKey) -> bytes:
    return _I16.pack(key.kind) + _str(key.group_id) + key.topic_id.bytes + _I32.pack(key.partition)


def _batches(batches) -> bytes:
    return _carray([_BATCH.pack(*b) + b"\x00" for b in batches])


def encode_snapshot(v: ShareSnapshot) -> bytes:
    return (_I16.pack(0) + _I32.pack(v.snapshot_epoch) + _I32.pack(v.state_epoch) + _I32.pack(v.leader_epoch)
            + _I64.pack(v.start_offset) + _I64.pack(v.create_timestamp) + _I64.pack(v.write_timestamp)
            + _batches(v.batches) + b"\x00")


def encode_update(v: ShareUpdate) -> bytes:
    return (_I16.pack(0) + _I32.pack(v.snapshot_epoch) + _I32.pack(v.leader_epoch) + _I64.pack(v.start_offset)
            + _batches(v.batches) + b"\x00")


def decode_key(raw: bytes | None) -> ShareKey:
    r = _Flex(raw)
    kind = r.i16()
    if kind not in (SNAPSHOT, UPDATE):
        raise UnknownRecord(f"record type {kind} is not a share-state record")
    group_id = r.str()
    if group_id is None:
        raise UnknownRecord("a share-state key without a group id")
    return ShareKey(kind, group_id, r.uuid(), r.i32())


def _read_batches(r: _Flex) -> tuple[StateBatch, ...]:
    out = []
    for _ in range(r.count()):
        first, last = r.i64(), r.i64()
        state = r._unpack(_I8)
        out.append(StateBatch(first, last, state, r.i16()))
        r.tags()
    return tuple(out)


def decode_value(kind: int, raw: bytes | None) -> ShareSnapshot | ShareUpdate | None:
    """The value of a ``kind`` record; None for a tombstone, UnknownRecord if it does not parse."""
    if raw is None:
        return None
    r = _Flex(raw)
    if r.i16() != 0:
        raise UnknownRecord("a share-state value of an unknown version")
    if kind == SNAPSHOT:
        head = (r.i32(), r.i32(), r.i32(), r.i64(), r.i64(), r.i64())
        value: ShareSnapshot | ShareUpdate = ShareSnapshot(*head, _read_batches(r))
    else:
        value = ShareUpdate(r.i32(), r.i32(), r.i64(), _read_batches(r))
    r.tags()
    return value


def combine(current: tuple[StateBatch, ...], newer, start_offset: int) -> tuple[StateBatch, ...]:
    """``current`` with ``newer``'s batches laid over the offsets they cover, nothing below
    ``start_offset`` (Kafka: PersisterStateBatchCombiner.combineStateBatches). Each current batch
    is cut by the few newer ranges it overlaps, found by bisection: cutting it by every newer batch
    took 3.8 s for 3,000 of each."""
    cuts = _union(newer)
    starts, lasts = [c[0] for c in cuts], [c[1] for c in cuts]
    out: list[StateBatch] = []
    for b in current:
        out += [StateBatch(f, l, b.delivery_state, b.delivery_count)
                for f, l in _minus(b.first_offset, b.last_offset, cuts, bisect.bisect_left(lasts, b.first_offset),
                                   bisect.bisect_right(starts, b.last_offset))]
    out += list(newer)
    kept = [StateBatch(max(b.first_offset, start_offset), b.last_offset, b.delivery_state, b.delivery_count)
            for b in out if b.last_offset >= start_offset]
    return tuple(sorted(kept))


def _union(batches) -> list[list[int]]:
    """The offsets ``batches`` cover, as sorted disjoint [first, last] ranges."""
    merged: list[list[int]] = []
    for first, last in sorted((b.first_offset, b.last_offset) for b in batches):
        if merged and first <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], last)
        else:
            merged.append([first, last])
    return merged


def _minus(first: int, last: int, cuts: list, begin: int, end: int) -> list[tuple[int, int]]:
    """[first, last] less ``cuts[begin:end]``, the disjoint sorted ranges that overlap it."""
    pieces, at = [], first
    for cut_first, cut_last in cuts[begin:end]:
        if cut_first > at:
            pieces.append((at, cut_first - 1))
        at = max(at, cut_last + 1)
    if at <= last:
        pieces.append((at, last))
    return pieces
