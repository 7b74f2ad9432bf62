"""A slowed follower stopped and started again on a simulated three-broker kafka-shim, driven
through the HTTP control plane, with Java, confluent-kafka, kafka-python and aiokafka.

A restarted Kafka broker keeps no fetcher state: its follower fetches from the leader's log end
and rejoins the ISR once caught up to the high watermark (Partition.isFollowerInSync), so it never
holds the high watermark back, let alone moves it back. kafka-shim's ``node_up`` brings the
follower back caught up: records acknowledged with acks=all while it was down stay readable, and
the next acks=all produce, with it in the ISR again, is answered at once.
``replica.lag.time.max.ms`` is far beyond the test, so only ``node_down`` takes the follower out
of the ISR and nothing but ``node_up`` brings it back.
"""

from __future__ import annotations

import itertools
import json
import urllib.request

import pytest

from compat.cluster_clients import CLIENTS, steps
from shim.broker import BrokerThread

pytestmark = pytest.mark.shim_only("operates the simulated cluster through its control plane")
COMPAT_CLIENT = {"java": "java", "confluent": "confluent-kafka", "kafka-python": "kafka-python", "aiokafka": "aiokafka"}
_names = itertools.count()


@pytest.fixture
def cluster(tmp_path):
    with BrokerThread(data_dir=tmp_path / "kafka-shim", listen="127.0.0.1:0", brokers=3, control_listen="127.0.0.1:0",
                      replica_lag_time_max_ms=600_000, group_initial_rebalance_delay_ms=0) as broker:
        yield broker


@pytest.fixture
def client(request, cluster):
    name = request.param
    drivers = request.getfixturevalue("java_drivers") if name == "java" else None
    c = steps(name, cluster.bootstrap_servers, drivers)
    yield c
    c.close()


def control(cluster, operation: str, **arguments) -> dict:
    """POST /v1/ops/OPERATION on the broker's control listener; the JSON answer."""
    request = urllib.request.Request(f"{cluster.broker.control_url}/v1/ops/{operation}",
                                     data=json.dumps(arguments).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as answer:
        return json.loads(answer.read())


def create_topic(cluster) -> str:
    from confluent_kafka.admin import AdminClient, NewTopic

    topic = f"restart-{next(_names)}"
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    for f in admin.create_topics([NewTopic(topic, 1, 3)]).values():
        f.result(30)
    return topic


@pytest.mark.parametrize("client", [
    pytest.param(name, id=name, marks=pytest.mark.compat(client=COMPAT_CLIENT[name],
                                                         scenario="cluster.slowed_follower_restart"))
    for name in CLIENTS], indirect=True)
def test_a_slowed_follower_back_from_node_down_has_caught_up(cluster, client):
    topic = create_topic(cluster)
    client.producer()  # idempotent, acks=all
    assert client.send(topic, 0, 0, 10) == (10, [])
    (state,) = control(cluster, "cluster", topic=topic)["partitions"]
    follower = next(r for r in state["replicas"] if r != state["leader"])
    slowed = control(cluster, "slow_follower", topic=topic, partition=0, node=follower)
    assert slowed["high_watermark"] == slowed["log_end_offset"] == 10
    assert control(cluster, "node_down", node=follower) == {"down": [follower]}
    assert client.send(topic, 0, 10, 20) == (10, [])  # acknowledged by the ISR without it
    assert control(cluster, "node_up", node=follower) == {"down": []}
    (state,) = control(cluster, "cluster", topic=topic)["partitions"]
    assert sorted(state["isr"]) == sorted(state["replicas"])
    client.consumer(f"{topic}-check", topic)
    # every acknowledged record stays below the high watermark: it did not move back to 10
    assert client.poll(20, 30) == list(range(20))
    assert client.send(topic, 0, 20, 30) == (10, [])  # acks=all with the follower in the ISR
    assert client.poll(10, 30) == list(range(20, 30))
    plog = cluster.node.logs.get(topic, 0)
    assert cluster.call(lambda: (plog.log_end_offset, plog.high_watermark)) == (30, 30)
