"""The share-group admin side through the dispatcher on a node emulating Kafka 4.1:
DescribeShareGroupOffsets (90), AlterShareGroupOffsets (91), DeleteShareGroupOffsets (92), share
groups in DeleteGroups and DescribeGroups, and one namespace of group ids shared with classic and
consumer groups. Share state is made by real ShareFetch/ShareAcknowledge requests."""

from __future__ import annotations

import itertools
import time
import uuid

import pytest

from kafka_codecs import encode_batch
from shim.apis.dispatch import dispatch
from shim.config import BrokerConfig
from shim.configs.admin import Op
from shim.errors import ErrorCode as E
from shim.node import Node
from shim.protocol.messages import RequestHeader, decode_response, encode_request, make, request_class, request_module
from shim.security.acls import AclBinding
from shim.security.acls import AclOperation as O
from shim.security.acls import AclPermissionType as A
from shim.security.acls import PatternType as P
from shim.security.acls import ResourceType as R
from shim.security.session import ConnectionSession

T, G = "t", "g"
_corr = itertools.count(1)
ALICE = ConnectionSession("PLAINTEXT", "User:alice")


async def call(node, key, version, session=None, **fields):
    raw = await dispatch(node, encode_request(RequestHeader(key, version, next(_corr), "tests"),
                                              make(request_class(key, version), **fields)), "/127.0.0.1", session)
    return decode_response(raw, key, version)[1]


def open_node(path, **config):
    n = Node(BrokerConfig(data_dir=path, kafka_version="4.1", group_initial_rebalance_delay_ms=0, **config))
    if "t" not in n.logs.topics:
        n.logs.create_topic(T, 2)
    return n


@pytest.fixture
def node(tmp_path):
    n = open_node(tmp_path / "data")
    n.finalize_features({"share.version": 1})
    n.share.configs.alter(G, [Op("share.auto.offset.reset", 0, "earliest")], False)
    yield n
    n.close()


async def produce(node, partition, count):
    m = request_module(0, 9)
    batch = encode_batch([(None, b"v%d" % i, (), int(time.time() * 1000)) for i in range(count)])
    data = (m.TopicProduceData(name=T, partition_data=(m.PartitionProduceData(index=partition, records=batch),)),)
    r = await call(node, 0, 9, transactional_id=None, acks=-1, timeout=5000, topic_data=data)
    assert r.responses[0].partition_responses[0].error_code == E.none


async def heartbeat(node, member, epoch, group=G):
    return await call(node, 76, 1, group_id=group, member_id=member, member_epoch=epoch, rack_id=None,
                      subscribed_topic_names=(T,))


async def fetch(node, member, epoch, acks=(), partition=0, group=G):
    """One ShareFetch of ``partition``; ``acks``: (first, last, type) batches. The acquired ranges."""
    m = request_module(78, 1)
    part = m.FetchPartition(partition_index=partition, acknowledgement_batches=tuple(
        m.AcknowledgementBatch(first_offset=f, last_offset=l, acknowledge_types=(t,)) for f, l, t in acks))
    r = await call(node, 78, 1, group_id=group, member_id=member, share_session_epoch=epoch, max_wait=0,
                   min_bytes=1, max_bytes=1 << 20, max_records=500, batch_size=500,
                   topics=(m.FetchTopic(topic_id=node.logs.topics[T].topic_id, partitions=(part,)),),
                   forgotten_topics_data=())
    assert r.error_code == E.none
    return [(a.first_offset, a.last_offset) for t in r.responses for p in t.partitions for a in p.acquired_records]


async def consume(node, partition, accept_through):
    """A member joins, acquires ``partition`` and accepts offsets 0..accept_through, then leaves."""
    member = str(uuid.uuid4())
    await heartbeat(node, member, 0)
    got = await fetch(node, member, 0, partition=partition)
    assert got and got[0][0] == 0
    acks = [(0, accept_through, 1)] + ([(accept_through + 1, got[-1][1], 2)] if accept_through < got[-1][1] else [])
    await fetch(node, member, 1, acks=acks, partition=partition)
    await fetch(node, member, -1, partition=partition)
    assert (await heartbeat(node, member, -1)).error_code == E.none


