"""Share groups' membership (KIP-932): join, heartbeat, leave, session timeout, assignment.

Kafka: GroupMetadataManager.shareGroupHeartbeat and ShareGroup. A member joins with epoch 0 and its
subscribed topic names, heartbeats with its current epoch and leaves with -1. A heartbeat that
changes the membership or a subscription, or finds the subscribed topics' metadata hash changed
(a topic made, deleted or grown), bumps the group epoch once and the coordinator computes a new
target assignment at once; share groups have no revocation step, so a
member takes its target and the group's epoch on its next heartbeat. Partitions need not be
exclusive: Kafka's SimpleAssignor spreads the partitions over the members when there are at least as
many partitions as members and shares each partition among several members otherwise.

Only partitions with share state are assigned (Kafka 4.1: updateTargetAssignment's
withTopicAssignablePartitionsMap of the initialized topics). A heartbeat that first sees a
subscribed partition has it initialized after computing its answer, so that partition is assigned
by a later heartbeat: one that finds initialized partitions of subscribed topics the target leaves
out bumps the epoch (initializedAssignmentPending), as a subscription change does.

A steady heartbeat costs a look-up per subscribed topic, not a walk of its partitions: the metadata
hash combines each topic's kept part (:class:`..group.topic_hash.TopicHashes`), and a topic's
assignable partitions are worked out again, and held against the target, only when its initialized
partitions or its partition count changed since the target was computed.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Callable, NamedTuple

from ...errors import ErrorCode, KafkaError

JOIN_EPOCH, LEAVE_EPOCH = 0, -1
EMPTY, STABLE = "Empty", "Stable"
ASSIGNOR = "simple"

Assignment = dict[str, frozenset[int]]  # topic name -> partitions
# topic -> its partitions the group has initialized share state for (those of its current topic id);
# None: every partition counts as initialized
Initialized = Callable[[str], frozenset[int]] | None


class Topics(NamedTuple):
    """What a share group's assignment and metadata hash depend on."""
    shape: Callable[[str], tuple[int, object]]  # topic -> (partitions, topic id); no such topic: partitions 0
    group_hash: Callable[[dict[str, tuple[object, int]]], int]  # {topic: (topic id, partitions)} -> hash
    version: int | None = None  # moves on with every change of the topics; None: unknown, look again


@dataclass(slots=True)
class ShareMember:
    member_id: str
    member_epoch: int
    subscribed: tuple[str, ...]
    rack_id: str | None
    client_id: str
    client_host: str
    deadline: int
    assignment: Assignment = field(default_factory=dict)


@dataclass(slots=True)
class HeartbeatResult:
    member_id: str
    member_epoch: int
    assignment: Assignment | None  # None: unchanged since the member last heard it


