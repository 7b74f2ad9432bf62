"""Produce v13 (Kafka 4.1): topics named by id; only under 4.1 emulation."""

from __future__ import annotations

import datetime
import uuid

import pytest

from kafka_codecs import encode_batch
from shim.apis.dispatch import dispatch
from shim.config import BrokerConfig
from shim.errors import ErrorCode
from shim.node import Node
from shim.protocol.framing import FrameError
from shim.protocol.messages import RequestHeader, decode_response, encode_request, request_module


@pytest.fixture
def node_for(tmp_path):
    nodes = []

    def make(version):
        nodes.append(Node(BrokerConfig(data_dir=tmp_path / version, kafka_version=version)))
        nodes[-1].logs.create_topic("t", 1)
        return nodes[-1]

    yield make
    for n in nodes:
        n.close()


async def produce_by_id(node, topic_id):
    m = request_module(0, 13)
    request = m.ProduceRequest(transactional_id=None, acks=-1, timeout=datetime.timedelta(seconds=5), topic_data=(
        m.TopicProduceData(topic_id=topic_id, partition_data=(
            m.PartitionProduceData(index=0, records=encode_batch([(None, b"v", (), 1)])),)),))
    raw = await dispatch(node, encode_request(RequestHeader(0, 13, 1, "t"), request))
    (topic,) = decode_response(raw, 0, 13)[1].responses
    return topic


async def test_produce_by_topic_id_under_4_1(node_for):
    node = node_for("4.1")
    topic_id = node.logs.topics["t"].topic_id
    topic = await produce_by_id(node, topic_id)
    (p,) = topic.partition_responses
    assert (topic.topic_id, p.error_code, p.base_offset) == (topic_id, ErrorCode.none, 0)
    assert node.logs.get("t", 0).log_end_offset == 1
    unknown = await produce_by_id(node, uuid.uuid4())
    assert [p.error_code for p in unknown.partition_responses] == [ErrorCode.unknown_topic_id]
    assert node.logs.get("t", 0).log_end_offset == 1


async def test_produce_v13_is_not_served_under_4_0(node_for):
    node = node_for("4.0")
    with pytest.raises(FrameError):
        await produce_by_id(node, node.logs.topics["t"].topic_id)
