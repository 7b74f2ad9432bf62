"""The group APIs through shim.apis.dispatch with kio types: version differences, the JoinGroup and
SyncGroup long-polls, and the exact codes clients see (UNSTABLE_OFFSET_COMMIT, KafkaApis' unknown
topic checks, LeaveGroup's old top-level error)."""

from __future__ import annotations

import asyncio

import pytest

from shim.protocol.messages import make, request_module

from group_helpers import PROTOCOLS, TOPIC, E, call

OFFSET_COMMIT, OFFSET_FETCH, JOIN, HEARTBEAT, LEAVE, SYNC = 8, 9, 11, 12, 13, 14
DESCRIBE, LIST, TXN_OFFSET_COMMIT, DELETE_GROUPS, OFFSET_DELETE, API_VERSIONS = 15, 16, 28, 42, 47, 18


def entity(api, version, entity_name, /, **fields):
    return make(getattr(request_module(api, version), entity_name), **fields)


async def join_group(node, version=5, member_id="", instance_id=None, group="g", protocols=None, session=10_000,
                     rejoin_if_required=True):
    """JoinGroup; like the clients, join again with the member id of a MEMBER_ID_REQUIRED answer."""
    entities = tuple(entity(JOIN, version, "JoinGroupRequestProtocol", name=n, metadata=m)
                     for n, m in (protocols or PROTOCOLS))
    r = await call(node, JOIN, version, client_host="/10.1.2.3", group_id=group, session_timeout=session,
                   rebalance_timeout=30_000, member_id=member_id, group_instance_id=instance_id,
                   protocol_type="consumer", protocols=entities, reason=None)
    if r.error_code == E.member_id_required and rejoin_if_required:
        return await join_group(node, version, r.member_id, instance_id, group, protocols, session)
    return r


async def sync_group(node, member_id, generation, assignments=(), version=3, group="g", **kw):
    assignments = tuple(entity(SYNC, version, "SyncGroupRequestAssignment", member_id=m, assignment=a)
                        for m, a in assignments)
    kw.setdefault("protocol_type", "consumer")
    kw.setdefault("protocol_name", "range")
    return await call(node, SYNC, version, group_id=group, generation_id=generation, member_id=member_id,
                      group_instance_id=None, assignments=assignments, **kw)


async def one_member_group(node):
    r = await join_group(node)
    s = await sync_group(node, r.member_id, r.generation_id, [(r.member_id, b"A")])
    assert s.error_code == E.none
    return r.member_id, r.generation_id


async def test_api_versions_advertises_the_group_apis(node):
    r = await call(node, API_VERSIONS, 3, client_software_name="t", client_software_version="1")
    got = {k.api_key: (k.min_version, k.max_version) for k in r.api_keys}
    assert {k: got[k] for k in (8, 9, 11, 12, 13, 14, 15, 16, 28, 42, 47)} == {
        8: (0, 9), 9: (0, 9), 11: (0, 9), 12: (0, 4), 13: (0, 5), 14: (0, 5), 15: (0, 5), 16: (0, 5),
        28: (0, 4), 42: (0, 2), 47: (0, 0)}  # TxnOffsetCommit v5 is 4.0's (transaction version 2)


# -- JoinGroup / SyncGroup ----------------------------------------------------------------


async def test_join_v4_asks_for_a_known_member_id_and_v3_does_not(node):
    first = await join_group(node, version=4, rejoin_if_required=False)
    assert first.error_code == E.member_id_required and first.member_id and first.generation_id == -1
    assert (await join_group(node, version=4, member_id=first.member_id)).error_code == E.none
    r = await join_group(node, version=3, group="h")
    assert r.error_code == E.none and r.member_id


async def test_join_v0_uses_the_session_timeout_as_rebalance_timeout(node):
    r = await join_group(node, version=0, session=12_345)
    assert r.error_code == E.none
    assert node.groups.groups["g"].members[r.member_id].rebalance_timeout_ms == 12_345


