"""The simulated cluster's assignment state: one table of partitions (leader, leader epoch,
replicas, ISR, the leader-epoch cache) over the one shared store, and the operations that change it.

Every broker of ``--brokers N`` serves the same logs; what differs is who leads a partition and who
coordinates a key. Placement of a new topic's replicas is Kafka's rack-unaware assignment with a
fixed start index of 0 (AdminUtils.assignReplicasToBrokersRackUnaware): partition p's first
replica is node p mod N, the others follow at a shift that grows every N partitions. The first
replica leads. A coordinator is the leader of the internal partition its key hashes to
(Kafka's ``Utils.abs(hashCode) % partitions`` of __consumer_offsets or __transaction_state), so moving that
partition's leader moves the coordinator.

Replication is simulated: a follower normally holds the leader's log end. A slowed follower
stops at the log end it had (its fetched offset), so the high watermark, the smallest log end in
the ISR, stops there too; after replica.lag.time.max.ms without catching up it leaves the ISR
(Kafka: Partition.maybeShrinkIsr / Replica.isCaughtUp) and the high watermark moves on. Its
producer state is the one its log end gave: the leader's when it was slowed, kept apart until it
catches up (what DescribeProducers sent to it answers, as a Kafka follower answers from its own
log: ReplicaManager.activeProducerState). It catches up when unslowed, elected, or back from
``node_down`` (a restarted broker's fetcher starts afresh), never rejoining the ISR below the high
watermark (Kafka: Partition.isFollowerInSync), so the high watermark never moves back. Leader
changes bump the leader epoch and record the new epoch's start offset, the leader's log end
(Kafka: Partition.makeLeader, LeaderEpochFileCache.assign), which is what OffsetForLeaderEpoch
answers from. The table is written atomically to ``__cluster_metadata/cluster.json`` after each change.

Clock-free: operations take ``now_ms``; :meth:`Cluster.tick` runs the ISR check and returns the next
deadline.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .coordinators.partitioning import partition_for
from .errors import ErrorCode, KafkaError
from .storage import fs, snapshot
from .storage.producer_state import ProducerStateManager

GROUP, TRANSACTION, SHARE = 0, 1, 2
OFFSETS_TOPIC, TXN_TOPIC, SHARE_STATE_TOPIC = "__consumer_offsets", "__transaction_state", "__share_group_state"
NO_LEADER = -1
FOREVER = 1 << 62
STATE_FILE = "cluster.json"


def broker_racks(value: str | None, node_ids: tuple[int, ...]) -> dict[int, str | None]:
    """Each simulated broker's rack from ``broker.rack``: one value is every broker's rack; with
    ``--brokers N``, N comma-separated values give the brokers' racks in node-id order."""
    if not value:
        return dict.fromkeys(node_ids)
    racks = [r.strip() for r in value.split(",")] if len(node_ids) > 1 and "," in value else [value]
    if len(racks) == 1:
        return dict.fromkeys(node_ids, racks[0])
    if len(racks) != len(node_ids) or not all(racks):
        raise ValueError(f"broker.rack: {value!r} names {len(racks)} racks for {len(node_ids)} brokers")
    return dict(zip(node_ids, racks))


def internal_replication_factor(configured: str | None, brokers: int) -> int:
    """The replicas of ``__consumer_offsets`` or ``__transaction_state``: ``offsets.topic.replication.factor``
    / ``transaction.state.log.replication.factor`` (Kafka's default 3) capped at the brokers there
    are, where Kafka would not create the topic at all."""
    return min(int(configured) if configured else 3, brokers)


def placement(partition: int, replication_factor: int, nodes: tuple[int, ...]) -> tuple[int, ...]:
    """Kafka's rack-unaware replica assignment with fixed start index 0, for one partition."""
    n = len(nodes)
    first = partition % n
    shift = partition // n
    replicas = [nodes[first]]
    for j in range(min(replication_factor, n) - 1):
        step = 1 + (shift + j) % (n - 1)
        replicas.append(nodes[(first + step) % n])
    return tuple(replicas)


