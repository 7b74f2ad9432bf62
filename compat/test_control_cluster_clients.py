"""Stock clients on a three-broker kafka-shim while the control plane moves leaders and loses
responses: an idempotent producer leaves no duplicate and no gap across a leader move and lost
Produce responses, and an assigned consumer follows a leader change without losing its place."""

from __future__ import annotations

import concurrent.futures
import functools

import pytest

from compat.support import wait_for
from compat.txn_clients import CLIENT_NAMES, Clients
from compat.wire import Wire
from shim.broker import BrokerThread

pytestmark = pytest.mark.shim_only("drives the broker's control plane")


@pytest.fixture
def cluster(tmp_path):
    with BrokerThread(data_dir=tmp_path / "kafka-shim", listen="127.0.0.1:0", brokers=3,
                      group_initial_rebalance_delay_ms=0) as broker:
        yield broker


def create_topic(cluster, topic: str, partitions: int = 1) -> None:
    cluster.call(lambda: (cluster.node.logs.create_topic(topic, partitions),
                          cluster.node.cluster.set_replication_factor(topic, 3)))


def address(cluster, node: int) -> str:
    return cluster.bootstrap_servers.split(",")[node - cluster.node.config.node_id]


def leader(cluster, topic: str, partition: int = 0) -> int:
    (state,) = [p for p in cluster.control.cluster(topic=topic)["partitions"] if p["partition"] == partition]
    return state["leader"]


@pytest.mark.parametrize("client", ["kafka-python", "confluent-kafka", "aiokafka", "java"])
def test_idempotent_producer_across_a_leader_move_and_lost_responses(cluster, client, request, monkeypatch):
    from compat import test_idempotent_retries as idem

    n = 1500
    monkeypatch.setattr(idem, "N", n)
    topic = f"control-move-{client}"
    produce = idem.PRODUCE[client]
    if client == "java":
        produce = functools.partial(java_produce, request.getfixturevalue("java_drivers"), n=n)
    create_topic(cluster, topic)
    control = cluster.control
    lost = control.close(api="Produce", when="after", skip=3, count=2)["rule"]
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        running = pool.submit(produce, cluster.bootstrap_servers, topic)
        control.wait(rule=lost, fired=2, timeout_ms=120_000)  # mid-stream: two responses lost ...
        first = leader(cluster, topic)
        moved = control.move_leader(topic=topic, partition=0, node=(first + 1) % 3)  # ... then the leader moves
        offsets = running.result(timeout=300)
    assert moved["leader_epoch"] >= 1 and leader(cluster, topic) != first
    assert offsets == list(range(n)), "acknowledged offsets are not one per record in order"
    wire = Wire(address(cluster, leader(cluster, topic)))
    try:
        headers = wire.fetch_batches(topic, 0, n)
        assert len({h.producer_id for h in headers}) == 1
        expected = 0
        for h in headers:  # each sequence once, no gap, across both leaders
            assert h.base_sequence == expected
            expected += h.records_count
        assert expected == n == wire.list_offset(topic, 0, 0)
        assert {h.partition_leader_epoch for h in headers} == {0, moved["leader_epoch"]}  # both leaders wrote
    finally:
        wire.close()


def java_produce(java_drivers, bootstrap, topic, n):
    scenario = "producer.idempotent_retries"
    out = java_drivers.run("KafkaDriver", scenario, bootstrap, timeout=300, timeout_s=200, topic=topic, records=n,
                           create_topic="false")
    result = out["results"][scenario]
    if not result["ok"]:
        pytest.fail(f"{scenario}: {result['error']}\n{result['trace']}")
    assert result["observed"]["callbacks_per_record"] == {"1": n}
    return result["observed"]["offsets"]


@pytest.mark.parametrize("client_name", CLIENT_NAMES)
def test_a_consumer_survives_a_leader_change(cluster, client_name):
    topic = f"control-follow-{client_name}"
    create_topic(cluster, topic)
    clients = Clients(client_name, cluster.bootstrap_servers)
    try:
        producer = clients.plain_producer()
        assert [producer.send(topic, b"before-%d" % i) for i in range(3)] == [0, 1, 2]
        consumer = clients.consumer("read_uncommitted", topic)
        wait_for(lambda: consumer.pump(0.1) is not None and len(consumer.records) >= 3, 30, 0, "three records")
        old = leader(cluster, topic)
        cluster.control.move_leader(topic=topic, partition=0, node=(old + 1) % 3)
        assert [producer.send(topic, b"after-%d" % i) for i in range(3)] == [3, 4, 5]  # to the new leader
        wait_for(lambda: consumer.pump(0.1) is not None and len(consumer.records) >= 6, 30, 0, "three records more")
        assert consumer.records == [(i, v) for i, v in enumerate(
            [b"before-0", b"before-1", b"before-2", b"after-0", b"after-1", b"after-2"])]
        assert consumer.position() == 6
    finally:
        clients.close_all()
