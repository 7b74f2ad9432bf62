"""Share sessions on a simulated cluster (``--brokers 3``): as every Kafka broker has a share-session
cache of its own, a member holds one session with each broker it fetches from. librdkafka's 0179
share_consumer_destroy found them shared: opening a session with a second broker replaced the
first broker's, whose ShareAcknowledge on close then answered SHARE_SESSION_NOT_FOUND."""

from __future__ import annotations

import itertools

import pytest

from shim.apis.dispatch import dispatch_request
from shim.cluster import GROUP
from shim.config import BrokerConfig
from shim.errors import ErrorCode
from shim.node import Node
from shim.protocol.messages import (RequestHeader, decode_response, encode_request, join_parts, make, request_class,
                                    request_module)

_corr = itertools.count(1)


@pytest.fixture
def node(tmp_path):
    n = Node(BrokerConfig(data_dir=tmp_path / "data", kafka_version="4.1", brokers=3))
    for node_id in range(3):
        n.bound(n.listeners[0], 9000 + node_id, node_id)
    n.logs.create_topic("t", 3)
    n.finalize_features({"share.version": 1})
    yield n
    n.close()


async def call(node, node_id, api_key, version, **fields):
    corr = next(_corr)
    frame = encode_request(RequestHeader(api_key, version, corr, "t"), make(request_class(api_key, version), **fields))
    answer = await dispatch_request(node, frame, node_id=node_id)
    return decode_response(join_parts(answer.parts), api_key, version)[1]


async def share_fetch(node, node_id, epoch, partitions):
    m = request_module(78, 1)
    parts = tuple(m.FetchPartition(partition_index=p, acknowledgement_batches=()) for p in partitions)
    topics = (m.FetchTopic(topic_id=node.logs.topics["t"].topic_id, partitions=parts),) if parts else ()
    r = await call(node, node_id, 78, 1, group_id="g", member_id="m", share_session_epoch=epoch, max_wait=0,
                   min_bytes=1, max_bytes=1 << 20, max_records=500, batch_size=500, topics=topics,
                   forgotten_topics_data=())
    return r.error_code


async def test_a_member_has_a_share_session_with_each_broker(node):
    coordinator = node.cluster.coordinator(GROUP, "g")
    hb = await call(node, coordinator, 76, 1, group_id="g", member_id="m", member_epoch=0, rack_id=None,
                    subscribed_topic_names=("t",))
    assert hb.error_code == ErrorCode.none
    assert await share_fetch(node, 0, 0, [0]) == ErrorCode.none
    assert await share_fetch(node, 0, 1, [0]) == ErrorCode.none      # broker 0 now expects epoch 2
    assert await share_fetch(node, 1, 0, [1]) == ErrorCode.none      # a session with broker 1 too
    assert await share_fetch(node, 0, 2, [0]) == ErrorCode.none      # broker 0's is untouched
    assert await share_fetch(node, 1, -1, []) == ErrorCode.none      # closing broker 1's ...
    assert await share_fetch(node, 0, 3, [0]) == ErrorCode.none      # ... leaves broker 0's open
    assert await share_fetch(node, 1, 1, [1]) == ErrorCode.share_session_not_found
