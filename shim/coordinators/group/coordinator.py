"""The group coordinator, classic protocol (Kafka 3.9: core/.../coordinator/group/GroupCoordinator.scala).

Synchronous and clock-free: every method takes ``now_ms`` and :meth:`GroupCoordinator.tick`
runs what is due and returns the next deadline. Kafka's purgatories become deadlines on the group
(join phase, sync phase) and on each member (session timeout), checked by ``tick`` and, as
Kafka's ``checkAndComplete`` does, right after the requests that can complete them.

JoinGroup and SyncGroup return a :class:`Pending`: already complete when the answer is known, or
completed later, when the rebalance completes, by whichever request or timer completes it. The
API handlers await it; the coordinator never does.

Group metadata is written to ``__consumer_offsets`` when the leader's assignment arrives and when
a rebalance leaves the group empty, as Kafka does; offsets are in :mod:`.offsets`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from ...errors import ErrorCode, KafkaError
from ...storage.log_manager import LogManager
from ..steps import Steps, drain
from ..txn.coordinator import TransactionCoordinator
from .consumer_coordinator import ConsumerGroupConfig, ConsumerGroups
from .describe import GroupSummary, MemberSummary, describe_group, list_groups  # noqa: F401 (re-exported)
from .deadlines import classic_deadlines
from .expiration import DEFAULT_CHECK_INTERVAL_MS, DEFAULT_RETENTION_MS, OffsetExpiration
from .loading import load_groups, on_loaded, on_resignation
from .offsets import OffsetOperations
from .state import (
    GroupMetadata,
    GroupState,
    JoinResult,
    MemberMetadata,
    Pending,
    SyncResult,
    check_group_id,
)
from .store import GroupStore

log = logging.getLogger(__name__)

S = GroupState
E = ErrorCode
NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000  # Kafka: GroupCoordinator.NewMemberJoinTimeoutMs
IDLE_TICK_MS = 60_000


def _done(result) -> Pending:
    return Pending(result)


class GroupCoordinator(OffsetOperations):
    def __init__(self, logs: LogManager, txn: TransactionCoordinator, *, min_session_timeout_ms: int = 6_000,
                 max_session_timeout_ms: int = 1_800_000, initial_rebalance_delay_ms: int = 0,
                 consumer: ConsumerGroupConfig | None = None, group_configs=None,
                 offsets_retention_ms: int = DEFAULT_RETENTION_MS,
                 offsets_retention_check_interval_ms: int = DEFAULT_CHECK_INTERVAL_MS,
                 offsets_compression: int = 0) -> None:
        self.store = GroupStore(logs, txn, offsets_compression)
        self.txn = txn
        self.min_session_timeout_ms = min_session_timeout_ms
        self.max_session_timeout_ms = max_session_timeout_ms
        self.initial_rebalance_delay_ms = initial_rebalance_delay_ms
        self.groups: dict[str, GroupMetadata] = {}  # classic groups; consumer groups in self.consumer
        self.consumer = ConsumerGroups(self, consumer or ConsumerGroupConfig(), group_configs)
        self.producer_groups: dict[int, set[str]] = {}  # Kafka: openGroupsForProducer
        self.expiration = OffsetExpiration(self, offsets_retention_ms, offsets_retention_check_interval_ms)
        self._earliest = 0  # no deadline of any group is earlier (see next_deadline)
        self.on_earlier_deadline: Callable[[int], None] | None = None
        """Called with a deadline set while handling a request that is earlier than any known: a
        JoinGroup sets the rebalance deadline and then waits for it, so the caller of :meth:`tick`
        learns of it now rather than after the request."""
        txn.marker_listeners.append(self.on_marker)

    # -- JoinGroup (11) ---------------------------------------------------------------------

    def join_group(self, group_id: str, member_id: str, group_instance_id: str | None, protocol_type: str,
                   protocols: list[tuple[str, bytes]], *, session_timeout_ms: int, rebalance_timeout_ms: int,
                   now_ms: int, client_id: str = "", client_host: str = "", require_known_member_id: bool = False,
                   support_skip_assignment: bool = False) -> Pending:
        """Kafka: handleJoinGroup. ``require_known_member_id`` is KIP-394 (v4+ without an instance id)."""
        try:
            check_group_id(group_id)
        except KafkaError as e:
            return _done(JoinResult(e.code, member_id))
        if not self.min_session_timeout_ms <= session_timeout_ms <= self.max_session_timeout_ms:
            return _done(JoinResult(E.invalid_session_timeout, member_id))
        consumer = self.consumer.groups.get(group_id)
        if consumer is not None:
            if consumer.members:  # a classic member of a consumer group (KIP-848 migration)
                return _done(self.consumer.classic.join(
                    consumer, member_id, group_instance_id, protocol_type, protocols, session_timeout_ms,
                    rebalance_timeout_ms, client_id, client_host, require_known_member_id, now_ms))
            try:
                self.consumer.to_empty_classic(consumer, now_ms)
            except KafkaError as e:
                return _done(JoinResult(e.code, member_id))
        unknown = member_id == ""
        group = self.groups.get(group_id)
        if group is None:
            if not unknown:
                return _done(JoinResult(E.unknown_member_id, member_id))
            group = self.groups[group_id] = GroupMetadata(group_id, state_timestamp=now_ms)
        if not group.accepts_joining(member_id, self.consumer.config.classic_max_size):
            if (known := group.members.get(member_id)) is not None:
                self._remove_member_and_update_group(group, known, now_ms)
            return _done(JoinResult(E.group_max_size_reached, ""))
        pending = Pending()
        member = MemberMetadata(member_id, group_instance_id, client_id, client_host, rebalance_timeout_ms,
                                session_timeout_ms, protocol_type, list(protocols))
        if unknown:
            self._join_new_member(group, member, pending, require_known_member_id, support_skip_assignment, now_ms)
        else:
            self._join_current_member(group, member, pending, now_ms)
        if group.is_(S.PREPARING_REBALANCE):
            self._try_complete_join(group, now_ms)
        return pending

    def _join_new_member(self, group: GroupMetadata, joining: MemberMetadata, pending: Pending,
                         require_known_member_id: bool, support_skip: bool, now_ms: int) -> None:
        if not group.supports_protocols(joining.protocol_type, {name for name, _ in joining.protocols}):
            pending.complete(JoinResult(E.inconsistent_group_protocol, ""))
            return
        joining.member_id = group.generate_member_id(joining.client_id, joining.group_instance_id)
        instance_id = joining.group_instance_id
        if instance_id is not None and instance_id in group.static_members:
            self._update_static_member_and_rebalance(group, group.static_members[instance_id], joining, pending,
                                                     support_skip, now_ms)
        elif instance_id is None and require_known_member_id:
            # KIP-394: remember the id and ask the member to join again with it.
            group.pending_members[joining.member_id] = self._arm(now_ms + joining.session_timeout_ms)
            pending.complete(JoinResult(E.member_id_required, joining.member_id))
        else:
            self._add_member_and_rebalance(group, joining, pending, now_ms)

    def _join_current_member(self, group: GroupMetadata, joining: MemberMetadata, pending: Pending,
                             now_ms: int) -> None:
        member_id = joining.member_id
        if not group.supports_protocols(joining.protocol_type, {name for name, _ in joining.protocols}):
            pending.complete(JoinResult(E.inconsistent_group_protocol, member_id))
        elif member_id in group.pending_members:
            if joining.group_instance_id is not None:
                # Kafka throws IllegalStateException here: pending members are never static.
                pending.complete(JoinResult(E.unknown_server_error, member_id))
            else:
                self._add_member_and_rebalance(group, joining, pending, now_ms)
        elif (error := self._validate_current_member(group, member_id, joining.group_instance_id)) is not None:
            pending.complete(JoinResult(error, member_id))
        else:
            self._rejoin(group, group.members[member_id], joining, pending, now_ms)

    def _rejoin(self, group: GroupMetadata, member: MemberMetadata, joining: MemberMetadata, pending: Pending,
                now_ms: int) -> None:
        if group.is_(S.PREPARING_REBALANCE):
            self._update_member_and_rebalance(group, member, joining, pending, now_ms)
        elif group.is_(S.COMPLETING_REBALANCE):
            if member.matches(joining.protocols):
                # The member lost the JoinGroup response: give it the current generation again.
                members = group.current_member_metadata() if group.is_leader(member.member_id) else ()
                pending.complete(self._join_result(group, member.member_id, members))
            else:
                self._update_member_and_rebalance(group, member, joining, pending, now_ms)
        elif group.is_(S.STABLE):
            if group.is_leader(member.member_id) or not member.matches(joining.protocols):
                # A leader's JoinGroup always rebalances: it may have seen metadata change.
                self._update_member_and_rebalance(group, member, joining, pending, now_ms)
            else:
                pending.complete(self._join_result(group, member.member_id, ()))
        else:
            pending.complete(JoinResult(E.unknown_member_id, member.member_id))

    def _join_result(self, group: GroupMetadata, member_id: str, members, skip: bool = False,
                     leader: str | None = None) -> JoinResult:
        return JoinResult(E.none, member_id, group.generation_id, group.protocol_type, group.protocol_name,
                          leader if leader is not None else (group.leader_id or ""), skip, tuple(members))

    def _add_member_and_rebalance(self, group: GroupMetadata, member: MemberMetadata, pending: Pending,
                                  now_ms: int) -> None:
        member.is_new = True
        member.awaiting_join = pending
        if group.is_(S.PREPARING_REBALANCE) and group.generation_id == 0:
            group.new_member_added = True
        group.add(member)
        # A new member cannot heartbeat before it has its id; its JoinGroup expires on its own.
        member.heartbeat_deadline = self._arm(now_ms + NEW_MEMBER_JOIN_TIMEOUT_MS)
        self._maybe_prepare_rebalance(group, now_ms)

    def _update_member(self, group: GroupMetadata, member: MemberMetadata, joining: MemberMetadata,
                       pending: Pending | None) -> None:
        group.set_protocols(member, joining.protocols)
        member.rebalance_timeout_ms = joining.rebalance_timeout_ms
        member.session_timeout_ms = joining.session_timeout_ms
        if member.awaiting_join is not None and member.awaiting_join is not pending:
            # Kafka drops the older callback; answer it so that its request does not hang.
            member.awaiting_join.complete(JoinResult(E.rebalance_in_progress, member.member_id))
        member.awaiting_join = pending

    def _update_member_and_rebalance(self, group: GroupMetadata, member: MemberMetadata, joining: MemberMetadata,
                                     pending: Pending, now_ms: int) -> None:
        self._update_member(group, member, joining, pending)
        self._maybe_prepare_rebalance(group, now_ms)

    def _update_static_member_and_rebalance(self, group: GroupMetadata, old_id: str, joining: MemberMetadata,
                                            pending: Pending, support_skip: bool, now_ms: int) -> None:
        """A known group.instance.id joins with an unknown member id (restart): it takes over the old
        member's place; in a stable group whose protocol does not change, without a rebalance."""
        instance_id, new_id = joining.group_instance_id, joining.member_id
        current_leader = group.leader_id
        member = group.replace_static_member(instance_id, old_id, new_id)
        self._schedule_heartbeat(member, now_ms)
        old = (member.protocols, member.rebalance_timeout_ms, member.session_timeout_ms)
        self._update_member(group, member, joining, pending)
        if group.is_(S.STABLE):
            if group.protocol_name != group.select_protocol():
                self._maybe_prepare_rebalance(group, now_ms)
                return
            try:
                self.store.store_group(group, {m.member_id: m.assignment for m in group.members.values()}, now_ms)
            except KafkaError as e:
                group.set_protocols(member, old[0])
                member.rebalance_timeout_ms, member.session_timeout_ms = old[1:]
                member.awaiting_join = None
                self._schedule_heartbeat(group.replace_static_member(instance_id, new_id, old_id), now_ms)
                pending.complete(JoinResult(e.code, "", group.generation_id, group.protocol_type,
                                            group.protocol_name, current_leader or ""))
                return
            if support_skip:
                # JoinGroup v9+: a static leader learns it leads without running the assignor.
                is_leader = group.is_leader(new_id)
                members = group.current_member_metadata() if is_leader else ()
                self._invoke_join(member, self._join_result(group, new_id, members, skip=is_leader))
            else:
                # Older versions: name the old leader, so the new member id does not assign.
                self._invoke_join(member, self._join_result(group, new_id, (), leader=current_leader or ""))
        elif group.is_(S.COMPLETING_REBALANCE):
            self._prepare_rebalance(group, now_ms)

    @staticmethod
    def _invoke_join(member: MemberMetadata, result: JoinResult) -> None:
        pending, member.awaiting_join = member.awaiting_join, None
        if pending is not None:
            pending.complete(result)

    @staticmethod
    def _validate_current_member(group: GroupMetadata, member_id: str, group_instance_id: str | None) -> ErrorCode | None:
        """Kafka: validateCurrentMember -- a static member's instance id must map to this member id."""
        if group_instance_id is not None:
            current = group.static_members.get(group_instance_id)
            if current is None:
                return E.unknown_member_id
            if current != member_id:
                return E.fenced_instance_id
        return None if group.has(member_id) else E.unknown_member_id

    # -- rebalance phases -------------------------------------------------------------------

    def _maybe_prepare_rebalance(self, group: GroupMetadata, now_ms: int) -> None:
        if group.can_rebalance():
            self._prepare_rebalance(group, now_ms)

    def _prepare_rebalance(self, group: GroupMetadata, now_ms: int) -> None:
        if group.is_(S.COMPLETING_REBALANCE):
            self._reset_and_propagate_assignment_error(group, E.rebalance_in_progress, now_ms)
        group.pending_sync_members.clear()
        group.sync_deadline = None
        if group.is_(S.EMPTY):
            # Kafka: InitialDelayedJoin -- wait group.initial.rebalance.delay.ms for more members.
            delay = self.initial_rebalance_delay_ms
            group.initial_join, group.join_delay_ms = True, delay
            group.join_remaining_ms = max(group.rebalance_timeout_ms() - delay, 0)
            group.join_deadline = self._arm(now_ms + delay)
        else:
            group.initial_join = False
            group.join_deadline = self._arm(now_ms + group.rebalance_timeout_ms())
        group.transition(S.PREPARING_REBALANCE, now_ms)
        log.info("preparing to rebalance group %s with old generation %d", group.group_id, group.generation_id)
        self._try_complete_join(group, now_ms)

    def _try_complete_join(self, group: GroupMetadata, now_ms: int) -> None:
        if not group.is_(S.PREPARING_REBALANCE):
            return
        if group.join_deadline is not None and now_ms >= group.join_deadline:
            self._on_join_deadline(group, now_ms)
        elif not group.initial_join and group.has_all_members_joined():
            self._complete_join(group, now_ms)

    def _on_join_deadline(self, group: GroupMetadata, now_ms: int) -> None:
        if group.initial_join and group.new_member_added and group.join_remaining_ms != 0:
            group.new_member_added = False
            delay = min(self.initial_rebalance_delay_ms, group.join_remaining_ms)
            group.join_remaining_ms = max(group.join_remaining_ms - group.join_delay_ms, 0)
            group.join_delay_ms, group.join_deadline = delay, self._arm(now_ms + delay)
        else:
            self._complete_join(group, now_ms)

    def _complete_join(self, group: GroupMetadata, now_ms: int) -> None:
        """Kafka: onCompleteJoin -- drop dynamic members that did not rejoin, start the next generation."""
        group.join_deadline = None
        for m in list(group.members.values()):
            if m.awaiting_join is None and m.group_instance_id is None:
                group.remove(m.member_id)
        if group.members and not self._elect_joined_leader(group):
            log.warning("group %s could not complete its rebalance: no member rejoined", group.group_id)
            group.initial_join = False
            group.join_deadline = self._arm(now_ms + group.rebalance_timeout_ms())
            return
        self._init_next_generation(group, now_ms)
        if group.is_(S.EMPTY):
            try:
                self.store.store_group(group, {}, now_ms)
            except KafkaError as e:
                log.warning("failed to write the empty metadata of group %s: %s", group.group_id, e)
            return
        for member in group.members.values():
            members = group.current_member_metadata() if group.is_leader(member.member_id) else ()
            self._invoke_join(member, self._join_result(group, member.member_id, members))
            self._schedule_heartbeat(member, now_ms)
            member.is_new = False
            group.pending_sync_members.add(member.member_id)
        group.sync_deadline = self._arm(now_ms + group.rebalance_timeout_ms())

    @staticmethod
    def _elect_joined_leader(group: GroupMetadata) -> bool:
        leader = group.members.get(group.leader_id) if group.leader_id else None
        if leader is None:
            return False
        if leader.awaiting_join is not None:
            return True
        joined = next((m for m in group.members.values() if m.awaiting_join is not None), None)
        if joined is None:
            return False
        group.leader_id = joined.member_id
        return True

    @staticmethod
    def _init_next_generation(group: GroupMetadata, now_ms: int) -> None:
        group.generation_id += 1
        if group.members:
            group.protocol_name = group.select_protocol()
            group.transition(S.COMPLETING_REBALANCE, now_ms)
        else:
            group.protocol_name = None
            group.transition(S.EMPTY, now_ms)
        group.pending_sync_members.clear()
        log.info("group %s is %s in generation %d with %d members", group.group_id, group.state.value,
                 group.generation_id, len(group.members))

    # -- SyncGroup (14) ---------------------------------------------------------------------

    def sync_group(self, group_id: str, generation_id: int, member_id: str, group_instance_id: str | None,
                   assignments: dict[str, bytes], *, now_ms: int, protocol_type: str | None = None,
                   protocol_name: str | None = None) -> Pending:
        """Kafka: handleSyncGroup. Followers wait for the leader's assignment."""
        try:
            check_group_id(group_id)
        except KafkaError as e:
            return _done(SyncResult(e.code))
        if group_id in self.consumer.groups:
            return _done(self.consumer.classic.sync(self.consumer.groups[group_id], member_id, group_instance_id,
                                                    generation_id, protocol_type, protocol_name, now_ms))
        group = self.groups.get(group_id)
        if group is None:
            return _done(SyncResult(E.unknown_member_id))
        error = self._validate_current_member(group, member_id, group_instance_id)
        if error is None and generation_id != group.generation_id:
            error = E.illegal_generation
        if error is None and ((protocol_type is not None and protocol_type != group.protocol_type)
                              or (protocol_name is not None and protocol_name != group.protocol_name)):
            error = E.inconsistent_group_protocol
        if error is not None:
            return _done(SyncResult(error))
        if group.is_(S.EMPTY):
            return _done(SyncResult(E.unknown_member_id))
        if group.is_(S.PREPARING_REBALANCE):
            return _done(SyncResult(E.rebalance_in_progress))
        member = group.members[member_id]
        if group.is_(S.STABLE):
            self._remove_pending_sync_member(group, member_id)
            self._schedule_heartbeat(member, now_ms)
            return _done(SyncResult(E.none, group.protocol_type, group.protocol_name, member.assignment))
        pending = Pending()
        if member.awaiting_sync is not None:
            member.awaiting_sync.complete(SyncResult(E.rebalance_in_progress))
        member.awaiting_sync = pending
        self._remove_pending_sync_member(group, member_id)
        if group.is_leader(member_id):
            self._complete_sync(group, assignments, now_ms)
        return pending

    def _complete_sync(self, group: GroupMetadata, assignments: dict[str, bytes], now_ms: int) -> None:
        """The leader's assignment: persist it, then hand every member its part."""
        assignment = {m: assignments.get(m, b"") for m in group.members}
        try:
            self.store.store_group(group, assignment, now_ms)
        except KafkaError as e:
            self._reset_and_propagate_assignment_error(group, e.code, now_ms)
            self._maybe_prepare_rebalance(group, now_ms)
            return
        for member in group.members.values():
            member.assignment = assignment[member.member_id]
        self._propagate_assignment(group, E.none, now_ms)
        group.transition(S.STABLE, now_ms)

    def _reset_and_propagate_assignment_error(self, group: GroupMetadata, error: ErrorCode, now_ms: int) -> None:
        for member in group.members.values():
            member.assignment = b""
        self._propagate_assignment(group, error, now_ms)

    def _propagate_assignment(self, group: GroupMetadata, error: ErrorCode, now_ms: int) -> None:
        ok = error == E.none
        for member in group.members.values():
            pending, member.awaiting_sync = member.awaiting_sync, None
            if pending is not None:
                pending.complete(SyncResult(error, group.protocol_type if ok else None,
                                            group.protocol_name if ok else None, member.assignment))
                # The session restarts now: a member's expiry was ignored while it awaited its assignment.
                self._schedule_heartbeat(member, now_ms)

    @staticmethod
    def _remove_pending_sync_member(group: GroupMetadata, member_id: str) -> None:
        group.pending_sync_members.discard(member_id)
        if not group.pending_sync_members:
            group.sync_deadline = None

    def _on_sync_deadline(self, group: GroupMetadata, now_ms: int) -> None:
        """Kafka: onExpirePendingSync -- members that never sent SyncGroup are removed."""
        group.sync_deadline = None
        if group.state not in (S.COMPLETING_REBALANCE, S.STABLE) or not group.pending_sync_members:
            return
        for member_id in list(group.pending_sync_members):
            group.remove(member_id)
        self._prepare_rebalance(group, now_ms)

    # -- Heartbeat (12) ---------------------------------------------------------------------

    def heartbeat(self, group_id: str, member_id: str, group_instance_id: str | None, generation_id: int,
                  now_ms: int) -> ErrorCode:
        """Kafka: handleHeartbeat. REBALANCE_IN_PROGRESS tells a member to rejoin."""
        try:
            check_group_id(group_id)
        except KafkaError as e:
            return e.code
        if group_id in self.consumer.groups:
            return self.consumer.classic.heartbeat(self.consumer.groups[group_id], member_id, group_instance_id,
                                                   generation_id, now_ms)
        group = self.groups.get(group_id)
        if group is None:
            return E.unknown_member_id
        error = self._validate_current_member(group, member_id, group_instance_id)
        if error is None and generation_id != group.generation_id:
            error = E.illegal_generation
        if error is not None:
            return error
        if group.is_(S.EMPTY):
            return E.unknown_member_id
        self._schedule_heartbeat(group.members[member_id], now_ms)
        return E.rebalance_in_progress if group.is_(S.PREPARING_REBALANCE) else E.none

    def _schedule_heartbeat(self, member: MemberMetadata, now_ms: int) -> None:
        member.heartbeat_deadline = self._arm(now_ms + member.session_timeout_ms)

    # -- LeaveGroup (13) --------------------------------------------------------------------

    def leave_group(self, group_id: str, members: list[tuple[str, str | None]],
                    now_ms: int) -> tuple[ErrorCode, list[ErrorCode]]:
        """Kafka: handleLeaveGroup. ``members`` are (member id, group instance id); a member id of ""
        removes the static member by its instance id (administrative removal)."""
        try:
            check_group_id(group_id)
        except KafkaError as e:
            return e.code, []
        if group_id in self.consumer.groups:
            # a consumer group's members leave together, whichever protocol they speak (Kafka 4)
            return E.none, self.consumer.classic.leave(self.consumer.groups[group_id], members, now_ms)
        group = self.groups.get(group_id)
        if group is None:
            return E.none, [E.unknown_member_id] * len(members)
        return E.none, [self._leave(group, m, i, now_ms) for m, i in members]

    def _leave(self, group: GroupMetadata, member_id: str, instance_id: str | None, now_ms: int) -> ErrorCode:
        if member_id == "":
            current = group.static_members.get(instance_id) if instance_id is not None else None
            if current is None:
                return E.unknown_member_id
            member_id = current
        elif member_id in group.pending_members:
            del group.pending_members[member_id]
            self._try_complete_join(group, now_ms)
            return E.none
        elif (error := self._validate_current_member(group, member_id, instance_id)) is not None:
            return error
        log.info("member %s left group %s", member_id, group.group_id)
        self._remove_member_and_update_group(group, group.members[member_id], now_ms)
        return E.none

    def _remove_member_and_update_group(self, group: GroupMetadata, member: MemberMetadata, now_ms: int) -> None:
        self._invoke_join(member, JoinResult(E.unknown_member_id, ""))
        if member.awaiting_sync is not None:
            pending, member.awaiting_sync = member.awaiting_sync, None
            pending.complete(SyncResult(E.unknown_member_id))
        group.remove(member.member_id)
        if group.state in (S.STABLE, S.COMPLETING_REBALANCE):
            self._maybe_prepare_rebalance(group, now_ms)
        elif group.is_(S.PREPARING_REBALANCE):
            self._try_complete_join(group, now_ms)

    # -- DescribeGroups (15), ListGroups (16) -----------------------------------------------

    def describe_group(self, group_id: str) -> tuple[ErrorCode, GroupSummary]:
        return describe_group(self, group_id)

    def list_groups(self, states: set[str] = frozenset(),
                    types: set[str] = frozenset()) -> list[tuple[str, str, str, str]]:
        """(group id, protocol type, state, group type) of every group, filtered by state names and
        group types as ``describe.state_key`` and ``type_key`` write them (Kafka:
        GroupMetadataManager.listGroups compares them lower case; ListGroups writes its request's
        filters so, paced)."""
        return list_groups(self, states, types)

    # -- timers and start-up ----------------------------------------------------------------

    def tick(self, now_ms: int) -> int:
        """Expire sessions, pending members, join and sync phases due at ``now_ms``; return the next deadline."""
        for group in list(self.groups.values()):
            self._expire(group, now_ms)
        consumer = self.consumer.tick(now_ms)
        self._earliest = min((d for g in self.groups.values() for d in classic_deadlines(g)),
                             default=now_ms + IDLE_TICK_MS)
        for deadline in (consumer, self.expiration.tick(now_ms)):
            if deadline is not None:
                self._earliest = min(self._earliest, deadline)
        return self._earliest

    def next_deadline(self) -> int:
        """No deadline is earlier than this, without looking at every group: each deadline set since
        the last :meth:`tick` lowered it. A deadline later cleared or moved leaves it early, which
        costs one tick that finds nothing due."""
        return self._earliest

    def _arm(self, deadline: int) -> int:
        if deadline < self._earliest:
            self._earliest = deadline
            if self.on_earlier_deadline is not None:
                self.on_earlier_deadline(deadline)
        return deadline

    def _expire(self, group: GroupMetadata, now_ms: int) -> None:
        for member in list(group.members.values()):
            if member.heartbeat_deadline is not None and now_ms >= member.heartbeat_deadline:
                member.heartbeat_deadline = None
                if group.has(member.member_id) and not member.has_satisfied_heartbeat():
                    log.info("member %s of group %s failed (session timeout)", member.member_id, group.group_id)
                    self._remove_member_and_update_group(group, member, now_ms)
        for member_id, deadline in list(group.pending_members.items()):
            if now_ms >= deadline:
                group.pending_members.pop(member_id, None)
                self._try_complete_join(group, now_ms)
        if group.join_deadline is not None and now_ms >= group.join_deadline:
            self._try_complete_join(group, now_ms)
        if group.sync_deadline is not None and now_ms >= group.sync_deadline:
            self._on_sync_deadline(group, now_ms)

    def load(self, now_ms: int) -> None:
        drain(self.load_steps(lambda: now_ms))

    def load_steps(self, clock: Callable[[], int]) -> "Steps[None]":
        """Replay ``__consumer_offsets``; loaded members must heartbeat within their session timeout
        from the load's end. The offset expiration check runs every
        ``offsets.retention.check.interval.ms`` from then."""
        yield from load_groups(self, clock)
        self.expiration.schedule(clock())

    def on_election(self, coordinated: Callable[[str], bool], now_ms: int) -> int:
        """This broker now leads the offsets partition of the groups ``coordinated`` picks (Kafka: onElection)."""
        return on_loaded(self, coordinated, now_ms)

    def on_offline(self) -> None:
        """The data directory went offline: every group is resigned (loading.on_resignation)."""
        on_resignation(self)