@dataclass(slots=True)
class PartitionState:
    leader: int
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    epochs: list = field(default_factory=lambda: [[0, 0]])  # [epoch, start offset]: the leader-epoch cache

    def epoch_for(self, offset: int) -> int:
        """The leader epoch in which ``offset`` was written (Kafka: LeaderEpochFileCache.epochForOffset)."""
        found = -1
        for e, start in self.epochs:
            if start > offset:
                break
            found = e
        return found

    def end_offset_for(self, epoch: int, log_end: int) -> tuple[int, int]:
        """(epoch, end offset) for a requested epoch (Kafka: LeaderEpochFileCache.endOffsetFor): the
        largest known epoch at most ``epoch`` and the start offset of the next one, the log end for
        the latest epoch, (-1, -1) above it."""
        if epoch == self.epochs[-1][0]:
            return epoch, log_end
        floor = epoch  # below the earliest epoch Kafka answers the requested epoch itself
        for e, start in self.epochs:
            if e > epoch:
                return floor, start
            floor = e
        return -1, -1


@dataclass(frozen=True, slots=True)
class OfflineState:
    """A partition as the metadata describes it while the data directory, which every simulated
    broker shares, is offline: each broker reported its directory failed, so the controller took
    the leadership away (Kafka: ReplicationControlManager.handleDirectoriesOffline, a new leader
    epoch with no leader; the last ISR member stays in the ISR) and lists every replica offline
    (KRaftMetadataCache.isReplicaInOfflineDir)."""

    leader: int
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]


def offline_state(s: PartitionState) -> OfflineState:
    return OfflineState(NO_LEADER, s.leader_epoch + 1, s.replicas, s.isr)


@dataclass(slots=True)
class SlowFollower:
    end_offset: int  # the log end it has fetched up to
    caught_up_ms: int  # when it last held the leader's log end
    producer_state: ProducerStateManager | None = None  # what its log up to end_offset gave


