"""PySpark 4.0 with the spark-sql-kafka-0-10 connector against the broker under test: batch reads
and availableNow micro-batches under kafka.isolation.level read_committed and read_uncommitted over
topics holding aborted, committed and open transactions (written with confluent-kafka) and plain
records; startingOffsets/endingOffsets as JSON and by timestamp; minPartitions; includeHeaders; a read_committed
batch read over SASL_SSL with SCRAM (kafka.sasl.jaas.config, a PEM truststore).

The rest of the PySpark suite, one SparkSession per module (local[2]):
  test_spark_streaming.py  readStream while a transactional producer commits and aborts, with
                           availableNow and processingTime triggers stopped and restarted from their
                           checkpoint; maxOffsetsPerTrigger batches that end on markers and aborted
                           ranges; minOffsetsPerTrigger with maxTriggerDelay
  test_spark_sources.py    assign, subscribe, subscribePattern (a topic created while the query
                           runs); failOnDataLoss true/false after DeleteRecords under a running query
  test_spark_sink.py       the Kafka sink (df.write and writeStream) with key, value, headers, topic
                           and partition columns, read back with confluent-kafka; df.write behind
                           an open transaction and to a topic auto-created on the way
  test_spark_offset_readers.py  the consumer-based offset reader (useDeprecatedOffsetFetching) in
                           batch reads and a stream across an open transaction, its group named by
                           kafka.group.id or groupIdPrefix; startingTimestamp/endingTimestamp
  test_spark_topics.py     partitions added under a running query; a topic deleted and recreated
                           between runs (failOnDataLoss both ways) and under a pattern query
  test_spark_broker.py     a kafka-shim of its own: late-bound earliest/latest across appends and
                           retention; a stream across kill -9 and restart with a transaction open
  test_spark_reference.py  Spark's own connector suites replayed: streams from timestamps (and no
                           match), availableNow with the topic recreated under it, topic churn under
                           a pattern query, null keys/values, column types, offsetsBehindLatest
                           metrics, big values through a small producer buffer

Every expectation is what Apache Kafka gives. Not run by default (PySpark is ~300 MB): give the
connector jars as a directory, ``KAFKA_SHIM_SPARK_JARS=/path`` holding
spark-sql-kafka-0-10_2.13-4.0.x.jar, spark-token-provider-kafka-0-10_2.13-4.0.x.jar (any 4.0.x
works with any PySpark 4.0.x; PySpark's own version is preferred when present), commons-pool2-*.jar
and optionally kafka-clients-*.jar (else the java extra's kafka-clients 3.9.1 is used), or as Maven
coordinates Spark resolves itself, ``KAFKA_SHIM_SPARK_PACKAGES=org.apache.spark:spark-sql-kafka-0-10_2.13:<version>``;
with either set, ``make test`` installs the ``spark`` extra (else ``pip install -e '.[spark]'``).
.ci/run points KAFKA_SHIM_SPARK_JARS at shared/spark-jars beside the repository when it exists.
compat/test_java_spark_pattern.py replays the same connector's calls without Spark and always runs.
"""

from __future__ import annotations

import json
import time

import pytest

from compat.spark_support import (AFTER_COMMIT, VISIBLE, Kafka, each_iso, kafka_read, kafka_stream, layout, pov, rows,
                                  run_available_now, send, spark_session, to_parquet)

pytestmark = pytest.mark.compat(client="spark")


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    yield from spark_session(tmp_path_factory, "batch")


@pytest.fixture(scope="module")
def kafka(compat_target):
    pytest.importorskip("confluent_kafka")
    return Kafka(compat_target, "spark")


@pytest.fixture(scope="module")
def open_layout(kafka):
    topic, c = layout(kafka)
    yield topic
    c.abort_transaction(20)


def read(spark, kafka, iso, **options):
    return rows(pov(kafka_read(spark, kafka.bootstrap, iso, failOnDataLoss="true", **options)))


@pytest.mark.parametrize("iso", each_iso("spark.batch_read"))
def test_batch_read(spark, kafka, open_layout, iso):
    assert read(spark, kafka, iso, subscribe=open_layout, startingOffsets="earliest",
                endingOffsets="latest") == VISIBLE[iso]


