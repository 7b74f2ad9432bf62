"""Group metadata and offsets in __consumer_offsets: what is written, and what a restarted node
(clean close or kill -9) loads back (Kafka: storeGroup, doLoadGroupsAndOffsets, onGroupLoaded)."""

from __future__ import annotations

import pytest

from kafka_codecs import decode_batch
from shim.coordinators.group import GroupState
from shim.coordinators.group import records as rec
from shim.coordinators.txn import OFFSETS_TOPIC

from group_helpers import SESSION, T0, TOPIC, E, fetched, form_group, join, offsets, subscription, sync

S = GroupState
CLEAN = pytest.mark.parametrize("clean", [True, False], ids=["clean", "kill-9"])


def restart(nodes, node, clean):
    if clean:
        nodes.close(node)
    else:
        nodes.crash(node)
    return nodes()


def records_of(node, group="g"):
    """Decoded (key, value) records of the group's offsets partition, in log order."""
    plog = node.logs.get(OFFSETS_TOPIC, node.groups.store.partition_for(group))
    out = []
    for raw in plog.iter_batches():
        h, records = decode_batch(raw)
        for r in records:
            key = rec.read_key(r.key)
            if isinstance(key, rec.GroupKey):
                out.append((key, None if r.value is None else rec.read_group_value(r.value)))
            else:
                out.append((key, None if r.value is None else rec.read_offset_value(r.value)))
    return out


def test_the_leaders_assignment_is_written_with_the_group(node, gc):
    (leader, follower), gen = form_group(gc, 2)
    ((key, value),) = records_of(node)
    assert key == rec.GroupKey("g")
    assert (value.generation_id, value.protocol_type, value.protocol_name, value.leader_id) == (
        gen, "consumer", "range", leader)
    assert {m.member_id: m.assignment for m in value.members} == {leader: b"a-0", follower: b"a-1"}
    assert all(m.subscription == subscription(TOPIC) for m in value.members)


@CLEAN
def test_a_stable_group_is_stable_after_a_restart_and_its_members_carry_on(nodes, node, gc, clean):
    (leader, follower), gen = form_group(gc, 2)
    node = restart(nodes, node, clean)
    g = node.groups.groups["g"]
    assert (g.state, g.generation_id, g.leader_id, g.protocol_name) == (S.STABLE, gen, leader, "range")
    # Members keep heartbeating with their old ids and generation; no rebalance is needed.
    assert node.groups.heartbeat("g", follower, None, gen, T0) == E.none
    assert sync(node.groups, follower, gen).result.assignment == b"a-1"
    r = join(node.groups, member_id=follower).result
    assert (r.error, r.generation_id) == (E.none, gen)


@CLEAN
def test_loaded_members_that_never_come_back_expire_after_their_session(nodes, node, gc, clean):
    (leader, follower), gen = form_group(gc, 2)
    node = restart(nodes, node, clean)
    node.groups.groups.clear()
    node.groups.load(T0)  # the node loaded at the wall clock's time; load again on the fake clock
    # The session restarts at load time (Kafka: onGroupLoaded schedules every member's heartbeat).
    assert node.groups.tick(T0) == T0 + SESSION
    node.groups.heartbeat("g", leader, None, gen, T0 + 1)
    node.groups.tick(T0 + SESSION)
    assert follower not in node.groups.groups["g"].members


@CLEAN
def test_offsets_survive_a_restart(nodes, node, gc, clean):
    (m,), gen = form_group(gc, 1)
    gc.commit_offsets("g", m, None, gen, offsets((0, 5), (1, 6)), T0)
    gc.commit_offsets("g", m, None, gen, offsets((0, 7)), T0)
    gc.commit_offsets("solo", "", None, -1, offsets((2, 9)), T0)
    node = restart(nodes, node, clean)
    assert fetched(node.groups, "g", None) == {(TOPIC, 0): 7, (TOPIC, 1): 6}
    assert fetched(node.groups, "solo", None) == {(TOPIC, 2): 9}
    assert node.groups.groups["solo"].state is S.EMPTY


@CLEAN
def test_an_emptied_group_is_empty_with_its_generation_after_a_restart(nodes, node, gc, clean):
    (m,), gen = form_group(gc, 1)
    gc.leave_group("g", [(m, None)], T0 + 7_000)
    node = restart(nodes, node, clean)
    g = node.groups.groups["g"]
    assert (g.state, g.generation_id, g.members, g.protocol_type) == (S.EMPTY, gen + 1, {}, "consumer")


@CLEAN
def test_deleted_groups_and_offsets_stay_deleted(nodes, node, gc, clean):
    (m,), gen = form_group(gc, 1)
    gc.commit_offsets("g", m, None, gen, offsets((0, 5)), T0)
    gc.leave_group("g", [(m, None)], T0 + 7_000)
    gc.commit_offsets("h", "", None, -1, offsets((0, 1), (1, 2)), T0)
    assert gc.delete_groups(["g"], T0 + 8_000) == {"g": E.none}
    assert gc.delete_offsets("h", [(TOPIC, 0)], T0 + 8_000)[0] == E.none
    node = restart(nodes, node, clean)
    assert "g" not in node.groups.groups
    assert fetched(node.groups, "h", None) == {(TOPIC, 1): 2}


def test_the_metadata_of_an_offsets_only_group_is_never_written(node, gc):
    gc.commit_offsets("g", "", None, -1, offsets((0, 5)), T0)
    gc.delete_groups(["g"], T0)
    # The offset and its tombstone; no group tombstone for a group that never had a generation.
    assert [type(k).__name__ for k, _ in records_of(node)] == ["OffsetKey", "OffsetKey"]


@CLEAN
def test_a_static_member_replaced_in_a_stable_group_is_persisted(nodes, node, gc, clean):
    r = join(gc, instance_id="i").result
    sync(gc, r.member_id, r.generation_id, {r.member_id: b"A"})
    new_id = join(gc, instance_id="i", now=T0 + 1).result.member_id
    node = restart(nodes, node, clean)
    g = node.groups.groups["g"]
    assert list(g.members) == [new_id] and g.static_members == {"i": new_id}
    assert g.members[new_id].assignment == b"A"
