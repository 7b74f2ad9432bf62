"""PySpark 4.0 with the spark-sql-kafka-0-10 connector against the broker under test: batch read,
streaming read with trigger(availableNow=True) into a parquet sink, and df.write, each under
kafka.isolation.level read_committed and read_uncommitted, over topics holding aborted, committed
and open transactions (written with confluent-kafka) and plain records.

Not run by default (PySpark is ~300 MB). Give the connector jars either as a directory,
``KAFKA_SHIM_SPARK_JARS=/path`` holding spark-sql-kafka-0-10_2.13-<spark version>.jar,
spark-token-provider-kafka-0-10_2.13-<spark version>.jar, commons-pool2-*.jar and optionally
kafka-clients-*.jar (else the java extra's kafka-clients 3.9.1 is used), or as Maven coordinates
Spark resolves itself, ``KAFKA_SHIM_SPARK_PACKAGES=org.apache.spark:spark-sql-kafka-0-10_2.13:<spark version>``;
with either set, ``make test`` installs the ``spark`` extra (else ``pip install -e '.[spark]'``).
compat/test_java_spark_pattern.py replays the same connector's calls without Spark and always runs.
"""

from __future__ import annotations

import glob
import os
import shutil
from pathlib import Path

import pytest

from compat.support import wait_for

pytestmark = pytest.mark.compat(client="spark")

ISOLATION = ["read_committed", "read_uncommitted"]
JARS_ENV, PACKAGES_ENV = "KAFKA_SHIM_SPARK_JARS", "KAFKA_SHIM_SPARK_PACKAGES"

# Layout written by `layout()` (partition, offset, value); c-1 stays open until a test commits it.
#   0: 0 p-0 | 1 a-1, 2 a-2 aborted, 3 ABORT | 4 p-1 | 5 b-1, 6 b-2, 7 COMMIT | 8 p-2 | 9 c-1 open | 10 p-3
#   1: 0 a-3 aborted, 1 ABORT | 2 p-4 | 3 b-3, 4 COMMIT
VISIBLE = {
    "read_committed": [(0, 0, "p-0"), (0, 4, "p-1"), (0, 5, "b-1"), (0, 6, "b-2"), (0, 8, "p-2"),
                       (1, 2, "p-4"), (1, 3, "b-3")],
    "read_uncommitted": [(0, 0, "p-0"), (0, 1, "a-1"), (0, 2, "a-2"), (0, 4, "p-1"), (0, 5, "b-1"), (0, 6, "b-2"),
                         (0, 8, "p-2"), (0, 9, "c-1"), (0, 10, "p-3"),
                         (1, 0, "a-3"), (1, 2, "p-4"), (1, 3, "b-3")],
}
AFTER_COMMIT = {"read_committed": [(0, 9, "c-1"), (0, 10, "p-3")], "read_uncommitted": []}


def each_iso(scenario: str):
    return [pytest.param(iso, id=iso, marks=pytest.mark.compat(scenario=scenario)) for iso in ISOLATION]


def spark_version_or_skip() -> str:
    pyspark = pytest.importorskip(
        "pyspark", reason=f"PySpark is not installed: set {JARS_ENV}=<directory of the Spark Kafka connector jars> "
                          f"(or {PACKAGES_ENV}=<their Maven coordinates>) and `make test` installs it, or "
                          "pip install -e '.[spark]' (PySpark 4.0.x, ~300 MB); compat/README.md says which jars")
    version = pyspark.__version__
    if not version.startswith("4."):
        pytest.skip(f"PySpark {version} found; these tests target Spark 4.0: pip install -e '.[spark]'")
    if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
        pytest.skip("Spark needs a JDK 17+: apt-get install -y openjdk-17-jdk-headless")
    return version


