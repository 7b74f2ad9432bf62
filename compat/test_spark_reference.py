"""Spark's own Kafka connector suites (apache/spark v4.0.0, connector/kafka-0-10-sql/src/test/scala/
org/apache/spark/sql/kafka010/), the cases that depend on the broker, replayed through PySpark with
those tests' expectations:

* KafkaMicroBatchSourceSuite's testFromSpecificTimestamps: a stream started from per-partition
  timestamps, run again from its checkpoint after appends and after CreatePartitions; its
  testFromGlobalTimestampWithNoMatchingStartingOffset (the default strategy fails, latest goes on)
  and KafkaRelationSuite's no-match cases with a Long.MaxValue timestamp (start: the read fails;
  end: latest);
* "Query with Trigger.AvailableNow should throw error when topic partitions got unavailable" and
  "... when offset(s) in planned topic partitions got unavailable": the topic deleted and recreated
  (fewer partitions, or fewer records) from foreachBatch under an availableNow query;
* KafkaDontFailOnDataLossSuite's records aged out under a reader and "delete a topic when a Spark
  job is running", made deterministic with foreachBatch: DeleteRecords, or the topic recreated,
  after the batch was planned and before its tasks fetch;
* SPARK-27494 (null keys and values inside a committed transaction, read_committed), SPARK-25495
  (records committed while a batch runs belong to the next batch), "test custom metrics - with rate
  limit" (offsetsBehindLatest), "Kafka column types" with a LogAppendTime topic too;
* KafkaSinkSuite's "generic - write big data with small producer buffer" (1000 values of 15000
  bytes through buffer.memory=16384), and a 3 MiB record read through 1 MiB partition fetches.

Synchronised on the queries' own state (availableNow termination, processAllAvailable, recent
progress) and on watermarks. See compat/test_spark.py for the suite.
"""

from __future__ import annotations

import json
import random
import re
import time
from collections import Counter

import pytest

from compat.spark_support import (READERS, Kafka, batches, kafka_read, kafka_stream, offset_reader, pov, progresses,
                                  run_available_now, send, spark_session, to_parquet, wait_query)
from compat.support import wait_for

pytestmark = pytest.mark.compat(client="spark")

LONG_MAX = 2**63 - 1


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    yield from spark_session(tmp_path_factory, "reference")


@pytest.fixture(scope="module")
def kafka(compat_target):
    pytest.importorskip("confluent_kafka")
    return Kafka(compat_target, "reference")


def stamped(kafka, stem: str, partitions: int = 5) -> tuple[str, int, int]:
    """setupTestMessagesForTestOnTimestampOffsets: five partitions, records at t1 then t2 (partition 4
    only at t1). t1 is an hour ago: inside retention and apart from the records the tests append now."""
    topic = kafka.topic(stem, partitions)
    t1 = (int(time.time()) - 3600) * 1000
    t2 = t1 + 1000
    plain = kafka.plain()
    for p, first, second in [(0, ["-20"], ["-21", "-22"]), (1, ["-10"], ["-11", "-12"]), (2, ["0", "1"], ["2"]),
                             (3, ["10", "11"], ["12"]), (4, ["20", "21", "22"], [])]:
        send(plain, topic, p, *first, timestamp=t1)
        send(plain, topic, p, *second, timestamp=t2)
    return topic, t1, t2


def values(spark, out) -> list[int]:
    return sorted(int(r["value"]) for r in spark.read.parquet(str(out)).collect())


@pytest.mark.compat(scenario="spark.stream_timestamps")
def test_stream_from_timestamps_across_restarts_and_new_partitions(spark, kafka, tmp_path):
    """testFromSpecificTimestamps (partitions 0-3 from t2, 4 from t1): three availableNow runs on one
    checkpoint, the second after appends, the third after CreatePartitions to 10 and records in the
    new partitions, which are read from offset 0."""
    topic, t1, t2 = stamped(kafka, "ts-specific")
    first = [-21, -22, -11, -12, 2, 12, 20, 21, 22]
    option = {"startingOffsetsByTimestamp": json.dumps({topic: {**{str(p): t2 for p in range(4)}, "4": t1}})}
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"

    def run():
        stream = pov(kafka_stream(spark, kafka.bootstrap, subscribe=topic, failOnDataLoss="true", **option))
        run_available_now(to_parquet(stream, out, checkpoint, trigger={"availableNow": True}))
        return values(spark, out)

    assert run() == sorted(first)
    plain = kafka.plain()
    for p, v in enumerate(["30", "31", "32"]):
        send(plain, topic, p, v)
    assert run() == sorted(first + [30, 31, 32])
    from confluent_kafka.admin import NewPartitions

    for f in kafka.admin.create_partitions([NewPartitions(topic, 10)]).values():
        f.result(20)
    wait_for(lambda: len(kafka.admin.list_topics(topic, timeout=10).topics[topic].partitions) == 10, 20,
             message="10 partitions in Metadata")
    plain = kafka.plain()
    for p, v in zip(range(5, 10), ["40", "41", "42", "43", "44"]):
        send(plain, topic, p, v)
    assert run() == sorted(first + [30, 31, 32, 40, 41, 42, 43, 44])