async def describe(node, topics=None, group=G, session=None):
    m = request_module(90, 0)
    ts = None if topics is None else tuple(m.DescribeShareGroupOffsetsRequestTopic(topic_name=t, partitions=ps)
                                           for t, ps in topics)
    r = await call(node, 90, 0, session, groups=(m.DescribeShareGroupOffsetsRequestGroup(group_id=group, topics=ts),))
    return r.groups[0]


def offsets(group):
    return {(t.topic_name, p.partition_index): (p.start_offset, p.error_code) for t in group.topics
            for p in t.partitions}


async def alter(node, entries, group=G, session=None):
    m = request_module(91, 0)
    topics = {}
    for (t, p), o in entries.items():
        topics.setdefault(t, []).append(m.AlterShareGroupOffsetsRequestPartition(partition_index=p, start_offset=o))
    return await call(node, 91, 0, session, group_id=group, topics=tuple(
        m.AlterShareGroupOffsetsRequestTopic(topic_name=t, partitions=tuple(ps)) for t, ps in topics.items()))


async def delete(node, topics, group=G, session=None):
    m = request_module(92, 0)
    return await call(node, 92, 0, session, group_id=group,
                      topics=tuple(m.DeleteShareGroupOffsetsRequestTopic(topic_name=t) for t in topics))


def alter_codes(r):
    return {(t.topic_name, p.partition_index): p.error_code for t in r.responses for p in t.partitions}


async def test_describe_shows_the_start_offset_share_fetch_moved(node):
    await produce(node, 0, 5)
    await consume(node, 0, accept_through=2)
    everything = await describe(node)
    # partition 1, subscribed but never fetched, was initialized when the member joined (start -1)
    assert everything.error_code == E.none and offsets(everything) == {(T, 0): (3, E.none), (T, 1): (-1, E.none)}
    assert everything.topics[0].topic_id == node.logs.topics[T].topic_id
    named = await describe(node, [(T, (0, 1, 7)), ("nope", (0,))])
    assert offsets(named) == {(T, 0): (3, E.none), (T, 1): (-1, E.none), (T, 7): (-1, E.none),
                              ("nope", 0): (-1, E.none)}
    assert (await describe(node, [])).topics == ()
    unknown_group = await describe(node, group="no-such-group")  # Kafka 4.1: no state, no error
    assert unknown_group.error_code == E.none and unknown_group.topics == ()


async def test_alter_moves_where_the_next_share_fetch_starts(node):
    await produce(node, 0, 10)
    await consume(node, 0, accept_through=1)
    r = await alter(node, {(T, 0): 7, (T, 1): 0, (T, 9): 4, ("nope", 0): 1})
    assert r.error_code == E.none
    assert alter_codes(r) == {("nope", 0): E.unknown_topic_or_partition, (T, 0): E.none, (T, 1): E.none,
                              (T, 9): E.unknown_topic_or_partition}
    assert offsets(await describe(node)) == {(T, 0): (7, E.none), (T, 1): (0, E.none)}
    member = str(uuid.uuid4())
    await heartbeat(node, member, 0)
    assert await fetch(node, member, 0) == [(7, 9)]


async def test_alter_needs_an_existing_empty_share_group(node):
    assert (await alter(node, {(T, 0): 1}, group="no-such-group")).error_code == E.group_id_not_found
    member = str(uuid.uuid4())
    await heartbeat(node, member, 0)
    r = await alter(node, {(T, 0): 1})
    assert (r.error_code, r.responses) == (E.non_empty_group, ())
    r = await alter(node, {("nope", 0): 1})  # no topic left: Kafka answers before looking at the group
    assert r.error_code == E.none and alter_codes(r) == {("nope", 0): E.unknown_topic_or_partition}
    assert (await alter(node, {("nope", 0): 1}, group="")).error_code == E.invalid_group_id
    assert (await delete(node, [T])).error_code == E.non_empty_group
    await heartbeat(node, member, -1)
    assert (await alter(node, {(T, 0): 1})).error_code == E.none


