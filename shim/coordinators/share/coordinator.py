"""The share coordinator: share groups, their share sessions and share-partition state.

Kafka splits this between the group coordinator (membership: GroupMetadataManager's share-group
part), the broker's SharePartitionManager (sessions, acquisition) and the share coordinator
(durable state in ``__share_group_state``). kafka-shim keeps the three together; the share-partition
state is written to ``__share_group_state`` as Kafka's share coordinator writes it (:mod:`.store`);
share sessions live in memory, as in Kafka.

Acquisition (Kafka: SharePartition.acquire, ShareFetchUtils): a share fetch reads whole batches from
the partition's first AVAILABLE offset, or from the first offset never fetched, up to the high
watermark (read_uncommitted) or the last stable offset (read_committed, the group's
``share.isolation.level``), and acquires the records of those batches that are AVAILABLE or new.
Control batches, and under read_committed the batches of aborted transactions (found with the
partition's aborted-transaction index), are archived as they are first fetched and never delivered.
"""

from __future__ import annotations

import base64
import logging
from dataclasses import dataclass

from kafka_codecs.batch import iter_batches

from ...configs.offset_reset import EARLIEST, LATEST, ShareAutoOffsetReset
from ...errors import ErrorCode, KafkaError
from .configs import GroupConfigs, ShareSettings
from . import members
from . import state_metadata as sm
from ..group.topic_hash import TopicHashes
from .group import LEAVE_EPOCH, ShareGroup, Topics
from .initialization import ShareStateTracker
from .partition import NO_DEADLINE, SharePartition, Undo, undo_of
from .sessions import ShareSessionCache
from .store import ShareStateStore, encode, restore

log = logging.getLogger(__name__)

CONTROL_FLAG = 0x20
READ_COMMITTED = "read_committed"


@dataclass(slots=True)
class Acquired:
    records: bytes
    ranges: list[tuple[int, int, int]]  # (first offset, last offset, delivery count)


