"""Durable share-partition state in ``__share_group_state`` (Kafka: ShareCoordinatorShard).

Each share partition (group, topic id, partition) is a key of the topic's partition that
``"group:topicId:partition"`` hashes to (Java's String.hashCode, as ShareCoordinatorService.partitionFor).
Its first write is a ShareSnapshot; later ones are ShareUpdates of the same snapshot epoch until
``share.coordinator.snapshot.update.records.per.snapshot`` (500) of them follow a snapshot, when the
next write is a new snapshot (snapshot epoch + 1). Writes are COORDINATOR appends of
:meth:`PartitionLog.append` -- the one write path of every internal topic, durable on return under
fsync "always" -- made before the change is applied in memory. At start-up every partition is
replayed: a snapshot replaces a key's state, an update is laid over it, a tombstone deletes it.

The topic is ``cleanup.policy=delete`` with ``retention.ms=-1`` as Kafka creates it (KIP-932): it is
never compacted. Instead, as Kafka's ShareCoordinatorOffsetsManager, everything below the oldest
of the partition's latest snapshots is redundant, and the log start offset moves up to it after a
snapshot is written. So that a key nobody writes any more does not hold that back for ever, every
``share.coordinator.cold.partition.snapshot.interval.ms`` the keys whose last snapshot is that old
are written again as snapshots (Kafka 4.1's cold-partition snapshots, :meth:`ShareStateStore.tick`).

As Kafka's persister does, ACQUIRED is written as AVAILABLE: locks do not survive a restart, the
records come back to the group with the delivery count they had (Kafka: SharePartition.maybeInitialize).

Older kafka-shim kept this state in ``__cluster_metadata/share-state/`` (a JSON file per group): at
start-up those files are written into the topic as snapshots, then removed.
"""

from __future__ import annotations

import base64
import functools
import json
import logging
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, NamedTuple

from kafka_codecs.batch import parse_header
from kafka_codecs.records import InvalidBatch, decode_batch, encode_batch

from ...errors import KafkaError
from ...storage import fs
from ...storage.producer_state import Origin
from ..group.records import UnknownRecord
from ..partitioning import java_string_hash, partition_of_hash
from . import records as sr
from .partition import NO_DEADLINE, InFlight, RecordState, SharePartition

log = logging.getLogger(__name__)

SHARE_STATE_TOPIC = "__share_group_state"
COLD_SNAPSHOT_INTERVAL_MS = 300_000  # Kafka's share.coordinator.cold.partition.snapshot.interval.ms
COLD_SNAPSHOTS_PER_TURN = 1_000  # keys written again in one turn of the event loop
LEGACY_DIRECTORY = "share-state"
AVAILABLE, ACKNOWLEDGED, ARCHIVED = 0, 2, 4
_TERMINAL = (ACKNOWLEDGED, ARCHIVED)


def topic_configs(segment_bytes: int = 104857600) -> dict[str, str]:
    """Kafka: ShareCoordinatorService.shareGroupStateTopicConfigs."""
    return {"cleanup.policy": "delete", "compression.type": "producer", "segment.bytes": str(segment_bytes),
            "retention.ms": "-1"}


@functools.lru_cache(maxsize=16)
def _group_hash(group_id: str) -> int:
    """String.hashCode of the ``group:`` every one of the group's share-partition keys begins with."""
    return java_string_hash(group_id + ":")


def share_partition_key(group_id: str, topic_id: uuid.UUID, partition: int) -> str:
    """Kafka: SharePartitionKey.toString, the topic id as Uuid.toString (base64url, no padding)."""
    return f"{group_id}:{base64.urlsafe_b64encode(topic_id.bytes).decode().rstrip('=')}:{partition}"


class Change(NamedTuple):
    key: tuple[str, uuid.UUID, int]  # (group id, topic id, partition)
    start_offset: int  # -1: unchanged
    batches: tuple = ()
    state_epoch: int = -1  # -1: unchanged
    leader_epoch: int | None = None  # None: the partition's own; -1: unchanged
    initialize: bool = False  # a new snapshot of no batches (InitializeShareGroupState)


