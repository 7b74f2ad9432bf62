"""Online upgrade and downgrade between classic and consumer groups (KIP-848 migration, Kafka 4's
group.consumer.migration.policy), with classic members inside a consumer group, through the
coordinator with the fake clock."""

from __future__ import annotations

import pytest

from group_helpers import SESSION, T0, TOPIC, join, subscription, sync
from shim.coordinators.group.consumer_classic import encode_assignment, parse_assignment
from shim.coordinators.group.consumer_coordinator import ConsumerGroupConfig, HeartbeatRequest
from shim.coordinators.group.state import GroupState
from shim.errors import ErrorCode as E

PROTOCOLS = [("range", subscription(TOPIC))]


def classic_group(gc):
    """Two classic members, range-assigned 0-2 and 3-5; returns (ids, generation)."""
    gc.initial_rebalance_delay_ms = 3_000
    a, b = join(gc, protocols=PROTOCOLS), join(gc, protocols=PROTOCOLS)
    gc.tick(T0 + 3_000)
    gc.tick(T0 + 6_000)
    ra, rb = a.result, b.result
    assert ra.error == rb.error == E.none
    ids = [ra.member_id, rb.member_id]
    assignments = {ids[0]: encode_assignment(0, {TOPIC: frozenset({0, 1, 2})}),
                   ids[1]: encode_assignment(0, {TOPIC: frozenset({3, 4, 5})})}
    leader = ra.member_id if ra.leader == ra.member_id else rb.member_id
    for m in ids:
        if m != leader:
            sync(gc, m, ra.generation_id)
    sync(gc, leader, ra.generation_id, assignments)
    assert gc.groups["g"].state is GroupState.STABLE
    return ids, ra.generation_id


def consumer_join(gc, member_id="new", now=T0):
    return gc.consumer.heartbeat(HeartbeatRequest("g", member_id, 0, rebalance_timeout_ms=30_000,
                                                  subscribed_topic_names=(TOPIC,), owned={}), now)


def rejoin_and_sync(gc, member_id, now=T0):
    """A classic member rejoins (eager: it owns nothing now) and syncs; its partitions."""
    r = join(gc, member_id=member_id, protocols=PROTOCOLS, now=now).result
    assert r.error == E.none, r
    s = sync(gc, member_id, r.generation_id, now=now).result
    assert s.error == E.none, s
    return r.generation_id, parse_assignment(s.assignment).get(TOPIC, set())


def test_a_consumer_member_upgrades_a_classic_group_and_the_classic_members_follow(gc):
    (m1, m2), generation = classic_group(gc)
    r = consumer_join(gc)
    assert r.error == E.none and "g" in gc.consumer.groups and "g" not in gc.groups
    group = gc.consumer.groups["g"]
    assert group.group_epoch == generation + 1 and group.members[m1].member_epoch == generation
    assert gc.heartbeat("g", m1, None, generation, T0) == E.rebalance_in_progress
    owned = {}
    for _ in range(3):
        for m in (m1, m2):
            owned[m] = rejoin_and_sync(gc, m)[1]
        r = gc.consumer.heartbeat(HeartbeatRequest("g", "new", r.member_epoch, owned=dict(r.assignment or {})), T0)
    new = {p for ps in group.members["new"].assigned.values() for p in ps}
    assert sorted(map(len, (owned[m1], owned[m2], new))) == [2, 2, 2]
    assert owned[m1] | owned[m2] | new == set(range(6))
    assert gc.heartbeat("g", m1, None, group.members[m1].member_epoch, T0) == E.none
    listed = {g: kind for g, _, _, kind in gc.list_groups()}
    assert listed == {"g": "consumer"}


def test_the_last_consumer_member_leaving_downgrades_the_group(nodes, node, gc):
    (m1, m2), _ = classic_group(gc)
    r = consumer_join(gc)
    for m in (m1, m2):
        rejoin_and_sync(gc, m)
    epoch = gc.consumer.groups["g"].group_epoch
    assert gc.consumer.heartbeat(HeartbeatRequest("g", "new", r.member_epoch, owned={}), T0).error == E.none
    gc.consumer.heartbeat(HeartbeatRequest("g", "new", -1), T0)
    assert "g" not in gc.consumer.groups
    classic = gc.groups["g"]
    assert classic.state is GroupState.PREPARING_REBALANCE and set(classic.members) == {m1, m2}
    assert classic.generation_id == epoch + 1  # the leave bumped the epoch first
    for m in (m1, m2):
        join(gc, member_id=m, protocols=PROTOCOLS)
    assert classic.state is GroupState.COMPLETING_REBALANCE
    nodes.crash(node)
    gc = nodes().groups
    assert "g" not in gc.consumer.groups and set(gc.groups["g"].members) == {m1, m2}


