"""PySpark readStream while the topics under it change (what Spark's KafkaMicroBatchSourceSuite
does with CreatePartitions and DeleteTopics):

* partitions added (CreatePartitions) under a running subscribe query: the new partitions are read
  from offset 0, including records written to them before Spark saw them, with either offset
  reader (the consumer-based one rejoins its group for the new partitions);
* a topic deleted and recreated between two runs on one checkpoint: its end went back from 2 to 1,
  so failOnDataLoss=true fails the run with Spark's "offset was changed" data-loss error;
* a topic deleted under a running subscribePattern query (failOnDataLoss=false): a batch runs
  without it, and once it is recreated it is a new partition to Spark, read from offset 0.

Synchronised on the query's progress and on Metadata. See compat/test_spark.py for the suite.
"""

from __future__ import annotations

import pytest

from compat.support import wait_for
from compat.spark_support import (READERS, Kafka, batches, kafka_stream, offset_reader, run_available_now, send,
                                  spark_session, to_parquet, wait_query)

pytestmark = [pytest.mark.compat(client="spark", scenario="spark.topic_changes")]


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    yield from spark_session(tmp_path_factory, "topics")


@pytest.fixture(scope="module")
def kafka(compat_target):
    pytest.importorskip("confluent_kafka")
    return Kafka(compat_target, "topics")


def fresh_metadata(deprecated: str) -> dict:
    """The consumer reader learns of new partitions from its consumer's Metadata, which it refreshes
    every metadata.max.age.ms (5 minutes by default; Spark's own tests take 1 ms), and then rejoins
    its group for an assignment with them."""
    return {"kafka.metadata.max.age.ms": "1"} if deprecated == "true" else {}


def sink(spark, out) -> list[tuple]:
    got = sorted((r["topic"], r["partition"], r["offset"], r["value"]) for r in spark.read.parquet(str(out)).collect())
    # by value: a recreated topic uses its offsets again
    assert len({r[3] for r in got}) == len(got), f"a record reached the sink twice: {got}"
    return got


def tpov(df):
    return df.selectExpr("topic", "partition", "offset", "CAST(value AS STRING) AS value")


def partitions(kafka, topic: str) -> int:
    found = kafka.admin.list_topics(topic, timeout=10).topics.get(topic)
    return 0 if found is None or found.error is not None else len(found.partitions)


def delete_topic(kafka, topic: str) -> None:
    for f in kafka.admin.delete_topics([topic]).values():
        f.result(20)
    wait_for(lambda: topic not in kafka.admin.list_topics(timeout=10).topics, 20, message=f"{topic} gone")


@pytest.mark.parametrize("deprecated", READERS)
def test_partitions_added_under_a_running_query(spark, kafka, tmp_path, deprecated):
    from confluent_kafka.admin import NewPartitions

    topic = kafka.topic("grow", 1)
    send(kafka.plain(), topic, 0, "g0-0", "g0-1")
    out = tmp_path / "out"
    with offset_reader(spark, deprecated):
        stream = tpov(kafka_stream(spark, kafka.bootstrap, subscribe=topic, startingOffsets="earliest",
                                   failOnDataLoss="true", **fresh_metadata(deprecated)))
        query = to_parquet(stream, out, tmp_path / "checkpoint", trigger={"processingTime": "200 milliseconds"})
    try:
        wait_query(query, lambda: sum(b["rows"] for b in batches(query)) == 2, "the first partition's records")
        for f in kafka.admin.create_partitions([NewPartitions(topic, 3)]).values():
            f.result(20)
        wait_for(lambda: partitions(kafka, topic) == 3, 20, message="3 partitions in Metadata")
        plain = kafka.plain()  # a producer that has only seen 3 partitions
        send(plain, topic, 1, "g1-0", "g1-1")
        send(plain, topic, 2, "g2-0")
        send(plain, topic, 0, "g0-2")
        wait_query(query, lambda: sum(b["rows"] for b in batches(query)) == 6, "the new partitions' records")
        assert batches(query)[-1]["end"] == {topic: {0: 3, 1: 2, 2: 1}}
    finally:
        query.stop()
    assert sink(spark, out) == [(topic, 0, 0, "g0-0"), (topic, 0, 1, "g0-1"), (topic, 0, 2, "g0-2"),
                                (topic, 1, 0, "g1-0"), (topic, 1, 1, "g1-1"), (topic, 2, 0, "g2-0")]


def test_topic_recreated_between_runs(spark, kafka, tmp_path):
    """failOnDataLoss=true: the checkpoint says 2, the recreated topic ends at 1."""
    topic = kafka.topic("recreated", 1)
    send(kafka.plain(), topic, 0, "o-0", "o-1")
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"

    def start():
        stream = tpov(kafka_stream(spark, kafka.bootstrap, subscribe=topic, startingOffsets="earliest",
                                   failOnDataLoss="true"))
        return to_parquet(stream, out, checkpoint, trigger={"availableNow": True})

    run_available_now(start())
    delete_topic(kafka, topic)
    kafka.topic("", 1, name=topic)
    send(kafka.plain(), topic, 0, "n-0")
    assert kafka.watermarks(topic, 0) == (0, 1)
    query = start()
    # Spark's KAFKA_DATA_LOSS.PARTITION_OFFSET_CHANGED, from the checkpointed end (2) and the new one (1)
    with pytest.raises(Exception, match=f"Partition {topic}-0 offset was changed from 2 to 1"):
        query.awaitTermination(120)
    assert sink(spark, out) == [(topic, 0, 0, "o-0"), (topic, 0, 1, "o-1")]


def test_topic_deleted_and_recreated_under_a_pattern_query(spark, kafka, tmp_path):
    stem = kafka.name("pattern-deleted")
    a, b = kafka.topic("", 1, name=f"{stem}-a"), kafka.topic("", 1, name=f"{stem}-b")
    plain = kafka.plain()
    send(plain, a, 0, "a-0", "a-1")
    send(plain, b, 0, "b-0")
    out = tmp_path / "out"
    stream = tpov(kafka_stream(spark, kafka.bootstrap, subscribePattern=f"{stem}-.*", startingOffsets="earliest",
                               failOnDataLoss="false"))
    query = to_parquet(stream, out, tmp_path / "checkpoint", trigger={"processingTime": "200 milliseconds"})
    try:
        wait_query(query, lambda: sum(b["rows"] for b in batches(query)) == 3, "the first records")
        delete_topic(kafka, a)
        wait_query(query, lambda: batches(query)[-1]["end"] == {b: {0: 1}}, "a batch without the deleted topic")
        kafka.topic("", 1, name=a)
        plain = kafka.plain()
        send(plain, a, 0, "r-0", "r-1")
        send(plain, b, 0, "b-1")
        wait_query(query, lambda: batches(query)[-1]["end"] == {a: {0: 2}, b: {0: 2}}, "the recreated topic's records")
        assert query.exception() is None
    finally:
        query.stop()
    assert sink(spark, out) == sorted([(a, 0, 0, "a-0"), (a, 0, 1, "a-1"), (b, 0, 0, "b-0"),
                                       (a, 0, 0, "r-0"), (a, 0, 1, "r-1"), (b, 0, 1, "b-1")])
