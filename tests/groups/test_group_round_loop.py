"""A rebalance of a classic group of 2,000 members, each subscribed to 1,000 topics (20 KB of
protocol metadata each): every member's JoinGroup and SyncGroup answered as Kafka answers them,
while no turn of the event loop takes long (tests/loop_stall.py)."""

from __future__ import annotations

import asyncio

from group_helpers import E, subscription
from loop_stall import stall_during

from shim import Broker
from shim.apis.dispatch import dispatch
from shim.coordinators.txn.coordinator import OFFSETS_TOPIC
from shim.protocol.messages import RequestHeader, decode_response, encode_request, make, request_module

MEMBERS, TOPICS = 2_000, 1_000
JOIN_V, SYNC_V = 9, 5
SUBSCRIPTION = subscription(*(f"topic-{i:04d}" for i in range(TOPICS)))
J, S = request_module(11, JOIN_V), request_module(14, SYNC_V)


def _join(member_id: str) -> bytes:
    protocols = tuple(make(J.JoinGroupRequestProtocol, name=name, metadata=metadata)
                      for name, metadata in (("range", SUBSCRIPTION), ("cooperative-sticky", SUBSCRIPTION + b"x")))
    return encode_request(RequestHeader(11, JOIN_V, 1, "round"), make(
        J.JoinGroupRequest, group_id="g", session_timeout=30_000, rebalance_timeout=60_000, member_id=member_id,
        group_instance_id=None, protocol_type="consumer", reason=None, protocols=protocols))


def _sync(member_id: str, generation: int, assignments=()) -> bytes:
    return encode_request(RequestHeader(14, SYNC_V, 1, "round"), make(
        S.SyncGroupRequest, group_id="g", generation_id=generation, member_id=member_id, group_instance_id=None,
        protocol_type="consumer", protocol_name="range", assignments=assignments))


async def _decoded(raws, api_key, version):  # the client's work, off the loop
    return await asyncio.to_thread(lambda: [decode_response(r, api_key, version)[1] for r in raws])


async def test_a_rebalance_of_2000_members_of_1000_topics_holds_the_loop_no_turn_long(tmp_path):
    """Each JoinGroup walked every member's protocols to find the ones all support, and the
    leader's SyncGroup built and checksummed the group's 40 MB metadata record in one turn (170 ms
    of the loop's CPU here, up to 1 s in a broker) only for its append to refuse it: it exceeds the offsets topic's
    max.message.bytes, and Kafka answers every member UNKNOWN_SERVER_ERROR (its storeGroup
    callback's mapping of MESSAGE_TOO_LARGE). Now the supported protocols are counted as members
    come and go (Kafka's supportedProtocols) and a record that cannot fit is refused unbuilt: the
    longest turn is the one the rebalance's end wakes 2,000 answers in (about 50 ms)."""
    async with Broker(data_dir=tmp_path / "d", listen="127.0.0.1:0", group_initial_rebalance_delay_ms=3_000,
                      offsets_topic_num_partitions=4) as broker:  # the join phase ends 3 s after the last member came
        await _rebalance(broker.node)


async def _rebalance(node):
    first = await _decoded([await dispatch(node, _join("")) for _ in range(MEMBERS)], 11, JOIN_V)
    assert {r.error_code for r in first} == {E.member_id_required}
    ids = [r.member_id for r in first]
    joins = [_join(m) for m in ids]
    offsets_end = [node.logs.get(OFFSETS_TOPIC, p).log_end_offset for p in range(4)] if node.logs.topics.get(
        OFFSETS_TOPIC) else None

    async def rebalance():
        joining = []
        for frame in joins:  # one after the other, as they come from the members' connections
            joining.append(asyncio.ensure_future(dispatch(node, frame)))
            await asyncio.sleep(0)
        joined = await _decoded(await asyncio.gather(*joining), 11, JOIN_V)
        leader, generation = joined[0].leader, joined[0].generation_id
        followers = []
        for m in ids:
            if m != leader:
                followers.append(asyncio.ensure_future(dispatch(node, _sync(m, generation))))
                await asyncio.sleep(0)  # each follower waits for the leader's assignment
        assignments = tuple(make(S.SyncGroupRequestAssignment, member_id=m, assignment=b"a" * 100) for m in ids)
        synced = [await dispatch(node, _sync(leader, generation, assignments)), *await asyncio.gather(*followers)]
        return joined, await _decoded(synced, 14, SYNC_V)

    (joined, synced), stall = await stall_during(rebalance())
    assert {(r.error_code, r.generation_id, r.protocol_name) for r in joined} == {(E.none, 1, "range")}
    leader = joined[0].leader
    (led,) = [r for r in joined if r.member_id == leader]
    assert sorted(m.member_id for m in led.members) == sorted(ids)
    assert {m.metadata for m in led.members} == {SUBSCRIPTION}
    assert all(r.members == () for r in joined if r.member_id != leader)
    assert {r.error_code for r in synced} == {E.unknown_server_error}
    if offsets_end is not None:  # nothing was written
        assert [node.logs.get(OFFSETS_TOPIC, p).log_end_offset for p in range(4)] == offsets_end
    assert stall.cpu < 0.1, stall


def test_the_protocols_every_member_supports_follow_members_coming_going_and_changing():
    """The counts a JoinGroup checks against, kept as members change, agree with a walk of them."""
    import random

    from shim.coordinators.group.state import GroupMetadata, GroupState, MemberMetadata

    rng = random.Random(7)
    group = GroupMetadata("g", state=GroupState.STABLE)  # a group with members: checked against them
    names = ["range", "roundrobin", "sticky", "cooperative-sticky"]

    def protocols():
        return [(n, b"") for n in rng.sample(names, rng.randint(1, 3))] * rng.randint(1, 2)  # repeats count once

    for step in range(2_000):
        action = rng.random()
        if action < 0.4 or not group.members:
            group.add(MemberMetadata(f"m-{step}", None, "c", "h", 1, 1, "consumer", protocols()))
        elif action < 0.7:
            group.remove(rng.choice(list(group.members)))
        else:
            group.set_protocols(group.members[rng.choice(list(group.members))], protocols())
        walked = set.intersection(*({n for n, _ in m.protocols} for m in group.members.values())) \
            if group.members else set()
        assert group._candidate_protocols() == walked
        assert group.supports_protocols("consumer", {"range", "other"}) == ("range" in walked)
