"""The share-group APIs through the dispatcher (ShareGroupHeartbeat 76, ShareGroupDescribe 77,
ShareFetch 78, ShareAcknowledge 79, FindCoordinator key type 2) on a node emulating Kafka 4.1,
and the share coordinator's timers driven with explicit ``now_ms`` (no sleeping)."""

from __future__ import annotations

import base64
import itertools
import time
import uuid

import pytest

from kafka_codecs import encode_batch
from shim.apis.dispatch import dispatch
from shim.config import BrokerConfig
from shim.errors import ErrorCode
from shim.node import Node
from shim.protocol.messages import RequestHeader, decode_response, encode_request, make, request_class, request_module

TOPIC = "t"
_corr = itertools.count(1)


async def call(node, api_key, version, **fields):
    corr = next(_corr)
    raw = await dispatch(node, encode_request(RequestHeader(api_key, version, corr, "share-tests"),
                                              make(request_class(api_key, version), **fields)))
    return decode_response(raw, api_key, version)[1]


@pytest.fixture
def node(tmp_path):
    n = Node(BrokerConfig(data_dir=tmp_path / "data", kafka_version="4.1"))
    n.logs.create_topic(TOPIC, 2)
    yield n
    n.close()


@pytest.fixture
def share_node(node):
    node.finalize_features({"share.version": 1})
    node.share.configs.alter("g", [_set("share.auto.offset.reset", "earliest")], False)
    return node


def _set(name, value):
    from shim.configs.admin import Op
    return Op(name, 0, value)


async def produce(node, partition, *values):
    m = request_module(0, 9)
    batch = encode_batch([(None, v, (), int(time.time() * 1000)) for v in values])
    data = (m.TopicProduceData(name=TOPIC, partition_data=(m.PartitionProduceData(index=partition, records=batch),)),)
    r = await call(node, 0, 9, transactional_id=None, acks=-1, timeout=5000, topic_data=data)
    assert r.responses[0].partition_responses[0].error_code == ErrorCode.none


async def heartbeat(node, member, epoch, topics=(TOPIC,), group="g"):
    return await call(node, 76, 1, group_id=group, member_id=member, member_epoch=epoch, rack_id=None,
                      subscribed_topic_names=topics)


def topic_id(node):
    return node.logs.topics[TOPIC].topic_id


async def share_fetch(node, member, epoch, partitions=(0,), acks=None, max_wait=0, group="g"):
    m = request_module(78, 1)
    acks = acks or {}
    parts = tuple(m.FetchPartition(partition_index=p, acknowledgement_batches=tuple(
        m.AcknowledgementBatch(first_offset=f, last_offset=l, acknowledge_types=tuple(t)) for f, l, t in acks.get(p, ())))
        for p in partitions)
    topics = (m.FetchTopic(topic_id=topic_id(node), partitions=parts),) if parts else ()
    return await call(node, 78, 1, group_id=group, member_id=member, share_session_epoch=epoch, max_wait=max_wait,
                      min_bytes=1, max_bytes=1 << 20, max_records=500, batch_size=500, topics=topics,
                      forgotten_topics_data=())


async def share_ack(node, member, epoch, partition, batches, group="g"):
    m = request_module(79, 1)
    parts = (m.AcknowledgePartition(partition_index=partition, acknowledgement_batches=tuple(
        m.AcknowledgementBatch(first_offset=f, last_offset=l, acknowledge_types=tuple(t)) for f, l, t in batches)),)
    return await call(node, 79, 1, group_id=group, member_id=member, share_session_epoch=epoch,
                      topics=(m.AcknowledgeTopic(topic_id=topic_id(node), partitions=parts),))


def acquired(response, partition=0):
    return [(a.first_offset, a.last_offset, a.delivery_count) for t in response.responses for p in t.partitions
            if p.partition_index == partition for a in p.acquired_records]


async def test_share_groups_are_off_until_share_version_1(node):
    r = await heartbeat(node, "m1", 0)
    assert r.error_code == ErrorCode.unsupported_version
    r = await share_fetch(node, "m1", 0)
    assert r.error_code == ErrorCode.unsupported_version


