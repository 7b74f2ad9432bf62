"""PySpark's Kafka sink against the broker under test: df.write and writeStream with key, value,
headers, topic and partition columns, read back with confluent-kafka; df.write behind an open
transaction under both isolation levels; df.write to a topic that does not exist yet (auto-created). See compat/test_spark.py for the whole PySpark suite."""

from __future__ import annotations

import pytest

from compat.spark_support import (Kafka, each_iso, kafka_read, kafka_stream, pov, rows, run_available_now, send,
                                  spark_session)

pytestmark = pytest.mark.compat(client="spark")

SINK_SCHEMA = "topic string, partition int, key string, value string, headers array<struct<key:string,value:binary>>"


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    yield from spark_session(tmp_path_factory, "sink")


@pytest.fixture(scope="module")
def kafka(compat_target):
    pytest.importorskip("confluent_kafka")
    return Kafka(compat_target, "sink")


def written(kafka, topic: str, partitions: int) -> list[tuple]:
    return [(r["partition"], r["offset"], r["key"], r["value"], r["headers"])
            for r in kafka.read_all(topic, partitions)]


@pytest.mark.compat(scenario="spark.sink")
def test_write_with_topic_partition_key_headers_columns(spark, kafka):
    """Each row goes to its topic column's topic and its partition column's partition, in row order."""
    one, two = kafka.topic("sink-a", 2), kafka.topic("sink-b", 1)
    data = [
        (one, 1, "k1", "v1", [("h", bytearray(b"1"))]),
        (one, 0, None, "v2", []),
        (two, 0, "k3", "v3", [("a", bytearray(b"x")), ("a", None), ("e", bytearray(b""))]),
        (one, 1, "k4", "v4", [("h", bytearray(b"4"))]),
        (two, 0, "k5", None, []),
    ]
    df = spark.createDataFrame(data, SINK_SCHEMA)
    df.coalesce(1).write.format("kafka").option("kafka.bootstrap.servers", kafka.bootstrap).save()
    assert written(kafka, one, 2) == [
        (0, 0, None, b"v2", []),
        (1, 0, b"k1", b"v1", [("h", b"1")]),
        (1, 1, b"k4", b"v4", [("h", b"4")]),
    ]
    assert written(kafka, two, 1) == [
        (0, 0, b"k3", b"v3", [("a", b"x"), ("a", None), ("e", b"")]),
        (0, 1, b"k5", None, []),
    ]


@pytest.mark.compat(scenario="spark.sink")
def test_write_to_a_topic_that_does_not_exist_creates_it(spark, kafka):
    """With auto.create.topics.enable (Kafka's default), the sink's producer asking Metadata for an
    unknown topic creates it with num.partitions (1) and the rows land there in order."""
    topic = kafka.name("sink-auto")
    df = spark.createDataFrame([("k1", "v1"), (None, "v2")], "key string, value string")
    df.coalesce(1).write.format("kafka").option("kafka.bootstrap.servers", kafka.bootstrap).option("topic", topic).save()
    assert written(kafka, topic, 1) == [(0, 0, b"k1", b"v1", []), (0, 1, None, b"v2", [])]
    assert len(kafka.admin.list_topics(topic, timeout=10).topics[topic].partitions) == 1


@pytest.mark.compat(scenario="spark.sink")
def test_write_stream_kafka_to_kafka(spark, kafka, tmp_path):
    """A Kafka source transformed into the sink's columns by writeStream (availableNow, twice on one
    checkpoint): the topic option overrides the topic column, the partition column is the source
    offset's parity, headers carry the source offset; nothing is written twice across the runs."""
    source, sink = kafka.topic("stream-src", 1), kafka.topic("stream-dst", 2)
    plain = kafka.plain()
    send(plain, source, 0, "s-0", "s-1", "s-2", key=b"k")

    def run():
        stream = kafka_stream(spark, kafka.bootstrap, subscribe=source, startingOffsets="earliest")
        out = stream.selectExpr(
            "'ignored-topic' AS topic", "CAST(offset % 2 AS INT) AS partition", "key",
            "upper(CAST(value AS STRING)) AS value",
            "array(named_struct('key', 'source-offset', 'value', CAST(CAST(offset AS STRING) AS BINARY))) AS headers")
        query = (out.writeStream.format("kafka").option("kafka.bootstrap.servers", kafka.bootstrap)
                 .option("topic", sink).option("checkpointLocation", str(tmp_path / "checkpoint"))
                 .trigger(availableNow=True).start())
        run_available_now(query)

    run()
    send(plain, source, 0, "s-3", key=b"k")
    run()
    assert written(kafka, sink, 2) == [
        (0, 0, b"k", b"S-0", [("source-offset", b"0")]),
        (0, 1, b"k", b"S-2", [("source-offset", b"2")]),
        (1, 0, b"k", b"S-1", [("source-offset", b"1")]),
        (1, 1, b"k", b"S-3", [("source-offset", b"3")]),
    ]
    assert "ignored-topic" not in kafka.admin.list_topics(timeout=10).topics


@pytest.mark.parametrize("iso", each_iso("spark.write"))
def test_write_behind_an_open_transaction(spark, kafka, iso):
    """c-1 (0) stays open while Spark appends w-1..w-3 (1..3): read_committed sees them only after the commit."""
    topic = kafka.topic("write", 1)
    c = kafka.txn("write-C")
    c.begin_transaction()
    send(c, topic, 0, "c-1")
    df = spark.createDataFrame([("k1", "w-1"), ("k2", "w-2"), ("k3", "w-3")], "key string, value string")
    (df.coalesce(1).write.format("kafka").option("kafka.bootstrap.servers", kafka.bootstrap)
       .option("topic", topic).save())
    everything = [(0, 0, "c-1"), (0, 1, "w-1"), (0, 2, "w-2"), (0, 3, "w-3")]

    def read():
        return rows(pov(kafka_read(spark, kafka.bootstrap, iso, subscribe=topic, failOnDataLoss="true")))

    assert read() == (everything if iso == "read_uncommitted" else [])
    c.commit_transaction(20)
    kafka.wait_end(topic, {0: 5})  # COMMIT marker at 4
    assert read() == everything