def connector_config(version: str) -> dict[str, str]:
    """spark.jars or spark.jars.packages for the Kafka connector; skips saying what to set."""
    packages = os.environ.get(PACKAGES_ENV)
    if packages:
        return {"spark.jars.packages": packages}
    need = {
        "spark-sql-kafka": f"spark-sql-kafka-0-10_2.13-{version}.jar",
        "spark-token-provider": f"spark-token-provider-kafka-0-10_2.13-{version}.jar",
        "commons-pool2": "commons-pool2-*.jar",
    }
    howto = (f"set {JARS_ENV} to a directory holding {', '.join(need.values())} (and optionally "
             f"kafka-clients-3.9.*.jar), or {PACKAGES_ENV}=org.apache.spark:spark-sql-kafka-0-10_2.13:{version} "
             f"to let Spark fetch them from Maven Central")
    directory = os.environ.get(JARS_ENV)
    if not directory:
        pytest.skip(f"the Spark Kafka connector jars are not available: {howto}")
    jars, missing = [], []
    for pattern in need.values():
        found = sorted(glob.glob(str(Path(directory) / pattern)))
        (jars.append(found[-1]) if found else missing.append(pattern))
    if missing:
        pytest.skip(f"{JARS_ENV}={directory} lacks {', '.join(missing)}: {howto}")
    clients = sorted(glob.glob(str(Path(directory) / "kafka-clients-*.jar")))
    if clients:
        jars.append(clients[-1])
    else:
        from compat import javarun

        try:
            jars.append(str(javarun.find_jars()[0]))  # kafka-clients 3.9.1 from the java extra
        except javarun.JavaUnavailable as exc:
            pytest.skip(f"no kafka-clients jar in {directory} and {exc}")
    return {"spark.jars": ",".join(jars)}


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    version = spark_version_or_skip()
    config = connector_config(version)
    from pyspark.sql import SparkSession

    builder = (SparkSession.builder.master("local[2]").appName("kafka-shim-compat")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("spark-warehouse"))))
    for key, value in config.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    yield session
    session.stop()


@pytest.fixture(scope="module")
def ck(compat_target):
    confluent_kafka = pytest.importorskip("confluent_kafka")
    from confluent_kafka.admin import AdminClient, NewTopic

    class Writer:
        bootstrap = compat_target.bootstrap_servers
        count = 0

        def topic(self, name: str, partitions: int) -> str:
            Writer.count += 1
            topic = f"{compat_target.prefix}-spark-{name}-{Writer.count}"
            admin = AdminClient({"bootstrap.servers": self.bootstrap})
            for f in admin.create_topics([NewTopic(topic, partitions, 1)]).values():
                f.result(20)
            return topic

        def plain(self):
            return confluent_kafka.Producer({"bootstrap.servers": self.bootstrap, "enable.idempotence": True})

        def txn(self, name: str):
            Writer.count += 1
            # an open transaction must outlive the Spark jobs that read past it (the default is 60 s)
            p = confluent_kafka.Producer({"bootstrap.servers": self.bootstrap,
                                          "transactional.id": f"{compat_target.prefix}-spark-{name}-{Writer.count}",
                                          "transaction.timeout.ms": 600_000})
            p.init_transactions(20)
            return p

        def wait_end(self, topic: str, ends: dict[int, int]) -> None:
            """Until each partition's high watermark is at its end: Kafka answers EndTxn first and
            writes the markers just after, so what is written next could otherwise go before them."""
            consumer = confluent_kafka.Consumer({"bootstrap.servers": self.bootstrap, "group.id": "spark-wait"})
            try:
                def at_end():
                    return all(consumer.get_watermark_offsets(confluent_kafka.TopicPartition(topic, p), 10)[1] == end
                               for p, end in ends.items())
                wait_for(at_end, 20, message=f"{topic} ends at {ends}")
            finally:
                consumer.close()

    return Writer()


def send(producer, topic: str, partition: int, *values: str) -> None:
    for v in values:
        producer.produce(topic, value=v.encode(), partition=partition)
    assert producer.flush(20) == 0


