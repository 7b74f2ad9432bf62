"""Classic-protocol groups: states, members, and the long-poll results (Kafka: GroupMetadata.scala,
MemberMetadata.scala).

Plain data plus the one transition function; the protocol itself is in
:mod:`shim.coordinators.group.coordinator`. A JoinGroup or SyncGroup that has to wait for the
rebalance is answered through a :class:`Pending`, completed by the coordinator when the outcome
is known (Kafka's awaitingJoinCallback / awaitingSyncCallback).
"""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple

from ...errors import ErrorCode, KafkaError
from .records import OffsetAndMetadata, subscribed_topics

CONSUMER_PROTOCOL_TYPE = "consumer"


class GroupState(enum.Enum):
    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


S = GroupState
VALID_PREVIOUS: dict[GroupState, frozenset[GroupState]] = {
    S.PREPARING_REBALANCE: frozenset({S.STABLE, S.COMPLETING_REBALANCE, S.EMPTY}),
    S.COMPLETING_REBALANCE: frozenset({S.PREPARING_REBALANCE}),
    S.STABLE: frozenset({S.COMPLETING_REBALANCE}),
    S.DEAD: frozenset(GroupState),
    S.EMPTY: frozenset({S.PREPARING_REBALANCE}),
}


def check_group_id(group_id: str | None, allow_empty: bool = False) -> None:
    """Kafka: isValidGroupId. OffsetCommit, OffsetFetch, DescribeGroups and DeleteGroups accept ""."""
    if group_id is None or (not allow_empty and group_id == ""):
        raise KafkaError(ErrorCode.invalid_group_id, f"invalid group id {group_id!r}")


class IllegalTransition(RuntimeError):
    """A group state change the table forbids: a bug, never a client-facing outcome."""


class Pending:
    """A response that is not known yet. ``complete`` once; callbacks run at completion."""

    __slots__ = ("result", "_callbacks")

    def __init__(self, result: Any = None) -> None:
        self.result = result
        self._callbacks: list[Callable[[Any], None]] = []

    @property
    def done(self) -> bool:
        return self.result is not None

    def complete(self, result: Any) -> None:
        if self.result is not None:
            return
        self.result = result
        callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb(result)

    def add_done_callback(self, cb: Callable[[Any], None]) -> None:
        if self.result is not None:
            cb(self.result)
        else:
            self._callbacks.append(cb)


class JoinMember(NamedTuple):
    member_id: str
    group_instance_id: str | None
    metadata: bytes


class JoinResult(NamedTuple):
    error: ErrorCode
    member_id: str
    generation_id: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    skip_assignment: bool = False
    members: tuple[JoinMember, ...] = ()


class SyncResult(NamedTuple):
    error: ErrorCode
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignment: bytes = b""


@dataclass(slots=True)
class MemberMetadata:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    assignment: bytes = b""
    awaiting_join: Pending | None = None
    awaiting_sync: Pending | None = None
    is_new: bool = False
    # Kafka's DelayedHeartbeat: the member fails at this time unless it shows liveness first;
    # None when no expiration is scheduled (e.g. it expired while the member awaited a rebalance).
    heartbeat_deadline: int | None = None

    def metadata(self, protocol: str) -> bytes:
        return next(m for name, m in self.protocols if name == protocol)

    def supports(self, protocol: str) -> bool:
        return any(name == protocol for name, _ in self.protocols)

    def matches(self, protocols: list[tuple[str, bytes]]) -> bool:
        return protocols == self.protocols

    def vote(self, candidates: set[str]) -> str:
        return next(name for name, _ in self.protocols if name in candidates)

    def has_satisfied_heartbeat(self) -> bool:
        """At its deadline, a member that awaits a rebalance is alive (Kafka: hasSatisfiedHeartbeat;
        new members are the exception, so that a dead new member cannot hold a rebalance)."""
        return not self.is_new and (self.awaiting_join is not None or self.awaiting_sync is not None)


@dataclass(slots=True)
class CommittedOffset:
    """An offset and where its record is in the offsets partition (Kafka:
    CommitRecordMetadataAndOffset), so the newest of a plain and a transactional commit wins."""

    value: OffsetAndMetadata
    record_offset: int


