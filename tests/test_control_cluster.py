"""The cluster operations of the control plane (shim.control.cluster_ops) on a three-broker
BrokerThread: each is applied when it answers, and what clients see changes with it."""

from __future__ import annotations

import socket

import pytest

from shim.broker import BrokerThread
from shim.control import ControlError


@pytest.fixture
def cluster(tmp_path):
    with BrokerThread(data_dir=tmp_path / "d", listen="127.0.0.1:0", brokers=3) as broker:
        broker.call(lambda: (broker.node.logs.create_topic("t", 3),
                             broker.node.cluster.set_replication_factor("t", 3)))
        yield broker


def refused(address: str) -> bool:
    host, port = address.rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except ConnectionRefusedError:
        return True
    return False


def test_move_leader_answers_the_new_state(cluster):
    answer = cluster.control.move_leader(topic="t", partition=0, node=2)
    assert (answer["leader"], answer["leader_epoch"]) == (2, 1)
    assert cluster.partition_state("t", 0).leader == 2


def test_node_down_closes_its_listener_and_node_up_reopens_it(cluster):
    address = cluster.bootstrap_servers.split(",")[1]
    assert cluster.control.node_down(node=1) == {"down": [1]}
    assert refused(address)
    described = cluster.control.cluster(topic="t")
    assert described["down"] == [1]
    assert all(p["leader"] != 1 and 1 not in p["isr"] for p in described["partitions"])
    with pytest.raises(ControlError):
        cluster.control.node_down(node=1)  # already down
    assert cluster.control.node_up(node=1) == {"down": []}
    assert not refused(address)
    assert all(1 in p["isr"] for p in cluster.control.cluster(topic="t")["partitions"])


def test_move_coordinator_and_slow_follower(cluster):
    answer = cluster.control.move_coordinator(coordinator="group", key="g", node=2)
    assert answer["node"] == 2 == cluster.coordinator("group", "g")
    slowed = cluster.control.slow_follower(topic="t", partition=0, node=1)
    assert slowed["high_watermark"] == slowed["log_end_offset"] == 0
    unslowed = cluster.control.unslow_follower(topic="t", partition=0, node=1)
    assert 1 in unslowed["isr"]


def test_bad_cluster_operations_are_refused(cluster):
    with pytest.raises(ControlError, match="no partition"):
        cluster.control.move_leader(topic="t", partition=9, node=1)
    with pytest.raises(ControlError, match="no node 7"):
        cluster.control.move_leader(topic="t", partition=0, node=7)
    with pytest.raises(ControlError, match="not a follower"):
        cluster.control.slow_follower(topic="t", partition=0, node=0)  # the leader


def test_a_slowed_follower_back_from_node_down_no_longer_holds_the_high_watermark(cluster):
    """A restarted Kafka broker's follower fetches again: back in the ISR, it is caught up, so the
    high watermark neither moves back to where it was slowed nor waits for it."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "acks": "all", "log_level": 2,
                         "message.timeout.ms": 20_000})

    def produce(count: int) -> list:
        reports = []
        for _ in range(count):
            producer.produce("t", b"v", partition=0, on_delivery=lambda e, m: reports.append(e))
        producer.flush(30)
        return reports

    plog = cluster.node.logs.get("t", 0)
    assert cluster.partition_state("t", 0).leader == 0
    assert produce(5) == [None] * 5
    slowed = cluster.control.slow_follower(topic="t", partition=0, node=1)
    assert slowed["high_watermark"] == slowed["log_end_offset"] == 5
    cluster.control.node_down(node=1)
    assert produce(5) == [None] * 5  # acknowledged by brokers 0 and 2
    cluster.control.node_up(node=1)
    assert 1 in cluster.partition_state("t", 0).isr
    assert cluster.call(lambda: (plog.log_end_offset, plog.high_watermark)) == (10, 10)
    assert produce(5) == [None] * 5  # acks=all with broker 1 in the ISR again
    assert cluster.call(lambda: plog.high_watermark) == 15