@pytest.mark.parametrize("policy", ["disabled", "downgrade"])
def test_the_migration_policy_can_refuse_the_upgrade(nodes, policy):
    node = nodes()
    node.logs.create_topic(TOPIC, 6)
    node.groups.consumer.config = ConsumerGroupConfig(migration_policy=policy)
    classic_group(node.groups)
    assert consumer_join(node.groups).error == E.group_id_not_found
    assert "g" in node.groups.groups


def test_an_upgraded_group_survives_a_restart_with_its_classic_members(nodes, node, gc):
    (m1, m2), generation = classic_group(gc)
    consumer_join(gc)
    nodes.crash(node)
    gc = nodes().groups
    group = gc.consumer.groups["g"]
    assert group.members[m1].uses_classic_protocol and not group.members["new"].uses_classic_protocol
    assert group.members[m1].classic_session_timeout_ms == SESSION  # Kafka's ClassicMemberMetadata keeps it
    assert gc.heartbeat("g", m2, None, generation, T0) == E.rebalance_in_progress
    assert rejoin_and_sync(gc, m2)[0] == group.group_epoch


def test_classic_member_commits_with_its_generation(gc):
    from shim.coordinators.group import OffsetAndMetadata

    (m1, _), generation = classic_group(gc)
    consumer_join(gc)
    one = {(TOPIC, 0): OffsetAndMetadata(3)}
    assert gc.commit_offsets("g", m1, None, generation, one, T0, version=7) == {(TOPIC, 0): E.none}
    assert gc.commit_offsets("g", m1, None, generation + 5, one, T0) == {(TOPIC, 0): E.illegal_generation}


async def test_consumer_group_describe_names_each_members_protocol(nodes):
    from group_helpers import call

    node = nodes(kafka_version="4.1")
    node.logs.create_topic(TOPIC, 6)
    (m1, m2), _ = classic_group(node.groups)
    consumer_join(node.groups)
    d = await call(node, 69, 1, group_ids=("g",), include_authorized_operations=False)
    assert sorted((m.member_id, m.member_type) for m in d.groups[0].members) == sorted(
        [(m1, 0), (m2, 0), ("new", 1)])


def test_members_expiring_together_after_a_downgrade_do_not_bring_the_consumer_group_back(gc):
    (m1, m2), _ = classic_group(gc)
    consumer_join(gc)
    group = gc.consumer.groups["g"]
    # the consumer member's session ends first, then the classic members' in the same tick
    group.members = {"new": group.members["new"], m1: group.members[m1], m2: group.members[m2]}
    for m in group.members.values():
        m.session_deadline = T0 + 1
    gc.tick(T0 + 1)
    assert "g" not in gc.consumer.groups
    assert set(gc.groups["g"].members) == {m1, m2}  # the downgrade took them; their classic sessions run


def test_a_downgrade_too_large_for_the_offsets_topic_fails_whole_without_a_message(nodes):
    """Kafka writes the classic group in place of the leaving member's fence, in one operation: a
    record past max.message.bytes fails it (MESSAGE_TOO_LARGE, answered UNKNOWN_SERVER_ERROR with
    no message by handleOperationException) and the member is still there."""
    node = nodes(max_message_bytes=4_096)
    node.logs.create_topic(TOPIC, 6)
    gc = node.groups
    (m1, m2), _ = classic_group(gc)
    r = consumer_join(gc)
    big = [("range", subscription(TOPIC, user_data=b"u" * 2_500))]  # each member's record fits, both do not
    for m in (m1, m2):
        j = join(gc, member_id=m, protocols=big).result
        assert j.error == E.none, j
        assert sync(gc, m, j.generation_id).result.error == E.none
    assert gc.consumer.heartbeat(HeartbeatRequest("g", "new", r.member_epoch, owned={}), T0).error == E.none
    left = gc.consumer.heartbeat(HeartbeatRequest("g", "new", -1), T0)
    assert (left.error, left.message) == (E.unknown_server_error, None)
    assert set(gc.consumer.groups["g"].members) == {m1, m2, "new"} and "g" not in gc.groups


