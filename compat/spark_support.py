"""What the PySpark compat modules (compat/test_spark*.py) share: finding PySpark and the Kafka
connector jars (or skipping with what to set), one SparkSession per module, a confluent-kafka
writer and reader for the topics Spark reads and writes, and waits on a streaming query's state.

The connector is matched to PySpark by Spark minor version: a spark-sql-kafka-0-10 4.0.x jar works
with any PySpark 4.0.x; the jar of PySpark's exact version is taken when the directory has it,
else the highest patch of the same minor version.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from contextlib import contextmanager
from pathlib import Path

import pytest

from compat.support import wait_for

ISOLATION = ["read_committed", "read_uncommitted"]
JARS_ENV, PACKAGES_ENV = "KAFKA_SHIM_SPARK_JARS", "KAFKA_SHIM_SPARK_PACKAGES"
CONNECTOR_JARS = ("spark-sql-kafka-0-10_2.13", "spark-token-provider-kafka-0-10_2.13")
QUERY_TIMEOUT_S = 120


# spark.sql.streaming.kafka.useDeprecatedOffsetFetching: false (Spark 4's default) resolves offsets on
# the driver with an Admin client, true with a KafkaConsumer in a consumer group of its own
DEPRECATED_OFFSET_FETCHING = "spark.sql.streaming.kafka.useDeprecatedOffsetFetching"
READERS = [pytest.param("false", id="admin-reader"), pytest.param("true", id="consumer-reader")]


def each_iso(scenario: str):
    """The two isolation levels as test parameters filling the matrix cell of ``scenario``."""
    return [pytest.param(iso, id=iso, marks=pytest.mark.compat(scenario=scenario)) for iso in ISOLATION]


# -- PySpark and the connector jars ----------------------------------------------------------


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


def _patch_key(version: str) -> tuple:
    return tuple(int(p) if p.isdigit() else -1 for p in re.split(r"[.-]", version))


def pick_jar(directory: Path, artifact: str, spark_version: str) -> Path | None:
    """``artifact``-<version>.jar for PySpark's exact version if present, else the highest patch
    release of the same major.minor (a 4.0.x connector with any PySpark 4.0.x); None if neither."""
    minor = ".".join(spark_version.split(".")[:2])
    exact = directory / f"{artifact}-{spark_version}.jar"
    if exact.is_file():
        return exact
    pattern = re.compile(rf"{re.escape(artifact)}-({re.escape(minor)}\.\d+)\.jar")
    candidates = [(m.group(1), p) for p in directory.iterdir() if (m := pattern.fullmatch(p.name))]
    if not candidates:
        return None
    return max(candidates, key=lambda c: _patch_key(c[0]))[1]


def connector_config(version: str) -> dict[str, str]:
    """spark.jars or spark.jars.packages for the Kafka connector; skips saying what to set."""
    packages = os.environ.get(PACKAGES_ENV)
    if packages:
        return {"spark.jars.packages": packages}
    minor = ".".join(version.split(".")[:2])
    wanted = [f"{a}-{minor}.x.jar" for a in CONNECTOR_JARS] + ["commons-pool2-*.jar"]
    howto = (f"set {JARS_ENV} to a directory holding {', '.join(wanted)} (and optionally kafka-clients-3.9.*.jar), "
             f"or {PACKAGES_ENV}=org.apache.spark:spark-sql-kafka-0-10_2.13:{version} "
             f"to let Spark fetch them from Maven Central")
    directory = os.environ.get(JARS_ENV)
    if not directory:
        pytest.skip(f"the Spark Kafka connector jars are not available: {howto}")
    root = Path(directory)
    if not root.is_dir():
        pytest.skip(f"{JARS_ENV}={directory} is not a directory: {howto}")
    found = {name: pick_jar(root, a, version) for a, name in zip(CONNECTOR_JARS, wanted)}
    pools = sorted(root.glob("commons-pool2-*.jar"))
    found["commons-pool2-*.jar"] = pools[-1] if pools else None
    missing = [name for name, jar in found.items() if jar is None]
    if missing:
        pytest.skip(f"{JARS_ENV}={directory} lacks {', '.join(missing)}: {howto}")
    jars = [str(j) for j in found.values()]
    clients = sorted(root.glob("kafka-clients-*.jar"))
    if clients:
        jars.append(str(clients[-1]))
    else:
        from compat import javarun

        try:
            jars.append(str(javarun.find_jars()[0]))  # kafka-clients 3.9.1 from the java extra
        except javarun.JavaUnavailable as exc:
            pytest.skip(f"no kafka-clients jar in {directory} and {exc}")
    return {"spark.jars": ",".join(jars)}


_SHARED: list = []  # the SparkSession the modules share, while there is one


def spark_session(tmp_path_factory, name: str):
    """A local[2] SparkSession with the connector for one test module (a generator for a fixture):
    one session serves the modules of a run one after the other (a new SparkContext per module cost
    its start, its stop and the connector's classes loaded and compiled again on a fresh executor);
    what a module leaves behind, its streaming queries, temporary views and cached tables, goes with
    its teardown. The session stops after the last test that uses it (compat/conftest.py)."""
    version = spark_version_or_skip()
    config = connector_config(version)
    if not _SHARED:
        _SHARED.append(_start(tmp_path_factory, config))
    session = _SHARED[0]
    try:
        yield session
    finally:
        for query in session.streams.active:
            query.stop()
        for table in session.catalog.listTables():
            if table.isTemporary:
                session.catalog.dropTempView(table.name)
        session.catalog.clearCache()


def stop_shared_session() -> None:
    while _SHARED:
        _SHARED.pop().stop()


def _start(tmp_path_factory, config: dict):
    from pyspark.sql import SparkSession

    # C1 only and the serial collector: the tests run many small jobs, so the JVM spends its time
    # compiling rather than running; this takes about 40% off the suite on two busy cores
    builder = (SparkSession.builder.master("local[2]").appName("kafka-shim-compat")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.default.parallelism", "2")
               .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("spark-warehouse"))))
    for key, value in config.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


# -- the Kafka side, with confluent-kafka ------------------------------------------------------


class Kafka:
    """Topics, producers, admin calls and a reader on the broker under test."""

    def __init__(self, target, name: str) -> None:
        import confluent_kafka
        from confluent_kafka.admin import AdminClient

        self.ck = confluent_kafka
        self.bootstrap = target.bootstrap_servers
        self.prefix = f"{target.prefix}-{name}"
        self.count = 0
        self.admin = AdminClient({"bootstrap.servers": self.bootstrap})

    def name(self, stem: str) -> str:
        self.count += 1
        return f"{self.prefix}-{stem}-{self.count}"

    def topic(self, stem: str, partitions: int = 1, name: str | None = None, config: dict | None = None) -> str:
        from confluent_kafka.admin import NewTopic

        topic = name or self.name(stem)
        for f in self.admin.create_topics([NewTopic(topic, partitions, 1, config=config or {})]).values():
            f.result(20)
        # Kafka may leave a new topic out of Metadata for a moment after CreateTopics answers
        wait_for(lambda: topic in self.admin.list_topics(timeout=10).topics, 20, message=f"{topic} in Metadata")
        return topic

    def plain(self, **extra):
        return self.ck.Producer({"bootstrap.servers": self.bootstrap, "enable.idempotence": True, **extra})

    def txn(self, stem: str, **extra):
        # an open transaction must outlive the Spark jobs that read past it (the default is 60 s)
        p = self.ck.Producer({"bootstrap.servers": self.bootstrap, "transactional.id": self.name(stem),
                              "transaction.timeout.ms": 600_000, **extra})
        p.init_transactions(20)
        return p

    def watermarks(self, topic: str, partition: int) -> tuple[int, int]:
        """(log start offset, high watermark) as a read_uncommitted client sees them."""
        consumer = self.ck.Consumer({"bootstrap.servers": self.bootstrap, "group.id": "spark-watermarks"})
        try:
            return consumer.get_watermark_offsets(self.ck.TopicPartition(topic, partition), 10)
        finally:
            consumer.close()

    def wait_end(self, topic: str, ends: dict[int, int]) -> None:
        """Until each partition's high watermark is at its end: Kafka answers EndTxn first and
        writes the markers just after, so what is written next could otherwise go before them."""
        wait_for(lambda: all(self.watermarks(topic, p)[1] == end for p, end in ends.items()), 20,
                 message=f"{topic} ends at {ends}")

    def delete_records(self, topic: str, partition: int, before: int) -> int:
        """DeleteRecords up to ``before``; returns the new log start offset the broker reported."""
        tp = self.ck.TopicPartition(topic, partition, before)
        result = self.admin.delete_records([tp])[tp].result(20)
        return result.low_watermark

    def read_all(self, topic: str, partitions: int, isolation: str = "read_committed") -> list[dict]:
        """Every record of ``topic`` up to its end (LSO or high watermark), with an assign() consumer."""
        consumer = self.ck.Consumer({"bootstrap.servers": self.bootstrap, "group.id": "spark-readback",
                                     "isolation.level": isolation, "enable.auto.commit": False,
                                     "enable.partition.eof": True})
        try:
            consumer.assign([self.ck.TopicPartition(topic, p, self.ck.OFFSET_BEGINNING) for p in range(partitions)])
            out, at_eof = [], set()
            wait_for(lambda: _drain(consumer, out, at_eof) >= partitions, 30, message=f"the end of {topic}")
            return sorted(out, key=lambda r: (r["partition"], r["offset"]))
        finally:
            consumer.close()


def _drain(consumer, out: list, at_eof: set) -> int:
    from confluent_kafka import KafkaError

    for msg in consumer.consume(100, 0.2):
        if msg.error():
            if msg.error().code() == KafkaError._PARTITION_EOF:
                at_eof.add(msg.partition())
                continue
            raise AssertionError(msg.error())
        at_eof.discard(msg.partition())
        out.append({"topic": msg.topic(), "partition": msg.partition(), "offset": msg.offset(),
                    "key": msg.key(), "value": msg.value(), "headers": msg.headers() or []})
    return len(at_eof)


def send(producer, topic: str, partition: int, *values: str, **kw) -> None:
    for v in values:
        producer.produce(topic, value=v.encode(), partition=partition, **kw)
    assert producer.flush(20) == 0


# The transactional layout `layout()` writes (partition, offset, value); c-1 stays open until a
# test commits it. VISIBLE is what each isolation level reads of it, AFTER_COMMIT what c's commit adds.
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


def layout(kafka):
    """Writes the layout of the module comment; returns (topic, producer holding c-1 open)."""
    topic = kafka.topic("layout", 2)
    plain, a, b, c = kafka.plain(), kafka.txn("A"), kafka.txn("B"), kafka.txn("C")
    send(plain, topic, 0, "p-0")
    a.begin_transaction()
    send(a, topic, 0, "a-1", "a-2")
    send(a, topic, 1, "a-3")
    a.abort_transaction(20)
    kafka.wait_end(topic, {0: 4, 1: 2})  # ABORT markers at 3 and 1
    send(plain, topic, 0, "p-1")
    send(plain, topic, 1, "p-4")
    b.begin_transaction()
    send(b, topic, 0, "b-1", "b-2")
    send(b, topic, 1, "b-3")
    b.commit_transaction(20)
    kafka.wait_end(topic, {0: 8, 1: 5})  # COMMIT markers at 7 and 4
    send(plain, topic, 0, "p-2")
    c.begin_transaction()
    send(c, topic, 0, "c-1")
    send(plain, topic, 0, "p-3")
    return topic, c


# -- Spark DataFrames and queries --------------------------------------------------------------


def rows(df) -> list[tuple]:
    return sorted((r["partition"], r["offset"], r["value"]) for r in df.collect())


@contextmanager
def offset_reader(spark, deprecated: str):
    """Queries started inside use the offset reader ``deprecated`` names (see READERS)."""
    spark.conf.set(DEPRECATED_OFFSET_FETCHING, deprecated)
    try:
        yield
    finally:
        spark.conf.unset(DEPRECATED_OFFSET_FETCHING)


def kafka_read(spark, bootstrap: str, iso: str = "read_committed", **options):
    """spark.read.format('kafka') with ``options`` (None values left out), as (partition, offset, value)."""
    reader = (spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap)
              .option("kafka.isolation.level", iso))
    for key, value in options.items():
        if value is not None:
            reader = reader.option(key, value)
    return reader.load()


def kafka_stream(spark, bootstrap: str, iso: str = "read_committed", **options):
    reader = (spark.readStream.format("kafka").option("kafka.bootstrap.servers", bootstrap)
              .option("kafka.isolation.level", iso))
    for key, value in options.items():
        if value is not None:
            reader = reader.option(key, value)
    return reader.load()


def pov(df):
    """The (partition, offset, value-as-string) projection the row assertions compare."""
    return df.selectExpr("partition", "offset", "CAST(value AS STRING) AS value")


def to_parquet(df, out: Path, checkpoint: Path, *, trigger: dict, name: str | None = None):
    writer = (df.writeStream.format("parquet").option("path", str(out))
              .option("checkpointLocation", str(checkpoint)).trigger(**trigger))
    if name:
        writer = writer.queryName(name)
    return writer.start()


def run_available_now(query) -> None:
    """Waits for an availableNow query to finish; fails with the query's own error."""
    assert query.awaitTermination(QUERY_TIMEOUT_S), f"{query.name or query.id} did not finish"
    assert query.exception() is None, query.exception()


def batches(query) -> list[dict]:
    """The query's recent micro-batches: [{batch, start, end, rows}], offsets as {topic: {partition:
    offset}} with int keys, start {} for a first batch (Spark does not report it); idle triggers left out."""
    out = []
    for progress in progresses(query):
        source = progress["sources"][0]
        start, end = offsets(source.get("startOffset")), offsets(source.get("endOffset"))
        if "addBatch" in progress.get("durationMs", {}):  # an idle trigger's progress has no addBatch
            out.append({"batch": progress["batchId"], "start": start, "end": end,
                        "rows": progress["numInputRows"]})
    return out


def latest_seen(query) -> list[dict]:
    """The source's latest offsets as the query's recent progress reported them (one per trigger)."""
    return [offsets(p["sources"][0].get("latestOffset")) for p in progresses(query) if p["sources"]]


def progresses(query) -> list[dict]:
    """query.recentProgress as plain JSON (PySpark 4 wraps each in an object whose offsets are reprs)."""
    return [json.loads(p.json) if hasattr(p, "json") else p for p in query.recentProgress]


def offsets(value) -> dict:
    if value in (None, "None", "null"):  # the first batch's start is not reported
        return {}
    parsed = json.loads(value) if isinstance(value, str) else value
    return {t: {int(p): o for p, o in parts.items()} for t, parts in parsed.items()}


def wait_query(query, condition, message: str, timeout: float = QUERY_TIMEOUT_S):
    """Polls ``condition()`` while the query runs; fails at once with the query's error if it stops."""
    def check():
        if query.exception() is not None:
            raise AssertionError(f"{message}: the query failed: {query.exception()}")
        return condition()
    return wait_for(check, timeout, interval=0.05, message=message)