@pytest.mark.compat(scenario="spark.stream_timestamps")
def test_timestamps_no_record_matches(spark, kafka, tmp_path):
    """KafkaRelationSuite's "no matched offset for timestamp": a Long.MaxValue starting timestamp fails
    the read, an ending one reads to latest. testFromGlobalTimestampWithNoMatchingStartingOffset: a
    stream from startingTimestamp t2, partition 4 having nothing at t2, fails by default; with
    startingOffsetsByTimestampStrategy=latest it starts partition 4 at its end and reads the records
    stamped t2 appended there afterwards."""
    topic, t1, t2 = stamped(kafka, "ts-none")

    def batch(**options):
        return sorted(int(r["value"]) for r in pov(kafka_read(spark, kafka.bootstrap, subscribe=topic,
                                                              **options)).collect())

    # the offset readers retry a failed lookup fetchOffset.numRetries times (3), fetchOffset.retryIntervalMs apart
    fail_fast = {"fetchOffset.retryIntervalMs": "10"}
    with pytest.raises(Exception, match="No offset matched"):
        batch(startingOffsetsByTimestamp=json.dumps({topic: {"0": t2, "1": t2, "2": LONG_MAX, "3": t1, "4": t1}}),
              **fail_fast)
    ends = json.dumps({topic: {"0": t2, "1": t2, "2": t2, "3": t2, "4": LONG_MAX}})
    assert batch(endingOffsetsByTimestamp=ends) == sorted([-20, -10, 0, 1, 10, 11, 20, 21, 22])

    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"

    def run(out, checkpoint, **strategy):
        stream = pov(kafka_stream(spark, kafka.bootstrap, subscribe=topic, failOnDataLoss="true",
                                  startingTimestamp=str(t2), **strategy))
        return to_parquet(stream, out, checkpoint, trigger={"availableNow": True})

    with pytest.raises(Exception, match="No offset matched"):
        run(tmp_path / "failing-out", tmp_path / "failing", **fail_fast).awaitTermination(120)
    run_available_now(run(out, checkpoint, startingOffsetsByTimestampStrategy="latest"))
    assert values(spark, out) == sorted([-21, -22, -11, -12, 2, 12])
    send(kafka.plain(), topic, 4, "23", "24", "25", timestamp=t2)
    run_available_now(run(out, checkpoint, startingOffsetsByTimestampStrategy="latest"))
    assert values(spark, out) == sorted([-21, -22, -11, -12, 2, 12, 23, 24, 25])


def delete_topic(kafka, topic: str) -> None:
    for f in kafka.admin.delete_topics([topic]).values():
        f.result(20)
    wait_for(lambda: topic not in kafka.admin.list_topics(timeout=10).topics, 20, message=f"{topic} gone")


