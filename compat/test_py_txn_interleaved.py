"""txn.interleaved with the Python clients (compat/scenarios/).

Two transactions of the same client library write one record at a time in turn on one partition
(keep-i, drop-i), with a plain record after every 10 pairs: 63 records at offsets 0..62. "drop"
aborts (ABORT marker at 63), then "keep" commits (COMMIT marker at 64). Consumers of that library
with max.partition.fetch.bytes=256 read it from the start: each fetch holds only a few batches
and ends inside both transactions, so every Fetch response must list the aborted transaction
overlapping its range for read_committed to drop exactly the drop-* records. read_committed sees
the keep-* and plain-* records at their offsets, read_uncommitted all 63, and both positions
reach 65.

Runs against ``compat_target``; on Apache Kafka the markers are written after EndTxn answers, so
the test waits for the ABORT marker's offset before committing (the offsets stay exact).
"""

from __future__ import annotations

import pytest

from compat.txn_clients import (
    CLIENT_NAMES, AiokafkaConsumer, ConfluentConsumer, KafkaPythonConsumer, _Loop, settle, wait_for,
)

FETCH_BYTES = 256  # a one-record batch here is ~75 bytes: 3 batches and a partial one per fetch
RC, RU = "read_committed", "read_uncommitted"


class SmallFetchKafkaPython(KafkaPythonConsumer):
    def __init__(self, bootstrap: str, isolation: str, topic: str, partition: int) -> None:
        from kafka import KafkaConsumer, TopicPartition

        self.records = []
        self.tp = TopicPartition(topic, partition)
        self.c = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level=isolation, enable_auto_commit=False,
                               auto_offset_reset="earliest", fetch_max_wait_ms=100, request_timeout_ms=10_000,
                               max_partition_fetch_bytes=FETCH_BYTES)
        self.c.assign([self.tp])
        self.c.seek_to_beginning(self.tp)


class SmallFetchAiokafka(AiokafkaConsumer):
    def __init__(self, bootstrap: str, isolation: str, topic: str, partition: int) -> None:
        from aiokafka import AIOKafkaConsumer, TopicPartition

        self.records = []
        self.tp = TopicPartition(topic, partition)
        self.L = _Loop()

        async def start():
            c = AIOKafkaConsumer(bootstrap_servers=bootstrap, isolation_level=isolation, enable_auto_commit=False,
                                 auto_offset_reset="earliest", fetch_max_wait_ms=100, request_timeout_ms=10_000,
                                 max_partition_fetch_bytes=FETCH_BYTES)
            await c.start()
            c.assign([self.tp])
            await c.seek_to_beginning(self.tp)
            return c
        self.c = self.L.run(start())


class SmallFetchConfluent(ConfluentConsumer):
    def __init__(self, bootstrap: str, isolation: str, topic: str, partition: int) -> None:
        import confluent_kafka as ck

        self.records = []
        self.stats = {}
        self.tp = ck.TopicPartition(topic, partition)
        self.c = ck.Consumer({
            "bootstrap.servers": bootstrap, "group.id": f"{topic}-{isolation}", "isolation.level": isolation,
            "enable.auto.commit": False, "auto.offset.reset": "earliest", "fetch.wait.max.ms": 100,
            "max.partition.fetch.bytes": FETCH_BYTES, "log_level": 2,
        })  # fmt: skip
        self.c.assign([ck.TopicPartition(topic, partition, ck.OFFSET_BEGINNING)])


SMALL_FETCH = {"kafka-python": SmallFetchKafkaPython, "aiokafka": SmallFetchAiokafka,
               "confluent-kafka": SmallFetchConfluent}


def wait_for_end(wire, topic, offset, isolation=0):
    """Until ListOffsets latest (isolation 0: the high watermark, 1: the LSO) is ``offset``."""
    wait_for(lambda: wire.list_offset(topic, 0, isolation, check=False) == offset, 20, 0.02,
             f"{topic} latest offset {offset} ({'LSO' if isolation else 'HW'})")


@pytest.mark.compat(scenario="txn.interleaved")
@pytest.mark.parametrize("client_name", [pytest.param(n, id=n, marks=pytest.mark.compat(client=n))
                                         for n in CLIENT_NAMES])
def test_interleaved_transactions_small_fetches(compat_target, wire, clients, client_name):
    topic = f"{compat_target.prefix}-interleaved-{client_name}"
    wire.create_topic(topic)
    keep = clients.txn_producer(f"{topic}-keep")
    drop = clients.txn_producer(f"{topic}-drop")
    plain = clients.plain_producer()

    written: list[bytes] = []

    def write(producer, value: bytes) -> None:
        assert producer.send(topic, value) == len(written), value  # one record at a time, in turn
        written.append(value)

    keep.begin()
    drop.begin()
    for i in range(30):
        write(keep, b"keep-%d" % i)
        write(drop, b"drop-%d" % i)
        if i % 10 == 9:
            write(plain, b"plain-%d" % i)
    assert len(written) == 63
    drop.abort()
    wait_for_end(wire, topic, 64)  # ABORT at 63
    keep.commit()
    wait_for_end(wire, topic, 65)  # COMMIT at 64
    wait_for_end(wire, topic, 65, 1)  # nothing open: the LSO is the high watermark

    everything = list(enumerate(written))
    for isolation, expected in ((RC, [(o, v) for o, v in everything if not v.startswith(b"drop-")]),
                                (RU, everything)):
        consumer = SMALL_FETCH[client_name](compat_target.bootstrap_servers, isolation, topic, 0)
        try:
            assert settle(consumer, 65, timeout=30) == expected, isolation
        finally:
            consumer.close()
