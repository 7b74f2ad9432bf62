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
each step is the record, the state write, then the record again.

A partition left ``initializing`` -- a crash between the two records, or a record whose state write
never happened -- is initialized again by the first heartbeat once ``group.share.initialize.retry.
interval.ms`` (30 s, never below offsets.commit.timeout.ms) has passed since the group's key-15
record was last written or replayed: Kafka stamps every initializing topic with the time its record
is replayed (GroupMetadataManager.replay, InitMapValue's timestamp) and skips those younger than the
interval (subscribedTopicsChangeMap). A state write answered with an error takes the partitions out
of ``initializing`` again (Kafka: uninitializeShareGroupState), so the next heartbeat retries them.

As Kafka's InitializeShareGroupState is answered after the heartbeat, the state writes of a
heartbeat's partitions are a job of :data:`INITIALIZATIONS_PER_TURN` keys a turn of the event loop
(the first turn within the heartbeat, so a topic of a few partitions is initialized before it is
answered); the ``initialized`` record follows the last. A thousand partitions are written in one
turn, 100,000 in a hundred. Each turn writes only the partitions still ``initializing`` by then
(AlterShareGroupOffsets, DeleteShareGroupOffsets, DeleteGroups or the topic's deletion may have
taken them out since) and without state (a share fetch may have made some since); a crash midway
leaves them ``initializing``, initialized again after the retry interval, what was written kept.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable

from ...errors import KafkaError
from . import state_metadata as sm

log = logging.getLogger(__name__)

Write = Callable[[str, list, int], None]  # (group id, [(key, value)], now_ms)
Held = Callable[[str, object, str, int], bool]  # (group id, topic id, topic, partition): has share state
INITIALIZATIONS_PER_TURN = 1_000  # share partitions' first states written in one turn of the event loop


def _partitions(topics: sm.Topics, topic_id) -> frozenset[int]:
    t = topics.get(topic_id)
    return t.partitions if t is not None else frozenset()


@dataclass(slots=True)
class _Job:
    """A group's partitions whose first state is yet to be written: per topic, the partitions left
    (taken from the end) and the group epoch they are initialized at."""
    topics: sm.Topics  # every partition of the job, for the ``initialized`` record at its end
    queue: list[tuple[object, list[int], int]]  # (topic id, partitions left, state epoch)

    def add(self, topics: sm.Topics, epoch: int) -> None:
        self.topics = sm.combine(self.topics, topics)
        self.queue[:0] = [(tid, sorted(t.partitions, reverse=True), epoch) for tid, t in sorted(
            topics.items(), key=lambda kv: kv[0].bytes, reverse=True)]  # taken from the end, in order

    def take(self, budget: int) -> list[tuple[object, int, int]]:
        """Up to ``budget`` (topic id, partition, state epoch), the topics in order."""
        out: list[tuple[object, int, int]] = []
        while self.queue and len(out) < budget:
            tid, left, epoch = self.queue[-1]
            chunk = left[-(budget - len(out)):]
            del left[-len(chunk):]
            out += [(tid, p, epoch) for p in reversed(chunk)]
            if not left:
                self.queue.pop()
        return out


class ShareStateTracker:
    def __init__(self, store, write: Write, retry_interval_ms: int = 30_000) -> None:
        self.store = store
        self.write = write
        self.retry_interval_ms = retry_interval_ms
        self.groups: dict[str, sm.PartitionMetadata] = {}
        self.stamped: dict[str, int] = {}  # group -> when its key-15 record was last written or replayed
        self.probe: Callable[[str], None] = lambda name: None  # named crash points (shim.control)
        self.jobs: dict[str, _Job] = {}  # group -> the partitions whose first state is being written
        self.held: Held = lambda group_id, topic_id, topic, p: False

    def get(self, group_id: str) -> sm.PartitionMetadata:
        return self.groups.get(group_id, sm.EMPTY)

    def _set(self, group_id: str, meta: sm.PartitionMetadata, now_ms: int) -> None:
        self.write(group_id, [(sm.encode_key(group_id), sm.encode_value(meta))], now_ms)
        self.groups[group_id] = meta
        self.stamped[group_id] = now_ms

    def tombstone(self, group_id: str) -> tuple[bytes, None]:
        """The record that ends the group's entry (written with the group's other tombstones)."""
        self.groups.pop(group_id, None)
        self.stamped.pop(group_id, None)
        self.jobs.pop(group_id, None)
        return sm.encode_key(group_id), None

    def retry_due(self, group_id: str, now_ms: int) -> bool:
        """Whether the group's initializing partitions are old enough to be initialized again."""
        stamped = self.stamped.get(group_id)
        return stamped is None or now_ms - stamped >= self.retry_interval_ms

    def advance(self, now_ms: int, advanced_ms: int, group_id: str | None = None) -> list[str]:
        """The clock moved on by ``advanced_ms`` (shim.control): the groups whose initializing
        partitions would be due for a retry by then are due now."""
        due = []
        for g, meta in sorted(self.groups.items()):
            if group_id in (None, g) and self._stale(g, meta) and self.retry_due(g, now_ms + advanced_ms):
                self.stamped[g] = min(self.stamped.get(g, now_ms), now_ms - self.retry_interval_ms)  # due now
                due.append(g)
        return due

    def _writing(self, group_id: str, meta: sm.PartitionMetadata) -> sm.Topics:
        """The group's partitions still ``initializing`` whose state a job is yet to write."""
        job = self.jobs.get(group_id)
        return sm.intersect(meta.initializing, job.topics) if job is not None else {}

    def _stale(self, group_id: str, meta: sm.PartitionMetadata) -> sm.Topics:
        """The group's partitions ``initializing`` with no job writing their state (a crash, an error)."""
        return sm.minus(meta.initializing, self._writing(group_id, meta))

    # -- start-up -------------------------------------------------------------------------------

    def replay(self, group_id: str, meta: sm.PartitionMetadata | None, now_ms: int) -> None:
        if meta is None:
            self.groups.pop(group_id, None)
            self.stamped.pop(group_id, None)
        else:
            self.groups[group_id] = meta
            self.stamped[group_id] = now_ms  # Kafka: replay stamps the topics with the time it runs

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
                              now_ms: int) -> None:
        """Every partition of ``subscribed`` (topic -> (partitions, topic id)) not yet initialized,
        nor initializing since less than the retry interval (nor being written by a job): a
        snapshot with no start offset at ``epoch``, unless :attr:`held` (state the share coordinator
        already has, which is kept). A state write answered with an error is logged and undone
        (Kafka: the heartbeat's answer does not wait for InitializeShareGroupState)."""
        meta = self.get(group_id)
        pending = meta.initializing if not self.retry_due(group_id, now_ms) else self._writing(group_id, meta)
        missing: sm.Topics = {}
        for topic, (count, topic_id) in sorted(subscribed.items()):
            done = _partitions(meta.initialized, topic_id)
            if len(done) >= count:  # Kafka: subscribedTopicsChangeMap looks no further than the sizes
                continue
            parts = frozenset(range(count)) - done - _partitions(pending, topic_id)
            if parts:
                missing[topic_id] = sm.Topic(topic, parts)
        if missing:
            try:
                self._set(group_id, sm.initializing(self.get(group_id), missing), now_ms)
            except KafkaError as e:
                log.error("Unable to initialize share group state of %s: %s", group_id, e)
                return
            self.probe("share.initializing")
            job = self.jobs.setdefault(group_id, _Job({}, []))
            job.add(missing, epoch)
            self.run(now_ms)  # the first turn's share

    def run(self, now_ms: int) -> bool:
        """A turn of the jobs: about :data:`INITIALIZATIONS_PER_TURN` first states written, each
        group's ``initialized`` record once its job is done. Whether work is left for the next turn."""
        budget = INITIALIZATIONS_PER_TURN
        while budget > 0 and self.jobs:
            group_id, job = next(iter(self.jobs.items()))
            taken = job.take(budget)
            budget -= max(len(taken), 1)
            meta = self.get(group_id)
            keys = [(group_id, tid, p, epoch) for tid, p, epoch in taken if p in _partitions(meta.initializing, tid)
                    and not self.held(group_id, tid, job.topics[tid].name, p)]
            try:
                self.store.initialize_keys(keys)
            except KafkaError as e:
                log.error("Unable to initialize share group state of %s: %s", group_id, e)
                del self.jobs[group_id]
                self._uninitialize(group_id, job.topics, now_ms)
                continue
            if not job.queue:
                del self.jobs[group_id]
                self._finish(group_id, job, now_ms)
        return bool(self.jobs)

    def _finish(self, group_id: str, job: _Job, now_ms: int) -> None:
        """Kafka: initializeShareGroupState -- the partitions of the job still ``initializing`` are
        ``initialized``; if this record cannot be written they stay, for a retry after the interval."""
        meta = self.get(group_id)
        done = sm.intersect(meta.initializing, job.topics)
        if done:
            try:
                self._set(group_id, sm.initialized(meta, done), now_ms)
            except KafkaError as e:
                log.error("Unable to write the initialized partitions of %s: %s", group_id, e)

    def next_deadline(self, never: int) -> int:
        """Due at once while a job has work left."""
        return 0 if self.jobs else never

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
        self.probe("share.initializing")
        self.store.initialize(group_id, offsets, epoch)
        self._set(group_id, sm.initialized(self.get(group_id), topics), now_ms)

    def _uninitialize(self, group_id: str, topics: sm.Topics, now_ms: int) -> None:
        """Kafka: uninitializeShareGroupState -- the partitions leave ``initializing``; if even this
        record cannot be written they stay there, for a retry after the interval."""
        meta = self.get(group_id)
        left = meta._replace(initializing=sm.minus(meta.initializing, topics))
        if left == meta:  # none of them is initializing any more
            return
        try:
            self._set(group_id, left, now_ms)
        except KafkaError as e:
            log.error("Unable to take the partitions of %s out of initializing: %s", group_id, e)

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
