"""DescribeProducers in a simulated three-broker cluster (shim.cluster): every replica answers from
the log it holds, as a Kafka follower does (ReplicaManager.activeProducerState takes
getPartitionOrError's partition, leader or not); a broker with no replica answers
NOT_LEADER_OR_FOLLOWER."""

from __future__ import annotations

import datetime
import time

import pytest

from kafka_codecs import encode_batch
from shim.config import BrokerConfig
from shim.errors import ErrorCode
from shim.node import Node
from test_simulated_cluster import call


def open_node(path) -> Node:
    n = Node(BrokerConfig(data_dir=path, brokers=3))
    for node_id in (0, 1, 2):
        n.bound(n.listeners[0], 9000 + node_id, node_id)
    return n


@pytest.fixture
def node(tmp_path):
    n = open_node(tmp_path)
    n.logs.create_topic("t", 1)
    n.cluster.set_replication_factor("t", 2)  # partition 0 on brokers 0 (leader) and 1
    yield n
    n.close()


async def produce(node, producer_id, base_sequence, count=1, timestamp=None):
    timestamp = int(time.time() * 1000) if timestamp is None else timestamp  # not yet expired at a restart
    batch = encode_batch([(None, b"v", (), timestamp)] * count, producer_id=producer_id, producer_epoch=0,
                         base_sequence=base_sequence)
    r = await call(node, 0, 0, 9, lambda m: m.ProduceRequest(
        transactional_id=None, acks=1, timeout=datetime.timedelta(seconds=5),
        topic_data=(m.TopicProduceData(name="t", partition_data=(m.PartitionProduceData(index=0, records=batch),)),)))
    assert r.responses[0].partition_responses[0].error_code == ErrorCode.none


async def describe(node, node_id):
    """(error code, {producer id: last sequence}) of partition 0 as ``node_id`` answers."""
    r = await call(node, node_id, 61, 0, lambda m: m.DescribeProducersRequest(
        topics=(m.TopicRequest(name="t", partition_indexes=(0,)),)))
    (p,) = r.topics[0].partitions
    return p.error_code, {s.producer_id: s.last_sequence for s in p.active_producers}


async def test_a_follower_answers_from_its_log_and_a_broker_without_a_replica_refuses(node):
    assert node.cluster.state("t", 0).replicas == (0, 1)
    await produce(node, 7, 0, count=3)
    assert await describe(node, 0) == (ErrorCode.none, {7: 2})
    assert await describe(node, 1) == (ErrorCode.none, {7: 2})
    assert await describe(node, 2) == (ErrorCode.not_leader_or_follower, {})


async def test_a_slowed_follower_answers_the_producers_it_had_fetched(tmp_path):
    node = open_node(tmp_path)
    node.logs.create_topic("t", 1)
    node.cluster.set_replication_factor("t", 2)
    await produce(node, 7, 0, count=2)
    node.cluster.slow_follower("t", 0, 1, 0)
    await produce(node, 7, 2, count=2)
    await produce(node, 8, 0)
    assert await describe(node, 0) == (ErrorCode.none, {7: 3, 8: 0})
    assert await describe(node, 1) == (ErrorCode.none, {7: 1})
    node.close()
    node = open_node(tmp_path)  # cluster.json keeps what the follower holds
    try:
        assert await describe(node, 1) == (ErrorCode.none, {7: 1})
        node.cluster.unslow_follower("t", 0, 1, 0)  # it catches up
        assert await describe(node, 1) == (ErrorCode.none, {7: 3, 8: 0})
    finally:
        node.close()


async def test_a_slowed_followers_producers_expire_at_the_brokers_check(node):
    now = int(time.time() * 1000)
    await produce(node, 7, 0, timestamp=now - 2 * 86_400_000)  # older than producer.id.expiration.ms
    await produce(node, 8, 0, timestamp=now)
    node.cluster.slow_follower("t", 0, 1, now)
    assert await describe(node, 1) == (ErrorCode.none, {7: 0, 8: 0})
    node.tick(node._next_producer_expiration)
    assert await describe(node, 0) == (ErrorCode.none, {8: 0})
    assert await describe(node, 1) == (ErrorCode.none, {8: 0})


async def test_a_slowed_follower_back_from_node_down_describes_the_leaders_producers(tmp_path):
    node = open_node(tmp_path)
    node.logs.create_topic("t", 1)
    node.cluster.set_replication_factor("t", 2)
    await produce(node, 7, 0, count=2)
    node.cluster.slow_follower("t", 0, 1, 0)
    node.cluster.node_down(1, 0)
    await produce(node, 7, 2, count=2)
    node.cluster.node_up(1, 0)  # a restarted broker fetches from the leader again: caught up
    assert await describe(node, 1) == (ErrorCode.none, {7: 3})
    node.close()
    node = open_node(tmp_path)  # cluster.json no longer holds its old producers
    try:
        assert await describe(node, 1) == (ErrorCode.none, {7: 3})
    finally:
        node.close()