@pytest.mark.compat(scenario="spark.available_now_checks")
@pytest.mark.parametrize("partitions, records, ran, error", [
    pytest.param(3, 15, [0], "Some of partitions in Kafka topic(s) have been lost during running query with "
                        "Trigger.AvailableNow", id="partitions-lost"),
    pytest.param(5, 10, [0, 1], "Some of partitions in Kafka topic(s) report available offset which is less than end "
                        "offset during running query with Trigger.AvailableNow", id="offsets-lower"),
])
def test_available_now_topic_recreated_under_it(spark, kafka, tmp_path, partitions, records, ran, error):
    """A 5-partition topic with 15 records in partition 0, maxOffsetsPerTrigger=5: the first batch's
    foreachBatch deletes the topic and creates it again with fewer partitions or fewer records. Planning
    each later batch, Spark compares the broker's latest offsets with the end it fetched at the start:
    3 partitions fail the query before batch 1; 10 records let batch 1 (offsets 5-10) run and fail it
    before batch 2, failOnDataLoss notwithstanding."""
    topic = kafka.topic("available-now", 5)
    send(kafka.plain(), topic, 0, *[f"foo-{i}" for i in range(15)])
    seen = []

    def recreate(df, batch_id):
        seen.append(batch_id)
        if batch_id == 0:
            delete_topic(kafka, topic)
            kafka.topic("", partitions, name=topic)
            send(kafka.plain(), topic, 0, *[f"foo-{i}" for i in range(records)])

    stream = kafka_stream(spark, kafka.bootstrap, subscribe=topic, startingOffsets="earliest", failOnDataLoss="true",
                          maxOffsetsPerTrigger="5", **{"kafka.metadata.max.age.ms": "500"})
    query = (stream.writeStream.foreachBatch(recreate).option("checkpointLocation", str(tmp_path / "checkpoint"))
             .trigger(availableNow=True).start())
    with pytest.raises(Exception) as failure:
        query.awaitTermination(120)
    assert error in str(failure.value)
    assert seen == ran


STEPS = 30
# what Spark's stress test gives its query: fresh metadata on every call, short request timeouts, and
# more offset-fetch retries than the default 3 x 1 s, which topic churn could use up
CHURN_OPTIONS = {"kafka.metadata.max.age.ms": "1", "kafka.request.timeout.ms": "3000",
                 "kafka.default.api.timeout.ms": "3000", "fetchOffset.numRetries": "10",
                 "fetchOffset.retryIntervalMs": "500"}


@pytest.mark.compat(scenario="spark.topic_changes")
@pytest.mark.parametrize("deprecated", READERS)
def test_pattern_query_across_topic_churn(spark, kafka, tmp_path, deprecated):
    """KafkaSourceStressForDontFailOnDataLossSuite, seeded and bounded: topics matching the pattern
    created, deleted, recreated and written to as fast as the admin calls return while a
    failOnDataLoss=false query with kafka.metadata.max.age.ms=1 runs. The query must not fail; once
    the churn stops, it catches up with the end of every live topic, and a last record written to each
    reaches the sink exactly once (at most once in a recreated topic: whether Spark takes it for a new
    partition, read from 0, or for one whose offset went back, skipped to the end, depends on whether
    a batch ran between the deletion and the new topic)."""
    rng = random.Random(20261127)
    stem = kafka.name("churn")
    with offset_reader(spark, deprecated):
        stream = kafka_stream(spark, kafka.bootstrap, subscribePattern=f"{stem}-.*", startingOffsets="earliest",
                              failOnDataLoss="false", **CHURN_OPTIONS)
        out = tmp_path / "out"
        query = to_parquet(stream.selectExpr("topic", "CAST(value AS STRING) AS value"), out,
                           tmp_path / "checkpoint", trigger={"processingTime": "100 milliseconds"})
    live, deleted, recreated, plain = [], [], set(), kafka.plain()
    try:
        for step in range(STEPS):
            op = rng.randrange(6)
            if op == 0 or not live:
                live.append(kafka.topic("", 1, name=f"{stem}-{step}"))
            elif op == 1:
                topic = live.pop(rng.randrange(len(live)))
                delete_topic(kafka, topic)
                deleted.append(topic)
            elif op == 2 and deleted:
                live.append(kafka.topic("", 1, name=deleted.pop(rng.randrange(len(deleted)))))
                recreated.add(live[-1])
            else:
                for topic in live:
                    send(plain, topic, 0, *[str(rng.randrange(10)) for _ in range(rng.randrange(1, 5))])
            assert query.exception() is None, query.exception()
        plain = kafka.plain()
        for topic in live:
            send(plain, topic, 0, f"end-{topic}")
        ends = {topic: {0: kafka.watermarks(topic, 0)[1]} for topic in live}

        def caught_up():
            done = batches(query)
            return done and all(done[-1]["end"].get(t) == e for t, e in ends.items())

        wait_query(query, caught_up, "the last records of the live topics")
    finally:
        query.stop()
    got = Counter(r["topic"] for r in spark.read.parquet(str(out)).collect() if r["value"] == f"end-{r['topic']}")
    assert recreated and set(live) - recreated, "the seed no longer recreates a topic and keeps another"
    assert {t: got[t] for t in live if t not in recreated} == {t: 1 for t in live if t not in recreated}
    assert all(got[t] <= 1 for t in recreated)


