"""PySpark against a kafka-shim of its own, while the broker changes the log under Spark:

* late binding (Spark's KafkaRelationSuite "test late binding start offsets"): one batch DataFrame
  with startingOffsets=earliest, endingOffsets=latest, collected again after records were appended
  sees them, and after retention (retention.bytes=1) deleted every segment but the active one it
  starts at the new log start offset, with failOnDataLoss=true and no error; an explicit
  startingOffsets below the log start reads from the log start with failOnDataLoss=false and fails
  with Spark's data-loss error with true;
* a read_committed stream held at the LSO by a transaction its producer abandons: the coordinator
  aborts it once transaction.timeout.ms has passed (checked every 100 ms here), the LSO moves past
  the ABORT marker and the query reads the plain record behind it, never the aborted one;
* kill -9 under a running read_committed query with a transaction open: the broker restarts on its
  data directory and port, the query carries on by itself (its Admin and consumers reconnect), the
  transaction commits after the restart and its records are read, and a query restarted from the
  checkpoint afterwards ends with every committed record exactly once.

Synchronised on the query's progress, the sink, and the log's watermarks. See compat/test_spark.py.
"""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import pytest

from compat.support import wait_for
from compat.spark_support import (Kafka, batches, kafka_read, kafka_stream, latest_seen, pov, rows, send,
                                  spark_session, to_parquet, wait_query)

pytestmark = [pytest.mark.compat(client="spark"), pytest.mark.shim_only("runs and restarts a kafka-shim of its own")]


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    yield from spark_session(tmp_path_factory, "broker")


def kafka_on(bootstrap: str, name: str) -> Kafka:
    pytest.importorskip("confluent_kafka")
    return Kafka(SimpleNamespace(bootstrap_servers=bootstrap, prefix="spark"), name)


@pytest.mark.compat(scenario="spark.late_binding")
def test_late_binding_across_appends_and_retention(spark, tmp_path):
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic
    from shim.broker import BrokerThread

    with BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", retention_check_interval_ms=100) as broker:
        kafka = kafka_on(broker.bootstrap_servers, "late")
        topic = kafka.name("late")
        # one record batch per segment: each send below is a batch of its own, larger than half of 100 bytes
        kafka.admin.create_topics([NewTopic(topic, 1, 1, config={"segment.bytes": "100"})])[topic].result(20)
        plain = kafka.plain()
        for i in range(6):
            send(plain, topic, 0, f"v-{i}")
        df = pov(kafka_read(spark, broker.bootstrap_servers, subscribe=topic, startingOffsets="earliest",
                            endingOffsets="latest", failOnDataLoss="true"))
        assert rows(df) == [(0, i, f"v-{i}") for i in range(6)]
        for i in range(6, 9):
            send(plain, topic, 0, f"v-{i}")
        assert rows(df) == [(0, i, f"v-{i}") for i in range(9)]  # latest bound again

        resource = ConfigResource(ConfigResource.Type.TOPIC, topic, incremental_configs=[
            ConfigEntry("retention.bytes", "1", incremental_operation=AlterConfigOpType.SET)])
        for f in kafka.admin.incremental_alter_configs([resource]).values():
            f.result(20)
        # Kafka keeps the active segment: the log starts at the last batch, 8
        wait_for(lambda: kafka.watermarks(topic, 0) == (8, 9), 30, message="retention to delete the old segments")
        # (nothing appended now: a second segment would let retention take the 8th too)
        assert rows(df) == [(0, 8, "v-8")]  # earliest bound again
        # an explicit start below the log start: the executor's fetch is out of range
        below = {"startingOffsets": json.dumps({topic: {"0": 0}}), "endingOffsets": "latest"}
        lenient = kafka_read(spark, broker.bootstrap_servers, subscribe=topic, failOnDataLoss="false", **below)
        assert rows(pov(lenient)) == [(0, 8, "v-8")]  # from the log start on
        strict = kafka_read(spark, broker.bootstrap_servers, subscribe=topic, failOnDataLoss="true", **below)
        # Spark's KAFKA_DATA_LOSS.COULD_NOT_READ_OFFSET_RANGE, raised by the executor's OffsetOutOfRange
        lost = f"Could not read records in offset [0, 9) for topic partition {topic}-0"
        with pytest.raises(Exception, match=re.escape(lost)):
            strict.collect()


