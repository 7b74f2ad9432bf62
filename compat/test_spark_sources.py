"""PySpark's Kafka source options against the broker under test: assign, subscribe and
subscribePattern (a matching topic created while the query runs is picked up from its earliest
offset), and failOnDataLoss true/false after DeleteRecords moved the log start offset past the next
micro-batch's start under a running query. See compat/test_spark.py for the whole PySpark suite.
"""

from __future__ import annotations

import json
import re

import pytest

from compat.support import wait_for
from compat.spark_support import (Kafka, batches, kafka_read, kafka_stream, pov, rows, send, spark_session, to_parquet,
                                  wait_query)

pytestmark = pytest.mark.compat(client="spark")


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    yield from spark_session(tmp_path_factory, "sources")


@pytest.fixture(scope="module")
def kafka(compat_target):
    pytest.importorskip("confluent_kafka")
    return Kafka(compat_target, "src")


def topic_rows(df) -> list[tuple]:
    return sorted((r["topic"], r["partition"], r["offset"], r["value"]) for r in
                  df.selectExpr("topic", "partition", "offset", "CAST(value AS STRING) AS value").collect())


def fill(kafka, topic: str, partitions: int) -> None:
    plain = kafka.plain()
    for p in range(partitions):
        send(plain, topic, p, f"{topic[-1]}{p}-0", f"{topic[-1]}{p}-1")


@pytest.mark.compat(scenario="spark.subscribe_modes")
def test_assign_and_subscribe(spark, kafka):
    """assign reads the partitions it names and no other; subscribe reads every partition of each topic."""
    a, b = kafka.topic("multi-a", 3), kafka.topic("multi-b", 1)
    fill(kafka, a, 3)
    fill(kafka, b, 1)
    assigned = topic_rows(kafka_read(spark, kafka.bootstrap, assign=json.dumps({a: [0, 2], b: [0]})))
    assert assigned == sorted((t, p, o, f"{t[-1]}{p}-{o}") for t, p in ((a, 0), (a, 2), (b, 0)) for o in (0, 1))
    subscribed = topic_rows(kafka_read(spark, kafka.bootstrap, subscribe=f"{a},{b}"))
    assert subscribed == sorted((t, p, o, f"{t[-1]}{p}-{o}")
                                for t, p in ((a, 0), (a, 1), (a, 2), (b, 0)) for o in (0, 1))


@pytest.mark.compat(scenario="spark.subscribe_modes")
def test_subscribe_pattern_picks_up_a_new_topic(spark, kafka, tmp_path):
    stem = kafka.name("pattern")
    first = kafka.topic("", 1, name=f"{stem}-x1")
    other = kafka.topic("", 1, name=f"{stem}-other")  # does not match
    fill(kafka, first, 1)
    fill(kafka, other, 1)
    out = tmp_path / "out"
    stream = kafka_stream(spark, kafka.bootstrap, subscribePattern=f"{stem}-x.*", startingOffsets="earliest")
    query = to_parquet(stream.selectExpr("topic", "partition", "offset", "CAST(value AS STRING) AS value"),
                       out, tmp_path / "checkpoint", trigger={"processingTime": "200 milliseconds"})
    try:
        wait_query(query, lambda: any(b["rows"] for b in batches(query)), "the first topic's records")
        second = kafka.topic("", 2, name=f"{stem}-x2")
        fill(kafka, second, 2)  # written before Spark sees the topic: it must start at offset 0
        wait_query(query, lambda: any(second in b["end"] for b in batches(query)), "a batch with the new topic")
        query.processAllAvailable()
    finally:
        query.stop()
    got = topic_rows(spark.read.parquet(str(out)))
    assert got == sorted((t, p, o, f"{t[-1]}{p}-{o}") for t, p in ((first, 0), (second, 0), (second, 1))
                         for o in (0, 1))


@pytest.mark.compat(scenario="spark.data_loss")
@pytest.mark.parametrize("fail", [True, False], ids=["failOnDataLoss=true", "failOnDataLoss=false"])
def test_delete_records_under_a_running_query(spark, kafka, tmp_path, fail):
    """d-0..d-4 are read by a first batch. Then, behind an open transaction (so the read_committed query
    cannot read on): x-5..x-7 in it, d-8, d-9 plain; DeleteRecords moves the log start to 7 and the
    transaction commits (marker at 10). The next batch, [5, 11), starts below the log start; a
    trigger that falls between the DeleteRecords and the commit plans [5, 7) instead, as against
    Kafka: the log start passing the open transaction's first offset moves the last stable offset to
    7 (UnifiedLog.maybeIncrementFirstUnstableOffset)."""
    topic = kafka.topic("data-loss", 1)
    plain, txn = kafka.plain(), kafka.txn("data-loss")
    send(plain, topic, 0, *(f"d-{i}" for i in range(5)))
    out = tmp_path / "out"
    stream = pov(kafka_stream(spark, kafka.bootstrap, subscribe=topic, startingOffsets="earliest",
                              failOnDataLoss=str(fail).lower()))
    query = to_parquet(stream, out, tmp_path / "checkpoint", trigger={"processingTime": "200 milliseconds"})
    try:
        wait_query(query, lambda: sum(b["rows"] for b in batches(query)) == 5, "the first five records")
        txn.begin_transaction()
        send(txn, topic, 0, "x-5", "x-6", "x-7")
        send(plain, topic, 0, "d-8", "d-9")
        assert kafka.delete_records(topic, 0, 7) == 7
        txn.commit_transaction(20)
        kafka.wait_end(topic, {0: 11})
        first = [(0, i, f"d-{i}") for i in range(5)]
        if fail:
            wait_for(lambda: query.exception() is not None, 120, message="the query to fail")
            # Spark's KAFKA_DATA_LOSS.COULD_NOT_READ_OFFSET_RANGE, raised by the executor's OffsetOutOfRange
            error = str(query.exception())
            assert "Some data may have been lost" in error
            planned = re.search(rf"offset \[5, (\d+)\) for topic partition {re.escape(topic)}-0", error)
            assert planned and int(planned.group(1)) in (7, 11), error
            assert rows(spark.read.parquet(str(out))) == first
        else:
            wait_query(query, lambda: any(b["end"].get(topic, {}).get(0) == 11 for b in batches(query)),
                       "the batch past the deleted records")
            assert rows(spark.read.parquet(str(out))) == first + [(0, 7, "x-7"), (0, 8, "d-8"), (0, 9, "d-9")]
    finally:
        query.stop()