class OffsetsHolder:
    """The committed and pending transactional offsets every group type keeps (Kafka:
    OffsetMetadataManager's per-group maps), shared by classic and consumer groups."""

    __slots__ = ()
    offsets: dict[tuple[str, int], CommittedOffset]
    pending_txn_offsets: dict[int, dict[tuple[str, int], CommittedOffset]]

    def has_pending_offsets(self, tp: tuple[str, int]) -> bool:
        return any(tp in pending for pending in self.pending_txn_offsets.values())

    def has_offsets(self) -> bool:
        return bool(self.offsets) or bool(self.pending_txn_offsets)

    def complete_txn_offsets(self, producer_id: int, commit: bool) -> None:
        """Kafka: GroupMetadata.completePendingTxnOffsetCommit."""
        pending = self.pending_txn_offsets.pop(producer_id, {})
        if not commit:
            return
        for tp, c in pending.items():
            current = self.offsets.get(tp)
            if current is None or current.record_offset < c.record_offset:
                self.offsets[tp] = c

    def remove_offsets(self, tps) -> list[tuple[str, int]]:
        removed = []
        for tp in tps:
            for pending in self.pending_txn_offsets.values():
                pending.pop(tp, None)
            if self.offsets.pop(tp, None) is not None:
                removed.append(tp)
        self.pending_txn_offsets = {pid: p for pid, p in self.pending_txn_offsets.items() if p}
        return removed


