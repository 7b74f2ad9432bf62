"""How long a share session lives and what bounds the cache (Kafka 4.1's ShareSessionCache).

Kafka 4.1 never drops a share session for being unused (KAFKA-19159): the member holds acquisition
locks through it, so it lives until the member closes it (-1), opens another (0) or its connection
closes, however long it idles. The cache is bounded by ``group.share.max.share.sessions`` per
broker: an epoch 0 that would open one more answers SHARE_SESSION_LIMIT_REACHED (KAFKA-19158),
the member's own session, which the request replaces, not counting."""

from __future__ import annotations

import itertools

import pytest

from share.test_share_apis import (  # noqa: F401
    _set, acquired, heartbeat, node, produce, share_ack, share_fetch, share_node,
)
from shim.apis.dispatch import dispatch_request
from shim.config import BrokerConfig
from shim.control.ops import call as control
from shim.errors import ErrorCode
from shim.node import Node, now_ms
from shim.protocol.messages import (RequestHeader, decode_response, encode_request, join_parts, make, request_class,
                                    request_module)

ACCEPT = 1


def _long_locks(node) -> None:
    """Locks of 60 s, longer than the 45 s of group.share.session.timeout.ms."""
    node.share.configs.alter("g", [_set("share.auto.offset.reset", "earliest"),
                                   _set("share.record.lock.duration.ms", "60000")], False)


async def test_a_session_idle_past_the_group_session_timeout_keeps_its_records(share_node):  # noqa: F811
    _long_locks(share_node)
    await produce(share_node, 0, b"a", b"b")
    assert acquired(await share_fetch(share_node, "m1", 0)) == [(0, 1, 1)]
    share_node.share.tick(now_ms() + 50_000)  # past group.share.session.timeout.ms (45 s), before the locks
    assert acquired(await share_fetch(share_node, "m2", 0)) == []  # m1 still holds them
    assert (await share_ack(share_node, "m1", 1, 0, [(0, 1, (ACCEPT,))])).error_code == ErrorCode.none
    r = await share_fetch(share_node, "m1", 2)
    assert r.error_code == ErrorCode.none and acquired(r) == []
    assert share_node.share.partitions[("g", "t", 0)].start_offset == 2  # accepted: done with


async def test_advance_clock_leaves_share_sessions_open(share_node):  # noqa: F811
    _long_locks(share_node)
    await produce(share_node, 0, b"a")
    assert (await heartbeat(share_node, "m1", 0)).error_code == ErrorCode.none
    assert acquired(await share_fetch(share_node, "m1", 0)) == [(0, 0, 1)]
    got = await control(share_node.control, "advance_clock", {"ms": 50_000, "clock": "groups"})
    assert got["expired_share_members"] == ["g/m1"] and "expired_share_sessions" not in got
    assert got["expired_acquisition_locks"] == []
    # the member left the group, the session and its lock stay, as in Kafka
    assert (await share_ack(share_node, "m1", 1, 0, [(0, 0, (ACCEPT,))])).error_code == ErrorCode.none


@pytest.fixture
def capped(tmp_path):
    n = Node(BrokerConfig(data_dir=tmp_path / "data", kafka_version="4.1",
                          extra={"group.share.max.share.sessions": "2"}))
    n.logs.create_topic("t", 2)
    n.finalize_features({"share.version": 1})
    yield n
    n.close()


async def test_the_cache_answers_share_session_limit_reached_when_full(capped):
    assert (await share_fetch(capped, "m1", 0)).error_code == ErrorCode.none
    assert (await share_fetch(capped, "m2", 0)).error_code == ErrorCode.none
    capped.share.tick(now_ms() + 600_000)  # nothing ages out to make room
    assert (await share_fetch(capped, "m3", 0)).error_code == ErrorCode.share_session_limit_reached
    assert len(capped.share.sessions.sessions) == 2
    # a member opening its session again replaces it: not one more
    assert (await share_fetch(capped, "m1", 0)).error_code == ErrorCode.none
    assert (await share_fetch(capped, "m2", 1)).error_code == ErrorCode.none  # m2's session untouched
    assert (await share_fetch(capped, "m1", -1, partitions=())).error_code == ErrorCode.none  # closed: room
    assert (await share_fetch(capped, "m3", 0)).error_code == ErrorCode.none
    assert (await share_fetch(capped, "m4", 0)).error_code == ErrorCode.share_session_limit_reached


_corr = itertools.count(1)


async def _fetch_from(node, node_id, member, epoch):
    m = request_module(78, 1)
    topics = (m.FetchTopic(topic_id=node.logs.topics["t"].topic_id,
                           partitions=(m.FetchPartition(partition_index=node_id, acknowledgement_batches=()),)),)
    frame = encode_request(RequestHeader(78, 1, next(_corr), "t"), make(
        request_class(78, 1), group_id="g", member_id=member, share_session_epoch=epoch, max_wait=0, min_bytes=1,
        max_bytes=1 << 20, max_records=500, batch_size=500, topics=topics, forgotten_topics_data=()))
    answer = await dispatch_request(node, frame, node_id=node_id)
    return decode_response(join_parts(answer.parts), 78, 1)[1].error_code


async def test_the_limit_is_per_broker_in_a_simulated_cluster(tmp_path):
    """Each Kafka broker has a cache of its own with group.share.max.share.sessions places."""
    n = Node(BrokerConfig(data_dir=tmp_path / "data", kafka_version="4.1", brokers=2,
                          extra={"group.share.max.share.sessions": "1"}))
    try:
        for node_id in range(2):
            n.bound(n.listeners[0], 9000 + node_id, node_id)
        n.logs.create_topic("t", 2)
        n.finalize_features({"share.version": 1})
        assert await _fetch_from(n, 0, "m1", 0) == ErrorCode.none
        assert await _fetch_from(n, 1, "m1", 0) == ErrorCode.none  # broker 1's cache has room of its own
        assert await _fetch_from(n, 0, "m2", 0) == ErrorCode.share_session_limit_reached
        assert await _fetch_from(n, 1, "m2", 0) == ErrorCode.share_session_limit_reached
    finally:
        n.close()
