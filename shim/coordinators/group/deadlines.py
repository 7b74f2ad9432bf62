"""The group coordinator's deadlines seen whole: each classic group's, for the coordinator's timer
(Kafka's purgatories: DelayedHeartbeat per member, DelayedJoin and DelayedSync per group, the
pending members' join timeout), and every group's brought forward at once for the control plane's
``advance_clock`` (shim.control.levers), which makes what would time out within some milliseconds
time out now.

Offsets past their retention are the expiration timer's (:mod:`.expiration`, whose ``advance``
the control plane calls after this one: a group its members left by timing out is Empty from then).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from .state import GroupMetadata

if TYPE_CHECKING:
    from .coordinator import GroupCoordinator


def classic_deadlines(group: GroupMetadata) -> Iterator[int]:
    """Every deadline a classic group has armed."""
    for m in group.members.values():
        if m.heartbeat_deadline is not None:
            yield m.heartbeat_deadline
    yield from group.pending_members.values()
    if group.join_deadline is not None:
        yield group.join_deadline
    if group.sync_deadline is not None:
        yield group.sync_deadline


def advance(gc: GroupCoordinator, now_ms: int, advanced_ms: int, group_id: str | None = None) -> list[str]:
    """The group clock moved on by ``advanced_ms``: every session, join, sync and rebalance deadline
    due by then, of every group (or ``group_id``), classic and consumer, is due now and runs.
    Returns the members removed, as "group/member"."""
    classic = [g for g in gc.groups.values() if group_id in (None, g.group_id)]
    consumer = [g for g in gc.consumer.groups.values() if group_id in (None, g.group_id)]
    before = {(g.group_id, m) for g in classic + consumer for m in g.members}
    due = _bring_forward(now_ms, now_ms + advanced_ms)
    for group in classic:
        for member in group.members.values():
            member.heartbeat_deadline = due(member.heartbeat_deadline)
        group.pending_members.update({m: due(d) for m, d in group.pending_members.items()})
        group.join_deadline, group.sync_deadline = due(group.join_deadline), due(group.sync_deadline)
    for group in consumer:
        for member in group.members.values():
            member.session_deadline = due(member.session_deadline)
            member.rebalance_deadline = due(member.rebalance_deadline)
            member.join_deadline, member.sync_deadline = due(member.join_deadline), due(member.sync_deadline)
    gc.tick(now_ms)
    after = {(g.group_id, m) for g in classic + consumer for m in g.members}
    return sorted(f"{g}/{m}" for g, m in before - after)


def _bring_forward(now_ms: int, later_ms: int):
    """A deadline due by ``later_ms`` is due at ``now_ms``; others (and none) stay."""
    return lambda deadline: now_ms if deadline is not None and deadline <= later_ms else deadline
