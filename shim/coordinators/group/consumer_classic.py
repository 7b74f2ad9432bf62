"""Classic-protocol members inside consumer groups, and groups changing protocol online (Kafka 4:
``GroupMetadataManager.classicGroupJoinToConsumerGroup``, ``classicGroupSyncToConsumerGroup``,
``classicGroupHeartbeatToConsumerGroup``, ``classicGroupLeaveToConsumerGroup``,
``convertToConsumerGroup``, ``convertToClassicGroup``; ``group.consumer.migration.policy``).

* Upgrade: a consumer-protocol member joining a classic group of the ``consumer`` protocol type
  that has members turns it into a consumer group (policy ``upgrade`` or ``bidirectional``): each
  classic member becomes a member at the group's generation, subscribed to the topics of its
  subscription and owning its assignment, which is also its target, and the joining member then
  bumps the group epoch as any new member does.
* Classic members of a consumer group keep using JoinGroup, SyncGroup, Heartbeat and LeaveGroup:
  the broker assigns for them (the group's assignor) and answers JoinGroup at once with the
  member epoch as generation; SyncGroup returns the member's partitions as a
  ConsumerProtocolAssignment; Heartbeat answers REBALANCE_IN_PROGRESS when the group epoch moved
  past the member's or partitions it was waiting for were released, and the member rejoins.
* Downgrade: when a consumer-protocol member leaves (or is fenced) and every member left uses the
  classic protocol (policy ``downgrade`` or ``bidirectional``, no more members than
  ``group.max.size``), the group becomes a classic group at generation = group epoch with the
  members' current assignments, and a rebalance starts; when a static classic member replaces the
  last consumer-protocol member, the same conversion happens without a rebalance.
"""

from __future__ import annotations

import logging
import struct
from dataclasses import replace
from typing import TYPE_CHECKING

from ...errors import ErrorCode, KafkaError
from . import consumer_records as cr
from .consumer_group import (
    Assignment,
    ConsumerGroup,
    ConsumerGroupMember,
    MemberState,
    member_topics,
    new_member_id,
)
from .consumer_reconcile import reconcile
from .records import UnknownRecord, _Reader, _str
from .state import (
    CONSUMER_PROTOCOL_TYPE,
    GroupMetadata,
    GroupState,
    JoinResult,
    MemberMetadata,
    SyncResult,
)

if TYPE_CHECKING:
    from .consumer_coordinator import ConsumerGroups

log = logging.getLogger(__name__)
E = ErrorCode
_I16, _I32 = struct.Struct(">h"), struct.Struct(">i")
UPGRADE_POLICIES, DOWNGRADE_POLICIES = {"upgrade", "bidirectional"}, {"downgrade", "bidirectional"}


# -- the embedded consumer protocol ---------------------------------------------------------------


def parse_subscription(metadata: bytes) -> tuple[int, tuple[str, ...], dict[str, set[int]]]:
    """ConsumerProtocolSubscription v0-3: (version, topics, owned partitions by topic name)."""
    r = _Reader(metadata)
    version = r.i16()
    if version < 0:
        raise UnknownRecord("a negative subscription version")
    topics = tuple(r.str() or "" for _ in range(r.i32()))
    owned: dict[str, set[int]] = {}
    n = r.i32()  # user data
    r.pos += max(n, 0)
    if version >= 1 and r.pos < len(r.buf):
        for _ in range(r.i32()):
            topic = r.str() or ""
            owned.setdefault(topic, set()).update(r.i32() for _ in range(r.i32()))
    return version, topics, owned


def subscription_version(metadata: bytes) -> int:
    """Kafka: ConsumerProtocol.deserializeVersion -- only the leading version of a member's first
    protocol picks its assignment's version; the rest need not parse (a member that joined a classic
    group was never parsed but for the selected protocol). 0 when even that is missing."""
    if len(metadata) < 2:
        return 0
    return max(_I16.unpack_from(metadata)[0], 0)


