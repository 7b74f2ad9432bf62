"""A member's way from its current assignment to its target (Kafka 4:
``modern/consumer/CurrentAssignmentBuilder``).

A partition moves between members in two steps: its owner is asked to revoke it and keeps its
epoch (UNREVOKED_PARTITIONS) until a heartbeat no longer lists it as owned; only then is it free
(no partition epoch) and given to its new owner, which meanwhile waits at the target epoch in
UNRELEASED_PARTITIONS. Pure functions over :class:`ConsumerGroupMember` values.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Callable

from ...errors import ErrorCode, KafkaError
from .consumer_group import Assignment, ConsumerGroupMember, MemberState, without_empty

Owned = dict[uuid.UUID, frozenset[int]] | None  # the request's TopicPartitions; None when not sent


def _with_epoch(member: ConsumerGroupMember, epoch: int, **changes) -> ConsumerGroupMember:
    """Kafka: ConsumerGroupMember.Builder.updateMemberEpoch -- the old epoch becomes the previous one."""
    return replace(member, member_epoch=epoch, previous_member_epoch=member.member_epoch, **changes)


def owns_any(owned: Owned, assignment: Assignment) -> bool:
    """Kafka: ownsRevokedPartitions -- without an owned list the member may still own them all."""
    if owned is None:
        return True
    return any(owned.get(t, frozenset()) & ps for t, ps in assignment.items())


def reconcile(member: ConsumerGroupMember, target_epoch: int, target: Assignment, subscribed: set[uuid.UUID],
              partition_epoch: Callable[[uuid.UUID, int], int], owned: Owned,
              enforce_subscription: bool = False) -> ConsumerGroupMember:
    """Kafka: CurrentAssignmentBuilder.build."""
    state = member.state
    if state is MemberState.STABLE:
        if member.member_epoch != target_epoch:
            return _next(member, member.member_epoch, target_epoch, target, subscribed, partition_epoch, owned)
        if enforce_subscription:
            return _drop_unsubscribed(member, subscribed, owned)
        return member
    if state is MemberState.UNREVOKED_PARTITIONS:
        if owns_any(owned, member.pending_revocation):
            return _drop_unsubscribed(member, subscribed, owned) if enforce_subscription else member
        return _next(member, member.member_epoch, target_epoch, target, subscribed, partition_epoch, owned)
    if state is MemberState.UNRELEASED_PARTITIONS:
        return _next(member, member.member_epoch, target_epoch, target, subscribed, partition_epoch, owned)
    # UNKNOWN: a state written by a newer broker; the member starts again from nothing.
    if owned is None or any(owned.values()):
        raise KafkaError(ErrorCode.fenced_member_epoch, "The consumer group member is in a unknown state. "
                         "The member must abandon all its partitions and rejoin.")
    return _next(member, target_epoch, target_epoch, target, subscribed, partition_epoch, owned)


def _drop_unsubscribed(member: ConsumerGroupMember, subscribed: set[uuid.UUID], owned: Owned) -> ConsumerGroupMember:
    """Kafka: updateCurrentAssignment -- topics no longer subscribed are revoked at once."""
    dropped = {t: ps for t, ps in member.assigned.items() if t not in subscribed}
    if not dropped:
        return member
    assigned = {t: ps for t, ps in member.assigned.items() if t in subscribed}
    pending = dict(member.pending_revocation)
    for t, ps in dropped.items():
        pending[t] = pending.get(t, frozenset()) | ps
    if owns_any(owned, pending):
        return _with_epoch(member, member.member_epoch, state=MemberState.UNREVOKED_PARTITIONS,
                           assigned=assigned, pending_revocation=pending)
    return _with_epoch(member, member.member_epoch, assigned=assigned)


def _next(member: ConsumerGroupMember, epoch: int, target_epoch: int, target: Assignment,
          subscribed: set[uuid.UUID], partition_epoch: Callable[[uuid.UUID, int], int],
          owned: Owned) -> ConsumerGroupMember:
    """Kafka: computeNextAssignment."""
    unreleased = False
    assigned: dict[uuid.UUID, set[int]] = {}
    revoking: dict[uuid.UUID, set[int]] = {}
    to_assign: dict[uuid.UUID, set[int]] = {}
    for topic_id in set(target) | set(member.assigned):
        wanted = target.get(topic_id, frozenset()) if topic_id in subscribed else frozenset()
        current = member.assigned.get(topic_id, frozenset())
        assigned[topic_id] = set(current & wanted)
        revoking[topic_id] = set(current - wanted)
        pending_here = member.pending_revocation.get(topic_id, frozenset())
        free = set()
        for p in wanted - current:
            if partition_epoch(topic_id, p) != -1 and p not in pending_here:
                unreleased = True  # still held by another member
            else:
                free.add(p)
        to_assign[topic_id] = free
    revoking_ = without_empty(revoking)
    if revoking_ and owns_any(owned, revoking_):
        return _with_epoch(member, epoch, state=MemberState.UNREVOKED_PARTITIONS,
                           assigned=without_empty(assigned), pending_revocation=revoking_)
    for topic_id, free in to_assign.items():
        assigned[topic_id] |= free
    state = MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE
    return _with_epoch(member, target_epoch, state=state, assigned=without_empty(assigned), pending_revocation={})