def test_a_classic_member_heartbeating_with_the_consumer_protocol_becomes_a_consumer_member(nodes, node, gc):
    """Kafka: consumerGroupHeartbeat builds the updated member without its ClassicMemberMetadata,
    so a classic member that switches protocol (same member id and epoch) is a consumer-protocol
    member from then on: it counts no longer as classic, holds the group's session timeout, its
    classic Heartbeat is refused, and the group no longer turns classic when the other
    consumer-protocol member leaves, only once the switched member leaves as well."""
    (m1, m2), _ = classic_group(gc)
    r = consumer_join(gc)
    epochs = {m: rejoin_and_sync(gc, m)[0] for m in (m1, m2)}
    group = gc.consumer.groups["g"]
    switched = gc.consumer.heartbeat(HeartbeatRequest("g", m1, epochs[m1], rebalance_timeout_ms=30_000,
                                                      subscribed_topic_names=(TOPIC,),
                                                      owned=dict(group.members[m1].assigned)), T0 + 1)
    assert switched.error == E.none and switched.member_id == m1, switched
    member = group.members[m1]
    assert not member.uses_classic_protocol and member.classic_session_timeout_ms is None
    assert member.session_deadline == T0 + 1 + gc.consumer.session_timeout_ms("g") != T0 + 1 + SESSION
    assert gc.heartbeat("g", m1, None, member.member_epoch, T0 + 1) == E.unknown_member_id
    assert gc.consumer.heartbeat(HeartbeatRequest("g", "new", r.member_epoch, owned={}), T0 + 1).error == E.none
    nodes.crash(node)  # the switch was written: a restart replays a consumer-protocol member
    gc = nodes().groups
    assert not gc.consumer.groups["g"].members[m1].uses_classic_protocol
    assert gc.consumer.heartbeat(HeartbeatRequest("g", "new", -1), T0 + 2).error == E.none
    assert "g" in gc.consumer.groups and "g" not in gc.groups  # m1 still speaks the consumer protocol
    assert gc.consumer.heartbeat(HeartbeatRequest("g", m1, -1), T0 + 3).error == E.none
    assert "g" not in gc.consumer.groups and set(gc.groups["g"].members) == {m2}  # only classic members left


def test_a_downgrade_takes_only_the_version_of_a_classic_members_unparsed_first_protocol(gc):
    """A classic group parses only its selected protocol: a member whose first protocol is not
    ConsumerProtocol data was upgraded on the selected one, and the downgrade (Kafka reads just
    the version of the first protocol) turns it classic again with its partitions."""
    gc.initial_rebalance_delay_ms = 3_000
    odd = [("odd", b"\x00\x01\xff"), *PROTOCOLS]
    a, b = join(gc, protocols=odd), join(gc, protocols=PROTOCOLS)
    gc.tick(T0 + 3_000)
    gc.tick(T0 + 6_000)
    ra, rb = a.result, b.result
    assert ra.error == rb.error == E.none and gc.groups["g"].protocol_name == "range"
    ids = [ra.member_id, rb.member_id]
    leader = ra.leader
    for m in ids:
        if m != leader:
            sync(gc, m, ra.generation_id)
    sync(gc, leader, ra.generation_id, {ids[0]: encode_assignment(0, {TOPIC: frozenset({0, 1, 2})}),
                                        ids[1]: encode_assignment(0, {TOPIC: frozenset({3, 4, 5})})})
    assert consumer_join(gc).error == E.none and "g" in gc.consumer.groups
    gc.consumer.heartbeat(HeartbeatRequest("g", "new", -1), T0)
    assert "g" not in gc.consumer.groups
    classic = gc.groups["g"]
    assert set(classic.members) == set(ids)
    assert parse_assignment(classic.members[ids[0]].assignment) == {TOPIC: {0, 1, 2}}
    assert classic.members[ids[0]].assignment[:2] == b"\x00\x01"  # the odd protocol's version
