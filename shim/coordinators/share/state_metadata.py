"""Which share partitions of a share group have share state (Kafka 4.1: ShareGroupStatePartitionMetadata,
record key 15 of ``__consumer_offsets``; GroupMetadataManager's shareGroupStatePartitionMetadata).

The group coordinator's own account of the share coordinator's state: per group, the topics whose
partitions are being initialized (InitializeShareGroupState sent), are initialized, and are being
deleted (DeleteShareGroupState sent). Each change writes the whole value again; the group's
tombstones end with one for it. Kafka writes the partitions a heartbeat initializes as
``initializing`` with the heartbeat's records and moves them to ``initialized`` once the share
coordinator has answered; DescribeShareGroupOffsets of all topics lists the initialized ones.

==================================  ====  ========================================================
record                              key   value (version 0, flexible)
==================================  ====  ========================================================
ShareGroupStatePartitionMetadata    15    InitializingTopics, InitializedTopics [TopicId uuid,
                                            TopicName string, Partitions [int32]],
                                            DeletingTopics [TopicId uuid, TopicName string]
==================================  ====  ========================================================
"""

from __future__ import annotations

import struct
import uuid
from typing import NamedTuple

from kafka_codecs.varint import encode_uvarint

from ..group.consumer_records import _carray, _cstr, _Flex
from ..group.records import UnknownRecord

STATE_PARTITION_METADATA = 15
_I16 = struct.Struct(">h")


class Topic(NamedTuple):
    name: str
    partitions: frozenset[int]


Topics = dict[uuid.UUID, Topic]


class PartitionMetadata(NamedTuple):
    initializing: Topics
    initialized: Topics
    deleting: dict[uuid.UUID, str]  # topic id -> name

    def initialized_partitions(self) -> set[tuple[uuid.UUID, int]]:
        return {(tid, p) for tid, t in self.initialized.items() for p in t.partitions}


EMPTY = PartitionMetadata({}, {}, {})


def combine(a: Topics, b: Topics) -> Topics:
    """Kafka: combineInitMaps -- the partitions of both, per topic."""
    out = dict(a)
    for tid, t in b.items():
        old = out.get(tid)
        out[tid] = Topic(t.name, t.partitions | old.partitions) if old is not None else t
    return out


def minus(a: Topics, b: Topics) -> Topics:
    out = {}
    for tid, t in a.items():
        left = t.partitions - (b[tid].partitions if tid in b else frozenset())
        if left:
            out[tid] = Topic(t.name, left)
    return out


def intersect(a: Topics, b: Topics) -> Topics:
    """The partitions in both, per topic."""
    out = {}
    for tid, t in a.items():
        both = t.partitions & b[tid].partitions if tid in b else frozenset()
        if both:
            out[tid] = Topic(t.name, both)
    return out


def initializing(m: PartitionMetadata, topics: Topics) -> PartitionMetadata:
    """Kafka: addInitializingTopicsRecords -- a topic being initialized is no longer being deleted."""
    return PartitionMetadata(combine(m.initializing, topics), m.initialized,
                             {t: n for t, n in m.deleting.items() if t not in topics})


def initialized(m: PartitionMetadata, topics: Topics) -> PartitionMetadata:
    """Kafka: initializeShareGroupState -- the share coordinator answered for ``topics``."""
    return PartitionMetadata(minus(m.initializing, topics), combine(m.initialized, topics), m.deleting)


def deleting(m: PartitionMetadata, topic_ids) -> PartitionMetadata:
    """Kafka: sharePartitionsEligibleForOffsetDeletion -- the topics' state is being deleted."""
    gone = set(topic_ids)
    names = {tid: t.name for tid, t in (*m.initialized.items(), *m.initializing.items()) if tid in gone}
    return PartitionMetadata({t: v for t, v in m.initializing.items() if t not in gone},
                             {t: v for t, v in m.initialized.items() if t not in gone}, {**m.deleting, **names})


def deleted(m: PartitionMetadata, topic_ids) -> PartitionMetadata:
    """Kafka: completeDeleteShareGroupOffsets -- the share coordinator deleted the topics' state."""
    return m._replace(deleting={t: n for t, n in m.deleting.items() if t not in set(topic_ids)})


def without_partitions(m: PartitionMetadata, topics: Topics) -> PartitionMetadata:
    return m._replace(initializing=minus(m.initializing, topics), initialized=minus(m.initialized, topics))


def without_topics(m: PartitionMetadata, topic_ids) -> PartitionMetadata:
    """Topics deleted from the cluster drop out of every list (Kafka: the metadata image's deleted topics)."""
    gone = set(topic_ids)
    return PartitionMetadata({t: v for t, v in m.initializing.items() if t not in gone},
                             {t: v for t, v in m.initialized.items() if t not in gone},
                             {t: n for t, n in m.deleting.items() if t not in gone})


def topic_ids(m: PartitionMetadata) -> set[uuid.UUID]:
    return set(m.initializing) | set(m.initialized) | set(m.deleting)


# -- encoding -----------------------------------------------------------------------------------


def _int32s(values: frozenset[int]) -> bytes:
    """A compact array of int32, packed at once (a topic may have 100,000 partitions)."""
    return encode_uvarint(len(values) + 1) + struct.pack(f">{len(values)}i", *sorted(values))


def _topics(topics: Topics) -> bytes:
    return _carray([tid.bytes + _cstr(t.name) + _int32s(t.partitions) + b"\x00"
                    for tid, t in sorted(topics.items(), key=lambda kv: kv[0].bytes)])


def encode_key(group_id: str) -> bytes:
    raw = group_id.encode()
    return _I16.pack(STATE_PARTITION_METADATA) + _I16.pack(len(raw)) + raw


def encode_value(m: PartitionMetadata | None) -> bytes | None:
    if m is None:
        return None
    deleting = _carray([tid.bytes + _cstr(name) + b"\x00" for tid, name in sorted(m.deleting.items(),
                                                                               key=lambda kv: kv[0].bytes)])
    return _I16.pack(0) + _topics(m.initializing) + _topics(m.initialized) + deleting + b"\x00"


def decode_value(value: bytes) -> PartitionMetadata:
    v = _Flex(value)
    if v.i16() != 0:
        raise UnknownRecord("unknown value version of ShareGroupStatePartitionMetadata")

    def topics() -> Topics:
        out = {}
        for _ in range(v.count()):
            tid, name = v.uuid(), v.cstr() or ""
            out[tid] = Topic(name, frozenset(v.i32() for _ in range(v.count())))
            v.tags()
        return out

    first, second = topics(), topics()
    gone = {}
    for _ in range(v.count()):
        tid = v.uuid()
        gone[tid] = v.cstr() or ""
        v.tags()
    return PartitionMetadata(first, second, gone)