def parse_assignment(data: bytes) -> dict[str, set[int]]:
    """ConsumerProtocolAssignment: the partitions by topic name (empty when it does not parse)."""
    try:
        r = _Reader(data)
        if r.i16() < 0:
            return {}
        out: dict[str, set[int]] = {}
        for _ in range(r.i32()):
            topic = r.str() or ""
            out.setdefault(topic, set()).update(r.i32() for _ in range(r.i32()))
        return out
    except UnknownRecord:
        return {}


def encode_assignment(version: int, by_name: dict[str, frozenset[int]]) -> bytes:
    """ConsumerProtocolAssignment at the member's subscription version (v0-3 share the fields), no user data."""
    out = [_I16.pack(max(0, min(version, 3))), _I32.pack(len(by_name))]
    for topic, partitions in sorted(by_name.items()):
        out += [_str(topic), _I32.pack(len(partitions)), *(_I32.pack(p) for p in sorted(partitions))]
    return b"".join(out) + _I32.pack(-1)


def supports_classic_protocols(group: ConsumerGroup, protocol_type: str, names: set[str]) -> bool:
    """Kafka: ConsumerGroup.supportsClassicProtocols. A classic member joins a consumer group only
    with a protocol every classic member already in it supports, so a downgrade always finds one."""
    if protocol_type != CONSUMER_PROTOCOL_TYPE or not names:
        return False
    classic = [{name for name, _ in m.classic_protocols} for m in group.members.values() if m.uses_classic_protocol]
    return any(all(name in supported for supported in classic) for name in names)