async def test_members_join_get_every_partition_between_them_and_leave(share_node):
    m1, m2 = str(uuid.uuid4()), str(uuid.uuid4())
    r1 = await heartbeat(share_node, m1, 0)
    assert r1.error_code == ErrorCode.none and r1.member_epoch >= 1
    assert r1.assignment.topic_partitions == ()  # initialized after this answer (Kafka 4.1)
    r1 = await heartbeat(share_node, m1, r1.member_epoch)
    assert {p for t in r1.assignment.topic_partitions for p in t.partitions} == {0, 1}
    r2 = await heartbeat(share_node, m2, 0)
    r1 = await heartbeat(share_node, m1, r1.member_epoch)
    assert r1.member_epoch == r2.member_epoch > 1
    owned = [{p for t in r.assignment.topic_partitions for p in t.partitions} for r in (r1, r2)]
    assert owned[0] | owned[1] == {0, 1} and owned[0] and owned[1]
    d = (await call(share_node, 77, 1, group_ids=("g", "nope"), include_authorized_operations=False)).groups
    assert d[0].group_state == "Stable" and {m.member_id for m in d[0].members} == {m1, m2}
    assert d[1].error_code == ErrorCode.group_id_not_found
    assert (await heartbeat(share_node, m2, -1)).member_epoch == -1
    assert (await heartbeat(share_node, m1, 0)).error_code == ErrorCode.none
    stale = await heartbeat(share_node, m1, 1)
    assert stale.error_code == ErrorCode.fenced_member_epoch


async def test_heartbeat_validation(share_node):
    assert (await heartbeat(share_node, "", 0)).error_code == ErrorCode.invalid_request
    assert (await heartbeat(share_node, "m", 0, topics=None)).error_code == ErrorCode.invalid_request
    assert (await heartbeat(share_node, "m", 5)).error_code == ErrorCode.unknown_member_id


async def test_share_fetch_acquires_and_acknowledges_through_sessions(share_node):
    await produce(share_node, 0, b"a", b"b", b"c")
    r = await share_fetch(share_node, "m1", 0)
    assert r.error_code == ErrorCode.none and acquired(r) == [(0, 2, 1)]
    assert r.acquisition_lock_timeout.total_seconds() == 30
    # another member sees nothing while m1 holds them
    assert acquired(await share_fetch(share_node, "m2", 0)) == []
    # piggybacked: accept 0, release 1, reject 2
    r = await share_fetch(share_node, "m1", 1, acks={0: [(0, 2, (1, 2, 3))]})
    part = r.responses[0].partitions[0]
    assert part.acknowledge_error_code == ErrorCode.none
    assert acquired(r) == [(1, 1, 2)]  # the released record came straight back
    assert (await share_fetch(share_node, "m1", 1)).error_code == ErrorCode.invalid_share_session_epoch
    r = await share_ack(share_node, "m1", 2, 0, [(1, 1, (1,))])
    assert r.error_code == ErrorCode.none and r.responses[0].partitions[0].error_code == ErrorCode.none
    sp = share_node.share.partitions[("g", TOPIC, 0)]
    assert sp.start_offset == 3 and not sp.records


async def test_session_errors(share_node):
    assert (await share_fetch(share_node, "m1", 4)).error_code == ErrorCode.share_session_not_found
    assert (await share_fetch(share_node, "m1", 0, acks={0: [(0, 0, (1,))]})).error_code == ErrorCode.invalid_request
    await share_fetch(share_node, "m1", 0)
    assert (await share_ack(share_node, "m1", 0, 0, [(0, 0, (1,))])).error_code == ErrorCode.invalid_share_session_epoch


async def test_acknowledging_records_not_held_is_invalid_record_state(share_node):
    await produce(share_node, 0, b"a")
    await share_fetch(share_node, "m1", 0)
    await share_fetch(share_node, "m2", 0)
    r = await share_ack(share_node, "m2", 1, 0, [(0, 0, (1,))])
    assert r.responses[0].partitions[0].error_code == ErrorCode.invalid_record_state
    r = await share_ack(share_node, "m1", 1, 0, [(0, 0, (7,))])
    assert r.responses[0].partitions[0].error_code == ErrorCode.invalid_request


async def test_closing_a_session_releases_what_the_member_held(share_node):
    """The released record comes back with the delivery count it had before the closed session
    fetched it (Kafka 4.1: releaseAcquiredRecords' DeliveryCountOps.DECREASE)."""
    await produce(share_node, 0, b"a", b"b")
    await share_fetch(share_node, "m1", 0)
    r = await share_fetch(share_node, "m1", -1, acks={0: [(0, 0, (1,))]})
    assert r.error_code == ErrorCode.none
    assert acquired(await share_fetch(share_node, "m2", 0)) == [(1, 1, 1)]


async def test_a_parked_share_fetch_wakes_on_an_append(share_node):
    import asyncio

    await share_fetch(share_node, "m1", 0)
    parked = asyncio.ensure_future(share_fetch(share_node, "m1", 1, max_wait=10_000))
    while not share_node.changes.parked():
        await asyncio.sleep(0)
    await produce(share_node, 0, b"late")
    r = await asyncio.wait_for(parked, 5)
    assert acquired(r) == [(0, 0, 1)]