@pytest.mark.compat(scenario="spark.data_loss")
@pytest.mark.parametrize("fail", ["true", "false"])
def test_records_deleted_after_the_batch_was_planned(spark, kafka, tmp_path, fail):
    """KafkaDontFailOnDataLossSuite's records aged out under a reader, made deterministic: batch 0 is
    planned over offsets 0-10, then its foreachBatch deletes the records below 4 before reading. The
    executor's fetch at 0 gets OFFSET_OUT_OF_RANGE: failOnDataLoss=true fails the read with Spark's
    KAFKA_DATA_LOSS.COULD_NOT_READ_OFFSET_RANGE, false goes on from the new log start and yields 4-9,
    each once."""
    topic = kafka.topic(f"deleted-{fail}", 1)
    send(kafka.plain(), topic, 0, *[str(i) for i in range(10)])
    seen = {}

    def each(df, batch_id):
        if batch_id == 0:
            assert kafka.delete_records(topic, 0, 4) == 4
        seen[batch_id] = sorted(int(r["value"]) for r in df.selectExpr("CAST(value AS STRING) AS value").collect())

    stream = kafka_stream(spark, kafka.bootstrap, subscribe=topic, startingOffsets="earliest", failOnDataLoss=fail,
                          **{"kafkaConsumer.pollTimeoutMs": "5000"})
    query = stream.writeStream.foreachBatch(each).option("checkpointLocation", str(tmp_path / "checkpoint")).start()
    try:
        if fail == "true":
            with pytest.raises(Exception, match=re.escape(f"Could not read records in offset [0, 10) for topic "
                                                          f"partition {topic}-0")):
                query.processAllAvailable()
            assert seen == {}
        else:
            query.processAllAvailable()
            assert seen == {0: [4, 5, 6, 7, 8, 9]}
    finally:
        query.stop()


@pytest.mark.compat(scenario="spark.topic_changes")
def test_topic_recreated_while_a_batch_reads_it(spark, kafka, tmp_path):
    """"delete a topic when a Spark job is running" (failOnDataLoss=false): batch 0 reads 0-4 and
    leaves the executors' pooled consumer holding the topic's id; batch 1 is planned over 5-10, then
    its foreachBatch deletes the topic and creates it again, empty, before reading. Whether the pooled
    consumer's first fetch still names the old topic id (UNKNOWN_TOPIC_ID, then new metadata) or
    already the new one, offset 5 is out of range in the new topic: the batch yields nothing and the
    query goes on."""
    topic = kafka.topic("recreated-mid-batch", 1)
    send(kafka.plain(), topic, 0, *[str(i) for i in range(5)])
    seen = {}

    def each(df, batch_id):
        if batch_id == 1:
            delete_topic(kafka, topic)
            kafka.topic("", 1, name=topic)
        seen[batch_id] = sorted(int(r["value"]) for r in df.selectExpr("CAST(value AS STRING) AS value").collect())

    stream = kafka_stream(spark, kafka.bootstrap, subscribe=topic, startingOffsets="earliest", failOnDataLoss="false",
                          **{"kafkaConsumer.pollTimeoutMs": "5000", "kafka.metadata.max.age.ms": "1"})
    query = stream.writeStream.foreachBatch(each).option("checkpointLocation", str(tmp_path / "checkpoint")).start()
    try:
        wait_query(query, lambda: 0 in seen, "batch 0")
        send(kafka.plain(), topic, 0, *[str(i) for i in range(5, 10)])
        wait_query(query, lambda: 1 in seen, "batch 1")
        assert seen == {0: [0, 1, 2, 3, 4], 1: []}
        assert query.exception() is None
    finally:
        query.stop()