@pytest.mark.compat(scenario="spark.broker_restart")
def test_stream_across_a_broker_kill9_and_restart(spark, tmp_path, shim_process, free_port):
    """Partition 0: s-0, s-1 | c-0 of transaction c (open across the kill) | COMMIT | s-4 after the
    restart. Partition 1: s-2, s-3 before the kill, s-5 while the query is stopped."""
    data_dir, port = tmp_path / "data", free_port()
    broker = shim_process(data_dir, port)
    bootstrap = broker.wait_ready()
    kafka = kafka_on(bootstrap, "restart")
    topic = kafka.topic("restart", 2)
    plain, c = kafka.plain(), kafka.txn("restart")
    send(plain, topic, 0, "s-0", "s-1")
    c.begin_transaction()
    send(c, topic, 0, "c-0")
    send(plain, topic, 1, "s-2", "s-3")
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"

    def start():
        stream = pov(kafka_stream(spark, bootstrap, "read_committed", subscribe=topic, startingOffsets="earliest",
                                  failOnDataLoss="true"))
        return to_parquet(stream, out, checkpoint, trigger={"processingTime": "200 milliseconds"})

    def sink() -> list[tuple]:
        return rows(spark.read.parquet(str(out))) if out.exists() else []

    query = start()
    try:
        wait_query(query, lambda: {topic: {0: 2, 1: 2}} in latest_seen(query), "the LSO before the kill")
        wait_query(query, lambda: sum(b["rows"] for b in batches(query)) == 4, "the records below the LSO")
        broker.kill9()
        broker = shim_process(data_dir, port)
        assert broker.wait_ready(30) == bootstrap
        c.commit_transaction(60)  # the coordinator recovered the open transaction from its log
        kafka.wait_end(topic, {0: 4})  # c-0 at 2, COMMIT at 3
        send(plain, topic, 0, "s-4")
        wait_query(query, lambda: {topic: {0: 5, 1: 2}} in latest_seen(query), "the commit after the restart")
        wait_query(query, lambda: sum(b["rows"] for b in batches(query)) == 6, "the records after the restart")
    finally:
        query.stop()
    send(plain, topic, 1, "s-5")
    query = start()
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    assert sink() == [(0, 0, "s-0"), (0, 1, "s-1"), (0, 2, "c-0"), (0, 4, "s-4"),
                      (1, 0, "s-2"), (1, 1, "s-3"), (1, 2, "s-5")]


@pytest.mark.compat(scenario="spark.txn_timeout")
def test_stream_across_a_transaction_the_coordinator_aborts(spark, tmp_path):
    """Partition 0: p-0 | t-1 of a transaction left open (transaction.timeout.ms=2000: p-2 must be
    written before it times out) | p-2 | the ABORT marker at 3 that the coordinator writes when the
    transaction times out."""
    from shim.broker import BrokerThread

    with BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0",
                      transaction_abort_check_interval_ms=100) as broker:
        kafka = kafka_on(broker.bootstrap_servers, "timeout")
        topic = kafka.topic("abandoned", 1)
        plain, t = kafka.plain(), kafka.txn("abandoned", **{"transaction.timeout.ms": 2000})
        send(plain, topic, 0, "p-0")
        out = tmp_path / "out"
        stream = pov(kafka_stream(spark, broker.bootstrap_servers, "read_committed", subscribe=topic,
                                  startingOffsets="earliest", failOnDataLoss="true"))
        query = to_parquet(stream, out, tmp_path / "checkpoint", trigger={"processingTime": "200 milliseconds"})
        try:
            wait_query(query, lambda: sum(b["rows"] for b in batches(query)) == 1, "p-0")
            t.begin_transaction()
            send(t, topic, 0, "t-1")
            send(plain, topic, 0, "p-2")
            kafka.wait_end(topic, {0: 4})  # the coordinator's ABORT marker at 3
            wait_query(query, lambda: {topic: {0: 4}} in latest_seen(query), "the LSO past the marker")
            query.processAllAvailable()
            # the LSO held the query at 1 until the abort: no batch ended between 1 and 4
            assert [b["end"][topic][0] for b in batches(query)] == [1, 4]
        finally:
            query.stop()
        assert rows(spark.read.parquet(str(out))) == [(0, 0, "p-0"), (0, 2, "p-2")]
