"""A stock client's offset commit while the ISR of its group's ``__consumer_offsets`` partition is
below min.insync.replicas on a three-broker kafka-shim: Kafka's coordinator appends with acks=all,
the append is refused with NOT_ENOUGH_REPLICAS and the commit is answered COORDINATOR_NOT_AVAILABLE,
a retriable error in Kafka (CoordinatorNotAvailableException): librdkafka marks the coordinator dead
and hands the error to the application (its own retriable() flag stays unset for commits); once the
followers are back the same commit succeeds."""

from __future__ import annotations

import pytest

from shim.broker import BrokerThread

pytestmark = pytest.mark.shim_only("shrinks an ISR through the broker's control plane")

TOPIC = "min-isr-commits"
GROUP = "min-isr-group"
OFFSETS = "__consumer_offsets"


@pytest.fixture
def cluster(tmp_path):
    with BrokerThread(data_dir=tmp_path / "kafka-shim", listen="127.0.0.1:0", control_listen="127.0.0.1:0",
                      brokers=3, extra={"min.insync.replicas": "2"}) as broker:
        broker.call(lambda: (broker.node.logs.create_topic(TOPIC, 1),
                             broker.node.cluster.set_replication_factor(TOPIC, 3)))
        yield broker


def offsets_partition(cluster) -> dict:
    p = cluster.call(lambda: cluster.node.groups.store.partition_for(GROUP))
    (state,) = [s for s in cluster.control.cluster(topic=OFFSETS)["partitions"] if s["partition"] == p]
    return state


@pytest.mark.compat(client="confluent-kafka", scenario="consumer.commit_below_min_isr")
def test_confluent_commit_fails_retriably_below_min_isr_and_succeeds_once_it_is_back(cluster):
    ck = pytest.importorskip("confluent_kafka")
    consumer = ck.Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": GROUP,
                            "enable.auto.commit": False})
    try:
        def commit(offset: int):
            return consumer.commit(offsets=[ck.TopicPartition(TOPIC, 0, offset)], asynchronous=False)

        assert commit(5)[0].error is None
        state = offsets_partition(cluster)
        followers = [r for r in state["replicas"] if r != state["leader"]]
        for n in followers:
            cluster.control.node_down(node=n)
        assert offsets_partition(cluster)["isr"] == [state["leader"]]
        with pytest.raises(ck.KafkaException) as info:
            commit(9)
        error = info.value.args[0]
        assert error.code() == ck.KafkaError.COORDINATOR_NOT_AVAILABLE, error
        assert consumer.committed([ck.TopicPartition(TOPIC, 0)], timeout=30)[0].offset == 5
        for n in followers:
            cluster.control.node_up(node=n)
        assert commit(9)[0].error is None
        assert consumer.committed([ck.TopicPartition(TOPIC, 0)], timeout=30)[0].offset == 9
    finally:
        consumer.close()


E = "org.apache.kafka.common.errors."
CONSUMER = "org.apache.kafka.clients.consumer."


def java_commit_below_min_isr(drivers, tmp_path, **broker_options) -> dict:
    scenario = "control.commit_below_min_isr"
    with BrokerThread(data_dir=tmp_path / "java", listen="127.0.0.1:0", control_listen="127.0.0.1:0", brokers=3,
                      extra={"min.insync.replicas": "2"}, **broker_options) as broker:
        out = drivers.run("ControlDriver", scenario, broker.bootstrap_servers, timeout=300, timeout_s=200,
                          control=broker.broker.control_url)
    result = out["results"][scenario]
    if not result["ok"]:
        pytest.fail(f"{scenario}: {result['error']}\n{result['trace']}")
    return result["observed"]


def check_java(o: dict) -> None:
    assert o["followers"] == 2
    # Kafka's ConsumerCoordinator: COORDINATOR_NOT_AVAILABLE marks the coordinator unknown and fails
    # an asynchronous commit retriably; a synchronous one retries it until its timeout
    assert o["async_error"] == f"{CONSUMER}RetriableCommitFailedException / {E}CoordinatorNotAvailableException"
    assert o["sync_error"]["chain"][0] == E + "TimeoutException", o["sync_error"]
    assert (o["committed_below"], o["committed_after"]) == (5, 9)


@pytest.mark.compat(client="java", scenario="consumer.commit_below_min_isr")
def test_java_commit_fails_retriably_below_min_isr(java_drivers, tmp_path):
    check_java(java_commit_below_min_isr(java_drivers, tmp_path))


@pytest.mark.compat(client="java", scenario="consumer.commit_below_min_isr")
def test_kafka_clients_4_commit_fails_retriably_below_min_isr(java4, tmp_path):
    check_java(java_commit_below_min_isr(java4, tmp_path, kafka_version="4.1"))