@dataclass(slots=True)
class _Entry:
    snapshot: sr.ShareSnapshot  # the key's state: its snapshot with every later update laid over it
    updates: int  # updates written since the snapshot
    snapshot_offset: int  # where the snapshot is in the log
    # Kafka: ShareCoordinatorShard's leaderEpochMap and stateEpochMap, what requests are fenced by --
    # the highest epochs the key's records carried since its last tombstone, not the snapshot's own
    # (an InitializeShareGroupState writes leader epoch 0 over a higher one and fences on by it)
    leader_fence: int = -1
    state_fence: int = -1


class ShareStateStore:
    def __init__(self, logs=None, *, num_partitions: int = 50, records_per_snapshot: int = 500,
                 clock: Callable[[], int] = lambda: 0, legacy_dir: Path | None = None,
                 cold_snapshot_interval_ms: int = COLD_SNAPSHOT_INTERVAL_MS) -> None:
        self.logs = logs
        self.num_partitions = num_partitions
        self.records_per_snapshot = records_per_snapshot
        self.clock = clock
        # Kafka: share.coordinator.cold.partition.snapshot.interval.ms, a job from start-up on
        self.cold_snapshot_interval_ms = cold_snapshot_interval_ms
        self.cold_snapshot_due = clock() + cold_snapshot_interval_ms
        self._cold_round: list[int] = []  # the partitions a round of cold snapshots has yet to look through
        self._cold: list = []  # the cold keys found in the last one: (partition, key, its state as found)
        self.entries: dict[tuple[str, uuid.UUID, int], _Entry] = {}
        # derived from ``entries``: each key's __share_group_state partition and each partition's
        # keys, so a write hashes a key once and prunes over its own partition's keys only
        self._placed: dict[tuple[str, uuid.UUID, int], int] = {}
        self._shards: dict[int, set[tuple[str, uuid.UUID, int]]] = {}
        if logs is not None:
            self._replay()
            self.forget_deleted_topics()  # a topic deleted just before a crash
            if legacy_dir is not None:
                self._migrate(legacy_dir / LEGACY_DIRECTORY)

    def partition_for(self, group_id: str, topic_id: uuid.UUID, partition: int) -> int:
        placed = self._placed.get((group_id, topic_id, partition))
        if placed is not None:
            return placed
        # the key's hash goes on from its group's (a group id may be 32,767 characters long)
        suffix = share_partition_key(group_id, topic_id, partition)[len(group_id) + 1:]
        return partition_of_hash(java_string_hash(suffix, _group_hash(group_id)), self.num_partitions)

    def _put(self, key, entry: "_Entry", partition: int | None = None) -> None:
        """``partition``: the key's, when the caller has just worked it out."""
        old, snap = self.entries.get(key), entry.snapshot
        entry.leader_fence = snap.leader_epoch if old is None else max(old.leader_fence, snap.leader_epoch)
        entry.state_fence = snap.state_epoch if old is None else max(old.state_fence, snap.state_epoch)
        if key not in self._placed:
            self._placed[key] = shard = self.partition_for(*key) if partition is None else partition
            self._shards.setdefault(shard, set()).add(key)
        self.entries[key] = entry

    def _drop(self, key) -> None:
        self.entries.pop(key, None)
        shard = self._placed.pop(key, None)
        if shard is not None:
            self._shards[shard].discard(key)

    # -- the coordinator's view: (topic name, partition) -> encode() of a share partition ------

    def write(self, group_id: str, partitions: dict[tuple[str, int], dict]) -> None:
        """``partitions``: (topic, partition) -> :func:`encode` of its share partition."""
        if self.logs is None:
            return
        changes = []
        for (topic, p), state in sorted(partitions.items()):
            info = self.logs.topics.get(topic)
            if info is not None:
                changes.append(Change((group_id, info.topic_id, p), state["start_offset"], to_batches(state)))
        self.write_batches(changes)

    def initialize(self, group_id: str, offsets: dict[tuple[str, int], int], state_epoch: int) -> None:
        """Kafka: InitializeShareGroupState as the group coordinator sends it -- each (topic, partition)
        a new snapshot at its start offset (-1: not yet known, share.auto.offset.reset decides at the
        first fetch), nothing in flight, the group's epoch as its state epoch and leader epoch 0
        (ShareGroupOffset.fromRequest's UNINITIALIZED_EPOCH)."""
        self.write_batches([Change(key, offsets[tp], (), state_epoch=state_epoch, leader_epoch=0, initialize=True)
                            for key, tp in self._keys(group_id, offsets).items()])

    def initialize_keys(self, keys) -> None:
        """:meth:`initialize` with no start offset of ``keys``: (group id, topic id, partition, state epoch)."""
        if self.logs is not None:
            self.write_batches([Change((g, tid, p), -1, (), state_epoch=epoch, leader_epoch=0, initialize=True)
                                for g, tid, p, epoch in keys])

    def start_offsets(self, group_id: str) -> dict[tuple[str, int], int]:
        """(topic, partition) -> the start offset last written, for each share partition of the group
        with state (-1: initialized, no start offset yet), of the topics and partitions that exist."""
        return {tp: snap.start_offset for tp, snap in self.snapshots(group_id).items()}

    def snapshots(self, group_id: str) -> dict[tuple[str, int], sr.ShareSnapshot]:
        """(topic, partition) -> the state of each share partition of the group (Kafka:
        ReadShareGroupStateSummary's start offset, leader epoch and state epoch), of the topics
        and partitions that exist."""
        out = {}
        for (g, topic_id, p), entry in self.entries.items():
            info = self.logs.topic_by_id(topic_id) if g == group_id else None
            if info is not None and p < info.partitions:
                out[(info.name, p)] = entry.snapshot
        return out

    def remove(self, group_id: str, partitions) -> None:
        """Kafka: DeleteShareGroupState -- tombstones for the group's (topic, partition)s."""
        if self.logs is not None:
            self.delete(self._keys(group_id, partitions))

    def _keys(self, group_id: str, partitions) -> dict:
        """(group, topic id, partition) -> (topic, partition), for the topics that exist."""
        if self.logs is None:
            return {}
        out = {}
        for topic, p in sorted(partitions):
            info = self.logs.topics.get(topic)
            if info is not None:
                out[(group_id, info.topic_id, p)] = (topic, p)
        return out

    def load(self) -> dict[str, dict[tuple[str, int], dict]]:
        """group id -> (topic, partition) -> the saved state (see :func:`restore`)."""
        out: dict[str, dict[tuple[str, int], dict]] = {}
        for (group_id, topic_id, p), entry in self.entries.items():
            info = self.logs.topic_by_id(topic_id)
            if info is not None and p < info.partitions:
                out.setdefault(group_id, {})[(info.name, p)] = from_snapshot(entry.snapshot)
        return out

    def saved(self, group_id: str, topic: str, partition: int) -> dict | None:
        """The :func:`restore` form of one share partition's state, or None without one."""
        info = self.logs.topics.get(topic) if self.logs is not None else None
        snap = self.get((group_id, info.topic_id, partition)) if info is not None else None
        return from_snapshot(snap) if snap is not None and snap.start_offset >= 0 else None

    # -- Kafka's view: keys and state batches -------------------------------------------------

    def write_batches(self, changes) -> None:
        """``changes``: :class:`Change` s -- one record each, appended per ``__share_group_state``
        partition, then applied (Kafka: ShareCoordinatorShard.writeState and initializeState)."""
        by_partition: dict[int, list] = {}
        now = self.clock()
        for change in changes:
            change = change if isinstance(change, Change) else Change(*change)
            by_partition.setdefault(self.partition_for(*change.key), []).append((change.key, self._next(change, now)))
        for partition, planned in sorted(by_partition.items()):
            self._write(partition, planned, now)

    def _write(self, partition: int, planned, now: int) -> None:
        """``planned``: (key, (record type, value, the key's entry once written)) -- appended to one
        partition, then applied; a snapshot that replaces a key's earlier one lets the partition be
        pruned (a key's first snapshot lies above every other: it moves nothing, and pruning after
        each slice of a 100,000-key initialization walked the partition's keys again each time)."""
        records = [(sr.encode_key(sr.ShareKey(kind, *key)), value) for key, (kind, value, _) in planned]
        base = self._append(partition, records, now)
        replaced = False
        for i, (key, (kind, _, entry)) in enumerate(planned):
            if kind == sr.SNAPSHOT:
                entry.snapshot_offset = base + i
                replaced = replaced or key in self.entries
            self._put(key, entry, partition)
        if replaced:
            self._prune(partition)

    def tick(self, now: int) -> int:
        """Kafka 4.1: ShareCoordinatorShard.snapshotColdPartitions, every
        ``share.coordinator.cold.partition.snapshot.interval.ms`` -- each key whose last snapshot is
        that old is written again as a snapshot (its snapshot epoch + 1, written now, created when
        its state was), so that a key nobody writes no longer holds back the pruning of its
        partition; a partition whose every key is such a copy already is left alone. A round goes
        a slice of about :data:`COLD_SNAPSHOTS_PER_TURN` keys per call, the rest due at once, for
        the next turn of the event loop. A write that fails is logged and ends the round, as
        Kafka's job logs it and tries again at the next. Returns the next deadline, none while no
        key has state."""
        if now < self.cold_snapshot_due:
            return self.next_deadline()
        if not self._cold_round and not self._cold:
            self._cold_round = sorted(self._shards, reverse=True)  # a new round, partitions taken from the end
        try:
            written = self._snapshot_cold(now)
        except KafkaError as e:
            log.error("Unable to snapshot cold share partitions: %s", e)
            self._cold_round, self._cold, written = [], [], 0
        if written:
            log.info("wrote %d snapshots of cold share partitions", written)
        more = self._cold_round or self._cold
        self.cold_snapshot_due = now if more else now + self.cold_snapshot_interval_ms
        return self.next_deadline()

    def next_deadline(self) -> int:
        return self.cold_snapshot_due if self.entries else NO_DEADLINE

    def _snapshot_cold(self, now: int) -> int:
        """The next slice of the round: partitions looked through for cold keys, their cold keys
        written, until about :data:`COLD_SNAPSHOTS_PER_TURN` keys were handled."""
        work = written = 0
        while work < COLD_SNAPSHOTS_PER_TURN and (self._cold or self._cold_round):
            if not self._cold:
                partition = self._cold_round.pop()
                found = [(k, self.entries[k].snapshot) for k in self._shards.get(partition, ())]
                work += len(found)
                if any(snap.create_timestamp == snap.write_timestamp for _, snap in found):  # not all copies
                    interval = self.cold_snapshot_interval_ms
                    cold = sorted((k for k, snap in found if now - snap.write_timestamp >= interval), reverse=True,
                                  key=lambda k: (k[0], k[1].bytes, k[2]))  # in key order, taken from the end
                    self._cold = [(partition, k, self.entries[k].snapshot) for k in cold]
                continue
            take = self._cold[-max(COLD_SNAPSHOTS_PER_TURN - work, 1):]
            del self._cold[-len(take):]
            take.reverse()
            work += len(take)
            partition, planned = take[0][0], []
            for _, key, snap in take:
                entry = self.entries.get(key)
                if entry is not None and entry.snapshot is snap:  # not written since it was found
                    again = snap._replace(snapshot_epoch=snap.snapshot_epoch + 1, write_timestamp=now)
                    # the updates since the last snapshot written for a change still count towards the next
                    planned.append((key, (sr.SNAPSHOT, sr.encode_snapshot(again), _Entry(again, entry.updates, -1))))
            if planned:
                self._write(partition, planned, now)
                written += len(planned)
        return written

    def delete(self, keys) -> None:
        """Tombstones for ``keys`` (Kafka: DeleteShareGroupState)."""
        by_partition: dict[int, list] = {}
        for key in keys:
            if key in self.entries:
                by_partition.setdefault(self.partition_for(*key), []).append(key)
        for partition, doomed in sorted(by_partition.items()):
            self._append(partition, [(sr.encode_key(sr.ShareKey(sr.SNAPSHOT, *k)), None) for k in doomed],
                         self.clock())
            for key in doomed:
                self._drop(key)
            self._prune(partition)

    def forget_deleted_topics(self) -> None:
        """Tombstones for the state of topics that no longer exist (Kafka: the group coordinator
        deletes a deleted topic's share state with DeleteShareGroupState)."""
        if self.logs is not None:
            self.delete([k for k in self.entries if self.logs.topic_by_id(k[1]) is None])

    def get(self, key) -> sr.ShareSnapshot | None:
        """The state of ``key`` (group, topic id, partition), or None if it has none."""
        entry = self.entries.get(key)
        return entry.snapshot if entry is not None else None

    def fences(self, key) -> tuple[int, int] | None:
        """(leader epoch, state epoch) that older ones are fenced by, or None without state."""
        entry = self.entries.get(key)
        return (entry.leader_fence, entry.state_fence) if entry is not None else None

    def _next(self, c: "Change", now: int):
        """(record type, value, the key's entry once written) of the next write of ``c.key``
        (Kafka: ShareCoordinatorShard.generateShareStateRecord); -1 leaves an epoch or the start."""
        entry = self.entries.get(c.key)
        old = entry.snapshot if entry is not None else None
        if c.initialize:
            return self._initial(c, old, now)
        leader_epoch = self._leader_epoch(c.key) if c.leader_epoch is None else c.leader_epoch
        if leader_epoch == -1 and old is not None:
            leader_epoch = old.leader_epoch
        state_epoch = c.state_epoch if c.state_epoch != -1 else (old.state_epoch if old is not None else 0)
        start = c.start_offset if c.start_offset != -1 or old is None else old.start_offset
        # Kafka (KAFKA-19337): a ShareUpdate carries no state epoch, so a higher one makes a snapshot
        if old is None or entry.updates >= self.records_per_snapshot or state_epoch > old.state_epoch:
            batches = sr.combine(old.batches if old is not None else (), c.batches, start)
            # Kafka: a snapshot written for a change is created and written now; only a cold
            # partition's copy keeps its creation time
            snap = sr.ShareSnapshot(old.snapshot_epoch + 1 if old is not None else 0, state_epoch, leader_epoch,
                                    start, now, now, batches)
            return sr.SNAPSHOT, sr.encode_snapshot(snap), _Entry(snap, 0, -1)
        update = sr.ShareUpdate(old.snapshot_epoch, leader_epoch, c.start_offset, tuple(c.batches))
        # the snapshot's times stay (Kafka: ShareCoordinatorShard.merge): how old the last snapshot is
        state = old._replace(leader_epoch=leader_epoch, start_offset=start,
                             batches=sr.combine(old.batches, c.batches, start))
        return sr.UPDATE, sr.encode_update(update), _Entry(state, entry.updates + 1, entry.snapshot_offset)

    @staticmethod
    def _initial(c: "Change", old, now: int):
        """Kafka 4.1: ShareCoordinatorShard.initializeState -- a fresh start whatever was there: a
        snapshot (its epoch one past the last) of the start offset and state epoch as given, -1
        included, leader epoch 0 unless told otherwise (ShareGroupOffset.fromRequest's
        UNINITIALIZED_EPOCH) and nothing in flight."""
        leader_epoch = 0 if c.leader_epoch is None else c.leader_epoch
        snap = sr.ShareSnapshot(old.snapshot_epoch + 1 if old is not None else 0, c.state_epoch, leader_epoch,
                                c.start_offset, now, now, ())
        return sr.SNAPSHOT, sr.encode_snapshot(snap), _Entry(snap, 0, -1)

    def _leader_epoch(self, key) -> int:
        info = self.logs.topic_by_id(key[1])
        plog = self.logs.logs.get((info.name, key[2])) if info is not None else None
        return plog.leader_epoch if plog is not None else 0

    def _log(self, partition: int):
        self.logs.ensure_topic(SHARE_STATE_TOPIC, self.num_partitions)
        return self.logs.get(SHARE_STATE_TOPIC, partition)

    def _append(self, partition: int, records, now: int) -> int:
        batch = encode_batch([(k, v, (), now) for k, v in records])
        return self._log(partition).append(batch, parse_header(batch), now, origin=Origin.COORDINATOR).base_offset

    def _prune(self, partition: int) -> None:
        """Kafka: ShareCoordinatorOffsetsManager.lastRedundantOffset -- below the oldest latest
        snapshot of the partition's keys nothing is needed any more."""
        offsets = [self.entries[k].snapshot_offset for k in self._shards.get(partition, ())]
        plog = self._log(partition)
        redundant = min(offsets) if offsets else plog.high_watermark  # no key left: nothing is needed
        if redundant > plog.log_start_offset:
            plog.delete_records(redundant)

    # -- start-up ---------------------------------------------------------------------------

    def _replay(self) -> None:
        info = self.logs.topics.get(SHARE_STATE_TOPIC)
        for partition in range(info.partitions if info is not None else 0):
            for raw in self.logs.get(SHARE_STATE_TOPIC, partition).iter_batches():
                try:
                    h, records = decode_batch(raw)
                except InvalidBatch as e:
                    log.warning("skipping a batch of %s: %s", SHARE_STATE_TOPIC, e)
                    continue
                if not h.is_control:
                    for r in records:
                        self._replay_record(r, r.offset)

    def _replay_record(self, r, offset: int) -> None:
        """Kafka: ShareCoordinatorShard.replay."""
        try:
            key = sr.decode_key(r.key)
            value = sr.decode_value(key.kind, r.value)
        except UnknownRecord as e:
            log.warning("skipping a record of %s: %s", SHARE_STATE_TOPIC, e)
            return
        k = (key.group_id, key.topic_id, key.partition)
        entry = self.entries.get(k)
        if value is None:
            self._drop(k)
        elif isinstance(value, sr.ShareSnapshot):
            self._put(k, _Entry(value, 0, offset))
        elif entry is None:  # an update without its snapshot: what it says is all there is
            self._put(k, _Entry(sr.ShareSnapshot(value.snapshot_epoch, 0, value.leader_epoch,
                                                 max(value.start_offset, 0), 0, 0, value.batches), 1, offset))
        else:
            old = entry.snapshot
            start = value.start_offset if value.start_offset >= 0 else old.start_offset
            entry.leader_fence = max(entry.leader_fence, value.leader_epoch)  # an update has no state epoch
            entry.snapshot = old._replace(leader_epoch=value.leader_epoch, start_offset=start,
                                          batches=sr.combine(old.batches, value.batches, start))
            entry.updates += 1

    def _migrate(self, directory: Path) -> None:
        """The JSON files older kafka-shim wrote become snapshots in the topic, then go."""
        if not directory.is_dir():
            return
        for path in sorted(directory.glob("*.json")):
            saved = json.loads(path.read_text())
            parts = {}
            for name, state in saved["partitions"].items():
                topic, _, p = name.rpartition(":")
                info = self.logs.topics.get(topic)
                if info is not None and (saved["group"], info.topic_id, int(p)) not in self.entries:
                    parts[(topic, int(p))] = state
            self.write(saved["group"], parts)
            fs.remove(path, sync=True)
        fs.remove_tree(directory, sync=True)
        log.info("moved share-partition state from %s into %s", directory, SHARE_STATE_TOPIC)