class ClassicMembers:
    """The classic protocol's requests to consumer groups; owned by :class:`ConsumerGroups`."""

    def __init__(self, groups: "ConsumerGroups") -> None:
        self.cg = groups

    def _ids(self, by_name: dict[str, set[int]]) -> Assignment:
        topics = self.cg.topics
        return {topics[t].topic_id: frozenset(ps) for t, ps in by_name.items() if t in topics and ps}

    def _names(self, assignment: Assignment) -> dict[str, frozenset[int]]:
        names = {info.topic_id: name for name, info in self.cg.topics.items()}
        return {names[t]: ps for t, ps in assignment.items() if t in names}

    # -- upgrade --------------------------------------------------------------------------------

    def upgrade(self, classic: GroupMetadata, now_ms: int) -> ConsumerGroup:
        """Kafka: validateOnlineUpgrade + convertToConsumerGroup; GROUP_ID_NOT_FOUND when not allowed
        (the policy, another protocol type, or more members than ``group.consumer.max.size``)."""
        gid = classic.group_id
        if (self.cg.config.migration_policy not in UPGRADE_POLICIES or classic.protocol_type != CONSUMER_PROTOCOL_TYPE
                or len(classic.members) > self.cg.config.max_size):
            log.info("group %s: the classic group cannot become a consumer group (policy %s, %d members, at most "
                     "%d)", gid, self.cg.config.migration_policy, len(classic.members), self.cg.config.max_size)
            raise KafkaError(E.group_id_not_found, f"Group {gid} is not a consumer group.")
        if len(classic.members) == self.cg.config.max_size:  # Kafka converts, then refuses the joining member
            raise KafkaError(E.group_max_size_reached, "The consumer group has reached its maximum capacity of "
                             f"{self.cg.config.max_size} members.")  # and keeps none of it
        members = []
        for m in classic.members.values():
            try:
                metadata = m.metadata(classic.protocol_name) if classic.protocol_name else m.protocols[0][1]
                _, topics, _ = parse_subscription(metadata)
            except (UnknownRecord, StopIteration, IndexError):
                raise KafkaError(E.group_id_not_found, f"Cannot upgrade the classic group {gid} to consumer group "
                                 "because the embedded consumer protocol is malformed.") from None
            members.append((m, topics))
        for m in classic.members.values():  # parked requests learn of the new rebalance
            if m.awaiting_join is not None:
                m.awaiting_join.complete(JoinResult(E.rebalance_in_progress, m.member_id))
            if m.awaiting_sync is not None:
                m.awaiting_sync.complete(SyncResult(E.rebalance_in_progress))
        epoch = classic.generation_id
        records = [cr.Record(cr.GROUP_METADATA, gid, None, cr.GroupEpoch(epoch, 0))]
        for m, topics in members:
            member = ConsumerGroupMember(m.member_id, instance_id=m.group_instance_id, client_id=m.client_id,
                                         client_host=m.client_host, subscribed_topic_names=tuple(sorted(topics)),
                                         rebalance_timeout_ms=m.rebalance_timeout_ms,
                                         classic_protocols=tuple(m.protocols),
                                         classic_session_timeout_ms=m.session_timeout_ms, member_epoch=epoch,
                                         previous_member_epoch=epoch,
                                         assigned=self._ids(parse_assignment(m.assignment)))
            records += [cr.Record(cr.MEMBER_METADATA, gid, m.member_id, cr.member_metadata(member)),
                        cr.Record(cr.TARGET_MEMBER, gid, m.member_id, member.assigned),
                        cr.Record(cr.CURRENT_ASSIGNMENT, gid, m.member_id, cr.current_assignment(member))]
        records.append(cr.Record(cr.TARGET_METADATA, gid, None, epoch))
        self.cg.parent.store.write_tombstones(gid, [], True, now_ms)
        del self.cg.parent.groups[gid]
        self.cg.groups[gid] = ConsumerGroup(gid, state_timestamp=now_ms, offsets=classic.offsets,
                                            pending_txn_offsets=classic.pending_txn_offsets)
        self.cg._apply(gid, records, now_ms)
        group = self.cg.groups[gid]
        for m, _ in members:
            self.cg.schedule_session(gid, group.members[m.member_id], now_ms)
        log.info("group %s: the classic group became a consumer group at epoch %d", gid, epoch)
        return group

    # -- JoinGroup, SyncGroup, Heartbeat, LeaveGroup --------------------------------------------

    def join(self, group: ConsumerGroup, member_id: str, instance_id: str | None, protocol_type: str,
             protocols: list[tuple[str, bytes]], session_timeout_ms: int, rebalance_timeout_ms: int,
             client_id: str, client_host: str, require_known_member_id: bool, now_ms: int) -> JoinResult:
        """Kafka: classicGroupJoinToConsumerGroup. Answered at once; the member must then sync
        within its rebalance timeout (the consumer group's sync timeout) or it is fenced."""
        unknown = member_id == ""
        if unknown:
            member_id = new_member_id()
        max_size = self.cg.config.max_size
        if len(group.members) >= max_size and (unknown or member_id not in group.members):
            return JoinResult(E.group_max_size_reached, member_id)
        if not supports_classic_protocols(group, protocol_type, {name for name, _ in protocols}):
            return JoinResult(E.inconsistent_group_protocol, member_id)
        if unknown and require_known_member_id:
            return JoinResult(E.member_id_required, member_id)
        replaced = group.member_by_instance(instance_id) if unknown and instance_id is not None else None
        try:
            version, topics, owned = parse_subscription(protocols[0][1])
            existing = self._joining(group, member_id, instance_id, unknown, now_ms)
            member = self._join(group, existing, instance_id, topics, owned, protocols, session_timeout_ms,
                                rebalance_timeout_ms, client_id, client_host, now_ms)
        except UnknownRecord:
            return JoinResult(E.inconsistent_group_protocol, member_id)
        except KafkaError as e:
            return JoinResult(e.code, member_id)
        joined = JoinResult(E.none, member_id, member.member_epoch, CONSUMER_PROTOCOL_TYPE, protocols[0][0], "")
        if replaced is not None and not replaced.uses_classic_protocol and self._can_downgrade(group):
            self._to_classic(group, now_ms, rebalance=False)  # the last consumer-protocol member was replaced
            return joined
        member.join_deadline = None
        self.cg.schedule_session(group.group_id, member, now_ms)
        member.sync_deadline = self.cg.parent._arm(now_ms + max(rebalance_timeout_ms, 0))
        return joined

    def _joining(self, group: ConsumerGroup, member_id: str, instance_id: str | None, unknown: bool,
                 now_ms: int) -> ConsumerGroupMember:
        """Kafka: getOrMaybeSubscribe{Dynamic,Static}ConsumerGroupMember for a classic member. A
        static member joining without a member id takes the place of the member holding its
        instance id, whichever protocol that one speaks, with its assignment."""
        if instance_id is None:
            existing = group.members.get(member_id)
            if existing is not None and not existing.uses_classic_protocol:
                raise KafkaError(E.unknown_member_id)
            return existing or ConsumerGroupMember(member_id)
        static = group.member_by_instance(instance_id)
        if unknown:
            if static is None:
                return group.members.get(member_id) or ConsumerGroupMember(member_id, instance_id=instance_id)
            log.info("group %s: classic static member %s with instance id %s replaces %s", group.group_id,
                     member_id, instance_id, static.member_id)
            return self.cg.replace_static(group, static, member_id, now_ms)
        if static is None:
            raise KafkaError(E.unknown_member_id)
        if static.member_id != member_id:
            raise KafkaError(E.fenced_instance_id)
        return static

    def _join(self, group: ConsumerGroup, member: ConsumerGroupMember, instance_id, topics, owned, protocols,
              session_timeout_ms, rebalance_timeout_ms, client_id, client_host, now_ms) -> ConsumerGroupMember:
        gid, member_id = group.group_id, member.member_id
        new = member_id not in group.members
        updated = replace(member, instance_id=instance_id, subscribed_topic_names=tuple(sorted(topics)),
                          rebalance_timeout_ms=rebalance_timeout_ms, classic_protocols=tuple(protocols),
                          classic_session_timeout_ms=session_timeout_ms, client_id=client_id, client_host=client_host)
        records = []
        if new or updated.metadata() != member.metadata():
            records.append(cr.Record(cr.MEMBER_METADATA, gid, member_id, cr.member_metadata(updated)))
        bump = group.group_epoch == 0 or new or updated.subscribed_topic_names != member.subscribed_topic_names
        meta = self.cg._subscription_metadata(group, updated)
        group_epoch = self.cg._maybe_bump(group, meta, bump, records)
        target_epoch, target = self.cg._target(group, group_epoch, updated, meta, records)
        subscribed = {meta[t][0] for t in member_topics(updated, self.cg.resolve_regex) if t in meta}
        # a classic member has revoked what its subscription no longer lists as owned
        reconciled = reconcile(updated, target_epoch, target, subscribed, group.partition_epoch, self._ids(owned))
        if new or reconciled.current() != member.current():
            records.append(cr.Record(cr.CURRENT_ASSIGNMENT, gid, member_id, cr.current_assignment(reconciled)))
        self.cg._apply(gid, records, now_ms)
        return self.cg.groups[gid].members[member_id]

    @staticmethod
    def _member(group: ConsumerGroup, member_id: str, instance_id: str | None) -> ConsumerGroupMember:
        """Kafka: validateConsumerGroupMember and throwIfMemberDoesNotUseClassicProtocol; a static
        member is found by its instance id (FENCED_INSTANCE_ID once another member took it)."""
        if instance_id is None:
            member = group.members.get(member_id)
        else:
            member = group.member_by_instance(instance_id)
            if member is not None and member.member_id != member_id:
                raise KafkaError(E.fenced_instance_id)
        if member is None or not member.uses_classic_protocol:
            raise KafkaError(E.unknown_member_id)
        return member

    def _check_rebalance(self, group: ConsumerGroup, member: ConsumerGroupMember, now_ms: int) -> None:
        """Kafka: throwIfRebalanceInProgress, and partitions the member waits for being free now. A
        member told to rejoin must join within its rebalance timeout (the consumer group's join timeout)."""
        try:
            self._rebalancing(group, member)
        except KafkaError:
            if member.join_deadline is None:
                member.join_deadline = self.cg.parent._arm(now_ms + max(member.rebalance_timeout_ms, 0))
            raise

    def _rebalancing(self, group: ConsumerGroup, member: ConsumerGroupMember) -> None:
        if group.group_epoch > member.member_epoch and member.state is not MemberState.UNREVOKED_PARTITIONS:
            raise KafkaError(E.rebalance_in_progress)
        if member.state is MemberState.UNRELEASED_PARTITIONS:
            meta = self.cg._subscription_metadata(group, member)
            subscribed = {meta[t][0] for t in member_topics(member, self.cg.resolve_regex) if t in meta}
            nxt = reconcile(member, group.assignment_epoch, group.target_of(member), subscribed,
                            group.partition_epoch, member.assigned)
            if nxt.assigned != member.assigned:
                raise KafkaError(E.rebalance_in_progress)

    def sync(self, group: ConsumerGroup, member_id: str, instance_id: str | None, generation_id: int,
             protocol_type: str | None, protocol_name: str | None, now_ms: int) -> SyncResult:
        try:
            member = self._member(group, member_id, instance_id)
            name = member.classic_protocols[0][0]
            if (protocol_type is not None and protocol_type != CONSUMER_PROTOCOL_TYPE) or (
                    protocol_name is not None and protocol_name != name):
                raise KafkaError(E.inconsistent_group_protocol)
            if generation_id != member.member_epoch:
                raise KafkaError(E.illegal_generation)
            self._check_rebalance(group, member, now_ms)
        except KafkaError as e:
            return SyncResult(e.code)
        member.sync_deadline = None
        self.cg.schedule_session(group.group_id, member, now_ms)
        version = subscription_version(member.classic_protocols[0][1])
        return SyncResult(E.none, CONSUMER_PROTOCOL_TYPE, name, encode_assignment(version, self._names(member.assigned)))

    def heartbeat(self, group: ConsumerGroup, member_id: str, instance_id: str | None, generation_id: int,
                  now_ms: int) -> ErrorCode:
        try:
            member = self._member(group, member_id, instance_id)
            if generation_id != member.member_epoch:
                raise KafkaError(E.illegal_generation)
            self.cg.schedule_session(group.group_id, member, now_ms)
            self._check_rebalance(group, member, now_ms)
        except KafkaError as e:
            return e.code
        return E.none

    def leave(self, group: ConsumerGroup, members: list[tuple[str, str | None]], now_ms: int) -> list[ErrorCode]:
        """Kafka: classicGroupLeaveToConsumerGroup (KAFKA-18188, 4.0) -- each (member id, instance
        id) names a member of either protocol: by member id, or by instance id (then FENCED_INSTANCE_ID
        if a member id is given that does not hold it); the members found are fenced together, with
        one group epoch bump."""
        codes, leaving = [], {}
        for member_id, instance_id in members:
            member = group.members.get(member_id) if instance_id is None else group.member_by_instance(instance_id)
            if member is None:
                codes.append(E.unknown_member_id)
            elif instance_id is not None and member_id != "" and member.member_id != member_id:
                codes.append(E.fenced_instance_id)
            else:
                codes.append(E.none)
                leaving[member.member_id] = member
        if leaving:
            self.cg.fence_members(group, list(leaving.values()), now_ms, "left the group (LeaveGroup)")
        return codes

    # -- downgrade ------------------------------------------------------------------------------

    def maybe_downgrade(self, group: ConsumerGroup, left: list[ConsumerGroupMember], now_ms: int) -> None:
        """Kafka: validateOnlineDowngradeWithFencedMembers + convertToClassicGroup, then a rebalance.
        Whichever protocol the members that left spoke: classic members too many for
        ``group.max.size`` when the last consumer-protocol member left turn the group classic once
        enough of them have left too."""
        if self._can_downgrade(group):
            self._to_classic(group, now_ms, rebalance=True)  # a member that left had partitions

    def check_downgrade(self, group: ConsumerGroup, leaving: list[ConsumerGroupMember], now_ms: int) -> None:
        """Before ``leaving`` are fenced: raise the error a downgrade their leaving brings would fail
        with when the classic group's metadata cannot fit the offsets partition. Kafka writes the
        conversion in place of the fence, in one operation, so a record too large fails it whole
        and the members stay; checked here before anything is written."""
        ids = frozenset(m.member_id for m in leaving)
        if not self._can_downgrade(group, ids):
            return
        classic, assignments = self._classic_of(group, now_ms, ids)
        self.cg.parent.store.check_fits(classic, assignments)

    def _can_downgrade(self, group: ConsumerGroup, leaving: frozenset[str] = frozenset()) -> bool:
        """Every member left (but ``leaving``) uses the classic protocol, the policy allows it, and
        they fit in a classic group (``group.max.size``)."""
        members = [m for m in group.members.values() if m.member_id not in leaving]
        if (not members or self.cg.config.migration_policy not in DOWNGRADE_POLICIES
                or not all(m.uses_classic_protocol for m in members)):
            return False
        if len(members) > self.cg.config.classic_max_size:
            log.info("group %s: cannot become a classic group, its %d members exceed group.max.size %d",
                     group.group_id, len(members), self.cg.config.classic_max_size)
            return False
        return True

    def _classic_of(self, group: ConsumerGroup, now_ms: int, leaving: frozenset[str] = frozenset()):
        """The classic group ``group`` becomes (without ``leaving``), and its members' assignments."""
        gid = group.group_id
        classic = GroupMetadata(gid, state=GroupState.STABLE, state_timestamp=now_ms,
                                protocol_type=CONSUMER_PROTOCOL_TYPE, generation_id=group.group_epoch,
                                offsets=group.offsets, pending_txn_offsets=group.pending_txn_offsets)
        assignments = {}
        for m in group.members.values():
            if m.member_id in leaving:
                continue
            session = m.classic_session_timeout_ms or self.cg.session_timeout_ms(gid)
            member = MemberMetadata(m.member_id, m.instance_id, m.client_id, m.client_host,
                                    max(m.rebalance_timeout_ms, 0), session, CONSUMER_PROTOCOL_TYPE,
                                    list(m.classic_protocols))
            classic.add(member)
            version = subscription_version(m.classic_protocols[0][1])
            member.assignment = assignments[m.member_id] = encode_assignment(version, self._names(m.assigned))
        classic.protocol_name = classic.select_protocol()
        return classic, assignments

    def _to_classic(self, group: ConsumerGroup, now_ms: int, rebalance: bool) -> None:
        """Kafka: convertToClassicGroup -- a stable classic group at generation = group epoch, each
        member with its current assignment."""
        gid = group.group_id
        classic, assignments = self._classic_of(group, now_ms)
        self.cg.parent.store.check_fits(classic, assignments)  # before the consumer group's records go
        records = [r for mid in group.members for r in self.cg._tombstones(gid, mid)]
        records += [cr.Record(cr.TARGET_METADATA, gid, None, None), cr.Record(cr.GROUP_METADATA, gid, None, None)]
        self.cg._apply(gid, records, now_ms)
        parent = self.cg.parent
        parent.store.store_group(classic, assignments, now_ms)
        parent.groups[gid] = classic
        for m in classic.members.values():
            parent._schedule_heartbeat(m, now_ms)
        if rebalance:
            parent._prepare_rebalance(classic, now_ms)
        log.info("group %s: the consumer group became a classic group at generation %d", gid, classic.generation_id)
