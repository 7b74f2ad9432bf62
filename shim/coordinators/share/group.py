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
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Callable

from ...errors import ErrorCode, KafkaError
from ..group.topic_hash import metadata_hash

JOIN_EPOCH, LEAVE_EPOCH = 0, -1
EMPTY, STABLE = "Empty", "Stable"
ASSIGNOR = "simple"

Assignment = dict[str, frozenset[int]]  # topic name -> partitions
# topic -> (partitions, topic id, each partition's replicas' racks); no such topic: partitions 0
Shape = Callable[[str], tuple[int, object, tuple[tuple[str, ...], ...]]]
# topic -> its partitions the group has initialized share state for (those of its current topic id);
# None: every partition counts as initialized
Initialized = Callable[[str], frozenset[int]] | None


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
        self._metadata: dict[str, tuple] = {}  # subscribed topic -> its shape (partitions, topic id, racks)

    def snapshot(self) -> ShareGroup:
        """A copy to put back if a change's records cannot be written: each member is copied, the
        rest (targets, assignments, subscribed metadata) is only ever replaced, never changed in place."""
        saved = copy.copy(self)
        saved.members = {m: copy.copy(member) for m, member in self.members.items()}
        return saved

    @property
    def state(self) -> str:
        return STABLE if self.members else EMPTY

    def heartbeat(self, member_id: str, epoch: int, subscribed, rack_id, client: tuple[str, str], now_ms: int,
                  session_timeout_ms: int, partitions: Shape,
                  initialized: Initialized = None) -> HeartbeatResult:
        if epoch == LEAVE_EPOCH:
            self.remove(member_id, partitions, initialized)
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
        self._refresh(partitions, initialized, bump)
        target = self.target.get(member_id, {})
        changed = epoch == JOIN_EPOCH or member.member_epoch != self.assignment_epoch or target != member.assignment
        member.member_epoch, member.assignment = self.assignment_epoch, target
        return HeartbeatResult(member_id, member.member_epoch, target if changed else None)

    def remove(self, member_id: str, partitions: Shape, initialized: Initialized = None) -> bool:
        if self.members.pop(member_id, None) is None:
            return False
        self._refresh(partitions, initialized, True)
        return True

    def expired(self, now_ms: int) -> list[str]:
        return [m.member_id for m in self.members.values() if m.deadline <= now_ms]

    def next_deadline(self) -> int:
        return min((m.deadline for m in self.members.values()), default=2**63 - 1)

    def subscribed_metadata(self, partitions: Shape) -> None:
        """The subscribed topics as they are now, for a group loaded at start-up; its epoch moves on
        at the next heartbeat if their hash differs from the one it wrote."""
        self._metadata = self._subscribed(partitions)

    def subscribed_topics(self) -> dict[str, tuple[int, object]]:
        """The subscribed topics that exist: topic -> (partitions, topic id), as last refreshed."""
        return {t: (n, tid) for t, (n, tid, _) in self._metadata.items()}

    def _subscribed(self, partitions: Shape) -> dict[str, tuple]:
        topics = sorted({t for m in self.members.values() for t in m.subscribed})
        return {t: shape for t in topics if (shape := partitions(t))[0] > 0}

    def _refresh(self, partitions: Shape, initialized: Initialized, bump: bool = False) -> None:
        """One new group epoch when ``bump``, when a subscribed topic changed (its size, its id:
        deleted and made again, or its partitions' racks), or when initialized partitions wait for
        an assignment; then a new target assignment of the initialized partitions (Kafka:
        shareGroupHeartbeat's bumpGroupEpoch, computeMetadataHash, initializedAssignmentPending)."""
        self._metadata = self._subscribed(partitions)
        assignable = {t: list(range(n)) if initialized is None else sorted(initialized(t) & frozenset(range(n)))
                      for t, (n, _, _) in self._metadata.items()}
        h = metadata_hash({t: (tid, n) for t, (n, tid, _) in self._metadata.items()},
                          lambda t, p: self._metadata[t][2][p])
        if bump or h != self.metadata_hash or self._initialized_pending(assignable):
            self.group_epoch, self.metadata_hash = self.group_epoch + 1, h
        if self.assignment_epoch != self.group_epoch:
            self.target = simple_assign({m.member_id: m.subscribed for m in self.members.values()}, assignable)
            self.assignment_epoch = self.group_epoch

    def _initialized_pending(self, assignable: dict[str, list[int]]) -> bool:
        """Kafka: initializedAssignmentPending -- a subscribed topic's initialized partitions are not
        exactly those the target assigns (they were initialized since the target was computed)."""
        if not self.members:
            return False
        assigned: dict[str, set[int]] = {}
        for member_target in self.target.values():
            for topic, ps in member_target.items():
                assigned.setdefault(topic, set()).update(ps)
        return any(ps and set(ps) != assigned.get(t, set()) for t, ps in assignable.items())


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