async def test_error_responses_carry_an_empty_or_null_protocol_name_by_version(node):
    r6 = await join_group(node, version=6, group="")
    r7 = await join_group(node, version=7, group="")
    assert (r6.error_code, r6.protocol_name) == (E.invalid_group_id, "")
    assert (r7.error_code, r7.protocol_name, r7.protocol_type) == (E.invalid_group_id, None, None)


async def test_a_join_parks_until_the_rebalance_completes(node):
    leader, gen = await one_member_group(node)
    newcomer = asyncio.create_task(join_group(node, version=3))
    for _ in range(5):
        await asyncio.sleep(0)
    assert not newcomer.done()
    hb = await call(node, HEARTBEAT, 4, group_id="g", generation_id=gen, member_id=leader, group_instance_id=None)
    assert hb.error_code == E.rebalance_in_progress
    rejoin = await join_group(node, version=5, member_id=leader)
    new = await asyncio.wait_for(newcomer, 5)
    assert rejoin.generation_id == new.generation_id == gen + 1
    assert rejoin.leader == leader and {m.member_id for m in rejoin.members} == {leader, new.member_id}
    assert new.members == ()


async def test_a_follower_sync_parks_until_the_leader_assigns(node):
    first, gen = await one_member_group(node)
    newcomer = asyncio.create_task(join_group(node, version=3))
    for _ in range(5):
        await asyncio.sleep(0)
    leader = await join_group(node, version=3, member_id=first)
    follower = await asyncio.wait_for(newcomer, 5)
    waiting = asyncio.create_task(sync_group(node, follower.member_id, follower.generation_id))
    for _ in range(5):
        await asyncio.sleep(0)
    assert not waiting.done()
    await sync_group(node, leader.member_id, leader.generation_id,
                     [(leader.member_id, b"L"), (follower.member_id, b"F")])
    assert (await asyncio.wait_for(waiting, 5)).assignment == b"F"


async def test_sync_v5_requires_protocol_type_and_name(node):
    member, gen = await one_member_group(node)
    r = await sync_group(node, member, gen, version=5, protocol_type=None)
    assert r.error_code == E.inconsistent_group_protocol
    r = await sync_group(node, member, gen, version=5)
    assert (r.error_code, r.protocol_type, r.protocol_name, r.assignment) == (E.none, "consumer", "range", b"A")


# -- Heartbeat / LeaveGroup ---------------------------------------------------------------


async def test_leave_v0_answers_with_the_member_error_at_the_top(node):
    member, gen = await one_member_group(node)
    r = await call(node, LEAVE, 0, group_id="g", member_id="ghost")
    assert r.error_code == E.unknown_member_id
    assert (await call(node, LEAVE, 1, group_id="g", member_id=member)).error_code == E.none
    assert node.groups.groups["g"].members == {}


async def test_leave_v3_answers_per_member(node):
    member, gen = await one_member_group(node)
    members = (entity(LEAVE, 5, "MemberIdentity", member_id=member, group_instance_id=None, reason="bye"),
               entity(LEAVE, 5, "MemberIdentity", member_id="ghost", group_instance_id=None, reason=None))
    r = await call(node, LEAVE, 5, group_id="g", members=members)
    assert r.error_code == E.none
    assert [(m.member_id, m.error_code) for m in r.members] == [(member, E.none), ("ghost", E.unknown_member_id)]


# -- OffsetCommit / OffsetFetch / TxnOffsetCommit -----------------------------------------


def commit_topics(api, version, *partitions, topic=TOPIC, epoch=-1):
    parts = tuple(entity(api, version, f"{'Txn' if api == TXN_OFFSET_COMMIT else ''}OffsetCommitRequestPartition",
                         partition_index=p, committed_offset=o, committed_leader_epoch=epoch,
                         committed_metadata=None, commit_timestamp=-1) for p, o in partitions)
    name = f"{'Txn' if api == TXN_OFFSET_COMMIT else ''}OffsetCommitRequestTopic"
    return (entity(api, version, name, name=topic, partitions=parts),)


def codes(response):
    return {(t.name, p.partition_index): p.error_code for t in response.topics for p in t.partitions}


