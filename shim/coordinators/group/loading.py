"""Start-up of the group coordinator: replay ``__consumer_offsets`` into classic and consumer
groups (Kafka: GroupMetadataManager's replay of each record type, then onLoaded, which restarts
every member's session timer).

A group id is a classic group or a consumer group, never both: converting one to the other writes
the tombstones of the old type first, so after the replay at most one of them is left.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from ...errors import ErrorCode
from ..steps import Steps
from . import consumer_records as cr
from .consumer_group import MemberState
from .state import GroupMetadata, GroupState, JoinResult, MemberMetadata, SyncResult

if TYPE_CHECKING:
    from .coordinator import GroupCoordinator
    from .records import GroupRecord
    from .store import LoadedPartition

log = logging.getLogger(__name__)


def load_groups(gc: "GroupCoordinator", clock: Callable[[], int]) -> "Steps[None]":
    """Replay ``__consumer_offsets``, then build the groups; ``clock`` is read once the replay is
    done (every member's session starts then). A step ends after each batch and each group."""
    consumer = gc.consumer.groups
    gc.share_records = []  # the share coordinator replays these (shim.coordinators.share.members)
    parts = yield from gc.store.load_steps()
    now_ms = clock()
    for part in parts:
        gc.share_records += part.share_records
        for record in part.consumer_records:
            cr.replay(consumer, record, now_ms)
            yield
        with_offsets = {g for g, o in part.offsets.items() if o}
        with_pending = {g for p in part.pending.values() for g, o in p.items() if o}
        for group_id in set(part.groups) | with_offsets | with_pending:
            yield
            group = consumer.get(group_id)
            if group is None:
                group = gc.groups[group_id] = _classic_group(gc, group_id, part, now_ms)
            else:
                _attach_offsets(group, group_id, part)
            for pid in group.pending_txn_offsets:
                gc.producer_groups.setdefault(pid, set()).add(group_id)
    for group in consumer.values():
        for member in group.members.values():
            gc.consumer.schedule_session(group.group_id, member, now_ms)
    log.info("loaded %d classic and %d consumer groups from __consumer_offsets", len(gc.groups), len(consumer))


def on_loaded(gc: "GroupCoordinator", coordinated: Callable[[str], bool], now_ms: int) -> int:
    """Another broker took the lead of a ``__consumer_offsets`` partition and with it the groups
    ``coordinated`` picks. The old coordinator unloads them (:func:`_unload`), the new one loads
    what was last written of a classic group caught mid-rebalance (:func:`_reload`); then, as Kafka's
    onLoaded (GroupCoordinator.onGroupLoaded before 4.0), every member's session, and an unrevoked
    member's rebalance timeout, restarts at ``now_ms`` -- a member could not reach its coordinator
    while it moved. Returns how many members were rescheduled."""
    moved = [g for g in gc.groups.values() if coordinated(g.group_id)]
    for group in moved:
        _unload(group)
    _reload(gc, [g for g in moved if g.state in (GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE)],
            now_ms)
    restarted = 0
    for group in gc.groups.values():
        if coordinated(group.group_id):
            for member in group.members.values():
                gc._schedule_heartbeat(member, now_ms)
                restarted += 1
    for group in gc.consumer.groups.values():
        if coordinated(group.group_id):
            for member in group.members.values():
                gc.consumer.schedule_session(group.group_id, member, now_ms)
                if member.state is MemberState.UNREVOKED_PARTITIONS:
                    member.rebalance_deadline = gc._arm(now_ms + max(member.rebalance_timeout_ms, 0))
                restarted += 1
    return restarted


def on_resignation(gc: "GroupCoordinator") -> None:
    """The data directory went offline: every group's offsets partition lost its leader, and the
    coordinator resigns them all (Kafka: onResignation once the controller moved the leadership of
    the offline replicas, then GroupMetadataManager.onUnloaded): a JoinGroup or SyncGroup parked in
    a rebalance is answered NOT_COORDINATOR at once."""
    for group in gc.groups.values():
        _unload(group)


def _unload(group: GroupMetadata) -> None:
    """Kafka: GroupMetadataManager.onUnloaded -- a JoinGroup or SyncGroup parked at the old
    coordinator is answered NOT_COORDINATOR, so its client finds the new coordinator and asks
    again there. (Kafka completes the join futures of a PreparingRebalance group and the sync
    futures of a CompletingRebalance or Stable one; a group never holds the other kind.)"""
    for member in group.members.values():
        join, member.awaiting_join = member.awaiting_join, None
        if join is not None:
            join.complete(JoinResult(ErrorCode.not_coordinator, member.member_id))
        sync, member.awaiting_sync = member.awaiting_sync, None
        if sync is not None:
            sync.complete(SyncResult(ErrorCode.not_coordinator))


def _reload(gc: "GroupCoordinator", groups: list[GroupMetadata], now_ms: int) -> None:
    """The new coordinator knows a group by what its offsets partition holds: a rebalance in
    progress at the old one was never written, so the group is back to its last written generation
    (Stable with that generation's members and assignments, or Empty), as Kafka's load replays it.
    Committed and pending offsets were written before they were applied and stay as they are."""
    if not groups:
        return
    part = gc.store.load_groups({g.group_id for g in groups})
    for old in groups:
        written = part.groups.get(old.group_id)
        group = _from_record(gc, old.group_id, written[0] if written else None, now_ms)
        group.offsets, group.pending_txn_offsets = old.offsets, old.pending_txn_offsets
        if written is None and not group.has_offsets():
            del gc.groups[old.group_id]  # nothing of it was written: the new coordinator never heard of it
        else:
            gc.groups[old.group_id] = group
        log.info("group %s moved mid-rebalance: reloaded as %s in generation %d", old.group_id,
                 group.state.value, group.generation_id)


def _attach_offsets(group, group_id: str, part: "LoadedPartition") -> None:
    """Committed and pending offsets; a transaction open across an upgrade may hold pending offsets
    in the group's legacy partition and in its Kafka partition (replayed in that order)."""
    group.offsets = dict(part.offsets.get(group_id, {}))
    for (_, _, pid), groups in part.pending.items():
        if groups.get(group_id):
            group.pending_txn_offsets.setdefault(pid, {}).update(groups[group_id])


def _classic_group(gc: "GroupCoordinator", group_id: str, part: "LoadedPartition", now_ms: int) -> GroupMetadata:
    written = part.groups.get(group_id)
    group = _from_record(gc, group_id, written[0] if written else None, now_ms)
    _attach_offsets(group, group_id, part)
    return group


def _from_record(gc: "GroupCoordinator", group_id: str, record: "GroupRecord | None", now_ms: int) -> GroupMetadata:
    """A classic group as its last GroupMetadata record left it (Empty without one); every member
    must heartbeat within its session from ``now_ms``."""
    group = GroupMetadata(group_id, state_timestamp=now_ms)
    if record is not None:
        group.protocol_type = record.protocol_type or None
        group.generation_id = record.generation_id
        group.protocol_name = record.protocol_name
        group.state_timestamp = record.state_timestamp
        for m in record.members:
            member = MemberMetadata(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                                    m.rebalance_timeout_ms, m.session_timeout_ms, record.protocol_type,
                                    [(record.protocol_name, m.subscription)], m.assignment)
            group.add(member)
            gc._schedule_heartbeat(member, now_ms)
        group.leader_id = record.leader_id if record.members else None
        group.state = GroupState.STABLE if record.members else GroupState.EMPTY
    return group