async def test_delete_lets_the_next_fetch_start_from_the_reset_policy(node):
    await produce(node, 0, 4)
    await consume(node, 0, accept_through=3)
    assert offsets(await describe(node)) == {(T, 0): (4, E.none), (T, 1): (-1, E.none)}
    r = await delete(node, [T, "nope"])
    assert r.error_code == E.none
    assert [(t.topic_name, t.error_code) for t in r.responses] == [(T, E.none), ("nope", E.unknown_topic_or_partition)]
    assert (await describe(node)).topics == ()
    again = await delete(node, [T])
    assert [(t.error_code, t.error_message) for t in again.responses] == [
        (E.unknown_topic_or_partition, "There is no offset information to delete.")]
    member = str(uuid.uuid4())
    await heartbeat(node, member, 0)
    assert await fetch(node, member, 0) == [(0, 3)]  # share.auto.offset.reset=earliest again


async def test_delete_groups_removes_an_empty_share_group_and_its_state(tmp_path):
    n = open_node(tmp_path / "data")
    n.finalize_features({"share.version": 1})
    try:
        await produce(n, 1, 3)
        member = str(uuid.uuid4())
        await heartbeat(n, member, 0)
        await fetch(n, member, 0, partition=1)
        r = await call(n, 42, 2, groups_names=(G,))
        assert r.results[0].error_code == E.non_empty_group
        await heartbeat(n, member, -1)
        assert (await call(n, 42, 2, groups_names=(G,))).results[0].error_code == E.none
        assert G not in n.share.groups
        assert (await call(n, 42, 2, groups_names=(G,))).results[0].error_code == E.group_id_not_found
    finally:
        n.close()
    n = open_node(tmp_path / "data")
    try:
        assert G not in n.share.groups and n.share.start_offsets(G) == {}
    finally:
        n.close()


async def test_a_share_group_with_state_outlives_a_restart(tmp_path):
    n = open_node(tmp_path / "data")
    n.finalize_features({"share.version": 1})
    n.share.configs.alter(G, [Op("share.auto.offset.reset", 0, "earliest")], False)
    await produce(n, 0, 3)
    await consume(n, 0, accept_through=1)
    n.close()
    n = open_node(tmp_path / "data")
    try:
        assert offsets(await describe(n)) == {(T, 0): (2, E.none), (T, 1): (-1, E.none)}
        listed = await call(n, 16, 5, states_filter=(" EMPTY ",), types_filter=("share",))
        assert [(g.group_id, g.group_state) for g in listed.groups] == [(G, "Empty")]
        assert (await alter(n, {(T, 0): 0})).error_code == E.none
    finally:
        n.close()


async def test_an_empty_share_group_and_its_state_outlive_offsets_retention(node):
    """Kafka 4.x never expires a share group (ShareGroup.shouldExpire is false): the offsets
    retention check, which deletes an empty classic or consumer group once its offsets expire,
    leaves an empty share group and its start offsets alone; DeleteGroups removes them."""
    from shim.control.ops import call as control

    node.share.configs.alter(G, [Op("share.auto.offset.reset", 0, "earliest")], False)
    await produce(node, 0, 3)
    await consume(node, 0, accept_through=1)
    retention = node.config.offsets_retention_minutes * 60_000
    got = await control(node.control, "advance_clock", {"ms": 2 * retention, "clock": "groups"})
    assert got["deleted_groups"] == []
    assert offsets(await describe(node)) == {(T, 0): (2, E.none), (T, 1): (-1, E.none)}
    assert (await call(node, 42, 2, groups_names=(G,))).results[0].error_code == E.none
    assert (await describe(node)).error_code == E.none and offsets(await describe(node)) == {}


async def test_off_until_share_version_1(tmp_path):
    n = open_node(tmp_path / "data")
    try:
        assert (await describe(n)).error_code == E.unsupported_version
        assert (await alter(n, {(T, 0): 1})).error_code == E.unsupported_version
        assert (await delete(n, [T])).error_code == E.unsupported_version
    finally:
        n.close()


async def test_versions_are_kafka_4_1s():
    from shim.apis.registry import REGISTRY, emulated_range
    from shim.protocol.kafka_releases import RELEASES
    for key in (90, 91, 92):
        assert emulated_range(REGISTRY[key], RELEASES["4.1"]) == (0, 0)
        assert emulated_range(REGISTRY[key], RELEASES["4.0"]) is None


