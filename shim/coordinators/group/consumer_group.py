"""Consumer groups of the KIP-848 protocol: members, epochs and assignments (Kafka 4:
group-coordinator ``modern/consumer/ConsumerGroup``, ``ConsumerGroupMember``, ``MemberState``).

Plain data. Every change reaches a group through :func:`shim.coordinators.group.consumer_records.replay`
of the records that describe it, as Kafka's coordinator replays its own records, so the state
after a restart is the state the records built live.

Assignments map topic ids to partition sets: a topic deleted and created again under its name
is another topic, as in Kafka.
"""

from __future__ import annotations

import base64
import enum
import uuid
from dataclasses import dataclass, field

from .state import CommittedOffset, OffsetsHolder

Assignment = dict[uuid.UUID, frozenset[int]]

LEAVE_GROUP_MEMBER_EPOCH = -1  # Kafka: ConsumerGroupHeartbeatRequest.LEAVE_GROUP_MEMBER_EPOCH
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2
JOIN_GROUP_MEMBER_EPOCH = 0


class MemberState(enum.Enum):
    """Kafka: modern.MemberState, with the byte it is persisted as."""

    STABLE = 0
    UNREVOKED_PARTITIONS = 1
    UNRELEASED_PARTITIONS = 2
    UNKNOWN = 127

    @classmethod
    def of(cls, value: int) -> "MemberState":
        try:
            return cls(value)
        except ValueError:
            return cls.UNKNOWN


class ConsumerGroupState(enum.Enum):
    """Kafka: ConsumerGroup.ConsumerGroupState, as DescribeGroups/ListGroups spell them."""

    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


@dataclass(slots=True)
class ConsumerGroupMember:
    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: tuple[str, ...] = ()
    subscribed_topic_regex: str | None = None
    rebalance_timeout_ms: int = -1
    server_assignor: str | None = None
    # a member of the classic protocol (JoinGroup/SyncGroup) inside the group: its protocols and
    # JoinGroup's session timeout (Kafka: ClassicMemberMetadata)
    classic_protocols: tuple[tuple[str, bytes], ...] | None = None
    classic_session_timeout_ms: int | None = None
    # the current assignment (Kafka: ConsumerGroupCurrentMemberAssignmentValue)
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: MemberState = MemberState.STABLE
    assigned: Assignment = field(default_factory=dict)
    pending_revocation: Assignment = field(default_factory=dict)
    # timers, not persisted: the session and, while partitions await revocation, the rebalance timeout;
    # a classic member's JoinGroup (once told to rejoin) and SyncGroup (once joined) must come in time
    session_deadline: int | None = None
    rebalance_deadline: int | None = None
    join_deadline: int | None = None
    sync_deadline: int | None = None

    def deadlines(self) -> tuple[tuple[str, int | None], ...]:
        """Kafka: the session, rebalance, consumer-group join and sync timeouts, with why each fences."""
        return (("session timeout expired", self.session_deadline),
                ("did not revoke its partitions within its rebalance timeout", self.rebalance_deadline),
                ("the classic member failed to join within the rebalance timeout", self.join_deadline),
                ("the classic member failed to sync within the rebalance timeout", self.sync_deadline))

    @property
    def uses_classic_protocol(self) -> bool:
        return self.classic_protocols is not None

    def metadata(self) -> tuple:
        """What a ConsumerGroupMemberMetadata record holds: a change here is written as one."""
        return (self.instance_id, self.rack_id, self.client_id, self.client_host, self.subscribed_topic_names,
                self.subscribed_topic_regex, self.rebalance_timeout_ms, self.server_assignor, self.classic_protocols,
                self.classic_session_timeout_ms)

    def current(self) -> tuple:
        """What a ConsumerGroupCurrentMemberAssignment record holds."""
        return (self.member_epoch, self.previous_member_epoch, self.state, self.assigned, self.pending_revocation)


@dataclass(slots=True)
class ConsumerGroup(OffsetsHolder):
    group_id: str
    group_epoch: int = 0
    assignment_epoch: int = 0
    metadata_hash: int = 0  # of the subscribed topics' ids and partition counts at the last bump
    members: dict[str, ConsumerGroupMember] = field(default_factory=dict)
    static_members: dict[str, str] = field(default_factory=dict)  # instance id -> member id
    target: dict[str, Assignment] = field(default_factory=dict)  # member id -> target assignment
    # Kafka: currentPartitionEpoch -- who holds each partition (assigned or pending revocation)
    partition_epochs: dict[tuple[uuid.UUID, int], int] = field(default_factory=dict)
    # topic name -> (topic id, partitions) of every subscribed topic, as last written
    subscription_metadata: dict[str, tuple[uuid.UUID, int]] = field(default_factory=dict)
    state_timestamp: int = -1
    offsets: dict[tuple[str, int], CommittedOffset] = field(default_factory=dict)
    pending_txn_offsets: dict[int, dict[tuple[str, int], CommittedOffset]] = field(default_factory=dict)
    # ((group epoch, topics version), the subscribed topics' metadata): not persisted (consumer_coordinator)
    subscribed_cache: tuple | None = field(default=None, compare=False, repr=False)

    @property
    def state(self) -> ConsumerGroupState:
        """Kafka: ConsumerGroup.maybeUpdateGroupState."""
        if not self.members:
            return ConsumerGroupState.EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ConsumerGroupState.ASSIGNING
        for m in self.members.values():
            if m.member_epoch != self.assignment_epoch or m.state is not MemberState.STABLE:
                return ConsumerGroupState.RECONCILING
        return ConsumerGroupState.STABLE

    def member_by_instance(self, instance_id: str) -> ConsumerGroupMember | None:
        member_id = self.static_members.get(instance_id)
        return self.members.get(member_id) if member_id is not None else None

    def partition_epoch(self, topic_id: uuid.UUID, partition: int) -> int:
        return self.partition_epochs.get((topic_id, partition), -1)

    def target_of(self, member: ConsumerGroupMember) -> Assignment:
        return self.target.get(member.member_id, {})

    def subscribed_topic_names(self, resolve_regex) -> set[str]:
        """Every topic a member subscribes to, by name or (resolved) regex."""
        out: set[str] = set()
        for m in self.members.values():
            out |= member_topics(m, resolve_regex)
        return out

    def set_partition_epochs(self, member: ConsumerGroupMember, epoch: int | None) -> None:
        """Record (or, with None, release) the partitions ``member`` holds."""
        for held in (member.assigned, member.pending_revocation):
            for topic_id, partitions in held.items():
                for p in partitions:
                    if epoch is None:
                        if self.partition_epochs.get((topic_id, p)) is not None:
                            del self.partition_epochs[(topic_id, p)]
                    else:
                        self.partition_epochs[(topic_id, p)] = epoch


def new_member_id() -> str:
    """Kafka: Uuid.randomUuid().toString() -- URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()


def member_topics(member: ConsumerGroupMember, resolve_regex) -> set[str]:
    topics = set(member.subscribed_topic_names)
    if member.subscribed_topic_regex:
        topics |= resolve_regex(member.subscribed_topic_regex)
    return topics


def assignment_size(a: Assignment) -> int:
    return sum(len(p) for p in a.values())


def without_empty(a: dict[uuid.UUID, set[int] | frozenset[int]]) -> Assignment:
    return {t: frozenset(p) for t, p in a.items() if p}