class ShareGroup:
    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.group_epoch = 0
        self.assignment_epoch = 0
        self.members: dict[str, ShareMember] = {}
        self.target: dict[str, Assignment] = {}
        self.metadata_hash = 0  # of the subscribed topics at the last epoch bump (written with the epoch)
        self._metadata: dict[str, tuple[int, object]] = {}  # subscribed topic -> (partitions, topic id)
        self._metadata_of: int | None = None  # the topics' version _metadata was worked out at
        # topic -> (initialized partitions, partitions, its assignable partitions), as last worked out
        self._assignable: dict[str, tuple[frozenset[int] | None, int, frozenset[int]]] = {}
        self._targeted: dict[str, frozenset[int]] = {}  # topic -> the assignable partitions the target holds
        self.encoded: dict[int, tuple] = {}  # each held assignment's record encoding (shim.coordinators.share.members)

    def snapshot(self) -> ShareGroup:
        """A copy to put back if a change's records cannot be written: each member is copied, the
        rest (targets, assignments, subscribed metadata) is only ever replaced, never changed in place,
        but for what is kept only to save work (``_assignable``), which holds whatever it is shared with."""
        saved = copy.copy(self)
        saved.members = {m: copy.copy(member) for m, member in self.members.items()}
        return saved

    @property
    def state(self) -> str:
        return STABLE if self.members else EMPTY

    def heartbeat(self, member_id: str, epoch: int, subscribed, rack_id, client: tuple[str, str], now_ms: int,
                  session_timeout_ms: int, topics: Topics,
                  initialized: Initialized = None) -> HeartbeatResult:
        if epoch == LEAVE_EPOCH:
            self.remove(member_id, topics, initialized)
            return HeartbeatResult(member_id, LEAVE_EPOCH, None)
        member = self.members.get(member_id)
        bump = False
        if epoch == JOIN_EPOCH:
            if member is None:
                if not subscribed:
                    raise KafkaError(ErrorCode.invalid_request, "SubscribedTopicNames must be set in first request.")
                member = self.members[member_id] = ShareMember(member_id, 0, (), rack_id, *client, 0)
                bump = True
        elif member is None:
            raise KafkaError(ErrorCode.unknown_member_id, f"Member {member_id} is not a member of group {self.group_id}.")
        elif epoch != member.member_epoch:
            raise KafkaError(ErrorCode.fenced_member_epoch, f"The share group member has a smaller member epoch "
                                                            f"({epoch}) than the one known by the group coordinator "
                                                            f"({member.member_epoch}).")
        member.deadline = now_ms + session_timeout_ms
        if subscribed is not None and tuple(sorted(set(subscribed))) != member.subscribed:
            member.subscribed = tuple(sorted(set(subscribed)))
            bump = True
        self._refresh(topics, initialized, bump)
        target = self.target.get(member_id, {})
        changed = epoch == JOIN_EPOCH or member.member_epoch != self.assignment_epoch or target != member.assignment
        member.member_epoch, member.assignment = self.assignment_epoch, target
        return HeartbeatResult(member_id, member.member_epoch, target if changed else None)

    def remove(self, member_id: str, topics: Topics, initialized: Initialized = None) -> bool:
        if self.members.pop(member_id, None) is None:
            return False
        self._refresh(topics, initialized, True)
        return True

    def expired(self, now_ms: int) -> list[str]:
        return [m.member_id for m in self.members.values() if m.deadline <= now_ms]

    def next_deadline(self) -> int:
        return min((m.deadline for m in self.members.values()), default=2**63 - 1)

    def subscribed_metadata(self, topics: Topics) -> None:
        """The subscribed topics as they are now, for a group loaded at start-up; its epoch moves on
        at the next heartbeat if their hash differs from the one it wrote."""
        self._metadata, self._metadata_of = self._subscribed(topics), topics.version

    def subscribed_topics(self) -> dict[str, tuple[int, object]]:
        """The subscribed topics that exist: topic -> (partitions, topic id), as last refreshed."""
        return self._metadata

    def _subscribed(self, topics: Topics) -> dict[str, tuple[int, object]]:
        names = sorted({t for m in self.members.values() for t in m.subscribed})
        return {t: shape for t in names if (shape := topics.shape(t))[0] > 0}

    def _refresh(self, topics: Topics, initialized: Initialized, bump: bool = False) -> None:
        """One new group epoch when ``bump``, when a subscribed topic changed (its size, its id:
        deleted and made again, or its partitions' racks), or when initialized partitions wait for
        an assignment; then a new target assignment of the initialized partitions (Kafka:
        shareGroupHeartbeat's bumpGroupEpoch, computeMetadataHash, initializedAssignmentPending)."""
        if bump or topics.version is None or topics.version != self._metadata_of:
            # the union of every member's subscription: walked only when one changed or the topics
            # did (a member may name as many topics as its request holds; Kafka: bumpGroupEpoch,
            # hasMetadataExpired), else a few members naming 60,000 cost every heartbeat 0.1 s
            self._metadata, self._metadata_of = self._subscribed(topics), topics.version
        assignable = {t: self._assignable_of(t, n, initialized) for t, (n, _) in self._metadata.items()}
        h = topics.group_hash({t: (tid, n) for t, (n, tid) in self._metadata.items()})
        if bump or h != self.metadata_hash or self._initialized_pending(assignable):
            self.group_epoch, self.metadata_hash = self.group_epoch + 1, h
        if self.assignment_epoch != self.group_epoch:
            self.target = simple_assign({m.member_id: m.subscribed for m in self.members.values()},
                                        {t: sorted(ps) for t, ps in assignable.items()})
            self.assignment_epoch = self.group_epoch
            self._targeted = assignable

    def _assignable_of(self, topic: str, partitions: int, initialized: Initialized) -> frozenset[int]:
        """The topic's initialized partitions below its partition count (all of them when
        ``initialized`` is None), worked out again only when either changed."""
        done = initialized(topic) if initialized is not None else None
        kept = self._assignable.get(topic)
        if kept is not None and kept[0] is done and kept[1] == partitions:
            return kept[2]
        if done is None:
            ps = frozenset(range(partitions))
        else:
            ps = done if len(done) == 0 or max(done) < partitions else frozenset(p for p in done if p < partitions)
        self._assignable[topic] = (done, partitions, ps)
        return ps

    def _initialized_pending(self, assignable: dict[str, frozenset[int]]) -> bool:
        """Kafka: initializedAssignmentPending -- a subscribed topic's initialized partitions are not
        exactly those the target assigns (they were initialized since the target was computed)."""
        if not self.members:
            return False
        self._assignable = {t: kept for t, kept in self._assignable.items() if t in assignable}
        changed = {t: ps for t, ps in assignable.items() if ps and self._targeted.get(t) is not ps}
        if not changed:
            return False
        assigned: dict[str, set[int]] = {t: set() for t in changed}
        for member_target in self.target.values():
            for topic, ps in member_target.items():
                if topic in assigned:
                    assigned[topic].update(ps)
        if any(ps != assigned[t] for t, ps in changed.items()):
            return True
        self._targeted = {**self._targeted, **changed}  # the same partitions: held by the target already
        return False


def simple_assign(subscriptions: dict[str, tuple[str, ...]],
                  assignable: dict[str, list[int]]) -> dict[str, Assignment]:
    """Per topic, its assignable partitions over its subscribers: round robin when there are at
    least as many partitions as subscribers, else each subscriber gets one partition and partitions
    are shared."""
    out: dict[str, dict[str, set[int]]] = {m: {} for m in subscriptions}
    for topic, parts in sorted(assignable.items()):
        members = sorted(m for m, topics in subscriptions.items() if topic in topics)
        if not members or not parts:
            continue
        if len(parts) >= len(members):
            pairs = ((members[i % len(members)], p) for i, p in enumerate(parts))
        else:
            pairs = ((m, parts[i % len(parts)]) for i, m in enumerate(members))
        for member, partition in pairs:
            out[member].setdefault(topic, set()).add(partition)
    return {m: {t: frozenset(ps) for t, ps in a.items()} for m, a in out.items()}
