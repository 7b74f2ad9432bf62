"""PySpark 4.0 over a compacted topic with gaps: batch reads and availableNow streaming reads under
kafka.isolation.level read_committed and read_uncommitted, with failOnDataLoss true and false, after
the log cleaner removed superseded records and an aborted transaction.

The connector (KafkaDataConsumer.fetchRecord) treats a record whose offset is past the one it asked
for as an invisible range when the log start offset is still at or below the asked offset, so a
compacted topic never counts as data loss; these tests check that the rows are exactly the records
kept, whatever failOnDataLoss says. Shim-only: the cleaner round is run by the test
(``BrokerThread.clean_logs``); the background cleaner waits an hour. See test_spark.py for how to
give Spark its connector jars.
"""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from compat.spark_support import ISOLATION, Kafka, kafka_read, kafka_stream, pov, rows, run_available_now, send, \
    spark_session, to_parquet

pytestmark = [pytest.mark.compat(client="spark", scenario="spark.compacted"),
              pytest.mark.shim_only("runs the log cleaner of an in-process kafka-shim")]

CONFIGS = {"cleanup.policy": "compact", "segment.bytes": "100", "min.cleanable.dirty.ratio": "0.01"}
# What the cleaner keeps of the layout below (partition, offset, value), under either isolation
# level: k0..k3 superseded but for their last writes, the aborted transaction gone.
KEPT = [(0, 13, "v3-1"), (0, 14, "v3-2"), (0, 15, "v3-3"), (0, 19, "c-1"), (0, 21, "v-late"), (0, 22, "seal")]
FAIL_ON_DATA_LOSS = ["true", "false"]


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    yield from spark_session(tmp_path_factory, "compacted")


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    from shim.broker import BrokerThread

    with BrokerThread(data_dir=tmp_path_factory.mktemp("compacted") / "data", listen="127.0.0.1:0",
                      extra={"log.cleaner.backoff.ms": "3600000"}) as b:
        yield b


@pytest.fixture(scope="module")
def compacted(broker):
    """The topic: 0-15 k0..k3 four times over | 16, 17 aborted, 18 ABORT | 19 c-1, 20 COMMIT | 21 k0
    again | 22 seal (the active segment), then one cleaner round."""
    pytest.importorskip("confluent_kafka")
    from confluent_kafka.admin import NewTopic

    kafka = Kafka(SimpleNamespace(bootstrap_servers=broker.bootstrap_servers, prefix="spark"), "compacted")
    topic = kafka.name("gaps")
    kafka.admin.create_topics([NewTopic(topic, 1, 1, config=CONFIGS)])[topic].result(20)
    plain = kafka.plain()
    for r in range(4):
        for i in range(4):
            send(plain, topic, 0, f"v{r}-{i}", key=f"k{i}".encode())
    aborted, committed = kafka.txn("aborted"), kafka.txn("committed")
    aborted.begin_transaction()
    send(aborted, topic, 0, "x-1", key=b"k1")
    send(aborted, topic, 0, "x-2", key=b"kx")
    aborted.abort_transaction(20)
    committed.begin_transaction()
    send(committed, topic, 0, "c-1", key=b"kc")
    committed.commit_transaction(20)
    send(plain, topic, 0, "v-late", key=b"k0")
    send(plain, topic, 0, "seal", key=b"seal")
    assert kafka.watermarks(topic, 0) == (0, 23)
    assert broker.clean_logs(int(time.time() * 1000)) == 1
    for iso in ISOLATION:  # what a plain client reads now: the reference for Spark
        got = [(r["partition"], r["offset"], r["value"].decode()) for r in kafka.read_all(topic, 1, iso)]
        assert got == KEPT, iso
    return kafka, topic


@pytest.mark.parametrize("fail_on_data_loss", FAIL_ON_DATA_LOSS)
@pytest.mark.parametrize("iso", ISOLATION)
def test_batch_read_of_a_compacted_topic(spark, compacted, iso, fail_on_data_loss):
    kafka, topic = compacted
    df = kafka_read(spark, kafka.bootstrap, iso, subscribe=topic, startingOffsets="earliest",
                    endingOffsets="latest", failOnDataLoss=fail_on_data_loss)
    assert rows(pov(df)) == KEPT


@pytest.mark.parametrize("fail_on_data_loss", FAIL_ON_DATA_LOSS)
@pytest.mark.parametrize("iso", ISOLATION)
def test_stream_read_of_a_compacted_topic(spark, compacted, tmp_path, iso, fail_on_data_loss):
    kafka, topic = compacted
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    stream = pov(kafka_stream(spark, kafka.bootstrap, iso, subscribe=topic, startingOffsets="earliest",
                              failOnDataLoss=fail_on_data_loss, maxOffsetsPerTrigger="5"))
    run_available_now(to_parquet(stream, out, checkpoint, trigger={"availableNow": True}))
    assert rows(spark.read.parquet(str(out))) == KEPT