async def test_list_groups_filters_by_trimmed_state_for_every_type(node):
    await heartbeat(node, str(uuid.uuid4()), 0)
    m = request_module(8, 9)
    await call(node, 8, 9, group_id="classic", generation_id_or_member_epoch=-1, member_id="", group_instance_id=None,
               topics=(m.OffsetCommitRequestTopic(name=T, partitions=(m.OffsetCommitRequestPartition(
                   partition_index=0, committed_offset=0, committed_leader_epoch=-1, committed_metadata=None),)),))
    listed = await call(node, 16, 5, states_filter=(" stable", "Empty "), types_filter=())
    assert sorted((g.group_id, g.group_type, g.group_state) for g in listed.groups) == [
        ("classic", "classic", "Empty"), (G, "share", "Stable")]
    assert (await call(node, 16, 5, states_filter=(), types_filter=("bogus",))).groups == ()


async def test_describe_groups_answers_a_share_group_as_no_classic_group(node):
    member = str(uuid.uuid4())
    await heartbeat(node, member, 0)
    g = (await call(node, 15, 5, groups=(G,), include_authorized_operations=False)).groups[0]
    assert (g.error_code, g.group_state, g.protocol_type, g.members) == (E.none, "Dead", "", ())
    # v6 (KIP-1043): Kafka 4 says why, as GROUP_ID_NOT_FOUND
    unknown = "no-such-group"
    six = (await call(node, 15, 6, groups=(G, unknown), include_authorized_operations=True)).groups
    assert [(g.error_code, g.error_message, g.group_state) for g in six] == [
        (E.group_id_not_found, f"Group {G} is not a classic group.", "Dead"),
        (E.group_id_not_found, f"Group {unknown} not found.", "Dead")]
    five = (await call(node, 15, 5, groups=(unknown,), include_authorized_operations=False)).groups[0]
    assert (five.error_code, five.group_state) == (E.none, "Dead")


async def test_one_namespace_of_group_ids(node):
    member = str(uuid.uuid4())
    await heartbeat(node, member, 0)
    j = await call(node, 11, 9, group_id=G, session_timeout=10000, rebalance_timeout=10000, member_id="",
                   group_instance_id=None, protocol_type="consumer", reason=None,
                   protocols=(make(request_module(11, 9).JoinGroupRequestProtocol, name="range", metadata=b""),))
    assert (j.error_code, j.member_id) == (E.inconsistent_group_protocol, "")
    c = await call(node, 68, 1, group_id=G, member_id=str(uuid.uuid4()), member_epoch=0, instance_id=None,
                   rack_id=None, rebalance_timeout=10000, subscribed_topic_names=(T,), subscribed_topic_regex=None,
                   server_assignor=None, topic_partitions=())
    assert (c.error_code, c.error_message) == (E.group_id_not_found, f"Group {G} is not a consumer group.")
    d = await call(node, 69, 1, group_ids=(G,), include_authorized_operations=False)
    assert d.groups[0].error_code == E.group_id_not_found
    m = request_module(8, 9)
    o = await call(node, 8, 9, group_id=G, generation_id_or_member_epoch=-1, member_id="", group_instance_id=None,
                   topics=(m.OffsetCommitRequestTopic(name=T, partitions=(m.OffsetCommitRequestPartition(
                       partition_index=0, committed_offset=1, committed_leader_epoch=-1,
                       committed_metadata=None),)),))
    assert o.topics[0].partitions[0].error_code == E.group_id_not_found
    assert G not in node.groups.groups
    await call(node, 8, 9, group_id="classic", generation_id_or_member_epoch=-1, member_id="", group_instance_id=None,
               topics=(m.OffsetCommitRequestTopic(name=T, partitions=(m.OffsetCommitRequestPartition(
                   partition_index=0, committed_offset=1, committed_leader_epoch=-1, committed_metadata=None),)),))
    d = await delete(node, [T], group="classic")
    assert (d.error_code, d.error_message) == (E.group_id_not_found, "Group classic is not a share group.")
    assert (await alter(node, {(T, 0): 0}, group="classic")).error_code == E.group_id_not_found
    g = (await call(node, 77, 1, group_ids=("classic",), include_authorized_operations=False)).groups[0]
    assert (g.error_code, g.error_message) == (E.group_id_not_found, "Group classic is not a share group.")