# -- a share partition <-> its state batches ---------------------------------------------------


def encode(sp: SharePartition) -> dict:
    records = [[offset, (RecordState.AVAILABLE if r.state is RecordState.ACQUIRED else r.state).value,
                r.delivery_count] for offset, r in sorted(sp.records.items())]
    return {"start_offset": sp.start_offset, "end_offset": sp.end_offset, "records": records}


def restore(sp: SharePartition, state: dict) -> SharePartition:
    sp.start_offset, sp.end_offset = state["start_offset"], state["end_offset"]
    sp.records = {offset: InFlight(RecordState(value), count) for offset, value, count in state["records"]}
    return sp


def to_batches(state: dict) -> list[sr.StateBatch]:
    """The in-flight window [start, end) as state batches: runs of one state and delivery count;
    offsets without a record (gaps, done) are ARCHIVED, as a GAP acknowledgement makes them."""
    out: list[sr.StateBatch] = []
    expected = state["start_offset"]
    for offset, value, count in state["records"]:
        if offset > expected:
            _run(out, expected, offset - 1, ARCHIVED, 0)
        _run(out, offset, offset, value, count)
        expected = offset + 1
    if state["end_offset"] > expected:
        _run(out, expected, state["end_offset"] - 1, ARCHIVED, 0)
    return out


def _run(out: list[sr.StateBatch], first: int, last: int, value: int, count: int) -> None:
    if out and out[-1].last_offset == first - 1 and (out[-1].delivery_state, out[-1].delivery_count) == (value, count):
        out[-1] = out[-1]._replace(last_offset=last)
    else:
        out.append(sr.StateBatch(first, last, value, count))


def from_snapshot(snap: sr.ShareSnapshot) -> dict:
    """The :func:`restore` form of a key's state; finished offsets keep no record. A state
    initialized without a start offset (-1) has nothing in flight: the share partition takes its
    start from share.auto.offset.reset when first fetched (Kafka: SharePartition.maybeInitialize)."""
    if snap.start_offset < 0:
        return {"start_offset": -1, "end_offset": -1, "records": []}
    start = snap.start_offset
    end, records = start, []
    for b in snap.batches:
        end = max(end, b.last_offset + 1)
        if b.delivery_state not in _TERMINAL:
            records += [[o, AVAILABLE, b.delivery_count] for o in range(max(b.first_offset, start), b.last_offset + 1)]
    return {"start_offset": start, "end_offset": end, "records": records}
