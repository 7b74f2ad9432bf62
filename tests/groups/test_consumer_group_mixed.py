"""Classic members inside a consumer group (KIP-848 mixed groups), as Kafka's GroupMetadataManager
treats them: static classic members replacing each other, the consumer group's join and sync
timeouts for classic members, and the group size limits on conversion."""

from __future__ import annotations

from group_helpers import T0, TOPIC, join, sync
from shim.coordinators.group.consumer_classic import encode_assignment, parse_assignment
from shim.coordinators.group.consumer_coordinator import ConsumerGroupConfig, HeartbeatRequest
from shim.errors import ErrorCode as E
from test_consumer_group_migration import PROTOCOLS, classic_group, consumer_join, rejoin_and_sync

SESSION, REBALANCE = 10_000, 25_000


def mixed(gc):
    """A consumer group: consumer-protocol member "c" and a static classic member (instance "i")
    that joined and synced; returns the classic member's id and its generation."""
    assert consumer_join(gc, "c").error == E.none
    r = join(gc, instance_id="i", protocols=PROTOCOLS, session=SESSION, rebalance=REBALANCE).result
    assert r.error == E.none, r
    s = sync(gc, r.member_id, r.generation_id, instance_id="i").result
    assert s.error == E.none
    return r.member_id, r.generation_id


def static_classic_group(gc):
    """Two static classic members (instances "i1", "i2") owning 0-2 and 3-5, then a consumer-protocol
    member upgrades the group; returns their member ids and generation."""
    gc.initial_rebalance_delay_ms = 3_000
    pa = join(gc, instance_id="i1", protocols=PROTOCOLS, session=SESSION, rebalance=REBALANCE)
    pb = join(gc, instance_id="i2", protocols=PROTOCOLS, session=SESSION, rebalance=REBALANCE)
    gc.tick(T0 + 3_000)
    gc.tick(T0 + 6_000)
    a, b = pa.result, pb.result
    assert a.error == b.error == E.none
    instances = {a.member_id: "i1", b.member_id: "i2"}
    leader = a if a.leader == a.member_id else b
    follower = b if leader is a else a
    sync(gc, follower.member_id, follower.generation_id, instance_id=instances[follower.member_id])
    assignments = {a.member_id: encode_assignment(0, {TOPIC: frozenset({0, 1, 2})}),
                   b.member_id: encode_assignment(0, {TOPIC: frozenset({3, 4, 5})})}
    s = sync(gc, leader.member_id, leader.generation_id, assignments, instance_id=instances[leader.member_id]).result
    assert s.error == E.none, s
    assert consumer_join(gc, "c").error == E.none
    return a.member_id, b.member_id, a.generation_id


def owned(gc, member_id):
    return gc.consumer.groups["g"].members[member_id].assigned


def test_a_static_classic_member_replaces_the_one_holding_its_instance_id(gc):
    old, _, generation = static_classic_group(gc)
    group = gc.consumer.groups["g"]
    target, epoch = group.target_of(group.members[old]), group.group_epoch
    assert target and owned(gc, old) == {tid: frozenset({0, 1, 2}) for tid in target}
    r = join(gc, instance_id="i1", protocols=PROTOCOLS, session=SESSION, rebalance=REBALANCE).result
    assert r.error == E.none and r.member_id != old
    assert old not in group.members and group.static_members["i1"] == r.member_id
    # it takes over the replaced member's target (no rebalance) and reconciles towards it
    assert group.target_of(group.members[r.member_id]) == target and group.group_epoch == epoch
    s = sync(gc, r.member_id, r.generation_id, instance_id="i1").result
    got = parse_assignment(s.assignment)[TOPIC]
    assert s.error == E.none and got and got <= {0, 1, 2}
    # the replaced instance is fenced, not unknown
    assert gc.heartbeat("g", old, "i1", generation, T0) == E.fenced_instance_id
    assert sync(gc, old, generation, instance_id="i1").result.error == E.fenced_instance_id
    assert join(gc, member_id=old, instance_id="i1", protocols=PROTOCOLS).result.error == E.fenced_instance_id