@pytest.mark.compat(scenario="spark.record_columns")
def test_null_keys_and_values_in_a_committed_transaction(spark, kafka, tmp_path):
    """SPARK-27494: 5 records with neither key nor value, 5 with a key only, 5 with a value only, all
    in one transaction, read by a read_committed stream started before it: all 15 once it commits."""
    topic = kafka.topic("nulls", 1)
    out = tmp_path / "out"
    stream = kafka_stream(spark, kafka.bootstrap, subscribe=topic, startingOffsets="earliest").selectExpr(
        "CAST(key AS STRING) AS key", "CAST(value AS STRING) AS value")
    query = to_parquet(stream, out, tmp_path / "checkpoint", trigger={"processingTime": "200 milliseconds"})
    try:
        producer = kafka.txn("nulls")
        producer.begin_transaction()
        for _ in range(5):
            producer.produce(topic, partition=0)
        for i in range(1, 6):
            producer.produce(topic, key=str(i).encode(), partition=0)
        for i in range(6, 11):
            producer.produce(topic, value=str(i).encode(), partition=0)
        producer.commit_transaction(20)
        wait_query(query, lambda: sum(b["rows"] for b in batches(query)) == 15, "the transaction's 15 records")
    finally:
        query.stop()
    got = Counter((r["key"], r["value"]) for r in spark.read.parquet(str(out)).collect())
    assert got == Counter([(None, None)] * 5 + [(str(i), None) for i in range(1, 6)]
                          + [(None, str(i)) for i in range(6, 11)])


@pytest.mark.compat(scenario="spark.stream_txn_restart")
def test_records_committed_during_a_batch_go_to_the_next(spark, kafka, tmp_path):
    """SPARK-25495: 0-3 committed (marker at 4); while batch 0 runs 4-7 are committed (marker at 9):
    batch 0 yields 0-3 and batch 1 4-7, though the executors' consumer could have fetched past batch 0."""
    topic = kafka.topic("fetched-data", 1)
    producer = kafka.txn("fetched-data")

    def commit(first):
        producer.begin_transaction()
        send(producer, topic, 0, *[str(i) for i in range(first, first + 4)])
        producer.commit_transaction(20)

    commit(0)
    kafka.wait_end(topic, {0: 5})
    seen = {}

    def each(df, batch_id):
        if batch_id == 0:
            commit(4)
            kafka.wait_end(topic, {0: 10})
        seen[batch_id] = sorted(r["value"] for r in df.selectExpr("CAST(value AS STRING) AS value").collect())

    stream = kafka_stream(spark, kafka.bootstrap, subscribe=topic, startingOffsets="earliest",
                          **{"kafka.metadata.max.age.ms": "1"})
    query = stream.writeStream.foreachBatch(each).option("checkpointLocation", str(tmp_path / "checkpoint")).start()
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    assert seen == {0: ["0", "1", "2", "3"], 1: ["4", "5", "6", "7"]}


@pytest.mark.compat(scenario="spark.rate_limits")
def test_offsets_behind_latest_metrics(spark, kafka, tmp_path):
    """"test custom metrics - with rate limit": 5 records in each of 2 partitions, maxOffsetsPerTrigger=4
    gives batches of 2+2, 2+2, 1+1 offsets, and each batch's source metrics say how far its end is
    behind the latest offsets the broker reported (5 and 5)."""
    topic = kafka.topic("metrics", 2)
    plain = kafka.plain()
    for p in range(2):
        send(plain, topic, p, *[str(i) for i in range(5)])
    stream = pov(kafka_stream(spark, kafka.bootstrap, subscribe=topic, startingOffsets="earliest",
                              maxOffsetsPerTrigger="4"))
    query = to_parquet(stream, tmp_path / "out", tmp_path / "checkpoint", trigger={"availableNow": True})
    run_available_now(query)
    got = [(b["end"][topic], {k: v for k, v in p["sources"][0]["metrics"].items()})
           for b, p in zip(batches(query), [p for p in progresses(query) if "addBatch" in p["durationMs"]])]
    assert got == [
        ({0: 2, 1: 2}, {"minOffsetsBehindLatest": "3", "maxOffsetsBehindLatest": "3", "avgOffsetsBehindLatest": "3.0"}),
        ({0: 4, 1: 4}, {"minOffsetsBehindLatest": "1", "maxOffsetsBehindLatest": "1", "avgOffsetsBehindLatest": "1.0"}),
        ({0: 5, 1: 5}, {"minOffsetsBehindLatest": "0", "maxOffsetsBehindLatest": "0", "avgOffsetsBehindLatest": "0.0"}),
    ]