@pytest.mark.parametrize("version", [2, 5, 8, 9])
async def test_offset_commit_checks_topics_then_commits(node, version):
    topics = commit_topics(OFFSET_COMMIT, version, (0, 5), (99, 1)) + commit_topics(OFFSET_COMMIT, version, (0, 1),
                                                                                     topic="nope")
    r = await call(node, OFFSET_COMMIT, version, group_id="g", generation_id_or_member_epoch=-1, member_id="",
                   group_instance_id=None, retention_time=-1, topics=topics)
    assert codes(r) == {(TOPIC, 0): E.none, (TOPIC, 99): E.unknown_topic_or_partition,
                        ("nope", 0): E.unknown_topic_or_partition}


async def fetch_v7(node, stable, partitions=(0,)):
    topics = (entity(OFFSET_FETCH, 7, "OffsetFetchRequestTopic", name=TOPIC, partition_indexes=tuple(partitions)),)
    r = await call(node, OFFSET_FETCH, 7, group_id="g", topics=topics, require_stable=stable)
    return {(t.name, p.partition_index): (p.committed_offset, p.error_code) for t in r.topics for p in t.partitions}


async def test_offset_fetch_with_require_stable_sees_unstable_offset_commit(node):
    """A pending transactional offset commit: exactly UNSTABLE_OFFSET_COMMIT for RequireStable."""
    node.groups.commit_offsets("g", "", None, -1, {(TOPIC, 0): _o(3)}, 0)
    pid, epoch = node.txn.init_producer_id("tx", 60_000, -1, -1, 0)
    node.txn.add_offsets("tx", pid, epoch, "g", 0)
    r = await call(node, TXN_OFFSET_COMMIT, 3, transactional_id="tx", group_id="g", producer_id=pid,
                   producer_epoch=epoch, generation_id=-1, member_id="", group_instance_id=None,
                   topics=commit_topics(TXN_OFFSET_COMMIT, 3, (0, 10)))
    assert codes(r) == {(TOPIC, 0): E.none}
    assert await fetch_v7(node, stable=True, partitions=(0, 1)) == {(TOPIC, 0): (-1, E.unstable_offset_commit),
                                                                    (TOPIC, 1): (-1, E.none)}
    assert await fetch_v7(node, stable=False) == {(TOPIC, 0): (3, E.none)}
    node.txn.end_txn("tx", pid, epoch, True, 1)
    assert await fetch_v7(node, stable=True) == {(TOPIC, 0): (10, E.none)}


async def test_txn_offset_commit_v0_outside_the_transaction_is_invalid_txn_state(node):
    pid, epoch = node.txn.init_producer_id("tx", 60_000, -1, -1, 0)
    r = await call(node, TXN_OFFSET_COMMIT, 0, transactional_id="tx", group_id="g", producer_id=pid,
                   producer_epoch=epoch, topics=commit_topics(TXN_OFFSET_COMMIT, 0, (0, 1), (50, 1)))
    assert codes(r) == {(TOPIC, 0): E.invalid_txn_state, (TOPIC, 50): E.unknown_topic_or_partition}


def _o(offset):
    from shim.coordinators.group import OffsetAndMetadata

    return OffsetAndMetadata(offset, 2, "m", 0)


async def test_offset_fetch_v1_v2_and_v8_shapes(node):
    node.groups.commit_offsets("g", "", None, -1, {(TOPIC, 0): _o(3)}, 0)
    topics = (entity(OFFSET_FETCH, 1, "OffsetFetchRequestTopic", name=TOPIC, partition_indexes=(0, 1)),)
    r1 = await call(node, OFFSET_FETCH, 1, group_id="g", topics=topics)
    assert [(p.partition_index, p.committed_offset, p.metadata) for p in r1.topics[0].partitions] == [
        (0, 3, "m"), (1, -1, "")]
    r2 = await call(node, OFFSET_FETCH, 2, group_id="g", topics=None)  # every committed partition
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in r2.topics] == [(TOPIC, [0])]
    groups = (entity(OFFSET_FETCH, 8, "OffsetFetchRequestGroup", group_id="g", topics=None),
              entity(OFFSET_FETCH, 8, "OffsetFetchRequestGroup", group_id="none", topics=None))
    r8 = await call(node, OFFSET_FETCH, 8, groups=groups, require_stable=True)
    assert [(g.group_id, g.error_code, [(p.committed_offset, p.committed_leader_epoch) for t in g.topics
                                        for p in t.partitions]) for g in r8.groups] == [
        ("g", E.none, [(3, 2)]), ("none", E.none, [])]


