"""A simulated three-broker kafka-shim (README.md, A simulated cluster) with the stock clients:
Java, confluent-kafka (librdkafka), kafka-python and aiokafka.

* an idempotent producer keeps writing across two partition-leader moves: every value once, in
  order, no gap (the client gets NOT_LEADER_OR_FOLLOWER from the old leader and resends its batch,
  with the same sequence numbers, to the new one);
* a consumer group keeps consuming and committing across a move of its coordinator, once its
  heartbeat has found the new coordinator (librdkafka 2.x, when a commit is what finds the move,
  can close and reopen its coordinator connection for as long as the session lasts and then
  loses its membership; it would against Kafka too);
* a transactional producer commits a transaction whose coordinator moved half-way through;
* a consumer stops at the high watermark while a follower is slowed, and reads on once it is not;
* an acks=all produce waits for a slowed follower until the ISR drops it (replica.lag.time.max.ms).

Each test changes the cluster between the client's steps, so every step's outcome is observed,
not timed. Needs a kafka-shim of its own (the cluster operations are kafka-shim's).
"""

from __future__ import annotations

import itertools
import time

import pytest

from compat.cluster_clients import CLIENTS, steps
from shim.broker import BrokerThread

pytestmark = pytest.mark.shim_only("operates the simulated cluster")
_names = itertools.count()


@pytest.fixture
def cluster(tmp_path):
    with BrokerThread(data_dir=tmp_path / "kafka-shim", listen="127.0.0.1:0", brokers=3,
                      group_initial_rebalance_delay_ms=0) as broker:
        yield broker


COMPAT_CLIENT = {"java": "java", "confluent": "confluent-kafka", "kafka-python": "kafka-python", "aiokafka": "aiokafka"}


def each_client(scenario: str):
    return pytest.mark.parametrize("client", [
        pytest.param(name, id=name, marks=pytest.mark.compat(client=COMPAT_CLIENT[name], scenario=scenario))
        for name in CLIENTS], indirect=True)


@pytest.fixture
def client(request, cluster):
    name = request.param
    drivers = request.getfixturevalue("java_drivers") if name == "java" else None
    c = steps(name, cluster.bootstrap_servers, drivers)
    yield c
    c.close()


def create_topic(cluster, partitions=1) -> str:
    from confluent_kafka.admin import AdminClient, NewTopic

    topic = f"cluster-{next(_names)}"
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    for f in admin.create_topics([NewTopic(topic, partitions, 3)]).values():
        f.result(30)
    return topic


def until(condition, timeout: float = 30.0) -> None:
    """Wait for the broker's state to satisfy ``condition``."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the state was not reached"
        time.sleep(0.01)


def session_deadlines(cluster, group: str) -> dict:
    """Each member's session deadline, which moves only when the group's coordinator accepts the
    member's heartbeat or commit (a classic group, or a KIP-848 consumer group)."""
    def read():
        groups = cluster.node.groups
        if group in groups.groups:
            return {m.member_id: m.heartbeat_deadline for m in groups.groups[group].members.values()}
        return {m.member_id: m.session_deadline for m in groups.consumer.groups[group].members.values()}
    return cluster.call(read)


def heard_from_every_member(cluster, group: str, since: dict):
    """The condition that each member in ``since`` is still one and has been heard from since."""
    def condition():
        now = session_deadlines(cluster, group)
        return now.keys() == since.keys() and all(now[m] != since[m] for m in now)
    return condition


def other_node(node: int) -> int:
    return (node + 1) % 3


@each_client("cluster.leader_move")
def test_idempotent_producer_across_leader_moves_leaves_no_duplicate_and_no_gap(cluster, client):
    topic = create_topic(cluster)
    client.producer()
    assert client.send(topic, 0, 0, 100) == (100, [])
    for step in (1, 2):
        leader = cluster.partition_state(topic, 0).leader
        epoch = cluster.move_leader(topic, 0, other_node(leader))
        assert epoch == step
        assert client.send(topic, 0, 100 * step, 100 * (step + 1)) == (100, [])
    client.consumer(f"{topic}-check", topic)
    assert client.poll(300, 60) == list(range(300))
    assert cluster.partition_state(topic, 0).epochs[-1][0] == 2


@each_client("cluster.group_coordinator_move")
def test_consumer_group_survives_a_coordinator_move(cluster, client):
    topic = create_topic(cluster)
    group = f"{topic}-group"
    client.producer()
    assert client.send(topic, 0, 0, 50) == (50, [])
    client.consumer(group, topic)
    first = client.poll(50, 60)
    assert first == list(range(50))
    coordinator = cluster.coordinator("group", group)
    cluster.move_coordinator("group", group, other_node(coordinator))
    assert cluster.coordinator("group", group) != coordinator
    at_move = session_deadlines(cluster, group)  # the new coordinator restarted each session
    assert len(at_move) == 1
    client.serve_until(heard_from_every_member(cluster, group, at_move), 60)  # a heartbeat found it
    assert client.send(topic, 0, 50, 100) == (50, [])
    assert client.poll(50, 60) == list(range(50, 100))  # and committed through the new coordinator
    committed = cluster.call(lambda: cluster.node.groups.fetch_offsets(group, False, [(topic, 0)]))
    assert [c.offset for _, c, _ in committed] == [100]


