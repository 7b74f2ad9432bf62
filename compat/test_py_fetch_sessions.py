"""kafka-python's consumer over incremental fetch sessions (KIP-227; its FetchSessionHandler): 12
partitions whose data arrives a few at a time, committed and aborted transactions among plain
records, read_committed and read_uncommitted. The broker's control plane counts the incremental
fetches it served. (librdkafka and aiokafka send sessionless fetches; their reads are covered by
the other compat suites.)"""

from __future__ import annotations

import time

import pytest

from shim.broker import BrokerThread

pytestmark = [pytest.mark.shim_only("reads the broker's fetch session counts through its control plane"),
              pytest.mark.compat(client="kafka-python", scenario="consumer.fetch_sessions")]

PARTITIONS, ROUNDS = 12, 8


@pytest.fixture
def broker(tmp_path):
    with BrokerThread(data_dir=tmp_path / "kafka-shim", listen="127.0.0.1:0", control_listen="127.0.0.1:0") as b:
        b.call(b.broker.node.logs.create_topic, "fs", PARTITIONS)
        yield b


def _consumer(bootstrap, isolation):
    from kafka import KafkaConsumer, TopicPartition

    c = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level=isolation, enable_auto_commit=False,
                      auto_offset_reset="earliest", fetch_max_wait_ms=100, request_timeout_ms=10_000,
                      max_partition_fetch_bytes=256)
    tps = [TopicPartition("fs", i) for i in range(PARTITIONS)]
    c.assign(tps)
    c.seek_to_beginning(*tps)
    return c, tps


def _catch_up(c, tps, into) -> None:
    """Polls until the position reaches the end offset (LSO for read_committed) of every partition."""
    end = c.end_offsets(tps)
    deadline = time.monotonic() + 30
    while any(c.position(tp) < end[tp] for tp in tps):
        assert time.monotonic() < deadline, {tp.partition: (c.position(tp), end[tp]) for tp in tps}
        for tp, records in c.poll(timeout_ms=200).items():
            into.setdefault(tp.partition, []).extend(r.value.decode() for r in records)


def _round(txn, plain, r, written) -> None:
    """Round ``r``: a transaction on two partitions (every third aborted), a plain record on a third."""
    commit = r % 3 != 1
    txn.begin_transaction()
    for k in range(2):
        p = (r * 5 + k * 7) % PARTITIONS
        txn.send("fs", value=f"t{r}-{k}".encode(), partition=p)
        written.setdefault(p, []).append((f"t{r}-{k}", commit))
    txn.flush()  # else an abort drops the batches not yet sent
    txn.commit_transaction() if commit else txn.abort_transaction()
    p = (r * 7 + 2) % PARTITIONS
    plain.send("fs", value=f"p{r}".encode(), partition=p).get(timeout=10)
    written.setdefault(p, []).append((f"p{r}", True))


def test_kafka_python_reads_many_partitions_through_incremental_fetches(broker):
    from kafka import KafkaProducer

    bootstrap = broker.bootstrap_servers
    written: dict[int, list] = {}
    read = {"read_committed": {}, "read_uncommitted": {}}
    consumers = {iso: _consumer(bootstrap, iso) for iso in read}
    txn = KafkaProducer(bootstrap_servers=bootstrap, transactional_id="fs-T")
    plain = KafkaProducer(bootstrap_servers=bootstrap)
    try:
        txn.init_transactions()
        for iso, (c, tps) in consumers.items():
            _catch_up(c, tps, read[iso])
        before = broker.control.fetch_sessions()["incremental_fetches"]
        for r in range(ROUNDS):
            _round(txn, plain, r, written)
            for iso, (c, tps) in consumers.items():
                _catch_up(c, tps, read[iso])
    finally:
        txn.close()
        plain.close()
        for c, _ in consumers.values():
            c.close()
    assert read["read_uncommitted"] == {p: [v for v, _ in ws] for p, ws in written.items()}
    assert read["read_committed"] == {p: vs for p, ws in written.items() if (vs := [v for v, ok in ws if ok])}
    assert read["read_committed"] != read["read_uncommitted"]  # aborted records were left out
    # each consumer's first fetch is the full one that makes its session; at least one per round after
    assert broker.control.fetch_sessions()["incremental_fetches"] - before >= 2 * (ROUNDS - 1)
