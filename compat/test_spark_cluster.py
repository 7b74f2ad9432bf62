"""A PySpark streaming read from a simulated three-broker kafka-shim (README.md, A simulated
cluster) keeps going while the cluster changes under it: a partition leader moves, then the broker
leading the other partition goes down and comes back. The query (processingTime trigger, memory
sink) ends up with every record exactly once.

Synchronised on the query's sink and on the producer's acknowledgements. Needs the Spark Kafka
connector (KAFKA_SHIM_SPARK_JARS, see compat/test_spark.py) and a kafka-shim of its own.
"""

from __future__ import annotations

import types

import pytest

from compat.spark_support import Kafka, kafka_stream, pov, send, spark_session, wait_query
from shim.broker import BrokerThread

pytestmark = [pytest.mark.compat(client="spark", scenario="spark.cluster_changes"),
              pytest.mark.shim_only("operates the simulated cluster")]


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    yield from spark_session(tmp_path_factory, "cluster")


@pytest.fixture
def cluster(tmp_path):
    pytest.importorskip("confluent_kafka")
    with BrokerThread(data_dir=tmp_path / "kafka-shim", listen="127.0.0.1:0", brokers=3,
                      group_initial_rebalance_delay_ms=0) as broker:
        yield broker


def seen(spark, name: str) -> list[tuple[int, str]]:
    return sorted((r["partition"], r["value"]) for r in spark.sql(f"SELECT partition, value FROM {name}").collect())


def test_streaming_read_continues_across_a_leader_move_and_a_broker_down_and_up(spark, cluster):
    from confluent_kafka.admin import NewTopic

    kafka = Kafka(types.SimpleNamespace(bootstrap_servers=cluster.bootstrap_servers, prefix="cluster"), "spark")
    topic = kafka.name("moving")
    for f in kafka.admin.create_topics([NewTopic(topic, 2, 3)]).values():
        f.result(20)
    producer = kafka.plain(**{"acks": "all", "retry.backoff.ms": 50})
    expected: list[tuple[int, str]] = []

    def write(lo: int, hi: int) -> None:
        for p in (0, 1):
            values = [f"{p}-{i}" for i in range(lo, hi)]
            send(producer, topic, p, *values)
            expected.extend((p, v) for v in values)

    stream = pov(kafka_stream(spark, cluster.bootstrap_servers, subscribe=topic, startingOffsets="earliest"))
    query = (stream.writeStream.format("memory").queryName("cluster_moves").outputMode("append")
             .trigger(processingTime="200 milliseconds").start())
    try:
        write(0, 10)
        wait_query(query, lambda: len(seen(spark, "cluster_moves")) == 20, "the first records")

        leader = cluster.partition_state(topic, 0).leader
        cluster.move_leader(topic, 0, (leader + 1) % 3)
        write(10, 20)
        wait_query(query, lambda: len(seen(spark, "cluster_moves")) == 40, "the records after the leader move")

        down = cluster.partition_state(topic, 1).leader
        cluster.node_down(down)
        assert cluster.partition_state(topic, 1).leader != down
        write(20, 30)
        wait_query(query, lambda: len(seen(spark, "cluster_moves")) == 60, "the records with a broker down")

        cluster.node_up(down)
        cluster.move_leader(topic, 1, down)  # and it leads again
        write(30, 40)
        wait_query(query, lambda: len(seen(spark, "cluster_moves")) == 80, "the records after the broker returned")
        assert seen(spark, "cluster_moves") == sorted(expected)
    finally:
        query.stop()
        producer.flush(10)