@each_client("cluster.txn_coordinator_move")
def test_transactional_producer_survives_a_coordinator_move_mid_transaction(cluster, client):
    topic = create_topic(cluster)
    txn_id = f"{topic}-txn"
    client.producer(txn_id)
    client.begin()
    assert client.send(topic, 0, 0, 50) == (50, [])
    coordinator = cluster.coordinator("transaction", txn_id)
    cluster.move_coordinator("transaction", txn_id, other_node(coordinator))
    assert client.send(topic, 0, 50, 100) == (50, [])
    client.commit()
    client.consumer(f"{topic}-check", topic, "read_committed")
    assert client.poll(100, 60) == list(range(100))
    state = cluster.call(lambda: cluster.node.txn.txns[txn_id].state.kafka_name)
    assert state == "CompleteCommit"


@pytest.mark.compat(client="confluent-kafka", scenario="cluster.coordinator_placement")
def test_the_group_coordinator_leads_the_partition_kafka_hashes_the_group_to(tmp_path):
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
    from confluent_kafka.admin import AdminClient

    # "orders-consumer".hashCode() is -1204742690: Kafka's Utils.abs gives partition 40 of the 50;
    # masking the sign bit would give 8, whose leader is another broker
    with BrokerThread(data_dir=tmp_path / "kafka-shim", listen="127.0.0.1:0", brokers=3,
                      offsets_topic_num_partitions=50) as cluster:
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
        topic = create_topic(cluster)
        request = ConsumerGroupTopicPartitions("orders-consumer", [TopicPartition(topic, 0, 7)])
        admin.alter_consumer_group_offsets([request])["orders-consumer"].result(30)  # through the coordinator
        described = admin.describe_consumer_groups(["orders-consumer"])["orders-consumer"].result(30)
        partitions = admin.list_topics("__consumer_offsets", timeout=30).topics["__consumer_offsets"].partitions
        assert len(partitions) == 50
        assert partitions[40].leader != partitions[8].leader
        assert described.coordinator.id == partitions[40].leader == cluster.coordinator("group", "orders-consumer")


@each_client("cluster.slow_follower")
def test_consumer_stops_at_the_high_watermark_of_a_slowed_follower(cluster, client):
    from kafka import KafkaProducer

    topic = create_topic(cluster)
    client.producer()
    assert client.send(topic, 0, 0, 10) == (10, [])
    follower = next(r for r in cluster.partition_state(topic, 0).replicas if r != cluster.partition_state(topic, 0).leader)
    cluster.slow_follower(topic, 0, follower)
    # acks=1 is answered by the leader alone: these records are written but not replicated
    leader_only = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks=1, enable_idempotence=False)
    for i in range(10, 20):
        leader_only.send(topic, str(i).encode(), partition=0)
    leader_only.flush(30)
    leader_only.close()
    plog = cluster.node.logs.get(topic, 0)
    assert cluster.call(lambda: (plog.log_end_offset, plog.high_watermark)) == (20, 10)
    client.consumer(f"{topic}-check", topic)
    assert client.poll(20, 3) == list(range(10))  # nothing above the high watermark, however long it polls
    cluster.unslow_follower(topic, 0, follower)
    assert client.poll(10, 60) == list(range(10, 20))


def test_acks_all_waits_for_a_slowed_follower_until_the_isr_shrinks(tmp_path):
    from kafka import KafkaProducer

    with BrokerThread(data_dir=tmp_path / "kafka-shim", listen="127.0.0.1:0", brokers=3,
                      replica_lag_time_max_ms=1500) as cluster:
        topic = create_topic(cluster)
        state = cluster.partition_state(topic, 0)
        follower = state.replicas[1]
        cluster.slow_follower(topic, 0, follower)
        p = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all", request_timeout_ms=30_000)
        try:
            future = p.send(topic, b"v", partition=0)
            plog = cluster.node.logs.get(topic, 0)
            until(lambda: cluster.call(lambda: plog.log_end_offset) == 1)
            # written by the leader, not yet acknowledged: the follower holds the high watermark
            assert cluster.call(lambda: plog.high_watermark) == 0
            assert not future.is_done
            metadata = future.get(timeout=30)  # answered once the ISR drops the follower
            assert metadata.offset == 0
            assert follower not in cluster.partition_state(topic, 0).isr
        finally:
            p.close(5)