async def test_authorization(tmp_path):
    n = open_node(tmp_path / "data", authorizer_class_name="org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                  super_users="User:admin")
    n.finalize_features({"share.version": 1})

    def allow(rtype, name, op):
        n.acls.change(add=[AclBinding(rtype, name, P.LITERAL, "User:alice", "*", op, A.ALLOW)])
    try:
        assert (await describe(n, session=ALICE)).error_code == E.group_authorization_failed
        assert (await alter(n, {(T, 0): 1}, session=ALICE)).error_code == E.group_authorization_failed
        assert (await delete(n, [T], session=ALICE)).error_code == E.group_authorization_failed
        allow(R.GROUP, G, O.DESCRIBE)
        allow(R.GROUP, G, O.READ)
        allow(R.GROUP, G, O.DELETE)
        d = await describe(n, [(T, (0,))], session=ALICE)
        assert offsets(d) == {(T, 0): (-1, E.topic_authorization_failed)}
        r = await alter(n, {(T, 0): 1}, session=ALICE)
        assert r.error_code == E.none and alter_codes(r) == {(T, 0): E.topic_authorization_failed}
        r = await delete(n, [T], session=ALICE)
        assert [(t.topic_name, t.error_code) for t in r.responses] == [(T, E.topic_authorization_failed)]
    finally:
        n.close()


async def test_an_offset_altered_past_the_log_end_waits_for_the_records(node):
    await produce(node, 0, 2)
    first = str(uuid.uuid4())
    await heartbeat(node, first, 0)
    await heartbeat(node, first, -1)
    assert (await alter(node, {(T, 0): 5})).error_code == E.none  # Kafka writes it without checking
    member = str(uuid.uuid4())
    await heartbeat(node, member, 0)
    assert await fetch(node, member, 0) == []
    await produce(node, 0, 5)  # offsets 2-6
    assert await fetch(node, member, 1) == [(5, 6)]


async def test_describe_shows_the_start_offset_last_written(node):
    """Kafka's share partition writes its state on acknowledgement, not when it first fetches: until
    then DescribeShareGroupOffsets answers -1 for it (the Java Admin lists no offset)."""
    await produce(node, 0, 3)
    member = str(uuid.uuid4())
    await heartbeat(node, member, 0)
    assert await fetch(node, member, 0) == [(0, 2)]
    assert offsets(await describe(node)) == {(T, 0): (-1, E.none), (T, 1): (-1, E.none)}
    await fetch(node, member, 1, acks=[(0, 1, 1)])
    assert offsets(await describe(node)) == {(T, 0): (2, E.none), (T, 1): (-1, E.none)}


async def test_altered_and_deleted_offsets_survive_a_crash(tmp_path):
    """Alter and Delete are written to __share_group_state before they are answered."""
    from node_support import crash

    n = open_node(tmp_path / "data")
    n.finalize_features({"share.version": 1})
    n.share.configs.alter(G, [Op("share.auto.offset.reset", 0, "earliest")], False)
    await produce(n, 0, 6)
    await produce(n, 1, 2)
    await consume(n, 0, accept_through=0)
    await consume(n, 1, accept_through=1)
    assert (await alter(n, {(T, 0): 3})).error_code == E.none
    crash(n)
    n = open_node(tmp_path / "data")
    try:
        assert offsets(await describe(n)) == {(T, 0): (3, E.none), (T, 1): (2, E.none)}
        assert (await delete(n, [T])).responses[0].error_code == E.none
    finally:
        crash(n)
    n = open_node(tmp_path / "data")
    try:
        assert offsets(await describe(n, [(T, (0, 1))])) == {(T, 0): (-1, E.none), (T, 1): (-1, E.none)}
        member = str(uuid.uuid4())
        await heartbeat(n, member, 0)
        assert await fetch(n, member, 0) == [(0, 5)]  # from share.auto.offset.reset=earliest
    finally:
        n.close()