@pytest.mark.compat(scenario="spark.record_columns")
def test_column_types_create_time_and_log_append_time(spark, kafka):
    """"Kafka column types": timestamp and timestampType per topic. A CreateTime topic keeps the
    producer's timestamp (type 0); a message.timestamp.type=LogAppendTime topic gives the broker's
    append time instead (type 1), between the moments before and after the produce, and
    startingOffsetsByTimestamp looks up that time."""
    create = kafka.topic("create-time", 1)
    append = kafka.topic("append-time", 1, config={"message.timestamp.type": "LogAppendTime"})
    stamp = (int(time.time()) - 3600) * 1000
    plain = kafka.plain()
    before = int(time.time() * 1000)
    for topic in (create, append):
        send(plain, topic, 0, "1", key=None, timestamp=stamp, headers=[("a", b"b"), ("c", b"d")])
    after = int(time.time() * 1000)

    def columns(topic):
        df = kafka_read(spark, kafka.bootstrap, subscribe=topic, includeHeaders="true").selectExpr(
            "key", "CAST(value AS STRING) AS value", "topic", "partition", "offset", "unix_millis(timestamp) AS ts",
            "timestampType", "headers")
        [row] = df.collect()
        return row

    row = columns(create)
    assert (row["key"], row["value"], row["topic"], row["partition"], row["offset"], row["ts"],
            row["timestampType"]) == (None, "1", create, 0, 0, stamp, 0)
    assert [(h["key"], h["value"]) for h in row["headers"]] == [("a", b"b"), ("c", b"d")]
    row = columns(append)
    assert row["timestampType"] == 1
    assert before <= row["ts"] <= after, (before, row["ts"], after)
    # offsets by timestamp go by the same times: the producer's stamp + 1 is past the CreateTime
    # record (no match, so latest) and before the LogAppendTime one (offset 0)
    after_stamp = {"startingOffsetsByTimestampStrategy": "latest"}
    for topic, offsets in [(create, []), (append, [0])]:
        after_stamp["startingOffsetsByTimestamp"] = json.dumps({topic: {"0": stamp + 1}})
        assert [r["offset"] for r in kafka_read(spark, kafka.bootstrap, subscribe=topic, **after_stamp).collect()] \
            == offsets


@pytest.mark.compat(scenario="spark.sink")
def test_write_big_values_with_a_small_producer_buffer(spark, kafka):
    """"generic - write big data with small producer buffer": 1000 values of 15000 bytes with
    kafka.buffer.memory=16384, so the producer waits for each record's batch to be acknowledged before
    the next fits; every value arrives whole and in order."""
    topic = kafka.topic("small-buffer", 1)
    df = spark.range(1000).selectExpr("CAST(concat(lpad(CAST(id AS STRING), 4, '0'), repeat('x', 14996)) AS BINARY)"
                                      " AS value")
    (df.coalesce(1).write.format("kafka").option("kafka.bootstrap.servers", kafka.bootstrap)
       .option("kafka.buffer.memory", "16384").option("topic", topic).save())
    assert kafka.watermarks(topic, 0) == (0, 1000)
    got = kafka_read(spark, kafka.bootstrap, subscribe=topic).selectExpr(
        "offset", "length(value) AS size", "CAST(substring(value, 1, 4) AS STRING) AS n").collect()
    assert sorted((r["offset"], r["size"], r["n"]) for r in got) == [(i, 15000, f"{i:04d}") for i in range(1000)]


@pytest.mark.compat(scenario="spark.sink")
def test_records_larger_than_a_fetch_partition_limit(spark, kafka):
    """A 3 MiB value between two small ones, written by the sink (kafka.max.request.size, the topic's
    max.message.bytes) and read back by a batch read whose executors keep the default 1 MiB
    max.partition.fetch.bytes: Kafka returns the first batch of a partition whole however large
    (KIP-74), so Spark reads it and the small records around it."""
    topic = kafka.topic("large", 1, config={"max.message.bytes": str(8 << 20)})
    df = spark.createDataFrame([(0, "a"), (1, "b" * (3 << 20)), (2, "c")], "n int, value string").orderBy("n")
    (df.coalesce(1).selectExpr("value").write.format("kafka").option("kafka.bootstrap.servers", kafka.bootstrap)
       .option("kafka.max.request.size", str(8 << 20)).option("kafka.linger.ms", "0").option("topic", topic).save())
    got = kafka_read(spark, kafka.bootstrap, subscribe=topic).selectExpr(
        "offset", "length(value) AS size", "substring(CAST(value AS STRING), 1, 1) AS head").collect()
    assert sorted((r["offset"], r["size"], r["head"]) for r in got) == [(0, 1, "a"), (1, 3 << 20, "b"), (2, 1, "c")]