# -- DescribeGroups / ListGroups / DeleteGroups / OffsetDelete ----------------------------


async def test_describe_groups_v5(node):
    member, gen = await one_member_group(node)
    r = await call(node, DESCRIBE, 5, groups=("g", "nope"), include_authorized_operations=True)
    g, nope = r.groups
    assert (g.error_code, g.group_state, g.protocol_type, g.protocol_data) == (E.none, "Stable", "consumer", "range")
    (m,) = g.members
    assert (m.member_id, m.client_id, m.client_host, m.member_assignment) == (member, "group-tests", "/10.1.2.3", b"A")
    # Kafka 3.9 without an authorizer: AclEntry.supportedOperations(GROUP) = READ, DESCRIBE, DELETE
    assert g.authorized_operations == (1 << 3) | (1 << 6) | (1 << 8)
    assert (nope.group_state, nope.members) == ("Dead", ())
    unasked = await call(node, DESCRIBE, 5, groups=("g",), include_authorized_operations=False)
    assert unasked.groups[0].authorized_operations == -(2**31)
    r0 = await call(node, DESCRIBE, 0, groups=("g",))
    assert r0.groups[0].members[0].member_metadata == PROTOCOLS[0][1]


async def test_list_groups_v4_filters_by_state_in_any_case(node):
    await one_member_group(node)
    node.groups.commit_offsets("solo", "", None, -1, {(TOPIC, 0): _o(1)}, 0)
    r = await call(node, LIST, 4, states_filter=("STABLE",))
    assert [(g.group_id, g.protocol_type, g.group_state) for g in r.groups] == [("g", "consumer", "Stable")]
    r0 = await call(node, LIST, 0)
    assert sorted((g.group_id, g.protocol_type) for g in r0.groups) == [("g", "consumer"), ("solo", "")]


@pytest.mark.parametrize("types,listed", [((), ["g", "solo"]), (("Classic",), ["g", "solo"]),
                                          (("consumer",), []), (("share", "classic"), ["g", "solo"])])
async def test_list_groups_v5_type_filter_of_classic_groups(node, types, listed):
    await one_member_group(node)
    node.groups.commit_offsets("solo", "", None, -1, {(TOPIC, 0): _o(1)}, 0)
    r = await call(node, LIST, 5, states_filter=(), types_filter=types)
    assert sorted((g.group_id, g.group_type) for g in r.groups) == [(g, "classic") for g in listed]


async def test_delete_groups_and_offset_delete(node):
    await one_member_group(node)
    node.groups.commit_offsets("solo", "", None, -1, {(TOPIC, 0): _o(1), (TOPIC, 1): _o(1)}, 0)
    r = await call(node, OFFSET_DELETE, 0, group_id="solo", topics=(
        entity(OFFSET_DELETE, 0, "OffsetDeleteRequestTopic", name=TOPIC, partitions=(
            entity(OFFSET_DELETE, 0, "OffsetDeleteRequestPartition", partition_index=0),
            entity(OFFSET_DELETE, 0, "OffsetDeleteRequestPartition", partition_index=77))),))
    assert r.error_code == E.none and codes(r) == {(TOPIC, 0): E.none, (TOPIC, 77): E.unknown_topic_or_partition}
    r = await call(node, OFFSET_DELETE, 0, group_id="nope", topics=())
    assert (r.error_code, r.topics) == (E.group_id_not_found, ())
    r = await call(node, DELETE_GROUPS, 2, groups_names=("g", "solo", "nope"))
    assert {x.group_id: x.error_code for x in r.results} == {
        "g": E.non_empty_group, "solo": E.none, "nope": E.group_id_not_found}