class Cluster:
    """``node_ids`` in order; ``log_of(topic, partition)`` gives the shared PartitionLog (or None),
    ``existing()`` the (topic, partition) pairs of the store."""

    def __init__(self, node_ids, meta_dir: Path | None, log_of: Callable, existing: Callable = tuple, *,
                 offsets_partitions: int = 50,
                 txn_partitions: int = 50, share_partitions: int = 50, replica_lag_time_max_ms: int = 30000,
                 internal_replication_factors: dict[str, int] | None = None, on_change=None) -> None:
        self.node_ids = tuple(node_ids)
        self.share_partitions = share_partitions
        self.log_of, self.existing = log_of, existing
        self.offsets_partitions, self.txn_partitions = offsets_partitions, txn_partitions
        self.replica_lag_time_max_ms = replica_lag_time_max_ms
        self.internal_replication_factors = internal_replication_factors or {}  # topic -> replicas
        self.on_change = on_change  # called after leadership, ISR or the high watermark moved
        self.on_elected: Callable[[str, int, int], None] | None = None  # (topic, partition, now_ms) of a new leader
        self.on_replicas_placed: Callable[[str], None] | None = None  # a topic's replicas were placed or removed
        self.down: set[int] = set()
        self.partitions: dict[tuple[str, int], PartitionState] = {}
        self.replication_factor: dict[str, int] = {}  # topic -> replicas per partition
        self.slow: dict[tuple[str, int, int], SlowFollower] = {}  # (topic, partition, node)
        self._limited: set = set()  # partitions whose logs carry a high-watermark limit
        self._next_check = 0  # the ISR check runs then (while followers are slowed)
        # the one row of every partition of a single broker whose leadership never changed
        self._unchanged = PartitionState(self.node_ids[0], 0, self.node_ids, self.node_ids) \
            if len(self.node_ids) == 1 else None
        self.on_earlier_deadline = None  # the shell's timer, told when slowing a follower sets a deadline
        self._path = meta_dir / STATE_FILE if meta_dir is not None else None
        self._load()

    @property
    def single(self) -> bool:
        return len(self.node_ids) == 1

    # -- reading the table ------------------------------------------------------------------

    def uniform_state(self) -> PartitionState | None:
        """The one row every partition shares (one broker whose leadership never changed), or None."""
        return self._unchanged

    def state(self, topic: str, partition: int) -> PartitionState:
        """The partition's state, placed on first sight (a new topic's partitions). One broker with
        nothing changed answers one shared row, so that path costs no lookup and no memory."""
        if self._unchanged is not None:
            return self._unchanged
        s = self.partitions.get((topic, partition))
        if s is None:
            s = self.partitions[(topic, partition)] = self._placed(topic, partition)
        return s

    def _placed(self, topic: str, partition: int) -> PartitionState:
        rf = self.replication_factor.get(topic) or self.default_replication_factor(topic)
        replicas = placement(partition, rf, self.node_ids)
        up = [r for r in replicas if r not in self.down]
        return PartitionState(up[0] if up else NO_LEADER, 0, replicas, tuple(up) or replicas[:1])

    def default_replication_factor(self, topic: str) -> int:
        if topic in (OFFSETS_TOPIC, TXN_TOPIC):
            return self.internal_replication_factors.get(topic) or internal_replication_factor(None, len(self.node_ids))
        return 1

    def alive(self) -> list[int]:
        return [n for n in self.node_ids if n not in self.down]

    def controller(self) -> int:
        up = self.alive()
        return up[0] if up else NO_LEADER

    def check_leader(self, node_id: int, topic: str, partition: int, current_leader_epoch: int = -1) -> PartitionState:
        """The state when ``node_id`` leads the partition at the given epoch, else Kafka's error
        (Partition.checkCurrentLeaderEpoch, then getLocalLog's leader check)."""
        s = self._unchanged  # self.state(), without a call for the one shared row: every append asks
        if s is None:
            s = self.state(topic, partition)
        if current_leader_epoch >= 0:
            if current_leader_epoch < s.leader_epoch:
                raise KafkaError(ErrorCode.fenced_leader_epoch)
            if current_leader_epoch > s.leader_epoch:
                raise KafkaError(ErrorCode.unknown_leader_epoch)
        if s.leader != node_id:
            raise KafkaError(ErrorCode.not_leader_or_follower)
        return s

    def check_replica(self, node_id: int, topic: str, partition: int) -> PartitionState:
        """The state when ``node_id`` holds a replica of the partition, leader or follower, else
        NOT_LEADER_OR_FOLLOWER (Kafka: ReplicaManager.getPartitionOrError for a partition the
        metadata knows and this broker does not host)."""
        s = self.state(topic, partition)
        if node_id not in s.replicas:
            raise KafkaError(ErrorCode.not_leader_or_follower)
        return s

    def follower_producer_state(self, node_id: int, topic: str, partition: int) -> ProducerStateManager | None:
        """The producer state of a slowed follower on ``node_id``, None where the replica holds the
        leader's log end (the shared log's state is then its own)."""
        f = self.slow.get((topic, partition, node_id)) if self.slow else None
        return None if f is None else f.producer_state

    def remove_expired_producers(self, now_ms: int, expiration_ms: int) -> None:
        """A follower expires producers from its own state too (Kafka: every UnifiedLog's
        removeExpiredProducers, leader or follower)."""
        for f in self.slow.values():
            if f.producer_state is not None:
                f.producer_state.remove_expired_producers(now_ms, expiration_ms)

    def internal_partitions(self, topic: str) -> int | None:
        """How many partitions an internal topic is created with, None for any other topic."""
        return {OFFSETS_TOPIC: self.offsets_partitions, TXN_TOPIC: self.txn_partitions,
                SHARE_STATE_TOPIC: self.share_partitions}.get(topic)

    def coordinator_partition(self, kind: int, key: str) -> tuple[str, int]:
        if kind == TRANSACTION:
            return TXN_TOPIC, partition_for(key, self.txn_partitions)
        if kind == SHARE:  # a share-partition key "group:topicId:partition" (Kafka: ShareCoordinatorService.partitionFor)
            return SHARE_STATE_TOPIC, partition_for(key, self.share_partitions)
        return OFFSETS_TOPIC, partition_for(key, self.offsets_partitions)

    def coordinator(self, kind: int, key: str) -> int:
        """The node coordinating ``key``: the leader of the internal partition it hashes to."""
        return self.state(*self.coordinator_partition(kind, key)).leader

    def check_min_isr(self, topic: str, partition: int, min_isr: int) -> None:
        """NOT_ENOUGH_REPLICAS when the partition's ISR is smaller than ``min_isr``, as an acks=all
        append to it is refused (Kafka: Partition.appendRecordsToLeader)."""
        isr = self.state(topic, partition).isr
        if len(isr) < min_isr:
            raise KafkaError(ErrorCode.not_enough_replicas,
                             f"The size of the current ISR {sorted(isr)} is insufficient to satisfy the min.isr "
                             f"requirement of {min_isr} for partition {topic}-{partition}")

    def high_watermark_limit(self, topic: str, partition: int) -> int | None:
        """The smallest log end of the slowed followers still in the ISR, or None."""
        s = self.partitions.get((topic, partition))
        if s is None:
            return None
        ends = [f.end_offset for (t, p, n), f in self.slow.items() if (t, p) == (topic, partition) and n in s.isr]
        return min(ends) if ends else None

    # -- operations -------------------------------------------------------------------------

    def node_down(self, node_id: int, now_ms: int) -> None:
        """Fence a node: it leaves every ISR, and partitions it led elect another ISR member."""
        self._known(node_id)
        self._place_all()
        self.down.add(node_id)
        for (topic, partition), s in list(self.partitions.items()):
            if node_id in s.isr and len(s.isr) > 1:
                s.isr = tuple(r for r in s.isr if r != node_id)
            if s.leader == node_id:
                self._elect(topic, partition, s, self._candidates(topic, partition, s), now_ms)
        self._changed()

    def node_up(self, node_id: int, now_ms: int) -> None:
        """Unfence a node: it catches up at once from each of its partitions' leaders and rejoins
        their ISR. A restarted Kafka broker keeps no fetcher state: a follower slowed before it
        went down fetches again, so its slowed entries (their log ends and producer state) go.
        A partition without a leader waits for its last ISR member (no unclean election): when
        that one returns it leads, and the replicas already back rejoin the ISR, except a slowed
        one, which fetches nothing to be found caught up (Kafka: Partition.maybeExpandIsr runs on
        a follower's fetch, and only a follower at the high watermark joins)."""
        self._known(node_id)
        self._place_all()
        self.down.discard(node_id)
        for key in [k for k in self.slow if k[2] == node_id]:
            del self.slow[key]
        for (topic, partition), s in self.partitions.items():
            if node_id not in s.replicas:
                continue
            if s.leader == NO_LEADER:
                if node_id not in s.isr:
                    continue  # a stale replica has no leader to catch up from
                self._elect(topic, partition, s, [node_id], now_ms)
                s.isr = tuple(r for r in s.replicas if r in s.isr or self._fetching(topic, partition, r))
            elif node_id not in s.isr:
                s.isr = tuple(r for r in s.replicas if r in s.isr or r == node_id)
        self._changed()

    def move_leader(self, topic: str, partition: int, node_id: int, now_ms: int) -> int:
        """Make ``node_id`` the leader (a preferred or forced election); returns the new leader epoch."""
        self._known(node_id)
        s = self.state(topic, partition)
        if node_id in self.down or node_id not in s.isr or (topic, partition, node_id) in self.slow:
            raise ValueError(f"node {node_id} is not an up-to-date, live ISR member of {topic}-{partition}")
        if s.leader != node_id:
            self._elect(topic, partition, s, [node_id], now_ms)
            self._changed()
        return s.leader_epoch

    def elect_leader(self, topic: str, partition: int, unclean: bool, now_ms: int) -> str:
        """ElectLeaders for one partition, as Kafka's controller (ReplicationControlManager.electLeader,
        PartitionChangeBuilder): "not_needed" when the preferred replica leads (preferred) or the
        partition has a leader (unclean); else the preferred replica if it is a live ISR member, or
        (unclean) a live ISR member, else the first live replica, whose ISR it alone becomes;
        "not_available" when that elects no one new, "elected" otherwise."""
        s = self.state(topic, partition)
        if (s.leader == s.replicas[0]) if not unclean else (s.leader != NO_LEADER):
            return "not_needed"
        valid = [r for r in s.replicas if r in s.isr and r not in self.down]
        if not unclean:
            chosen = s.replicas[0] if s.replicas[0] in valid else None
            if chosen is None and s.leader not in valid and valid:
                chosen = valid[0]
        else:
            live = [r for r in s.replicas if r not in self.down]
            chosen = valid[0] if valid else (live[0] if live else None)
        if chosen is None or chosen == s.leader:
            return "not_available"
        if chosen not in s.isr:
            s.isr = (chosen,)  # an unclean election: the new leader's log is the partition's
        self._elect(topic, partition, s, [chosen], now_ms)
        self._changed()
        return "elected"

    def move_coordinator(self, kind: int, key: str, node_id: int, now_ms: int) -> int:
        """Move the coordinator of a group (GROUP) or transactional id (TRANSACTION) to ``node_id``."""
        return self.move_leader(*self.coordinator_partition(kind, key), node_id, now_ms)

    def slow_follower(self, topic: str, partition: int, node_id: int, now_ms: int) -> None:
        """The follower on ``node_id`` stops fetching: it keeps the log end it has now."""
        s = self.state(topic, partition)
        if node_id == s.leader or node_id not in s.replicas:
            raise ValueError(f"node {node_id} is not a follower of {topic}-{partition}")
        plog = self.log_of(topic, partition)
        end = plog.log_end_offset if plog is not None else 0
        if (topic, partition, node_id) not in self.slow:
            self.slow[(topic, partition, node_id)] = SlowFollower(end, now_ms, _copied(plog))
        self._next_check = now_ms + max(self.replica_lag_time_max_ms // 2, 1)
        self._changed()
        if self.on_earlier_deadline is not None:
            self.on_earlier_deadline(self._next_check)

    def unslow_follower(self, topic: str, partition: int, node_id: int, now_ms: int) -> None:
        """The follower fetches again: it catches up at once and rejoins the ISR if it had left."""
        if self.slow.pop((topic, partition, node_id), None) is None:
            return
        s = self.state(topic, partition)
        if node_id not in s.isr and node_id not in self.down:
            s.isr = tuple(r for r in s.replicas if r in s.isr or r == node_id)
        self._changed()

    def delete_topic(self, topic: str) -> None:
        for key in [k for k in self.partitions if k[0] == topic]:
            del self.partitions[key]
        for key in [k for k in self.slow if k[0] == topic]:
            del self.slow[key]
        self.replication_factor.pop(topic, None)
        self._save()
        self._placed_anew(topic)

    def assign(self, topic: str, partition: int, replicas: tuple[int, ...]) -> None:
        """A manual assignment: these replicas, the first live one leading."""
        self._unchanged = None
        up = [r for r in replicas if r not in self.down]
        self.partitions[(topic, partition)] = PartitionState(up[0] if up else NO_LEADER, 0, replicas,
                                                             tuple(up) or replicas[:1])
        self._save()
        self._placed_anew(topic)

    def set_replication_factor(self, topic: str, replication_factor: int) -> None:
        self.replication_factor[topic] = replication_factor
        self._save()
        self._placed_anew(topic)

    def _placed_anew(self, topic: str) -> None:
        if self.on_replicas_placed is not None:
            self.on_replicas_placed(topic)

    # -- the ISR check (Kafka: ReplicaManager's isr-expiration task, every lag/2) --------------

    def next_deadline(self) -> int:
        return self._next_check if self.slow else FOREVER

    def tick(self, now_ms: int) -> int:
        if not self.slow:
            return FOREVER
        shrunk = False
        for (topic, partition, node_id), f in self.slow.items():
            s = self.partitions.get((topic, partition))
            plog = self.log_of(topic, partition)
            if s is None or plog is None or node_id not in s.isr:
                continue
            if plog.log_end_offset == f.end_offset:
                f.caught_up_ms = now_ms
            elif now_ms - f.caught_up_ms > self.replica_lag_time_max_ms:
                s.isr = tuple(r for r in s.isr if r != node_id)
                shrunk = True
        if shrunk:
            self._changed()
        self._next_check = now_ms + max(self.replica_lag_time_max_ms // 2, 1)
        return self._next_check

    # -- helpers ----------------------------------------------------------------------------

    def _place_all(self) -> None:
        """Every partition of the store in the table, so a change of nodes applies to each."""
        self._unchanged = None
        for topic, partition in self.existing():
            self.state(topic, partition)

    def _known(self, node_id: int) -> None:
        if node_id not in self.node_ids:
            raise ValueError(f"no node {node_id} (nodes: {list(self.node_ids)})")

    def _fetching(self, topic: str, partition: int, node_id: int) -> bool:
        """The replica is up and not slowed: it holds the leader's log end."""
        return node_id not in self.down and (topic, partition, node_id) not in self.slow

    def _candidates(self, topic: str, partition: int, s: PartitionState) -> list[int]:
        """ISR members that are up, those not slowed first (a slowed one would lose data)."""
        up = [r for r in s.isr if r not in self.down]
        return sorted(up, key=lambda r: (topic, partition, r) in self.slow)

    def _elect(self, topic: str, partition: int, s: PartitionState, candidates: list[int], now_ms: int) -> None:
        s.leader = candidates[0] if candidates else NO_LEADER
        if s.leader == NO_LEADER:
            return  # Kafka keeps the last ISR member and no leader until it returns (no unclean election)
        s.leader_epoch += 1
        plog = self.log_of(topic, partition)
        start = plog.log_end_offset if plog is not None else 0
        if s.epochs and s.epochs[-1][1] == start:
            s.epochs[-1] = [s.leader_epoch, start]  # an epoch with no records has no end offset
        else:
            s.epochs.append([s.leader_epoch, start])
        self.slow.pop((topic, partition, s.leader), None)
        if plog is not None:
            plog.leader_epoch = s.leader_epoch
        if self.on_elected is not None:  # a coordinator partition's new leader takes its groups or transactions
            self.on_elected(topic, partition, now_ms)

    def apply(self, topic: str, partition: int, plog) -> None:
        """Give an opened log its partition's current leader epoch and high-watermark limit."""
        s = self.partitions.get((topic, partition))
        if s is not None:
            plog.leader_epoch = s.leader_epoch
        plog.high_watermark_limit = self.high_watermark_limit(topic, partition)

    def _changed(self) -> None:
        for (topic, partition) in {(t, p) for (t, p, _) in self.slow} | self._limited:
            plog = self.log_of(topic, partition)
            if plog is not None:
                plog.high_watermark_limit = self.high_watermark_limit(topic, partition)
        self._limited = {(t, p) for (t, p, _) in self.slow}
        self._save()
        if self.on_change is not None:
            self.on_change()

    def _save(self) -> None:
        if self._path is None or self.single:  # one broker: nothing to remember beyond its logs
            return
        state = {
            "nodes": list(self.node_ids), "down": sorted(self.down), "replication_factor": self.replication_factor,
            "partitions": [[t, p, s.leader, s.leader_epoch, list(s.replicas), list(s.isr), s.epochs]
                           for (t, p), s in self.partitions.items()],
            "slow": [[t, p, n, f.end_offset, _encoded(f.producer_state)] for (t, p, n), f in self.slow.items()],
        }
        fs.atomic_write(self._path, json.dumps(state).encode())

    def _load(self) -> None:
        if self._path is None or not self._path.exists():
            return
        state = json.loads(self._path.read_bytes())
        if tuple(state["nodes"]) != self.node_ids:
            return  # another cluster size: place afresh
        self.down = set(state["down"])
        self.replication_factor = dict(state["replication_factor"])
        for t, p, leader, epoch, replicas, isr, epochs in state["partitions"]:
            self.partitions[(t, p)] = PartitionState(leader, epoch, tuple(replicas), tuple(isr), epochs)
        for t, p, n, end, *producers in state["slow"]:
            self.slow[(t, p, n)] = SlowFollower(end, 0, _decoded(producers[0]) if producers else None)


def _copied(plog) -> ProducerStateManager | None:
    if plog is None:
        return None
    state = ProducerStateManager()
    snapshot.decode(snapshot.encode(plog.producer_state), state)
    return state


def _encoded(state: ProducerStateManager | None) -> str | None:
    return None if state is None else snapshot.encode(state).hex()


def _decoded(data: str | None) -> ProducerStateManager | None:
    """A follower's producer state as cluster.json holds it (a producer snapshot, in hex)."""
    state = ProducerStateManager()
    return state if data is not None and snapshot.decode(bytes.fromhex(data), state) else None