@dataclass(slots=True)
class GroupMetadata(OffsetsHolder):
    group_id: str
    state: GroupState = GroupState.EMPTY
    state_timestamp: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    generation_id: int = 0
    leader_id: str | None = None
    members: dict[str, MemberMetadata] = field(default_factory=dict)
    static_members: dict[str, str] = field(default_factory=dict)  # group.instance.id -> member id
    pending_members: dict[str, int] = field(default_factory=dict)  # KIP-394: member id -> expiry
    pending_sync_members: set[str] = field(default_factory=set)
    # protocol name -> how many members support it (Kafka: GroupMetadata.supportedProtocols), kept
    # as members come, go and change protocols: a JoinGroup checks it without a walk of the members
    supported: dict[str, int] = field(default_factory=dict)
    new_member_added: bool = False
    # The join phase of a rebalance (Kafka: DelayedJoin / InitialDelayedJoin) and the sync phase
    # (DelayedSync): when each is forced to complete.
    join_deadline: int | None = None
    initial_join: bool = False
    join_delay_ms: int = 0
    join_remaining_ms: int = 0
    sync_deadline: int | None = None
    offsets: dict[tuple[str, int], CommittedOffset] = field(default_factory=dict)
    pending_txn_offsets: dict[int, dict[tuple[str, int], CommittedOffset]] = field(default_factory=dict)

    def is_(self, state: GroupState) -> bool:
        return self.state is state

    def transition(self, new: GroupState, now_ms: int) -> None:
        if self.state not in VALID_PREVIOUS[new]:
            raise IllegalTransition(f"group {self.group_id}: {self.state.value} -> {new.value}")
        self.state = new
        self.state_timestamp = now_ms

    def can_rebalance(self) -> bool:
        return self.state in VALID_PREVIOUS[GroupState.PREPARING_REBALANCE]

    # -- members ----------------------------------------------------------------------------

    def has(self, member_id: str) -> bool:
        return member_id in self.members

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id == member_id

    def add(self, member: MemberMetadata) -> None:
        if member.group_instance_id is not None:
            self.static_members[member.group_instance_id] = member.member_id
        if not self.members:
            self.protocol_type = member.protocol_type
        if self.leader_id is None:
            self.leader_id = member.member_id
        replaced = self.members.get(member.member_id)
        if replaced is not None:
            self._count(replaced.protocols, -1)
        self.members[member.member_id] = member
        self._count(member.protocols, 1)
        self.pending_members.pop(member.member_id, None)

    def set_protocols(self, member: MemberMetadata, protocols: list[tuple[str, bytes]]) -> None:
        """A member's new protocols (the member is in the group)."""
        self._count(member.protocols, -1)
        member.protocols = protocols
        self._count(protocols, 1)

    def _count(self, protocols: list[tuple[str, bytes]], delta: int) -> None:
        for name in {name for name, _ in protocols}:
            count = self.supported.get(name, 0) + delta
            if count:
                self.supported[name] = count
            else:
                del self.supported[name]

    def remove(self, member_id: str) -> None:
        member = self.members.pop(member_id, None)
        if member is not None:
            self._count(member.protocols, -1)
        if member is not None and member.group_instance_id is not None:
            self.static_members.pop(member.group_instance_id, None)
        if self.is_leader(member_id):
            self.leader_id = next(iter(self.members), None)
        self.pending_members.pop(member_id, None)
        self.pending_sync_members.discard(member_id)

    def replace_static_member(self, instance_id: str, old_id: str, new_id: str) -> MemberMetadata:
        """Give a static member a new member id; a request still parked under the old id is fenced."""
        member = self.members.pop(old_id)
        if member.awaiting_join is not None:
            member.awaiting_join.complete(JoinResult(ErrorCode.fenced_instance_id, old_id))
            member.awaiting_join = None
        if member.awaiting_sync is not None:
            member.awaiting_sync.complete(SyncResult(ErrorCode.fenced_instance_id))
            member.awaiting_sync = None
        member.member_id = new_id
        self.members[new_id] = member
        if self.is_leader(old_id):
            self.leader_id = new_id
        self.static_members[instance_id] = new_id
        return member

    def num_awaiting_join(self) -> int:
        return sum(1 for m in self.members.values() if m.awaiting_join is not None)

    def accepts_joining(self, member_id: str, max_size: int) -> bool:
        """``group.max.size`` (Kafka: GroupMetadataManager.acceptJoiningMember): an empty group takes
        anyone; a rebalancing one a member already waiting, or a new one while fewer than the limit
        wait; otherwise a member of the group, or a new one while it has fewer than the limit."""
        if self.is_(GroupState.EMPTY) or self.is_(GroupState.DEAD):
            return True
        member = self.members.get(member_id)
        if self.is_(GroupState.PREPARING_REBALANCE):
            return (member is not None and member.awaiting_join is not None) or self.num_awaiting_join() < max_size
        return member is not None or len(self.members) < max_size

    def has_all_members_joined(self) -> bool:
        return len(self.members) == self.num_awaiting_join() and not self.pending_members

    def rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    @staticmethod
    def generate_member_id(client_id: str, group_instance_id: str | None) -> str:
        return f"{group_instance_id if group_instance_id is not None else client_id}-{uuid.uuid4()}"

    # -- protocols --------------------------------------------------------------------------

    def _candidate_protocols(self) -> set[str]:
        """The protocols every member supports (Kafka: candidateProtocols)."""
        everyone = len(self.members)
        return {name for name, count in self.supported.items() if count == everyone}

    def select_protocol(self) -> str:
        """Each member votes for its most preferred protocol that all members support; most votes win."""
        candidates = self._candidate_protocols()
        votes: dict[str, int] = {}
        for m in self.members.values():
            choice = m.vote(candidates)
            votes[choice] = votes.get(choice, 0) + 1
        return max(votes, key=votes.__getitem__)

    def supports_protocols(self, protocol_type: str, protocols: set[str]) -> bool:
        if self.is_(GroupState.EMPTY):
            return bool(protocol_type) and bool(protocols)
        return self.protocol_type == protocol_type and bool(protocols & self._candidate_protocols())

    def current_member_metadata(self) -> tuple[JoinMember, ...]:
        return tuple(JoinMember(m.member_id, m.group_instance_id, m.metadata(self.protocol_name))
                     for m in self.members.values())

    def subscribed_topics(self) -> set[str] | None:
        """Topics the members of a consumer group subscribe to; None when unknown (then every topic
        counts as subscribed, as in Kafka)."""
        if self.protocol_type != CONSUMER_PROTOCOL_TYPE:
            return None
        if not self.members:
            return set()
        if self.protocol_name is None:
            return None
        topics: set[str] = set()
        for m in self.members.values():
            if not m.supports(self.protocol_name):
                # Joining the next generation with other protocols: not a member of this one, whose
                # subscriptions Kafka computes when it starts (GroupMetadata.computeSubscribedTopics).
                continue
            member_topics = subscribed_topics(m.metadata(self.protocol_name))
            if member_topics is None:
                return None
            topics |= member_topics
        return topics