@pytest.mark.parametrize("iso", each_iso("spark.batch_read"))
def test_min_partitions_split_the_ranges(spark, kafka, open_layout, iso):
    """minPartitions=7 cuts each partition's range into pieces that start and end inside aborted
    ranges and on markers: every executor reads its piece alone and together they read each visible
    record once."""
    df = kafka_read(spark, kafka.bootstrap, iso, subscribe=open_layout, startingOffsets="earliest",
                    endingOffsets="latest", failOnDataLoss="true", minPartitions="7")
    assert df.rdd.getNumPartitions() >= 7
    assert rows(pov(df)) == VISIBLE[iso]


@pytest.mark.parametrize("iso", each_iso("spark.offsets_json"))
def test_offsets_as_json(spark, kafka, open_layout, iso):
    """Partition 0 from inside the aborted range (2) to inside the committed one (6, exclusive);
    partition 1 from earliest (-2) to latest (-1: the LSO under read_committed, else the high watermark)."""
    start = json.dumps({open_layout: {"0": 2, "1": -2}})
    end = json.dumps({open_layout: {"0": 6, "1": -1}})
    expected = {
        "read_committed": [(0, 4, "p-1"), (0, 5, "b-1"), (1, 2, "p-4"), (1, 3, "b-3")],
        "read_uncommitted": [(0, 2, "a-2"), (0, 4, "p-1"), (0, 5, "b-1"), (1, 0, "a-3"), (1, 2, "p-4"),
                             (1, 3, "b-3")],
    }
    assert read(spark, kafka, iso, subscribe=open_layout, startingOffsets=start, endingOffsets=end) == expected[iso]


@pytest.fixture(scope="module")
def stamped(kafka):
    """Partition 0: t-0..t-4 stamped base+1000..base+5000 (offsets 0-4), o-5 of an open transaction
    at base+6000, t-6 at base+7000. Partition 1: u-0..u-2 at base+1500, +2500, +3500."""
    topic = kafka.topic("stamped", 2)
    base = (int(time.time()) - 3600) * 1000  # an hour ago: inside retention, apart from "now"
    plain, c = kafka.plain(), kafka.txn("stamped")
    for i in range(5):
        send(plain, topic, 0, f"t-{i}", timestamp=base + 1000 * (i + 1))
    c.begin_transaction()
    send(c, topic, 0, "o-5", timestamp=base + 6000)
    send(plain, topic, 0, "t-6", timestamp=base + 7000)
    for i in range(3):
        send(plain, topic, 1, f"u-{i}", timestamp=base + 1500 + 1000 * i)
    yield topic, base
    c.abort_transaction(20)


@pytest.mark.parametrize("iso", each_iso("spark.offsets_by_timestamp"))
def test_offsets_by_timestamp(spark, kafka, stamped, iso):
    """The first offset stamped at or after each timestamp, looked up under the query's isolation level:
    partition 0 starts at t-1 (offset 1) and its end, base+6500, matches t-6 at offset 6, which is past
    the LSO (5) under read_committed: Kafka answers no offset there and Spark ends at latest, the LSO.
    Partition 1 ends at a timestamp no record reaches, so at latest."""
    topic, base = stamped
    start = json.dumps({topic: {"0": base + 2000, "1": base + 2000}})
    end = json.dumps({topic: {"0": base + 6500, "1": base + 9000}})
    ends_0 = {"read_committed": [], "read_uncommitted": [(0, 5, "o-5")]}
    expected = sorted([(0, 1, "t-1"), (0, 2, "t-2"), (0, 3, "t-3"), (0, 4, "t-4"), *ends_0[iso],
                       (1, 1, "u-1"), (1, 2, "u-2")])
    assert read(spark, kafka, iso, subscribe=topic, startingOffsetsByTimestamp=start,
                endingOffsetsByTimestamp=end) == expected


@pytest.mark.compat(scenario="spark.offsets_by_timestamp")
def test_starting_timestamp_no_match(spark, kafka, stamped):
    """startingOffsetsByTimestamp past every record: the default strategy fails the query, 'latest'
    starts at the end."""
    topic, base = stamped
    start = json.dumps({topic: {"0": base + 99_000, "1": base + 99_000}})
    with pytest.raises(Exception, match="No offset matched"):
        read(spark, kafka, "read_uncommitted", subscribe=topic, startingOffsetsByTimestamp=start)
    assert read(spark, kafka, "read_uncommitted", subscribe=topic, startingOffsetsByTimestamp=start,
                startingOffsetsByTimestampStrategy="latest") == []


