"""The consumer group protocol (KIP-848; Kafka 4: ``GroupMetadataManager.consumerGroupHeartbeat``,
``consumerGroupLeave``, the session and rebalance timeouts).

One ConsumerGroupHeartbeat does, in order: find or create the group and the member (checking the
member epoch: FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID, static members' FENCED_INSTANCE_ID and
UNRELEASED_INSTANCE_ID); record what changed of the member; bump the group epoch when a
subscription or the partitions of a subscribed topic changed; recompute the target assignment with
the server-side assignor when the group epoch passed the assignment epoch; move the member one
step towards its target (:mod:`.consumer_reconcile`). Each step yields records of
``__consumer_offsets`` (:mod:`.consumer_records`), written before they are applied in memory by
replaying them, the one path both live changes and start-up take.

Synchronous and clock-free like the classic coordinator: ``now_ms`` comes in, :meth:`tick`
expires sessions (``group.consumer.session.timeout.ms``) and rebalance timeouts (a member that
does not revoke its partitions in time is fenced) and returns the next deadline.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING, NamedTuple

import re2

from ... import regexes
from ...errors import ErrorCode, KafkaError
from . import consumer_records as cr
from .consumer_classic import ClassicMembers
from .consumer_assignors import ASSIGNORS, AssignorError, MemberSpec, homogeneous_subscriptions, kafka_order
from .consumer_config import ConsumerGroupConfig, consumer_group_config  # noqa: F401 (re-exported)
from .consumer_group import (
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    Assignment,
    ConsumerGroup,
    ConsumerGroupMember,
    MemberState,
    member_topics,
    new_member_id,
)
from .consumer_reconcile import Owned, reconcile
from .state import GroupMetadata
from .topic_hash import TopicHashes, TopicMeta

if TYPE_CHECKING:
    from .coordinator import GroupCoordinator

log = logging.getLogger(__name__)
E = ErrorCode


class HeartbeatRequest(NamedTuple):
    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: tuple[str, ...] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    owned: Owned = None
    client_id: str = ""
    client_host: str = ""
    version: int = 1


class GroupDescription(NamedTuple):
    state: str
    group_epoch: int
    assignment_epoch: int
    assignor: str
    members: tuple[tuple[ConsumerGroupMember, Assignment], ...]  # (member, its target assignment)


class HeartbeatResult(NamedTuple):
    error: ErrorCode
    message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: Assignment | None = None


# What one compiled subscription regex may hold (its programs and its DFA cache). With RE2's
# default of 8 MiB a 200-byte regex (".{1000}" 29 times) took 2 MiB and 50 ms to compile, and the
# cache below held a thousand of them for whoever sent them; a regex over the budget is refused
# as INVALID_REGULAR_EXPRESSION ("pattern too large"), where RE2/J has no such bound. A
# 2,000-topic alternation needs 429 instructions: 1 MiB holds about 60,000. The cache keeps
# compiled regexes within a byte budget (shim.regexes).
# RE2, as Kafka's RE2/J: linear-time matching, so no subscription can stall the broker
compile_regex = regexes.cache()


def _new_regex(group: ConsumerGroup, member: ConsumerGroupMember, updated: ConsumerGroupMember) -> str | None:
    """The regex this heartbeat brings that no other member subscribes to (Kafka:
    maybeUpdateRegularExpressions). Kafka resolves such a regex in the background and only then bumps
    the group epoch, so the heartbeat that brings it is answered without its topics; one that
    another member subscribes to is resolved already. A regex its last member drops is forgotten
    (Kafka writes its tombstone), so subscribing to it again waits for a new resolution."""
    regex = updated.subscribed_topic_regex
    if not regex or regex == member.subscribed_topic_regex and member.member_id in group.members:
        return None
    others = (m for mid, m in group.members.items() if mid != updated.member_id)
    return None if any(m.subscribed_topic_regex == regex for m in others) else regex


def _same_subscription(member: ConsumerGroupMember | None, updated: ConsumerGroupMember) -> bool:
    return member is not None and (member.subscribed_topic_names, member.subscribed_topic_regex) == (
        updated.subscribed_topic_names, updated.subscribed_topic_regex)


def _check_request(req: HeartbeatRequest, assignors: tuple[str, ...]) -> None:
    """Kafka: throwIfConsumerGroupHeartbeatRequestIsInvalid."""
    def empty(value: str | None, message: str) -> None:
        if value is not None and value.strip() == "":
            raise KafkaError(E.invalid_request, message)
    if req.version >= 1 or req.member_epoch > 0 or req.member_epoch == LEAVE_GROUP_MEMBER_EPOCH:
        empty(req.member_id, "MemberId can't be empty.")
    empty(req.group_id, "GroupId can't be empty.")
    empty(req.instance_id, "InstanceId can't be empty.")
    empty(req.rack_id, "RackId can't be empty.")
    if req.member_epoch == 0:
        if req.rebalance_timeout_ms == -1:
            raise KafkaError(E.invalid_request, "RebalanceTimeoutMs must be provided in first request.")
        if req.owned is None or any(req.owned.values()):
            raise KafkaError(E.invalid_request, "TopicPartitions must be empty when (re-)joining.")
        if req.subscribed_topic_names is None and req.subscribed_topic_regex is None:
            raise KafkaError(E.invalid_request, "Either SubscribedTopicNames or SubscribedTopicRegex must be "
                             "non-null when (re-)joining.")
    elif req.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        if req.instance_id is None:
            raise KafkaError(E.invalid_request, "InstanceId can't be null.")
    elif req.member_epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        raise KafkaError(E.invalid_request, "MemberEpoch is invalid.")
    if req.server_assignor is not None and req.server_assignor not in assignors:
        raise KafkaError(E.unsupported_assignor, f"ServerAssignor {req.server_assignor} is not supported. "
                         f"Supported assignors: {', '.join(assignors)}.")
    if req.subscribed_topic_regex:
        try:
            compile_regex(req.subscribed_topic_regex)
        except re2.error as e:
            reason = e.args[0].decode(errors="replace") if e.args and isinstance(e.args[0], bytes) else str(e)
            raise KafkaError(E.invalid_regular_expression, f"SubscribedTopicRegex `{req.subscribed_topic_regex}` "
                             f"is not a valid regular expression: {reason}.") from None


def _check_epoch(member: ConsumerGroupMember, received: int, owned: Owned) -> None:
    """Kafka: throwIfConsumerGroupMemberEpochIsInvalid -- a member one epoch behind, owning no more
    than it is assigned, lost the answer that bumped it and is let through."""
    if received > member.member_epoch:
        raise KafkaError(E.fenced_member_epoch, f"The consumer group member has a greater member epoch "
                         f"({received}) than the one known by the group coordinator ({member.member_epoch}). "
                         "The member must abandon all its partitions and rejoin.")
    if received < member.member_epoch:
        subset = owned is not None and all(t in member.assigned and ps <= member.assigned[t]
                                           for t, ps in owned.items())
        if received != member.previous_member_epoch or not subset:
            raise KafkaError(E.fenced_member_epoch, f"The consumer group member has a smaller member epoch "
                             f"({received}) than the one known by the group coordinator ({member.member_epoch}). "
                             "The member must abandon all its partitions and rejoin.")


class ConsumerGroups:
    """The consumer-group half of the group coordinator; :class:`GroupCoordinator` owns one."""

    def __init__(self, parent: "GroupCoordinator", config: ConsumerGroupConfig, group_configs=None) -> None:
        self.parent = parent
        self.config = config
        self.group_configs = group_configs  # shim.configs.group.GroupConfigs: each group's own settings
        self.groups: dict[str, ConsumerGroup] = {}
        self.classic = ClassicMembers(self)
        self.topic_hashes = TopicHashes()  # each topic's part of the metadata hash, kept (shared with share groups)

    def session_timeout_ms(self, group_id: str) -> int:
        """Kafka: consumerGroupSessionTimeoutMs -- the group's ``consumer.session.timeout.ms``, else the broker's."""
        if self.group_configs is None:
            return self.config.session_timeout_ms
        return self.group_configs.int(group_id, "consumer.session.timeout.ms", self.config.session_timeout_ms)

    def heartbeat_interval_ms(self, group_id: str) -> int:
        """Kafka: consumerGroupHeartbeatIntervalMs -- the group's ``consumer.heartbeat.interval.ms``, else the broker's."""
        if self.group_configs is None:
            return self.config.heartbeat_interval_ms
        return self.group_configs.int(group_id, "consumer.heartbeat.interval.ms", self.config.heartbeat_interval_ms)

    @property
    def topics(self):
        return self.parent.store.logs.topics

    # -- writing ----------------------------------------------------------------------------

    def _apply(self, group_id: str, records: list[cr.Record], now_ms: int) -> None:
        """Persist the records, then replay them: the one write path of consumer groups."""
        if not records:
            return
        self.parent.store.append_records(group_id, [(cr.encode_key(r), cr.encode_value(r)) for r in records], now_ms)
        for r in records:
            cr.replay(self.groups, r, now_ms)

    # -- ConsumerGroupHeartbeat (68) ----------------------------------------------------------

    def heartbeat(self, req: HeartbeatRequest, now_ms: int) -> HeartbeatResult:
        try:
            _check_request(req, self.config.assignors)
            if req.member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
                return self._leave(req, now_ms)
            return self._heartbeat(req, now_ms)
        except KafkaError as e:
            return HeartbeatResult(e.code, e.message)

    def _heartbeat(self, req: HeartbeatRequest, now_ms: int) -> HeartbeatResult:
        joining = req.member_epoch == 0
        group = self._group(req.group_id, create=joining, now_ms=now_ms)
        member_id = req.member_id or new_member_id()
        if len(group.members) >= self.config.max_size and member_id not in group.members:
            raise KafkaError(E.group_max_size_reached, "The consumer group has reached its maximum capacity of "
                             f"{self.config.max_size} members.")
        if req.instance_id is None:
            member = self._dynamic_member(group, member_id, req)
        else:
            member = self._static_member(group, member_id, req, now_ms)
        updated = self._updated(member, req)
        records: list[cr.Record] = []
        if member.member_id not in group.members or updated.metadata() != member.metadata():
            records.append(cr.Record(cr.MEMBER_METADATA, group.group_id, member_id, cr.member_metadata(updated)))
        bump = group.group_epoch == 0 or member.member_id not in group.members or (
            (updated.subscribed_topic_names, updated.subscribed_topic_regex)
            != (member.subscribed_topic_names, member.subscribed_topic_regex))
        unresolved = _new_regex(group, member, updated)
        resolve = self._resolver(unresolved)
        meta = self._subscription_metadata(group, updated, resolve=resolve)
        group_epoch = self._maybe_bump(group, meta, bump, records)
        target_epoch, target = self._target(group, group_epoch, updated, meta, records, resolve)
        subscribed = {meta[t][0] for t in member_topics(updated, resolve) if t in meta}
        reconciled = reconcile(updated, target_epoch, target, subscribed, group.partition_epoch, req.owned)
        if member.member_id not in group.members or reconciled.current() != member.current():
            records.append(cr.Record(cr.CURRENT_ASSIGNMENT, group.group_id, member_id,
                                     cr.current_assignment(reconciled)))
        changed = reconciled.assigned != member.assigned
        self._apply(group.group_id, records, now_ms)
        group = self.groups[group.group_id]
        if unresolved is not None:
            self._resolved(group, unresolved, now_ms)
        live = group.members[member_id]
        self._schedule(group, live, now_ms)
        full = joining or (req.rebalance_timeout_ms != -1 and req.subscribed_topic_names is not None
                           and req.owned is not None)
        return HeartbeatResult(E.none, None, member_id, live.member_epoch, self.heartbeat_interval_ms(group.group_id),
                               live.assigned if full or changed else None)

    def _group(self, group_id: str, create: bool, now_ms: int) -> ConsumerGroup:
        """Kafka: getOrMaybeCreateConsumerGroup (an empty classic group of the name is replaced)."""
        group = self.groups.get(group_id)
        if group is not None:
            return group
        classic = self.parent.groups.get(group_id)
        if classic is not None:
            if create and not classic.members:
                return self._from_empty_classic(classic, now_ms)
            if create:
                return self.classic.upgrade(classic, now_ms)
            raise KafkaError(E.group_id_not_found, f"Group {group_id} is not a consumer group.")
        if not create:
            raise KafkaError(E.group_id_not_found, f"Consumer group {group_id} not found.")
        return ConsumerGroup(group_id, state_timestamp=now_ms)

    def _from_empty_classic(self, classic, now_ms: int) -> ConsumerGroup:
        """Kafka: maybeDeleteEmptyClassicGroup -- the classic group's metadata goes, its offsets stay."""
        if classic.generation_id > 0:
            self.parent.store.write_tombstones(classic.group_id, [], True, now_ms)
        del self.parent.groups[classic.group_id]
        group = ConsumerGroup(classic.group_id, state_timestamp=now_ms, offsets=classic.offsets,
                              pending_txn_offsets=classic.pending_txn_offsets)
        self.groups[classic.group_id] = group
        log.info("group %s: the empty classic group became a consumer group", classic.group_id)
        return group

    @staticmethod
    def _dynamic_member(group: ConsumerGroup, member_id: str, req: HeartbeatRequest) -> ConsumerGroupMember:
        member = group.members.get(member_id)
        if member is None:
            if req.member_epoch != 0:
                raise KafkaError(E.unknown_member_id, f"Member {member_id} is not a member of group "
                                 f"{group.group_id}.")
            member = ConsumerGroupMember(member_id)
        _check_epoch(member, req.member_epoch, req.owned)
        return member

    def _static_member(self, group: ConsumerGroup, member_id: str, req: HeartbeatRequest,
                       now_ms: int) -> ConsumerGroupMember:
        """Kafka: getOrMaybeSubscribeStaticConsumerGroupMember."""
        existing = group.member_by_instance(req.instance_id)
        if req.member_epoch == 0:
            if existing is None:
                member = group.members.get(member_id) or ConsumerGroupMember(member_id, instance_id=req.instance_id)
                _check_epoch(member, 0, req.owned)
                return member
            if existing.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
                raise KafkaError(E.unreleased_instance_id, f"Static member {existing.member_id} with instance id "
                                 f"{req.instance_id} is not released yet; {member_id} cannot take its place.")
            return self.replace_static(group, existing, member_id, now_ms)
        if existing is None:
            raise KafkaError(E.unknown_member_id, f"Instance id {req.instance_id} is unknown.")
        if existing.member_id != member_id:
            raise KafkaError(E.fenced_instance_id, f"Static member {member_id} with instance id "
                             f"{req.instance_id} was fenced by member {existing.member_id}.")
        _check_epoch(existing, req.member_epoch, req.owned)
        return existing

    def replace_static(self, group: ConsumerGroup, old: ConsumerGroupMember, member_id: str,
                       now_ms: int) -> ConsumerGroupMember:
        """Kafka: replaceMember -- a static member that left (epoch -2), or any whose instance id a
        classic member joins with, is replaced by a new member id that keeps its assignment."""
        gid = group.group_id
        new = replace(old, member_id=member_id, member_epoch=0, previous_member_epoch=0, state=MemberState.STABLE,
                      pending_revocation={}, session_deadline=None, rebalance_deadline=None, join_deadline=None,
                      sync_deadline=None)
        records = self._tombstones(gid, old.member_id) + [
            cr.Record(cr.MEMBER_METADATA, gid, member_id, cr.member_metadata(new)),
            cr.Record(cr.TARGET_MEMBER, gid, member_id, group.target_of(old)),
            cr.Record(cr.CURRENT_ASSIGNMENT, gid, member_id, cr.current_assignment(new)),
        ]
        self._apply(gid, records, now_ms)
        return group.members[member_id]

    @staticmethod
    def _tombstones(group_id: str, member_id: str) -> list[cr.Record]:
        """Kafka: the order matters -- assignment, then target, then the member."""
        return [cr.Record(cr.CURRENT_ASSIGNMENT, group_id, member_id, None),
                cr.Record(cr.TARGET_MEMBER, group_id, member_id, None),
                cr.Record(cr.MEMBER_METADATA, group_id, member_id, None)]

    @staticmethod
    def _updated(member: ConsumerGroupMember, req: HeartbeatRequest) -> ConsumerGroupMember:
        """The member with what the request changes; absent fields keep their values. A member
        that joined with the classic protocol and now heartbeats with the consumer protocol drops
        its classic metadata and is a consumer-protocol member from then on (Kafka:
        consumerGroupHeartbeat sets ClassicMemberMetadata to null). The subscribed names are a set, as Kafka's ConsumerGroupMember keeps them: a name the request
        repeats is recorded once (51 copies of a 32,767-character name made a member record too
        large for the offsets partition, UNKNOWN_SERVER_ERROR where Kafka accepts the heartbeat)."""
        def keep(new, old):
            return old if new is None else new
        return replace(
            member, instance_id=keep(req.instance_id, member.instance_id), rack_id=keep(req.rack_id, member.rack_id),
            rebalance_timeout_ms=member.rebalance_timeout_ms if req.rebalance_timeout_ms == -1
            else req.rebalance_timeout_ms, server_assignor=keep(req.server_assignor, member.server_assignor),
            subscribed_topic_names=tuple(sorted(set(keep(req.subscribed_topic_names,
                                                            member.subscribed_topic_names)))),
            subscribed_topic_regex=keep(req.subscribed_topic_regex, member.subscribed_topic_regex),
            client_id=req.client_id, client_host=req.client_host, classic_protocols=None,
            classic_session_timeout_ms=None)

    # -- subscriptions, group epoch and target assignment -----------------------------------

    def _resolver(self, unresolved: str | None):
        """resolve_regex, but ``unresolved`` (a regex no member subscribed before this heartbeat)
        matches nothing yet."""
        if unresolved is None:
            return self.resolve_regex
        return lambda regex: set() if regex == unresolved else self.resolve_regex(regex)

    def _resolved(self, group: ConsumerGroup, regex: str, now_ms: int) -> None:
        """Kafka: handleRegularExpressionsResult -- the regex a member brought is resolved after the
        heartbeat that brought it, and the group epoch moves on, so that the next heartbeat assigns
        what it matches."""
        records: list[cr.Record] = []
        self._maybe_bump(group, self._subscription_metadata(group, None), True, records)
        self._apply(group.group_id, records, now_ms)
        log.info("group %s: regex %r resolved", group.group_id, regex)

    def resolve_regex(self, regex: str) -> set[str]:
        """Topics whose whole name the regex matches (Kafka: RE2/J's Pattern.matcher(topic).matches())."""
        try:
            pattern = compile_regex(regex)
        except re2.error:
            return set()
        return {name for name in self.topics if pattern.fullmatch(name)}

    def _subscription_metadata(self, group: ConsumerGroup, updated: ConsumerGroupMember | None,
                               removed: frozenset[str] = frozenset(), resolve=None) -> TopicMeta:
        """Every subscribed topic that exists: (topic id, partitions) by name. A heartbeat that changes
        no subscription while the topics stay as they were gets the group's last answer: a member
        subscribes to as many names as its request holds, and taking the union of every member's
        on each heartbeat cost 0.1-0.3 s of the loop per heartbeat once a few members named 60,000
        (Kafka computes it only when a subscription or the topics changed: GroupMetadataManager's
        bumpGroupEpoch and hasMetadataExpired). Every subscription change moves the group epoch on."""
        steady = not removed and resolve in (None, self.resolve_regex) and (updated is None or _same_subscription(
            group.members.get(updated.member_id), updated))
        key = (group.group_epoch, self.parent.store.logs.topics_version)
        if steady and group.subscribed_cache is not None and group.subscribed_cache[0] == key:
            return group.subscribed_cache[1]
        resolve = resolve or self.resolve_regex
        names: set[str] = set()
        for m in group.members.values():
            if m.member_id not in removed and (updated is None or m.member_id != updated.member_id):
                names |= member_topics(m, resolve)
        if updated is not None:
            names |= member_topics(updated, resolve)
        out = {}
        for name in names:
            info = self.topics.get(name)
            if info is not None:
                out[name] = (info.topic_id, info.partitions)
        if steady:
            group.subscribed_cache = (key, out)
        return out

    def _maybe_bump(self, group: ConsumerGroup, meta: TopicMeta, bump: bool, records: list[cr.Record]) -> int:
        h = self.topic_hashes.group_hash(meta)
        if bump or h != group.metadata_hash:
            epoch = group.group_epoch + 1
            records.append(cr.Record(cr.GROUP_METADATA, group.group_id, None, cr.GroupEpoch(epoch, h)))
            log.info("group %s: epoch bumped to %d", group.group_id, epoch)
            return epoch
        return group.group_epoch

    def _target(self, group: ConsumerGroup, group_epoch: int, updated: ConsumerGroupMember, meta: TopicMeta,
                records: list[cr.Record], resolve=None) -> tuple[int, Assignment]:
        """Kafka: updateTargetAssignment -- run the assignor when the group epoch moved on."""
        if group_epoch <= group.assignment_epoch:
            return group.assignment_epoch, group.target.get(updated.member_id, {})
        resolve = resolve or self.resolve_regex
        members = dict(group.members)
        members[updated.member_id] = updated
        specs = kafka_order({mid: MemberSpec(
            frozenset(meta[t][0] for t in member_topics(m, resolve) if t in meta),
            group.target.get(mid, {}), m.instance_id, m.rack_id) for mid, m in members.items()})
        assignor = ASSIGNORS[self._assignor_name(members.values())]
        homogeneous = homogeneous_subscriptions((m.subscribed_topic_names, m.subscribed_topic_regex)
                                                for m in members.values())
        try:
            new = assignor(specs, {tid: n for tid, n in meta.values()}, homogeneous=homogeneous)
        except AssignorError as e:  # Kafka: updateTargetAssignment turns it into UNKNOWN_SERVER_ERROR
            raise KafkaError(ErrorCode.unknown_server_error, f"Failed to compute a new target assignment for "
                             f"epoch {group_epoch}: {e}.") from e
        for mid in specs:  # Kafka: a record for every member whose target changed, new members too
            assignment = new.get(mid, {})
            if group.target.get(mid) != assignment:
                records.append(cr.Record(cr.TARGET_MEMBER, group.group_id, mid, assignment))
        records.append(cr.Record(cr.TARGET_METADATA, group.group_id, None, group_epoch))
        return group_epoch, new.get(updated.member_id, {})

    def _assignor_name(self, members) -> str:
        """Kafka: the assignor most members ask for, else the first configured."""
        votes: dict[str, int] = {}
        for m in members:
            if m.server_assignor is not None:
                votes[m.server_assignor] = votes.get(m.server_assignor, 0) + 1
        return max(votes, key=lambda a: (votes[a], a)) if votes else self.config.assignors[0]

    # -- ConsumerGroupDescribe (69) ----------------------------------------------------------

    def describe(self, group_id: str) -> GroupDescription:
        """Kafka: consumerGroupDescribe; GROUP_ID_NOT_FOUND for a missing or classic group."""
        group = self.groups.get(group_id)
        if group is None:
            if group_id in self.parent.groups:
                raise KafkaError(E.group_id_not_found, f"Group {group_id} is not a consumer group.")
            raise KafkaError(E.group_id_not_found, f"Group {group_id} not found.")
        return GroupDescription(group.state.value, group.group_epoch, group.assignment_epoch,
                                self._assignor_name(group.members.values()),
                                tuple((m, group.target_of(m)) for m in group.members.values()))

    # -- leaving and fencing ----------------------------------------------------------------

    def _leave(self, req: HeartbeatRequest, now_ms: int) -> HeartbeatResult:
        """Kafka: consumerGroupLeave. A static member leaving with -2 keeps its place (and
        partitions) for its session timeout, so that it can come back without a rebalance."""
        group = self._group(req.group_id, create=False, now_ms=now_ms)
        if req.instance_id is None:
            member = group.members.get(req.member_id)
            if member is None:
                raise KafkaError(E.unknown_member_id, f"Member {req.member_id} is not a member of group "
                                 f"{group.group_id}.")
        else:
            member = group.member_by_instance(req.instance_id)
            if member is None:
                raise KafkaError(E.unknown_member_id, f"Instance id {req.instance_id} is unknown.")
            if member.member_id != req.member_id:
                raise KafkaError(E.fenced_instance_id, f"Static member {req.member_id} with instance id "
                                 f"{req.instance_id} was fenced by member {member.member_id}.")
            if req.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
                left = replace(member, member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH, pending_revocation={})
                self._apply(group.group_id, [cr.Record(cr.CURRENT_ASSIGNMENT, group.group_id, member.member_id,
                                                       cr.current_assignment(left))], now_ms)
                group.members[member.member_id].rebalance_deadline = None
                log.info("static member %s of group %s left (epoch -2)", member.member_id, group.group_id)
                return HeartbeatResult(E.none, None, req.member_id, req.member_epoch)
        self.fence(group, member, now_ms, "left the group")
        return HeartbeatResult(E.none, None, req.member_id, req.member_epoch)

    def delete(self, group: ConsumerGroup, now_ms: int) -> None:
        """DeleteGroups of an empty group (Kafka: ConsumerGroup.createGroupTombstoneRecords)."""
        gid = group.group_id
        self._apply(gid, [cr.Record(cr.TARGET_METADATA, gid, None, None),
                          cr.Record(cr.GROUP_METADATA, gid, None, None)], now_ms)

    def to_empty_classic(self, group: ConsumerGroup, now_ms: int) -> None:
        """Kafka: maybeDeleteEmptyConsumerGroup -- a classic member joins an empty consumer group:
        the group's records go, its offsets stay with the classic group that replaces it."""
        self.delete(group, now_ms)
        self.parent.groups[group.group_id] = GroupMetadata(group.group_id, state_timestamp=now_ms,
                                                           offsets=group.offsets,
                                                           pending_txn_offsets=group.pending_txn_offsets)

    def fence(self, group: ConsumerGroup, member: ConsumerGroupMember, now_ms: int, why: str) -> None:
        """Kafka: consumerGroupFenceMember -- remove the member and bump the group epoch."""
        self.fence_members(group, [member], now_ms, why)

    def fence_members(self, group: ConsumerGroup, members: list[ConsumerGroupMember], now_ms: int, why: str) -> None:
        """Kafka: consumerGroupFenceMembers -- remove the members and bump the group epoch once."""
        records = [r for m in members for r in self._tombstones(group.group_id, m.member_id)]
        meta = self._subscription_metadata(group, None, removed=frozenset(m.member_id for m in members))
        epoch = group.group_epoch + 1
        h = self.topic_hashes.group_hash(meta)
        records.append(cr.Record(cr.GROUP_METADATA, group.group_id, None, cr.GroupEpoch(epoch, h)))
        self.classic.check_downgrade(group, members, now_ms)
        self._apply(group.group_id, records, now_ms)
        log.info("members %s of group %s %s; group epoch %d", [m.member_id for m in members], group.group_id, why, epoch)
        self.classic.maybe_downgrade(group, members, now_ms)

    # -- timers -----------------------------------------------------------------------------

    def schedule_session(self, group_id: str, member: ConsumerGroupMember, now_ms: int) -> None:
        """Kafka: scheduleConsumerGroupSessionTimeout -- a classic member's own session timeout, else the group's."""
        timeout = member.classic_session_timeout_ms or self.session_timeout_ms(group_id)
        member.session_deadline = self.parent._arm(now_ms + timeout)

    def _schedule(self, group: ConsumerGroup, member: ConsumerGroupMember, now_ms: int) -> None:
        self.schedule_session(group.group_id, member, now_ms)
        if member.state is MemberState.UNREVOKED_PARTITIONS:
            if member.rebalance_deadline is None:
                member.rebalance_deadline = self.parent._arm(now_ms + max(member.rebalance_timeout_ms, 0))
        else:
            member.rebalance_deadline = None

    def tick(self, now_ms: int) -> int | None:
        """Fence members whose session or rebalance timeout passed; the earliest deadline left."""
        earliest = None
        for group in list(self.groups.values()):
            for member in list(group.members.values()):
                if self.groups.get(group.group_id) is not group or member.member_id not in group.members:
                    continue  # fenced with another, or the group became a classic group meanwhile
                why = next((why for why, d in member.deadlines() if d is not None and now_ms >= d), None)
                if why is not None:
                    self._expire(group, member, now_ms, why)
                else:
                    for _, d in member.deadlines():
                        if d is not None and (earliest is None or d < earliest):
                            earliest = d
        return earliest

    def _expire(self, group: ConsumerGroup, member: ConsumerGroupMember, now_ms: int, why: str) -> None:
        try:
            self.fence(group, member, now_ms, why)
        except KafkaError as e:  # the write failed: try again at the next tick
            log.warning("could not fence member %s of group %s: %s", member.member_id, group.group_id, e)
            member.session_deadline = now_ms + 1000