async def test_a_parked_share_fetch_ends_when_its_client_closes(share_node):
    """It waited out max_wait (up to 24 days) after its client had gone, as a Fetch did."""
    import asyncio

    from shim.apis.dispatch import dispatch
    from shim.protocol.messages import RequestHeader, encode_request, make
    from shim.security.session import ConnectionSession

    await share_fetch(share_node, "m1", 0)
    m = request_module(78, 1)
    request = make(m.ShareFetchRequest, group_id="g", member_id="m1", share_session_epoch=1, max_wait=86_400_000,
                   min_bytes=1, max_bytes=1 << 20, max_records=500, batch_size=500, forgotten_topics_data=(),
                   topics=(m.FetchTopic(topic_id=topic_id(share_node), partitions=(
                       m.FetchPartition(partition_index=0, acknowledgement_batches=()),)),))
    session = ConnectionSession("PLAINTEXT")
    session.gone = asyncio.get_running_loop().create_future()
    parked = asyncio.ensure_future(dispatch(share_node, encode_request(RequestHeader(78, 1, 9, "c"), request),
                                            session=session))
    while not share_node.changes.parked():
        await asyncio.sleep(0)
    session.gone.set_result(None)  # the connection's end of stream
    await asyncio.wait_for(parked, 5)
    assert not share_node.changes.parked()


async def test_lock_expiry_and_session_timeout_run_on_the_broker_timer(share_node):
    share = share_node.share
    await produce(share_node, 0, b"a")
    r = await heartbeat(share_node, "m1", 0)
    assert r.error_code == ErrorCode.none
    got = share.acquire("g", "m1", TOPIC, 0, share_node.logs.get(TOPIC, 0), 10, 1 << 20, 1_000)
    assert got.ranges == [(0, 0, 1)]
    assert share.next_deadline() <= 1_000 + 30_000
    share_node.tick(1_000 + 30_000)  # the lock expires
    again = share.acquire("g", "m2", TOPIC, 0, share_node.logs.get(TOPIC, 0), 10, 1 << 20, 31_000)
    assert again.ranges == [(0, 0, 2)]
    far = int(time.time() * 1000) + 46_000
    share_node.tick(far)  # m1's session timed out: it is no longer a member
    assert "m1" not in share.groups["g"].members


async def test_find_coordinator_for_a_share_partition_key(share_node):
    key = f"g:{base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip('=')}:0"
    keys = (key, "no-colons", f"g:{uuid.uuid4()}:0")
    r = await call(share_node, 10, 6, key_type=2, coordinator_keys=keys)
    assert r.coordinators[0].error_code == ErrorCode.coordinator_not_available  # __share_group_state is created
    r = await call(share_node, 10, 6, key_type=2, coordinator_keys=keys)
    assert r.coordinators[0].error_code == ErrorCode.none and r.coordinators[0].node_id == share_node.config.node_id
    assert r.coordinators[1].error_code == ErrorCode.invalid_request
    assert r.coordinators[2].error_code == ErrorCode.invalid_request  # Kafka's Uuid.fromString is base64 only


async def test_acknowledged_state_survives_a_crash(tmp_path):
    from node_support import NodeFactory

    nodes = NodeFactory(tmp_path / "data", kafka_version="4.1")
    first = nodes()
    first.logs.create_topic(TOPIC, 2)
    first.finalize_features({"share.version": 1})
    first.share.configs.alter("g", [_set("share.auto.offset.reset", "earliest")], False)
    await produce(first, 0, b"a", b"b", b"c", b"d")
    assert acquired(await share_fetch(first, "m1", 0)) == [(0, 3, 1)]
    r = await share_ack(first, "m1", 1, 0, [(0, 1, (1, 3)), (2, 2, (2,))])  # accept, reject, release; 3 held
    assert r.responses[0].partitions[0].error_code == ErrorCode.none
    nodes.crash(first)
    again = nodes()
    try:
        # acknowledged and archived stay done; the released and the held one come back, counted
        assert acquired(await share_fetch(again, "m2", 0)) == [(2, 3, 2)]
        assert again.share.partitions[("g", TOPIC, 0)].start_offset == 2
    finally:
        nodes.crash_all()


async def test_list_groups_names_share_groups(share_node):
    await heartbeat(share_node, "m1", 0)
    r = await call(share_node, 16, 5, states_filter=(), types_filter=())
    assert [(g.group_id, g.protocol_type, g.group_state, g.group_type) for g in r.groups] == [
        ("g", "share", "Stable", "share")]
    assert (await call(share_node, 16, 5, states_filter=(), types_filter=("classic",))).groups == ()
    assert (await call(share_node, 16, 5, states_filter=("empty",), types_filter=("share",))).groups == ()