@pytest.mark.compat(scenario="spark.headers")
def test_include_headers(spark, kafka):
    """headers: array<struct<key string, value binary>> in record order, repeated keys and null values kept."""
    topic = kafka.topic("headers", 1)
    plain = kafka.plain()
    send(plain, topic, 0, "h-0", headers=[("k", b"v1"), ("k", b"v2"), ("empty", b""), ("none", None)])
    send(plain, topic, 0, "h-1")
    df = kafka_read(spark, kafka.bootstrap, subscribe=topic, includeHeaders="true")
    got = sorted((r["offset"], r["value"].decode(), [(h["key"], h["value"]) for h in (r["headers"] or [])])
                 for r in df.collect())
    assert got == [(0, "h-0", [("k", b"v1"), ("k", b"v2"), ("empty", b""), ("none", None)]), (1, "h-1", [])]


@pytest.mark.parametrize("iso", each_iso("spark.micro_batches"))
def test_stream_available_now(spark, kafka, tmp_path, iso):
    """Two availableNow runs on one checkpoint: up to the LSO first, the rest once c-1 commits."""
    topic, c = layout(kafka)
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"

    def run_once():
        stream = pov(kafka_stream(spark, kafka.bootstrap, iso, subscribe=topic, startingOffsets="earliest",
                                  failOnDataLoss="true"))
        run_available_now(to_parquet(stream, out, checkpoint, trigger={"availableNow": True}))
        return rows(spark.read.parquet(str(out)))

    assert run_once() == VISIBLE[iso]
    c.commit_transaction(20)
    kafka.wait_end(topic, {0: 12, 1: 5})  # COMMIT marker at 11
    assert run_once() == sorted(VISIBLE[iso] + AFTER_COMMIT[iso])


@pytest.mark.shim_only("starts a kafka-shim with a SASL_SSL listener of its own")
@pytest.mark.compat(scenario="spark.sasl_ssl_read_committed")
def test_read_committed_over_sasl_ssl_scram(spark, tmp_path):
    """A production-style secured read: kafka.security.protocol=SASL_SSL, SCRAM-SHA-512 through
    kafka.sasl.jaas.config, the CA as a PEM truststore (ssl.truststore.type=PEM): the connector's
    driver (Admin, offsets) and executor (consumer) both authenticate, and read_committed sees the
    txn.seed layout as Kafka gives it."""
    from compat.security_clients import ConfluentKafka, Security
    from shim.broker import SECURE_USER, secure_broker

    with secure_broker(tmp_path) as broker:
        writer = ConfluentKafka(Security(broker.bootstrap("SASL_SSL"), "SASL_SSL", "SCRAM-SHA-512", *SECURE_USER,
                                         broker.certs["ca"]))
        topic = "spark-sasl-ssl"
        writer.transaction(topic, committed=[], aborted=[b"a-1", b"a-2"])
        writer.produce(topic, [b"plain-1"])
        writer.transaction(topic, committed=[b"b-1", b"b-2"], aborted=[])
        jaas = ('org.apache.kafka.common.security.scram.ScramLoginModule required '
                f'username="{SECURE_USER[0]}" password="{SECURE_USER[1]}";')
        secured = {"kafka.security.protocol": "SASL_SSL", "kafka.sasl.mechanism": "SCRAM-SHA-512",
                   "kafka.sasl.jaas.config": jaas, "kafka.ssl.truststore.type": "PEM",
                   "kafka.ssl.truststore.location": broker.certs["ca"], "subscribe": topic,
                   "startingOffsets": "earliest", "endingOffsets": "latest"}
        committed = rows(pov(kafka_read(spark, broker.bootstrap("SASL_SSL"), "read_committed", **secured)))
        assert committed == [(0, 3, "plain-1"), (0, 4, "b-1"), (0, 5, "b-2")]
        everything = rows(pov(kafka_read(spark, broker.bootstrap("SASL_SSL"), "read_uncommitted", **secured)))
        assert [v for _, _, v in everything] == ["a-1", "a-2", "plain-1", "b-1", "b-2"]
