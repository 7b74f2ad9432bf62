"""The group coordinator's side of share-partition state: which partitions of each share group it
has initialized, written as ShareGroupStatePartitionMetadata (key 15, :mod:`.state_metadata`) around
each InitializeShareGroupState and DeleteShareGroupState it has the share coordinator carry out
(:class:`.store.ShareStateStore`).

Kafka 4.1 (GroupMetadataManager, GroupCoordinatorService): a heartbeat that finds partitions of a
subscribed topic not yet initialized writes them as ``initializing`` with its records, then sends
InitializeShareGroupState (start offset -1, the group's epoch) and, once answered, writes them as
``initialized``. AlterShareGroupOffsets does the same with the offsets given. DeleteShareGroupOffsets
moves topics to ``deleting``, has their state deleted and drops them; DeleteGroups moves everything
to ``deleting`` before the group's tombstones. kafka-shim's share coordinator answers at once, so
each step is the record, the state write, then the record again; a crash in between leaves a
partition ``initializing``, which the next heartbeat initializes again, as Kafka retries it.
"""

from __future__ import annotations

from typing import Callable

from . import state_metadata as sm

Write = Callable[[str, list, int], None]  # (group id, [(key, value)], now_ms)


class ShareStateTracker:
    def __init__(self, store, write: Write) -> None:
        self.store = store
        self.write = write
        self.groups: dict[str, sm.PartitionMetadata] = {}

    def get(self, group_id: str) -> sm.PartitionMetadata:
        return self.groups.get(group_id, sm.EMPTY)

    def _set(self, group_id: str, meta: sm.PartitionMetadata, now_ms: int) -> None:
        self.write(group_id, [(sm.encode_key(group_id), sm.encode_value(meta))], now_ms)
        self.groups[group_id] = meta

    def tombstone(self, group_id: str) -> tuple[bytes, None]:
        """The record that ends the group's entry (written with the group's other tombstones)."""
        self.groups.pop(group_id, None)
        return sm.encode_key(group_id), None

    # -- start-up -------------------------------------------------------------------------------

    def replay(self, group_id: str, meta: sm.PartitionMetadata | None) -> None:
        if meta is None:
            self.groups.pop(group_id, None)
        else:
            self.groups[group_id] = meta

    def adopt(self, group_id: str, partitions: dict[tuple[str, int], object]) -> None:
        """Share state of a group without a key-15 record (older kafka-shim wrote none) counts as
        initialized (in memory; the group's next key-15 record writes it)."""
        topics: sm.Topics = {}
        for (topic, p), topic_id in partitions.items():
            old = topics.get(topic_id)
            topics[topic_id] = sm.Topic(topic, (old.partitions if old else frozenset()) | {p})
        meta = self.get(group_id)
        known = meta.initialized_partitions() | {(t, p) for t, v in meta.initializing.items() for p in v.partitions}
        extra = {tid: sm.Topic(t.name, frozenset(p for p in t.partitions if (tid, p) not in known))
                 for tid, t in topics.items()}
        extra = {tid: t for tid, t in extra.items() if t.partitions}
        if extra:
            self.groups[group_id] = sm.initialized(meta, extra)

    # -- changes --------------------------------------------------------------------------------

    def initialize_subscribed(self, group_id: str, subscribed: dict[str, tuple[int, object]], epoch: int,
                              now_ms: int, held: Callable[[str, int], bool]) -> None:
        """Every partition of ``subscribed`` (topic -> (partitions, topic id)) not yet initialized:
        a snapshot with no start offset at ``epoch``, unless ``held(topic, partition)`` (state the
        share coordinator already has, which is kept)."""
        done = self.get(group_id).initialized_partitions()
        missing: sm.Topics = {}
        for topic, (count, topic_id) in sorted(subscribed.items()):
            parts = frozenset(p for p in range(count) if (topic_id, p) not in done)
            if parts:
                missing[topic_id] = sm.Topic(topic, parts)
        if missing:
            fresh = {(t.name, p): -1 for t in missing.values() for p in t.partitions if not held(t.name, p)}
            self._initialize(group_id, missing, fresh, epoch, now_ms)

    def alter(self, group_id: str, offsets: dict[tuple[str, int], int], topic_id, epoch: int, now_ms: int) -> None:
        """AlterShareGroupOffsets: each partition a new snapshot at its start offset."""
        topics: sm.Topics = {}
        for (topic, p) in sorted(offsets):
            tid = topic_id(topic)
            if tid is not None:
                old = topics.get(tid)
                topics[tid] = sm.Topic(topic, (old.partitions if old else frozenset()) | {p})
        if topics:
            self._initialize(group_id, topics, offsets, epoch, now_ms)

    def _initialize(self, group_id: str, topics: sm.Topics, offsets: dict, epoch: int, now_ms: int) -> None:
        self._set(group_id, sm.initializing(self.get(group_id), topics), now_ms)
        self.store.initialize(group_id, offsets, epoch)
        self._set(group_id, sm.initialized(self.get(group_id), topics), now_ms)

    def forget_partitions(self, group_id: str, partitions, topic_id, now_ms: int) -> None:
        """Partitions whose state goes (an alter to a negative offset): no longer initialized."""
        topics: sm.Topics = {}
        for topic, p in partitions:
            tid = topic_id(topic)
            if tid is not None:
                old = topics.get(tid)
                topics[tid] = sm.Topic(topic, (old.partitions if old else frozenset()) | {p})
        meta = self.get(group_id)
        if topics and sm.without_partitions(meta, topics) != meta:
            self._set(group_id, sm.without_partitions(meta, topics), now_ms)

    def delete_topics(self, group_id: str, topic_ids, delete_state: Callable[[], None], now_ms: int,
                      finish: bool = True) -> None:
        """DeleteShareGroupOffsets: the topics are ``deleting``, their state is deleted, then they
        are dropped. DeleteGroups (``finish`` False, every topic): the group's tombstones follow."""
        ids = set(topic_ids)
        if ids:
            self._set(group_id, sm.deleting(self.get(group_id), ids), now_ms)
        delete_state()
        if ids and finish:
            self._set(group_id, sm.deleted(self.get(group_id), ids), now_ms)

    def forget_topics(self, exists: Callable[[object], bool], now_ms: int) -> None:
        """Topics deleted from the cluster leave every group's record."""
        for group_id, meta in sorted(self.groups.items()):
            gone = {tid for tid in sm.topic_ids(meta) if not exists(tid)}
            if gone:
                self._set(group_id, sm.without_topics(meta, gone), now_ms)