def test_a_static_classic_member_replaces_a_consumer_protocol_member(gc):
    assert gc.consumer.heartbeat(HeartbeatRequest("g", "c", 0, instance_id="i", rebalance_timeout_ms=30_000,
                                                  subscribed_topic_names=(TOPIC,), owned={}), T0).error == E.none
    consumer_join(gc, "d")
    group = gc.consumer.groups["g"]
    target = group.target_of(group.members["c"])
    r = join(gc, instance_id="i", protocols=PROTOCOLS, session=SESSION, rebalance=REBALANCE).result
    assert r.error == E.none
    assert "c" not in group.members and group.members[r.member_id].uses_classic_protocol
    assert group.target_of(group.members[r.member_id]) == target and target


def test_an_unknown_static_member_id_is_refused(gc):
    mixed(gc)
    assert join(gc, member_id="someone", instance_id="j", protocols=PROTOCOLS).result.error == E.unknown_member_id


def test_a_classic_member_that_does_not_sync_within_its_rebalance_timeout_is_fenced(gc):
    consumer_join(gc, "c")
    r = join(gc, protocols=PROTOCOLS, session=SESSION, rebalance=REBALANCE).result
    for t in range(8_000, REBALANCE, 8_000):  # its heartbeats keep the session alive
        assert gc.heartbeat("g", r.member_id, None, r.generation_id, T0 + t) == E.none
    gc.tick(T0 + REBALANCE - 1)
    assert r.member_id in gc.consumer.groups["g"].members
    gc.tick(T0 + REBALANCE)
    assert r.member_id not in gc.consumer.groups["g"].members


def test_a_classic_member_told_to_rejoin_that_does_not_is_fenced(gc):
    member, generation = mixed(gc)
    consumer_join(gc, "d", now=T0 + 1_000)  # the group epoch moves on: the classic member must rejoin
    assert gc.heartbeat("g", member, "i", generation, T0 + 2_000) == E.rebalance_in_progress
    for t in range(8_000, REBALANCE + 2_000, 8_000):
        assert gc.heartbeat("g", member, "i", generation, T0 + t) == E.rebalance_in_progress
    gc.tick(T0 + 2_000 + REBALANCE - 1)
    assert member in gc.consumer.groups["g"].members
    gc.tick(T0 + 2_000 + REBALANCE)
    assert member not in gc.consumer.groups["g"].members


def test_rejoining_in_time_clears_the_join_timeout(gc):
    member, generation = mixed(gc)
    consumer_join(gc, "d", now=T0 + 1_000)
    assert gc.heartbeat("g", member, "i", generation, T0 + 2_000) == E.rebalance_in_progress
    r = join(gc, member_id=member, instance_id="i", protocols=PROTOCOLS, session=SESSION, rebalance=REBALANCE,
             now=T0 + 3_000).result
    assert r.error == E.none
    assert sync(gc, member, r.generation_id, instance_id="i", now=T0 + 4_000).result.error in (
        E.none, E.rebalance_in_progress)
    for t in range(10_000, REBALANCE + 10_000, 8_000):
        gc.heartbeat("g", member, "i", r.generation_id, T0 + t)
        gc.tick(T0 + t)
    assert member in gc.consumer.groups["g"].members


def test_a_classic_member_cannot_join_a_full_consumer_group(gc):
    gc.consumer.config = ConsumerGroupConfig(max_size=1)
    consumer_join(gc, "c")
    r = join(gc, protocols=PROTOCOLS).result
    assert r.error == E.group_max_size_reached
    assert set(gc.consumer.groups["g"].members) == {"c"}


def test_a_classic_group_larger_than_the_consumer_group_limit_is_not_upgraded(gc):
    classic_group(gc)
    gc.consumer.config = ConsumerGroupConfig(max_size=1)
    assert consumer_join(gc).error == E.group_id_not_found
    assert "g" in gc.groups and "g" not in gc.consumer.groups
    gc.consumer.config = ConsumerGroupConfig(max_size=2)  # it would fit, but not with the joining member
    assert consumer_join(gc).error == E.group_max_size_reached
    assert "g" in gc.groups and "g" not in gc.consumer.groups


def test_a_consumer_group_larger_than_group_max_size_is_not_downgraded(gc):
    (m1, m2), _ = classic_group(gc)
    gc.consumer.config = ConsumerGroupConfig(classic_max_size=1)
    r = consumer_join(gc)
    for m in (m1, m2):
        rejoin_and_sync(gc, m)
    gc.consumer.heartbeat(HeartbeatRequest("g", "new", -1), T0)
    assert "g" in gc.consumer.groups and set(gc.consumer.groups["g"].members) == {m1, m2}
    assert r.error == E.none
    # Kafka: validateOnlineDowngradeWithFencedMembers -- a classic member leaves too: the one left fits
    assert gc.leave_group("g", [(m1, None)], T0) == (E.none, [E.none])
    assert "g" not in gc.consumer.groups and set(gc.groups["g"].members) == {m2}


