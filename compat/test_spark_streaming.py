"""PySpark readStream against the broker under test, as a Spark Kafka-source integration test:

* a transactional producer (confluent-kafka) commits and aborts over two partitions, with plain
  records between its transactions, while the query runs with trigger availableNow (run again and
  again on one checkpoint) or a processingTime trigger (stopped and restarted from its checkpoint
  mid-stream, fetching about one record batch per Fetch): the parquet sink holds every committed and plain record exactly once and no aborted
  one under read_committed, every record exactly once under read_uncommitted;
* maxOffsetsPerTrigger small enough that micro-batches end on a COMMIT/ABORT marker or inside an
  aborted range: each batch covers exactly its offsets and yields exactly its visible records (and
  a batch read split by minPartitions into the same ranges yields the same);
* minOffsetsPerTrigger holds a batch back until enough offsets are there, maxTriggerDelay lets a
  smaller one through once it has passed.

Synchronised on the query's own state (recentProgress, awaitTermination, processAllAvailable)
and on the producer's progress. See compat/test_spark.py for the whole PySpark suite.
"""

from __future__ import annotations

import threading

import pytest

from compat.support import wait_for
from compat.spark_support import (Kafka, batches, each_iso, kafka_read, kafka_stream, latest_seen, offsets, pov,
                                  progresses, rows, run_available_now, send, spark_session, to_parquet, wait_query)

pytestmark = pytest.mark.compat(client="spark")


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    yield from spark_session(tmp_path_factory, "streaming")


@pytest.fixture(scope="module")
def kafka(compat_target):
    pytest.importorskip("confluent_kafka")
    return Kafka(compat_target, "stream")


class TxnWriter(threading.Thread):
    """Transactions of two records (one per partition, zstd), every third aborted, each followed by a
    plain record (lz4), until told to stop; remembers which value went where."""

    def __init__(self, kafka: Kafka, topic: str) -> None:
        super().__init__(name="spark-txn-writer", daemon=True)
        self.kafka, self.topic = kafka, topic
        self.committed: list[str] = []
        self.aborted: list[str] = []
        self.plain: list[str] = []
        self.transactions = 0
        self.halt = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            # compressed, so Spark's Java consumer decompresses what the broker stored as it came
            txn = self.kafka.txn("writer", **{"compression.type": "zstd"})
            plain = self.kafka.plain(**{"compression.type": "lz4"})
            while not self.halt.is_set():
                n = self.transactions
                values = [f"t{n}-0", f"t{n}-1"]
                txn.begin_transaction()
                for partition, value in enumerate(values):
                    txn.produce(self.topic, value=value.encode(), partition=partition)
                # in the log before the outcome: librdkafka's abort drops records it has not sent yet
                assert txn.flush(20) == 0
                if n % 3 == 2:
                    txn.abort_transaction(20)
                    self.aborted += values
                else:
                    txn.commit_transaction(20)
                    self.committed += values
                send(plain, self.topic, n % 2, f"p{n}")
                self.plain.append(f"p{n}")
                self.transactions += 1
                # a rate, not a synchronisation: a few hundred transactions over the test, not thousands
                self.halt.wait(0.02)
        except BaseException as exc:  # reported by finish()
            self.error = exc

    def wait_for(self, transactions: int) -> None:
        wait_for(lambda: self.transactions >= transactions or self.error, 60, message=f"{transactions} transactions")
        assert self.error is None, self.error

    def finish(self) -> None:
        self.halt.set()
        self.join(60)
        assert self.error is None, self.error
        assert not self.is_alive()

    def expected(self, iso: str) -> list[str]:
        visible = self.committed + self.plain
        return sorted(visible + self.aborted if iso == "read_uncommitted" else visible)


def sink_values(spark, out) -> list[str]:
    got = rows(spark.read.parquet(str(out)))
    assert len({(p, o) for p, o, _ in got}) == len(got), "a record reached the sink twice"
    return sorted(v for _, _, v in got)


def rows_read(query) -> int:
    return sum(b["rows"] for b in batches(query))


TRIGGERS = [pytest.param({"availableNow": True}, id="availableNow"),
            pytest.param({"processingTime": "200 milliseconds"}, id="processingTime")]


@pytest.mark.parametrize("trigger", TRIGGERS)
@pytest.mark.parametrize("iso", each_iso("spark.stream_txn_restart"))
def test_stream_while_transactions_commit_and_abort(spark, kafka, tmp_path, iso, trigger):
    topic = kafka.topic("concurrent", 2)
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    writer = TxnWriter(kafka, topic)

    # the processingTime run fetches about one batch at a time (Kafka still returns at least one
    # whole batch, KIP-74), so each Fetch carries the aborted transactions of a small range
    small = {"kafka.max.partition.fetch.bytes": "100", "kafka.fetch.max.bytes": "100"}
    fetch = small if "processingTime" in trigger else {}

    def start():
        stream = pov(kafka_stream(spark, kafka.bootstrap, iso, subscribe=topic, startingOffsets="earliest",
                                  failOnDataLoss="true", **fetch))
        return to_parquet(stream, out, checkpoint, trigger=trigger)

    writer.start()
    try:
        writer.wait_for(3)
        if "availableNow" in trigger:
            for _ in range(2):  # two runs that each stop at what was there when they started
                before = writer.transactions
                run_available_now(start())
                writer.wait_for(before + 3)  # the producer carried on while the run read
        else:
            query = start()
            wait_query(query, lambda: rows_read(query) > 0, "a first batch with records")
            query.stop()  # mid-stream: the producer is still writing
            assert writer.is_alive()
            query = start()  # from the checkpoint
            seen = writer.transactions
            wait_query(query, lambda: rows_read(query) > 0 and writer.transactions > seen + 3,
                       "a batch with records after the restart")
        assert writer.is_alive(), "the producer stopped before the query was restarted"
    finally:
        writer.finish()
    if "availableNow" in trigger:
        run_available_now(start())
    else:
        query.processAllAvailable()
        query.stop()
    assert writer.committed and writer.aborted
    got, expected = sink_values(spark, out), writer.expected(iso)
    assert got == expected, (sorted(set(expected) - set(got)), sorted(set(got) - set(expected)))


