"""FindCoordinator creates the coordinator's internal topic when it does not exist yet (Kafka:
KafkaApis.getCoordinator -> AutoTopicCreationManager.createTopics): the first answer is
COORDINATOR_NOT_AVAILABLE, the topic then exists with the internal topic's partition count and
configs, and the next answer names the coordinator."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from shim.apis.dispatch import dispatch
from shim.config import BrokerConfig
from shim.errors import ErrorCode as E
from shim.node import Node
from shim.protocol.messages import RequestHeader, decode_response, encode_request, request_module

_corr = itertools.count(1)


@pytest.fixture
def node(tmp_path):
    n = Node(BrokerConfig(data_dir=tmp_path / "data", offsets_topic_num_partitions=7,
                          transaction_state_num_partitions=5))
    yield n
    n.close()


async def find(node, key_type, key, version=4):
    m = request_module(10, version)
    if version >= 4:
        request = m.FindCoordinatorRequest(key_type=key_type, coordinator_keys=(key,))
    else:
        request = m.FindCoordinatorRequest(key=key, key_type=key_type)
    corr = next(_corr)
    raw = await dispatch(node, encode_request(RequestHeader(10, version, corr, "c"), request))
    r = decode_response(raw, 10, version)[1]
    c = r.coordinators[0] if version >= 4 else r
    return c.error_code, c.node_id


@pytest.mark.parametrize("key_type,topic,partitions,version", [
    (0, "__consumer_offsets", 7, 4), (0, "__consumer_offsets", 7, 3), (1, "__transaction_state", 5, 4),
    (1, "__transaction_state", 5, 1)])
async def test_the_first_find_creates_the_internal_topic(node, key_type, topic, partitions, version):
    assert topic not in node.logs.topics
    assert await find(node, key_type, "k", version) == (E.coordinator_not_available, -1)
    info = node.logs.topics[topic]
    assert info.partitions == partitions and info.internal
    assert info.configs == node._internal_topic_configs()[topic]
    assert info.configs["cleanup.policy"] == "compact"
    other = ({"__consumer_offsets", "__transaction_state"} - {topic}).pop()
    assert other not in node.logs.topics  # only the key type's own topic
    assert await find(node, key_type, "k", version) == (E.none, node.config.node_id)
    assert await find(node, key_type, "another", version) == (E.none, node.config.node_id)


async def test_finds_at_once_create_the_topic_once(node):
    answers = await asyncio.gather(*(find(node, 0, f"g{i}") for i in range(5)))
    assert answers == [(E.coordinator_not_available, -1)] * 5
    assert node.logs.topics["__consumer_offsets"].partitions == 7
    assert await find(node, 0, "g0") == (E.none, node.config.node_id)


async def test_a_refused_key_creates_nothing(node):
    assert await find(node, 5, "k") == (E.invalid_request, -1)  # an unknown key type
    assert await find(node, 2, "g:AAAAAAAAAAAAAAAAAAAAAA:0", 6) == (E.coordinator_not_available, -1)  # share groups off
    assert not set(node.logs.topics)


async def test_committed_offsets_land_in_the_topic_find_created(node):
    """The group coordinator writes to the topic FindCoordinator made (no second creation)."""
    await find(node, 0, "g")
    topic_id = node.logs.topics["__consumer_offsets"].topic_id
    node.logs.create_topic("t", 1)
    m = request_module(8, 8)
    request = m.OffsetCommitRequest(group_id="g", generation_id_or_member_epoch=-1, member_id="",
                                    group_instance_id=None, topics=(m.OffsetCommitRequestTopic(name="t", partitions=(
                                        m.OffsetCommitRequestPartition(partition_index=0, committed_offset=3,
                                                                       committed_leader_epoch=-1,
                                                                       committed_metadata=""),)),))
    raw = await dispatch(node, encode_request(RequestHeader(8, 8, 99, "c"), request))
    r = decode_response(raw, 8, 8)[1]
    assert r.topics[0].partitions[0].error_code == E.none
    assert node.logs.topics["__consumer_offsets"].topic_id == topic_id
    assert sum(node.logs.get("__consumer_offsets", p).log_end_offset for p in range(7)) == 1
