"""PySpark's two Kafka offset readers against the broker under test. Spark 4 resolves offsets on the
driver with an Admin client (describeTopics + listOffsets, the default the rest of the suite uses);
with spark.sql.streaming.kafka.useDeprecatedOffsetFetching=true it uses a KafkaConsumer instead,
which subscribes in a consumer group of its own (JoinGroup/SyncGroup, polled until it has its
assignment), then asks seekToBeginning/seekToEnd + position and offsetsForTimes.

The consumer reader here:
* the global startingTimestamp/endingTimestamp options through the consumer's offsetsForTimes under
  read_committed (a timestamp matching a record past the LSO is no match, so the end is latest);
* a batch read of the transactional layout (earliest/latest and JSON offsets) under both
  isolation levels;
* a read_committed stream held at the LSO by an open transaction and going on when it commits or
  aborts, its driver's group named by kafka.group.id or groupIdPrefix and listed by the group
  coordinator while the query runs (what Spark's own "allow group.id override/prefix" tests check;
  only the consumer reader forms a group).

See compat/test_spark.py for the whole PySpark suite.
"""

from __future__ import annotations

import json
import time

import pytest

from compat.spark_support import (AFTER_COMMIT, VISIBLE, Kafka, each_iso, kafka_read, kafka_stream, latest_seen,
                                  layout, offset_reader, pov, rows, send, spark_session, to_parquet, wait_query)

pytestmark = pytest.mark.compat(client="spark")

@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    yield from spark_session(tmp_path_factory, "offset-readers")


@pytest.fixture(scope="module")
def kafka(compat_target):
    pytest.importorskip("confluent_kafka")
    return Kafka(compat_target, "readers")


@pytest.fixture(scope="module")
def open_layout(kafka):
    topic, c = layout(kafka)
    yield topic
    c.abort_transaction(20)


@pytest.mark.parametrize("iso", each_iso("spark.offset_readers"))
def test_consumer_reader_batch_read(spark, kafka, open_layout, iso):
    """earliest/latest from seekToBeginning/seekToEnd (latest is the LSO under read_committed), and
    JSON offsets: partition 0 from inside the aborted range (2) to inside the committed one (6)."""
    offsets = {"startingOffsets": json.dumps({open_layout: {"0": 2, "1": -2}}),
               "endingOffsets": json.dumps({open_layout: {"0": 6, "1": -1}})}
    in_range = {
        "read_committed": [(0, 4, "p-1"), (0, 5, "b-1"), (1, 2, "p-4"), (1, 3, "b-3")],
        "read_uncommitted": [(0, 2, "a-2"), (0, 4, "p-1"), (0, 5, "b-1"), (1, 0, "a-3"), (1, 2, "p-4"),
                             (1, 3, "b-3")],
    }
    with offset_reader(spark, "true"):
        everything = kafka_read(spark, kafka.bootstrap, iso, subscribe=open_layout, startingOffsets="earliest",
                                endingOffsets="latest", failOnDataLoss="true")
        assert rows(pov(everything)) == VISIBLE[iso]
        ranged = kafka_read(spark, kafka.bootstrap, iso, subscribe=open_layout, failOnDataLoss="true", **offsets)
        assert rows(pov(ranged)) == in_range[iso]


@pytest.mark.compat(scenario="spark.offset_readers")
def test_consumer_reader_global_timestamps(spark, kafka):
    """offsetsForTimes from the consumer reader (test_spark.py has the Admin's listOffsets by
    timestamp). startingTimestamp/endingTimestamp apply to every partition. Partition 0: t-0..t-4 stamped
    base+1000..+5000, o-5 of an open transaction at +6000, t-6 at +7000; partition 1: u-0..u-2 at
    +1500, +2500, +3500. From +2000 to +6500 under read_committed: partition 0 from t-1 to the LSO
    (5: the end's match, t-6, is past it), partition 1 from u-1 to latest (no record reaches +6500)."""
    topic = kafka.topic("stamped", 2)
    base = (int(time.time()) - 3600) * 1000
    plain, c = kafka.plain(), kafka.txn("stamped")
    for i in range(5):
        send(plain, topic, 0, f"t-{i}", timestamp=base + 1000 * (i + 1))
    c.begin_transaction()
    send(c, topic, 0, "o-5", timestamp=base + 6000)
    send(plain, topic, 0, "t-6", timestamp=base + 7000)
    for i in range(3):
        send(plain, topic, 1, f"u-{i}", timestamp=base + 1500 + 1000 * i)
    try:
        with offset_reader(spark, "true"):
            df = kafka_read(spark, kafka.bootstrap, "read_committed", subscribe=topic, failOnDataLoss="true",
                            startingTimestamp=str(base + 2000), endingTimestamp=str(base + 6500))
            assert rows(pov(df)) == [(0, 1, "t-1"), (0, 2, "t-2"), (0, 3, "t-3"), (0, 4, "t-4"),
                                     (1, 1, "u-1"), (1, 2, "u-2")]
    finally:
        c.abort_transaction(20)


def groups(kafka) -> set[str]:
    listed = kafka.admin.list_consumer_groups().result(20)
    return {g.group_id for g in listed.valid}


# (group option, how c ends, what the batch after it reads)
GROUP_CASES = [pytest.param("kafka.group.id", "commit", AFTER_COMMIT["read_committed"], id="group.id-commit"),
               pytest.param("groupIdPrefix", "abort", [(0, 10, "p-3")], id="groupIdPrefix-abort")]


@pytest.mark.compat(scenario="spark.offset_readers")
@pytest.mark.parametrize(("option", "outcome", "after"), GROUP_CASES)
def test_consumer_reader_stream_crosses_an_open_transaction(spark, kafka, tmp_path, option, outcome, after):
    """A read_committed stream over the layout with c-1 open: the consumer reader's latest is the LSO
    (9 on partition 0), so the batches hold what is visible below it; c's commit or abort (marker at
    11) moves it to 12 and the next batch, [9, 12), reads c-1 and p-3 or only p-3. The driver's
    consumer is in a group the coordinator lists."""
    topic, c = layout(kafka)
    name = kafka.name("spark-group")
    out = tmp_path / "out"
    with offset_reader(spark, "true"):
        stream = pov(kafka_stream(spark, kafka.bootstrap, "read_committed", subscribe=topic,
                                  startingOffsets="earliest", failOnDataLoss="true", **{option: name}))
        query = to_parquet(stream, out, tmp_path / "checkpoint", trigger={"processingTime": "200 milliseconds"})
    try:
        wait_query(query, lambda: {topic: {0: 9, 1: 5}} in latest_seen(query), "a trigger that saw the LSO")
        query.processAllAvailable()
        assert rows(spark.read.parquet(str(out))) == VISIBLE["read_committed"]
        listed = groups(kafka)
        if option == "kafka.group.id":
            assert name in listed
        else:  # <prefix>-<uuid>-<hash>-driver-<n>, never the prefix alone
            assert name not in listed and any(g.startswith(f"{name}-") for g in listed), listed
        c.commit_transaction(20) if outcome == "commit" else c.abort_transaction(20)
        kafka.wait_end(topic, {0: 12, 1: 5})  # the marker at 11
        wait_query(query, lambda: {topic: {0: 12, 1: 5}} in latest_seen(query), f"a trigger that saw the {outcome}")
        query.processAllAvailable()
        assert rows(spark.read.parquet(str(out))) == sorted(VISIBLE["read_committed"] + after)
    finally:
        query.stop()