def layout(ck):
    """Writes the layout of the module comment; returns (topic, producer holding c-1 open)."""
    topic = ck.topic("layout", 2)
    plain, a, b, c = ck.plain(), ck.txn("A"), ck.txn("B"), ck.txn("C")
    send(plain, topic, 0, "p-0")
    a.begin_transaction()
    send(a, topic, 0, "a-1", "a-2")
    send(a, topic, 1, "a-3")
    a.abort_transaction(20)
    ck.wait_end(topic, {0: 4, 1: 2})  # ABORT markers at 3 and 1
    send(plain, topic, 0, "p-1")
    send(plain, topic, 1, "p-4")
    b.begin_transaction()
    send(b, topic, 0, "b-1", "b-2")
    send(b, topic, 1, "b-3")
    b.commit_transaction(20)
    ck.wait_end(topic, {0: 8, 1: 5})  # COMMIT markers at 7 and 4
    send(plain, topic, 0, "p-2")
    c.begin_transaction()
    send(c, topic, 0, "c-1")
    send(plain, topic, 0, "p-3")
    return topic, c


def rows(df):
    return sorted((r["partition"], r["offset"], r["value"]) for r in df.collect())


def batch(spark, bootstrap, topic, iso):
    return (spark.read.format("kafka")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", topic)
            .option("startingOffsets", "earliest")
            .option("endingOffsets", "latest")
            .option("kafka.isolation.level", iso)
            .option("failOnDataLoss", "true")
            .load()
            .selectExpr("partition", "offset", "CAST(value AS STRING) AS value"))


@pytest.fixture(scope="module")
def open_layout(ck):
    topic, _c = layout(ck)
    yield topic


@pytest.mark.parametrize("iso", each_iso("spark.batch_read"))
def test_batch_read(spark, compat_target, open_layout, iso):
    assert rows(batch(spark, compat_target.bootstrap_servers, open_layout, iso)) == VISIBLE[iso]


@pytest.mark.parametrize("iso", each_iso("spark.micro_batches"))
def test_stream_available_now(spark, compat_target, ck, tmp_path, iso):
    """Two availableNow runs on one checkpoint: up to the LSO first, the rest once c-1 commits."""
    topic, c = layout(ck)
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"

    def run_once():
        stream = (spark.readStream.format("kafka")
                  .option("kafka.bootstrap.servers", compat_target.bootstrap_servers)
                  .option("subscribe", topic)
                  .option("startingOffsets", "earliest")
                  .option("kafka.isolation.level", iso)
                  .option("failOnDataLoss", "true")
                  .load()
                  .selectExpr("partition", "offset", "CAST(value AS STRING) AS value"))
        query = (stream.writeStream.format("parquet")
                 .option("path", str(out))
                 .option("checkpointLocation", str(checkpoint))
                 .trigger(availableNow=True)
                 .start())
        assert query.awaitTermination(180), "the availableNow query did not finish"
        assert query.exception() is None, query.exception()
        return rows(spark.read.parquet(str(out)))

    assert run_once() == VISIBLE[iso]
    c.commit_transaction(20)
    ck.wait_end(topic, {0: 12, 1: 5})  # COMMIT marker at 11
    assert run_once() == sorted(VISIBLE[iso] + AFTER_COMMIT[iso])


@pytest.mark.parametrize("iso", each_iso("spark.write"))
def test_write_behind_an_open_transaction(spark, compat_target, ck, iso):
    """c-1 (0) stays open while Spark appends w-1..w-3 (1..3): read_committed sees them only after the commit."""
    topic = ck.topic("write", 1)
    c = ck.txn("write-C")
    c.begin_transaction()
    send(c, topic, 0, "c-1")
    df = spark.createDataFrame([("k1", "w-1"), ("k2", "w-2"), ("k3", "w-3")], "key string, value string")
    (df.coalesce(1).write.format("kafka")
       .option("kafka.bootstrap.servers", compat_target.bootstrap_servers)
       .option("topic", topic)
       .save())
    everything = [(0, 0, "c-1"), (0, 1, "w-1"), (0, 2, "w-2"), (0, 3, "w-3")]
    bootstrap = compat_target.bootstrap_servers
    if iso == "read_uncommitted":
        assert rows(batch(spark, bootstrap, topic, iso)) == everything
    else:
        assert rows(batch(spark, bootstrap, topic, iso)) == []
    c.commit_transaction(20)
    ck.wait_end(topic, {0: 5})  # COMMIT marker at 4
    assert rows(batch(spark, bootstrap, topic, iso)) == everything
