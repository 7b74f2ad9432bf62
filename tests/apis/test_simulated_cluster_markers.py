"""WriteTxnMarkers in a simulated three-broker cluster (shim.cluster): only the partition's leader
writes the marker. A follower answers NOT_LEADER_OR_FOLLOWER -- 3.9 from the append
(Partition.appendRecordsToLeader), 4.x for __consumer_offsets from the group coordinator, loaded on
the leader only, whose NOT_COORDINATOR KafkaApis.handleWriteTxnMarkersRequest translates -- and a
broker with no replica UNKNOWN_TOPIC_OR_PARTITION (ReplicaManager.getMagic finds no log)."""

from __future__ import annotations

import pytest

from shim.config import BrokerConfig
from shim.errors import ErrorCode
from shim.node import Node
from test_simulated_cluster import call


@pytest.fixture(params=["3.9", "4.1"])
def node(tmp_path, request):
    n = Node(BrokerConfig(data_dir=tmp_path, brokers=3, kafka_version=request.param))
    for node_id in (0, 1, 2):
        n.bound(n.listeners[0], 9000 + node_id, node_id)
    n.logs.create_topic("t", 1)
    n.cluster.set_replication_factor("t", 3)
    n.logs.create_topic("solo", 1)  # one replica
    n.logs.ensure_topic("__consumer_offsets", n.txn.offsets_partitions)
    yield n
    n.close()


async def _markers(node, node_id, topic):
    r = await call(node, node_id, 27, 1, lambda m: m.WriteTxnMarkersRequest(markers=(m.WritableTxnMarker(
        producer_id=7, producer_epoch=0, transaction_result=False, coordinator_epoch=0,
        topics=(m.WritableTxnMarkerTopic(name=topic, partition_indexes=(0,)),)),)))
    return [p.error_code for marker in r.markers for t in marker.topics for p in t.partitions]


@pytest.mark.parametrize("topic", ["t", "__consumer_offsets"])
async def test_only_the_leader_writes_a_marker(node, topic):
    s = node.cluster.state(topic, 0)
    followers = [n for n in s.replicas if n != s.leader]
    assert len(followers) == 2
    for follower in followers:
        assert await _markers(node, follower, topic) == [ErrorCode.not_leader_or_follower]
    assert node.logs.get(topic, 0).log_end_offset == 0
    assert await _markers(node, s.leader, topic) == [ErrorCode.none]
    assert node.logs.get(topic, 0).log_end_offset == 1


async def test_a_broker_with_no_replica_answers_unknown_topic_or_partition(node):
    [holder] = node.cluster.state("solo", 0).replicas
    for other in {0, 1, 2} - {holder}:
        assert await _markers(node, other, "solo") == [ErrorCode.unknown_topic_or_partition]
    assert node.logs.get("solo", 0).log_end_offset == 0
    assert await _markers(node, holder, "solo") == [ErrorCode.none]