class ShareCoordinator:
    def __init__(self, settings: ShareSettings, configs: GroupConfigs, partition_count,
                 store: ShareStateStore | None = None, topic_id=lambda topic: None) -> None:
        self.settings = settings
        self.store = store or ShareStateStore(None)
        self._saved = self.store.load()  # group -> (topic, partition) -> state not yet read back
        self._written: dict[tuple[str, str, int], dict] = {}  # what the store last wrote of each partition
        self.configs = configs
        self.partition_count = partition_count  # topic name -> partitions (0: no such topic)
        self.topic_id = topic_id  # topic name -> its topic id (None: no such topic)
        self.topic_hashes = TopicHashes()  # each topic's part of the metadata hash, kept (shared with consumer groups)
        self.topics_version = lambda: None  # moves on with every change of the topics; None: unknown (node.py)
        # A group with share state outlives a restart, as Kafka's group records do; its members join again.
        self.groups: dict[str, ShareGroup] = {g: ShareGroup(g) for g in self._saved}
        self.partitions: dict[tuple[str, str, int], SharePartition] = {}
        self._topic_ids: dict[tuple[str, str, int], object] = {}  # the topic id each share partition is of
        self.sessions = ShareSessionCache(settings.max_share_sessions)
        self.on_earlier_deadline = None
        self.on_release = None  # records became available: wake parked share fetches
        # membership records to __consumer_offsets: (group id, [(key, value)], now_ms), raising KafkaError
        self.write_group_records = None
        self._views: dict[str, members.View] = {}  # what was last written of each group's membership
        # which partitions each group has initialized (ShareGroupStatePartitionMetadata, key 15)
        self.initialized = ShareStateTracker(self.store, self._write_records, settings.retry_interval_ms)
        self.initialized.held = self._held

    def _write_records(self, group_id: str, records, now_ms: int) -> None:
        if self.write_group_records is not None:
            self.write_group_records(group_id, records, now_ms)

    # -- membership -----------------------------------------------------------------------------

    def heartbeat(self, group_id, member_id, epoch, subscribed, rack_id, client, now_ms):
        created = group_id not in self.groups
        if created:
            if epoch != 0:
                raise KafkaError(ErrorCode.unknown_member_id, f"Group {group_id} not found.")
            self.groups[group_id] = ShareGroup(group_id)
        timeout = self.configs.int(group_id, "share.session.timeout.ms", self.settings.session_timeout_ms)
        # A member leaving (-1) keeps its share session: clients send their last acknowledgements and
        # close it (ShareFetch/ShareAcknowledge at epoch -1) around the leave, in either order.
        # Kafka 4.1: the answer assigns only partitions initialized before this heartbeat; those it
        # finds new are initialized after it, for a later heartbeat to assign (shareGroupHeartbeat,
        # then maybeCreateInitializeShareGroupStateRequest).
        try:
            result = self._change(group_id, lambda g: g.heartbeat(member_id, epoch, subscribed, rack_id, client,
                                                                  now_ms, timeout, self._topics(),
                                                                  self._initialized_of(group_id)), now_ms)
        except KafkaError:
            if created:  # Kafka: the group created by a heartbeat whose records were refused goes with them
                del self.groups[group_id]
            raise
        if epoch != LEAVE_EPOCH:
            self._initialize_subscribed(group_id, now_ms)
        self._deadline_set(now_ms + timeout)
        return result

    def _initialize_subscribed(self, group_id: str, now_ms: int) -> None:
        """Every partition of the group's subscribed topics gets share state when the group first
        sees it, before any fetch: a snapshot with no start offset (-1) at the group's epoch, so the
        partition is listed by DescribeShareGroupOffsets from then on; share.auto.offset.reset still
        picks the start at the first fetch (Kafka 4.1: the heartbeat's
        maybeCreateInitializeShareGroupStateRequest, InitializeShareGroupState with start offset -1,
        SharePartition.startOffsetDuringInitialization). State the share coordinator already has
        (a partition fetched before, state written through its APIs) is kept."""
        group = self.groups[group_id]
        self.initialized.initialize_subscribed(group_id, group.subscribed_topics(), group.group_epoch, now_ms)
        if self.initialized.jobs:
            self._deadline_set(now_ms)  # the rest in the next turns (tick)

    def _held(self, group_id: str, topic_id, topic: str, partition: int) -> bool:
        """Whether the share partition has state already: written, or fetched since start-up."""
        key = (group_id, topic, partition)
        return (self.store.get((group_id, topic_id, partition)) is not None
                or (key in self.partitions and self._topic_ids.get(key) == topic_id))

    def _change(self, group_id: str, change, now_ms: int):
        """Change the group's membership; the records of what changed are written before the change
        stands (Kafka: the share-group records of GroupMetadataManager.shareGroupHeartbeat)."""
        group = self.groups[group_id]
        before = group.snapshot()
        result = change(group)
        after = members.view(group, self.topic_id)
        records = members.diff(group_id, self._views.get(group_id), after)
        if records and self.write_group_records is not None:
            try:
                self.write_group_records(group_id, [members.encode(r) for r in records], now_ms)
            except KafkaError:
                self.groups[group_id] = before
                raise
        self._views[group_id] = after
        return result

    def load_members(self, records, topic_name, now_ms: int) -> None:
        """Replay the share-group records of ``__consumer_offsets`` (in log order); every member
        loaded must heartbeat within its session timeout."""
        for r in records:
            if r.kind == sm.STATE_PARTITION_METADATA:
                if r.value is not None:
                    self.groups.setdefault(r.group_id, ShareGroup(r.group_id))
                self.initialized.replay(r.group_id, r.value, now_ms)
            else:
                members.replay(self.groups, self._views, r)
        for group_id in self.groups:
            if group_id not in self.initialized.groups:  # state older kafka-shim wrote without key 15
                self.initialized.adopt(group_id, {tp: self.topic_id(tp[0]) for tp in self.store.start_offsets(group_id)})
        for group_id, view in self._views.items():
            group = self.groups[group_id]
            timeout = self.configs.int(group_id, "share.session.timeout.ms", self.settings.session_timeout_ms)
            members.rebuild(group, view, topic_name, now_ms + timeout)
            group.subscribed_metadata(self._topics())

    def _initialized_of(self, group_id: str):
        """topic -> the partitions of its current topic id the group has initialized (key 15)."""
        def initialized(topic: str) -> frozenset[int]:
            done = self.initialized.get(group_id).initialized.get(self.topic_id(topic))
            return done.partitions if done is not None else frozenset()
        return initialized

    def _topics(self) -> Topics:
        """What a share group's assignment and metadata hash depend on: each topic's partition count
        and id, and the kept hash of each topic (its partitions' racks looked at once, not at every
        heartbeat)."""
        return Topics(lambda topic: (self.partition_count(topic), self.topic_id(topic)), self.topic_hashes.group_hash,
                      self.topics_version())

    def heartbeat_interval_ms(self, group_id: str) -> int:
        return self.configs.int(group_id, "share.heartbeat.interval.ms", self.settings.heartbeat_interval_ms)

    def describe(self, group_id: str) -> ShareGroup:
        group = self.groups.get(group_id)
        if group is None:
            raise KafkaError(ErrorCode.group_id_not_found, f"Group {group_id} not found.")
        return group

    def state_replaced(self, group_id: str, topic: str, partition: int) -> None:
        """The share partition's durable state was written from outside (the share coordinator's
        APIs): what the broker held of it is dropped and read back from the store on next use."""
        key = (group_id, topic, partition)
        self.partitions.pop(key, None)
        self._written.pop(key, None)
        saved = self.store.saved(group_id, topic, partition)
        groups = self._saved.setdefault(group_id, {})
        if saved is None:
            groups.pop((topic, partition), None)
        else:
            groups[(topic, partition)] = saved
        self._released()

    # -- acquisition ----------------------------------------------------------------------------

    def share_partition(self, group_id: str, topic: str, partition: int, plog, now_ms: int) -> SharePartition:
        key = (group_id, topic, partition)
        sp = self.partitions.get(key)
        if sp is None:
            saved = self._saved.get(group_id, {}).get((topic, partition))
            known = saved is not None and saved["start_offset"] >= 0
            start = saved["start_offset"] if known else self._reset_offset(group_id, topic, partition, plog, now_ms)
            sp = self.partitions[key] = self._new_partition(group_id, start)
            self._topic_ids[key] = self.topic_id(topic)
            self._saved.get(group_id, {}).pop((topic, partition), None)
            if known:
                restore(sp, saved)
                self._written[key] = saved
        return sp

    def _reset_offset(self, group_id: str, topic: str, partition: int, plog, now_ms: int) -> int:
        """The start of a share partition with no start offset (Kafka: SharePartition.
        startOffsetDuringInitialization, ShareFetchUtils): the group's share.auto.offset.reset as
        ListOffsets read_uncommitted answers it. With no record at or after now minus a by_duration,
        OFFSET_NOT_AVAILABLE: the partition stays uninitialized and the next fetch tries again."""
        reset = ShareAutoOffsetReset.parse(self.configs.get(group_id, "share.auto.offset.reset", LATEST))
        if reset.strategy == EARLIEST:
            return plog.log_start_offset
        if reset.strategy == LATEST:
            return plog.high_watermark
        try:
            timestamp = reset.timestamp(now_ms)
        except ArithmeticError as e:  # Kafka: the initialization's exception, UNKNOWN_SERVER_ERROR to the fetch
            raise KafkaError(ErrorCode.unknown_server_error, str(e)) from None
        found = plog.offset_for_timestamp(timestamp, False)
        if found is None:
            topic_id = base64.urlsafe_b64encode(self.topic_id(topic).bytes).decode().rstrip("=")
            raise KafkaError(ErrorCode.offset_not_available,
                             f"Offset for timestamp {timestamp} not found for topic partition: "
                             f"{topic_id}:{topic}-{partition}")
        return found[0]

    def _new_partition(self, group_id: str, start_offset: int) -> SharePartition:
        lock_ms = self.configs.int(group_id, "share.record.lock.duration.ms", self.settings.record_lock_duration_ms)
        return SharePartition(start_offset, lock_duration_ms=lock_ms,
                              delivery_count_limit=self.settings.delivery_count_limit,
                              max_in_flight=self.settings.max_record_locks)

    def acquire(self, group_id: str, member_id: str, topic: str, partition: int, plog, max_records: int,
                max_bytes: int, now_ms: int) -> Acquired:
        sp = self.share_partition(group_id, topic, partition, plog, now_ms)
        if self._topic_ids.get((group_id, topic, partition)) != self.topic_id(topic):
            # the topic was deleted and made again (a new topic id): its share state is gone
            del self.partitions[(group_id, topic, partition)]
            sp = self.share_partition(group_id, topic, partition, plog, now_ms)
        sp.skip_to(plog.log_start_offset)
        offset = sp.next_fetch_offset(now_ms)
        committed = self.configs.get(group_id, "share.isolation.level", "read_uncommitted") == READ_COMMITTED
        upper = plog.last_stable_offset if committed else plog.high_watermark
        if offset is None or offset >= upper:
            return Acquired(b"", [])
        read = plog.read(offset, max_bytes, committed, True)
        out = self._acquire_batches(sp, member_id, read.data, offset, upper, read.aborted or [], max_records, now_ms)
        self._deadline_set(sp.next_deadline())
        return out

    def _acquire_batches(self, sp, member_id, data, offset, upper, aborted, max_records, now_ms) -> Acquired:
        pending = sorted(aborted, key=lambda a: a.first_offset)
        aborting: set[int] = set()
        chunks, ranges, count, expected = [], [], 0, offset
        for pos, h in iter_batches(data):
            if h.base_offset >= upper or (max_records > 0 and count >= max_records):
                break
            while pending and pending[0].first_offset <= h.last_offset:
                aborting.add(pending.pop(0).producer_id)
            control = bool(h.attributes & CONTROL_FLAG)
            skipped = h.is_transactional and h.producer_id in aborting
            if control:
                aborting.discard(h.producer_id)  # the marker that ends the producer's aborted transaction
            if h.base_offset > expected:
                sp.mark_gap(expected, h.base_offset - 1)
            got = sp.acquire(member_id, range(max(h.base_offset, offset), h.last_offset + 1),
                             not (control or skipped), now_ms)
            expected = h.next_offset
            if got:
                chunks.append(bytes(data[pos:pos + h.size]))
                ranges.extend(got)
                count += sum(last - first + 1 for first, last, _ in got)
        return Acquired(b"".join(chunks), ranges)

    # -- acknowledgements -----------------------------------------------------------------------

    def acknowledge(self, group_id: str, member_id: str, topic: str, partition: int, batches, now_ms: int) -> Undo:
        """``batches``: (first offset, last offset, acknowledge types) of one partition. Returns what
        to :meth:`roll_back` should the write be lost after all (a failed group-commit fsync)."""
        key = (group_id, topic, partition)
        if key not in self.partitions:
            raise KafkaError(ErrorCode.invalid_record_state, "no records of this partition were acquired")
        live = self.partitions[key]
        changed = live.copy()
        for first, last, types in batches:
            changed.acknowledge(member_id, first, last, list(types), now_ms)
        self._persist(group_id, {(topic, partition): changed})
        self.partitions[key] = changed
        self._released()
        return undo_of(key, live, changed, {o for first, last, _ in batches for o in range(first, last + 1)})

    def roll_back(self, undo: Undo) -> None:
        """An acknowledgement whose write a failed fsync lost is undone (Kafka:
        SharePartition.rollbackOrProcessStateUpdates); what was last written of the partition is
        no longer known."""
        sp = self.partitions.get(undo.key)
        if sp is not None:
            sp.roll_back(undo)
            self._written.pop(undo.key, None)
            self._deadline_set(sp.next_deadline())

    def close_session(self, group_id: str, member_id: str, node_id: int = 0) -> None:
        """The member's session with broker ``node_id`` ends: it gives up what it holds there."""
        session = self.sessions.close(group_id, member_id, node_id)
        if session is not None:
            self._release(group_id, member_id, session.partitions)

    def connection_closed(self, connection: object) -> None:
        """A client connection closed: each share session it opened that is still open ends, and
        the member gives up what it holds of that session's partitions (Kafka 4.1: the share session
        cache's disconnect listener, onMemberLeave, releaseSession). This is the only way a member's
        going releases its records: the group coordinator's session timeout and a leaving heartbeat
        do not reach the share partitions, so records acquired under a session already gone (one a
        ShareFetch at epoch 0 replaced) wait for their acquisition locks to time out."""
        for session in self.sessions.of_connection(connection):
            self.close_session(session.group_id, session.member_id, session.node_id)

    def _release(self, group_id: str, member_id: str, partitions) -> None:
        """What the member holds of ``partitions`` ((topic, partition)) is released, once written
        (Kafka: SharePartition.releaseAcquiredRecords). A failed write is logged, as Kafka logs a
        failed releaseSession, and the release rolled back (rollbackOrProcessStateUpdates): the
        records stay acquired by the member until their locks expire, as the disk has them."""
        changed = {}
        for topic, partition in partitions:
            sp = self.partitions.get((group_id, topic, partition))
            if sp is not None:
                changed[(topic, partition)] = sp.copy()
                changed[(topic, partition)].release_member(member_id)
        try:
            self._persist(group_id, changed)
        except KafkaError as e:
            log.warning("group %s: releasing what member %s holds: %s", group_id, member_id, e.message)
            return
        self.partitions.update({(group_id, t, p): sp for (t, p), sp in changed.items()})
        self._released()

    # -- timers ---------------------------------------------------------------------------------

    def tick(self, now_ms: int) -> int:
        for group in list(self.groups.values()):
            for member_id in group.expired(now_ms):  # what it acquired stays: see connection_closed
                self._change(group.group_id, lambda g: g.remove(member_id, self._topics(),
                                                                self._initialized_of(g.group_id)), now_ms)
        expired = {g for (g, _, _), sp in self.partitions.items() if sp.expire(now_ms)}
        for group_id in sorted(expired):
            try:
                self._persist(group_id)
            except KafkaError as e:  # Kafka: an expired lock releases its records even if the write fails
                log.error("group %s: writing the share state of expired acquisition locks: %s", group_id, e.message)
        if expired:
            self._released()
        self.store.tick(now_ms)  # cold share partitions snapshotted again, so the state topic can be pruned
        self.initialized.run(now_ms)  # a turn's share of the first states of partitions being initialized
        return self.next_deadline()

    def advance(self, now_ms: int, advanced_ms: int, group_id: str | None = None) -> dict[str, list[str]]:
        """The share clock moved on by ``advanced_ms`` (shim.control): every member session and
        acquisition lock due by then is due now, and expires; a group whose initializing partitions
        would be due for a retry by then retries at its next heartbeat. Share sessions have no
        deadline (Kafka 4.1): they stay."""
        later = now_ms + advanced_ms
        members = [(g.group_id, m) for g in self.groups.values() if group_id in (None, g.group_id)
                   for m in g.members.values()]
        for _, member in members:
            member.deadline = min(member.deadline, now_ms) if member.deadline <= later else member.deadline
        held = {}
        for (g, t, p), sp in self.partitions.items():
            if group_id in (None, g):
                for offset, record in sp.records.items():
                    if record.lock_deadline != NO_DEADLINE and record.lock_deadline <= later:
                        record.lock_deadline, held[(g, t, p, offset)] = now_ms, record.member_id
        retries = self.initialized.advance(now_ms, advanced_ms, group_id)
        self.tick(now_ms)
        gone = {(g, m.member_id) for g, m in members if m.member_id not in self.groups[g].members}
        return {"expired_share_members": sorted(f"{g}/{m}" for g, m in gone),
                "expired_acquisition_locks": sorted(f"{g}/{t}-{p}@{o}" for g, t, p, o in held),
                "share_initializations_due": retries}

    def next_deadline(self) -> int:
        deadlines = [g.next_deadline() for g in self.groups.values()]
        deadlines += [sp.next_deadline() for sp in self.partitions.values()]
        deadlines.append(self.store.next_deadline())
        deadlines.append(self.initialized.next_deadline(NO_DEADLINE))
        return min(deadlines, default=NO_DEADLINE)

    def _persist(self, group_id: str, changed: dict | None = None) -> None:
        """The one write path of share state: each partition of the group whose state differs from
        what was last written, with ``changed`` partitions ((topic, partition) -> SharePartition)
        in place of the live ones."""
        live = {(t, p): sp for (g, t, p), sp in self.partitions.items() if g == group_id}
        live.update(changed or {})
        states = {tp: encode(sp) for tp, sp in live.items()}
        states = {tp: s for tp, s in states.items() if self._written.get((group_id, *tp)) != s}
        if states:
            self.store.write(group_id, states)
            self._written.update({(group_id, *tp): s for tp, s in states.items()})

    # -- administration (Kafka: the group coordinator's share-group offsets and DeleteGroups) -------

    def empty_group(self, group_id: str) -> ShareGroup:
        """Kafka: ShareGroup.validateEmptyGroup -- offsets are altered and groups deleted only when empty."""
        group = self.describe(group_id)
        if group.members:
            raise KafkaError(ErrorCode.non_empty_group, "The group is not empty.")
        return group

    def start_offsets(self, group_id: str) -> dict[tuple[str, int], int]:
        """(topic, partition) -> start offset, for every share partition of the group with state: the
        one last written (Kafka: ReadShareGroupStateSummary), -1 for a partition initialized or
        fetched but not yet written, as Kafka's is until the share partition first writes its state."""
        out = self.store.start_offsets(group_id)
        for g, t, p in self.partitions:
            if g == group_id:
                out.setdefault((t, p), -1)
        return out

    def leader_epochs(self, group_id: str) -> dict[tuple[str, int], int]:
        """(topic, partition) -> the leader epoch the share partition's state was last written with
        (0 as initialized, Kafka's ShareGroupOffset.UNINITIALIZED_EPOCH), what Kafka's
        DescribeShareGroupOffsets shows (ReadShareGroupStateSummary)."""
        return {tp: snap.leader_epoch for tp, snap in self.store.snapshots(group_id).items()}

    def initialized_offsets(self, group_id: str) -> dict[tuple[str, int], int]:
        """:meth:`start_offsets` of the partitions the group has initialized, those of its topics that
        still exist (Kafka: describeShareGroupAllOffsets reads initializedShareGroupPartitions)."""
        held = self.start_offsets(group_id)
        return {(t.name, p): held.get((t.name, p), -1) for tid, t in self.initialized.get(group_id).initialized.items()
                if self.topic_id(t.name) == tid for p in t.partitions if p < self.partition_count(t.name)}

    def alter_start_offsets(self, group_id: str, offsets: dict[tuple[str, int], int]) -> None:
        """AlterShareGroupOffsets on an empty group: each partition starts afresh at its offset, nothing
        in flight (Kafka: InitializeShareGroupState, a new snapshot at the group's epoch); a negative
        offset leaves the partition uninitialized, to start from share.auto.offset.reset."""
        group, now = self.empty_group(group_id), self.store.clock()
        fresh = {tp: self._new_partition(group_id, o) for tp, o in offsets.items() if o >= 0}
        self.initialized.alter(group_id, {tp: sp.start_offset for tp, sp in fresh.items()}, self.topic_id,
                               group.group_epoch, now)
        dropped = [tp for tp, o in offsets.items() if o < 0]
        self._forget(group_id, dropped)
        self.initialized.forget_partitions(group_id, dropped, self.topic_id, now)
        for (topic, partition), sp in fresh.items():
            self._saved.get(group_id, {}).pop((topic, partition), None)
            self.partitions[(group_id, topic, partition)] = sp
            self._topic_ids[(group_id, topic, partition)] = self.topic_id(topic)
            self._written[(group_id, topic, partition)] = encode(sp)

    def delete_start_offsets(self, group_id: str, topics) -> None:
        """DeleteShareGroupOffsets on an empty group: the topics' share state goes; a later fetch starts
        from share.auto.offset.reset (Kafka: DeleteShareGroupState, between two key-15 records)."""
        self.empty_group(group_id)
        doomed = [tp for tp in self.start_offsets(group_id) if tp[0] in set(topics)]
        ids = {self.topic_id(t) for t in topics} & sm.topic_ids(self.initialized.get(group_id))
        self.initialized.delete_topics(group_id, ids, lambda: self._forget(group_id, doomed), self.store.clock())

    def delete_group(self, group_id: str) -> None:
        """DeleteGroups of an empty share group: its share state (its topics ``deleting`` first), then
        the group's tombstones, ShareGroupStatePartitionMetadata's just before the group epoch's
        (Kafka: ShareGroup.createGroupTombstoneRecords)."""
        self.empty_group(group_id)
        now = self.store.clock()
        self.initialized.delete_topics(group_id, sm.topic_ids(self.initialized.get(group_id)),
                                       lambda: self._forget(group_id, list(self.start_offsets(group_id))), now,
                                       finish=False)
        tombstones = [members.encode(r) for r in members.diff(group_id, self._views.get(group_id), None)]
        at = len(tombstones) - 1 if tombstones else 0  # the group epoch's tombstone comes last
        tombstones.insert(at, self.initialized.tombstone(group_id))
        self._write_records(group_id, tombstones, now)
        self._views.pop(group_id, None)
        self._saved.pop(group_id, None)
        for session in [s for s in self.sessions.sessions.values() if s.group_id == group_id]:
            self.sessions.close(group_id, session.member_id, session.node_id)
        del self.groups[group_id]

    def forget_deleted_topics(self, now_ms: int) -> None:
        """A topic was deleted: its share state goes, and it leaves the groups' key-15 records."""
        self.store.forget_deleted_topics()
        logs = self.store.logs
        self.initialized.forget_topics(lambda tid: logs is None or logs.topic_by_id(tid) is not None, now_ms)

    def _forget(self, group_id: str, partitions) -> None:
        """Tombstones for ``partitions`` ((topic, partition)) of the group, then gone from memory."""
        self.store.remove(group_id, partitions)
        for topic, partition in partitions:
            self._saved.get(group_id, {}).pop((topic, partition), None)
            self.partitions.pop((group_id, topic, partition), None)
            self._written.pop((group_id, topic, partition), None)

    def _deadline_set(self, deadline: int) -> None:
        if self.on_earlier_deadline is not None and deadline < NO_DEADLINE:
            self.on_earlier_deadline(deadline)

    def _released(self) -> None:
        if self.on_release is not None:
            self.on_release()