async def test_a_classic_groups_id_is_not_a_share_group(share_node):
    r = await call(share_node, 11, 9, group_id="classic", session_timeout=10_000, rebalance_timeout=10_000,
                   member_id="", group_instance_id=None, protocol_type="consumer",
                   protocols=(request_module(11, 9).JoinGroupRequestProtocol(name="range", metadata=b""),),
                   reason=None)
    assert r.error_code in (ErrorCode.member_id_required, ErrorCode.none)
    hb = await heartbeat(share_node, "m1", 0, group="classic")
    assert hb.error_code == ErrorCode.group_id_not_found
    assert hb.error_message == "Group classic is not a share group."


async def test_a_recreated_topic_starts_its_share_state_afresh(share_node):
    await produce(share_node, 0, b"a", b"b")
    assert acquired(await share_fetch(share_node, "m1", 0)) == [(0, 1, 1)]
    share_node.logs.delete_topic(TOPIC)
    share_node.logs.create_topic(TOPIC, 2)
    await produce(share_node, 0, b"new")
    assert acquired(await share_fetch(share_node, "m1", 0)) == [(0, 0, 1)]


async def test_a_recreated_topic_gives_members_a_new_assignment_with_its_new_id(share_node):
    # Kafka's group metadata hash covers each subscribed topic's id: a topic deleted and made again
    # with as many partitions bumps the group epoch, and the member is told the new topic id
    m = str(uuid.uuid4())
    r = await heartbeat(share_node, m, (await heartbeat(share_node, m, 0)).member_epoch)
    old_id = topic_id(share_node)
    assert [t.topic_id for t in r.assignment.topic_partitions] == [old_id]
    share_node.logs.delete_topic(TOPIC)
    share_node.logs.create_topic(TOPIC, 2)
    again = await heartbeat(share_node, m, r.member_epoch)  # the new topic is initialized after this answer
    assert again.error_code == ErrorCode.none and again.member_epoch > r.member_epoch
    assert again.assignment is not None and again.assignment.topic_partitions == ()
    again = await heartbeat(share_node, m, again.member_epoch)
    assert [t.topic_id for t in again.assignment.topic_partitions] == [topic_id(share_node)] != [old_id]


async def test_a_share_session_does_not_fetch_a_recreated_topic_until_the_member_adds_its_new_id(share_node):
    # sessions hold topic ids: records of the new topic acquired for a session still on the old id
    # reach a client that drops them (unknown id) and come back later with a higher delivery count
    await produce(share_node, 0, b"old")
    assert acquired(await share_fetch(share_node, "m1", 0)) == [(0, 0, 1)]
    share_node.logs.delete_topic(TOPIC)
    share_node.logs.create_topic(TOPIC, 2)
    await produce(share_node, 0, b"new")
    stale = await share_fetch(share_node, "m1", 1, partitions=())
    assert stale.error_code == ErrorCode.none and acquired(stale) == []
    assert acquired(await share_fetch(share_node, "m1", 2)) == [(0, 0, 1)]


async def test_a_partition_acknowledged_again_and_again_does_not_hold_the_loop(share_node):
    """A ShareAcknowledge naming one partition 20,000 times, each entry a batch over the 500 acquired
    offsets and one past them (so each walks them all and fails): the entries were applied in one
    turn of the loop, 4 CPU seconds; now paced. Each entry still gets its answer."""
    from loop_stall import stall_during

    member = str(uuid.uuid4())
    epoch = (await heartbeat(share_node, member, 0)).member_epoch
    await heartbeat(share_node, member, epoch)
    for _ in range(5):
        await produce(share_node, 0, *[b"v%d" % i for i in range(100)])
    assert acquired(await share_fetch(share_node, member, 0))[-1][1] == 499
    m = request_module(79, 1)
    part = m.AcknowledgePartition(partition_index=0, acknowledgement_batches=(
        m.AcknowledgementBatch(first_offset=0, last_offset=500, acknowledge_types=(1,)),))
    r, stall = await stall_during(call(share_node, 79, 1, group_id="g", member_id=member, share_session_epoch=1,
                                       topics=(m.AcknowledgeTopic(topic_id=topic_id(share_node),
                                                                  partitions=(part,) * 20_000),)))
    assert r.error_code == ErrorCode.none and len(r.responses[0].partitions) == 20_000
    assert {p.error_code for p in r.responses[0].partitions} == {ErrorCode.invalid_record_state}
    assert stall.cpu < 0.5, stall