def test_replacing_the_last_consumer_protocol_member_downgrades_without_a_rebalance(nodes, node, gc):
    from shim.coordinators.group.state import GroupState

    (m1, m2), generation = classic_group(gc)
    c = gc.consumer.heartbeat(HeartbeatRequest("g", "c", 0, instance_id="i", rebalance_timeout_ms=30_000,
                                               subscribed_topic_names=(TOPIC,), owned={}), T0)
    assert c.error == E.none
    for m in (m1, m2):
        rejoin_and_sync(gc, m)
    group = gc.consumer.groups["g"]
    c = gc.consumer.heartbeat(HeartbeatRequest("g", "c", c.member_epoch, instance_id="i", owned={}), T0)
    c = gc.consumer.heartbeat(HeartbeatRequest("g", "c", c.member_epoch, instance_id="i",
                                               owned=dict(group.members["c"].assigned)), T0)
    epoch, held = group.group_epoch, group.members["c"].assigned
    assert held and group.members["c"].member_epoch == epoch
    r = join(gc, instance_id="i", protocols=PROTOCOLS, session=SESSION, rebalance=REBALANCE).result
    assert r.error == E.none and r.generation_id == epoch
    assert "g" not in gc.consumer.groups
    classic = gc.groups["g"]
    assert classic.state is GroupState.STABLE and classic.generation_id == epoch  # no rebalance
    assert set(classic.members) == {m1, m2, r.member_id}
    s = sync(gc, r.member_id, r.generation_id, instance_id="i").result
    assert s.error == E.none and parse_assignment(s.assignment)[TOPIC] == next(iter(held.values()))
    nodes.crash(node)
    again = nodes().groups
    assert "g" not in again.consumer.groups and set(again.groups["g"].members) == {m1, m2, r.member_id}


def test_leave_group_removes_consumer_protocol_members_together(gc):
    """Kafka 4 (KAFKA-18188): the Admin's removeMembersFromConsumerGroup sends LeaveGroup naming a
    dynamic member by member id and a static one by instance id; members of the consumer protocol
    leave too, fenced in one group epoch bump. An unknown instance id and a member id that does not
    hold the instance id it names are refused."""
    def beat(member_id, instance_id=None):
        r = gc.consumer.heartbeat(HeartbeatRequest("g", member_id, 0, instance_id=instance_id,
                                                   rebalance_timeout_ms=30_000, subscribed_topic_names=(TOPIC,),
                                                   owned={}), T0)
        assert r.error == E.none, r
    beat("dynamic")
    beat("static", "i1")
    beat("third", "i3")
    group = gc.consumer.groups["g"]
    epoch = group.group_epoch
    assert gc.leave_group("g", [("", "nobody"), ("dynamic", None), ("wrong", "i3"), ("", "i1")], T0) == (
        E.none, [E.unknown_member_id, E.none, E.fenced_instance_id, E.none])
    assert set(group.members) == {"third"} and group.group_epoch == epoch + 1


def test_a_classic_member_joins_only_with_a_protocol_every_classic_member_supports(gc):
    """Kafka: ConsumerGroup.supportsClassicProtocols. A classic member whose protocols no classic
    member of the consumer group shares is refused with INCONSISTENT_GROUP_PROTOCOL, so the group
    can still become a classic group with a common protocol when its consumer-protocol member leaves
    (once such a member was let in, the downgrade found no protocol and the request failed)."""
    from shim.coordinators.group.state import GroupState

    first, _ = mixed(gc)
    other = [("roundrobin", PROTOCOLS[0][1])]
    assert join(gc, protocols=other, session=SESSION, rebalance=REBALANCE).result.error == E.inconsistent_group_protocol
    both = [("roundrobin", PROTOCOLS[0][1]), *PROTOCOLS]
    r = join(gc, protocols=both, session=SESSION, rebalance=REBALANCE).result
    assert r.error == E.none, r
    assert gc.consumer.heartbeat(HeartbeatRequest("g", "c", -1), T0).error == E.none
    classic = gc.groups["g"]
    assert "g" not in gc.consumer.groups and set(classic.members) == {first, r.member_id}
    assert classic.protocol_name == "range" and classic.state is GroupState.PREPARING_REBALANCE