# One partition for the batch-boundary test:
#   0 p-0 | 1 a-1, 2 a-2 aborted, 3 ABORT | 4 b-1, 5 COMMIT | 6 p-1 | 7 a-3 aborted, 8 ABORT | 9 p-2
# maxOffsetsPerTrigger=2 cuts availableNow into [0,2) [2,4) [4,6) [6,8) [8,10): the second ends on
# the ABORT marker inside the aborted range's tail, the third on the COMMIT marker, the fifth starts on one.
GAP_BATCHES = {
    "read_committed": [["p-0"], [], ["b-1"], ["p-1"], ["p-2"]],
    "read_uncommitted": [["p-0", "a-1"], ["a-2"], ["b-1"], ["p-1", "a-3"], ["p-2"]],
}


@pytest.mark.parametrize("iso", each_iso("spark.rate_limits"))
def test_batches_ending_on_markers_and_aborted_ranges(spark, kafka, tmp_path, iso):
    topic = kafka.topic("gaps", 1)
    plain, txn = kafka.plain(), kafka.txn("gaps")
    send(plain, topic, 0, "p-0")
    txn.begin_transaction()
    send(txn, topic, 0, "a-1", "a-2")
    txn.abort_transaction(20)
    kafka.wait_end(topic, {0: 4})
    txn.begin_transaction()
    send(txn, topic, 0, "b-1")
    txn.commit_transaction(20)
    kafka.wait_end(topic, {0: 6})
    send(plain, topic, 0, "p-1")
    txn.begin_transaction()
    send(txn, topic, 0, "a-3")
    txn.abort_transaction(20)
    kafka.wait_end(topic, {0: 9})
    send(plain, topic, 0, "p-2")

    out = tmp_path / "out"
    stream = pov(kafka_stream(spark, kafka.bootstrap, iso, subscribe=topic, startingOffsets="earliest",
                              failOnDataLoss="true", maxOffsetsPerTrigger="2"))
    query = to_parquet(stream, out, tmp_path / "checkpoint", trigger={"availableNow": True})
    run_available_now(query)
    got = [(b["start"].get(topic, {}).get(0), b["end"][topic][0], b["rows"]) for b in batches(query)]
    expected = GAP_BATCHES[iso]
    # Spark's progress does not report the first batch's start
    assert got == [(2 * i or None, 2 * i + 2, len(values)) for i, values in enumerate(expected)]
    assert sorted(v for _, _, v in rows(spark.read.parquet(str(out)))) == sorted(sum(expected, []))
    # a batch read cut by minPartitions into the same five ranges, each read by its own task
    split = pov(kafka_read(spark, kafka.bootstrap, iso, subscribe=topic, minPartitions="5", failOnDataLoss="true"))
    assert split.rdd.getNumPartitions() == 5
    assert [v for _, _, v in rows(split)] == sum(expected, [])


@pytest.mark.compat(scenario="spark.rate_limits")
def test_min_offsets_per_trigger_and_max_trigger_delay(spark, kafka, tmp_path):
    """minOffsetsPerTrigger=4: 3 records wait (the source reports them as latest, no batch runs), the
    4th lets a batch of 4 through; a 5th alone goes through once maxTriggerDelay (8 s) has passed."""
    topic = kafka.topic("min-offsets", 1)
    plain = kafka.plain()
    # progress for idle triggers too, so the wait can see the source look at the records and hold back
    spark.conf.set("spark.sql.streaming.noDataProgressEventInterval", "0")
    try:
        stream = pov(kafka_stream(spark, kafka.bootstrap, subscribe=topic, startingOffsets="earliest",
                                  minOffsetsPerTrigger="4", maxTriggerDelay="8s"))
        query = to_parquet(stream, tmp_path / "out", tmp_path / "checkpoint",
                           trigger={"processingTime": "200 milliseconds"})
    finally:
        spark.conf.unset("spark.sql.streaming.noDataProgressEventInterval")

    def reads():
        """(start, end, rows) of the batches that moved the offset (a first batch starts at 0, unreported)."""
        spans = [(b["start"].get(topic, {}).get(0, 0), b["end"][topic][0], b["rows"]) for b in batches(query)]
        return [s for s in spans if s[1] > s[0]]

    try:
        wait_query(query, lambda: {topic: {0: 0}} in latest_seen(query), "the first trigger")
        send(plain, topic, 0, "m-0", "m-1", "m-2")
        wait_query(query, lambda: {topic: {0: 3}} in latest_seen(query), "a trigger that saw 3 records")
        assert reads() == []
        send(plain, topic, 0, "m-3")
        wait_query(query, reads, "the batch of 4")
        send(plain, topic, 0, "m-4")
        wait_query(query, lambda: len(reads()) == 2, "the batch after maxTriggerDelay", timeout=60)
        assert reads() == [(0, 4, 4), (4, 5, 1)]
        # before the batch of the 5th record, a trigger saw it and held it back
        trail = progresses(query)
        last = max(i for i, p in enumerate(trail) if "addBatch" in p["durationMs"])
        held = [p for p in trail[:last] if "addBatch" not in p["durationMs"]]
        assert {topic: {0: 5}} in [offsets(p["sources"][0]["latestOffset"]) for p in held]
    finally:
        query.stop()
