"""producer.idempotent_default with the Python clients (compat/scenarios/).

Each client's idempotent producer writes 10 records to each of 2 partitions, interleaved across
the partitions; every record is acknowledged at offsets 0..9 of its partition, a consumer of the
same library reads each back once, and DescribeProducers (sent with kio, as in
compat/test_transactions.py) shows one producer id on both partitions with epoch 0, last sequence
9, no open transaction, no coordinator epoch, and the last batch's CreateTime as its timestamp.

kafka-python 3 is idempotent by default (acks=all), like the Java producer, and the test checks
that it is the default. librdkafka (confluent-kafka) and aiokafka default to
enable.idempotence=false, so for them the test turns it on and nothing else; a producer that
were not idempotent would leave no producer state for DescribeProducers to show.

Runs against ``compat_target``: nothing here looks inside the broker, so it holds on Apache Kafka.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from compat.txn_clients import CLIENT_NAMES, Clients, settle

PARTITIONS = 2
N = 10


def _sends():
    """(partition, key, value) in send order: record i of partition 0, then of partition 1."""
    return [(part, b"k%d" % i, f"v{part}-{i}".encode()) for i in range(N) for part in range(PARTITIONS)]


def produce_kafka_python(bootstrap: str, topic: str) -> list[tuple[int, int]]:
    from kafka import KafkaProducer

    p = KafkaProducer(bootstrap_servers=bootstrap, request_timeout_ms=10_000)  # the defaults
    try:
        assert p.config["enable_idempotence"] is True and p.config["acks"] == -1, p.config
        futures = [p.send(topic, key=k, value=v, partition=part) for part, k, v in _sends()]
        p.flush(20)
        return [(m.partition, m.offset) for m in (f.get(timeout=20) for f in futures)]
    finally:
        p.close(timeout=5)


def produce_confluent(bootstrap: str, topic: str) -> list[tuple[int, int]]:
    import confluent_kafka as ck

    p = ck.Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "log_level": 2})
    reports: list = [None] * (N * PARTITIONS)

    def report(i):
        return lambda err, msg: reports.__setitem__(i, (err, msg))

    for i, (part, k, v) in enumerate(_sends()):
        p.produce(topic, value=v, key=k, partition=part, on_delivery=report(i))
    assert p.flush(20) == 0
    errors = [err for err, _ in reports if err is not None]
    assert errors == [], errors
    return [(msg.partition(), msg.offset()) for _, msg in reports]


def produce_aiokafka(bootstrap: str, topic: str) -> list[tuple[int, int]]:
    from aiokafka import AIOKafkaProducer

    async def run():
        p = AIOKafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True, request_timeout_ms=10_000)
        await p.start()
        try:
            futures = [await p.send(topic, key=k, value=v, partition=part) for part, k, v in _sends()]
            done = await asyncio.wait_for(asyncio.gather(*futures), 20)
        finally:
            await p.stop()
        return [(m.partition, m.offset) for m in done]

    return asyncio.run(run())


PRODUCE = {"kafka-python": produce_kafka_python, "confluent-kafka": produce_confluent, "aiokafka": produce_aiokafka}


@pytest.mark.compat(scenario="producer.idempotent_default")
@pytest.mark.parametrize("client_name", [pytest.param(n, id=n, marks=pytest.mark.compat(client=n))
                                         for n in CLIENT_NAMES])
def test_idempotent_producer_two_partitions(compat_target, wire, client_name):
    bootstrap = compat_target.bootstrap_servers
    topic = f"{compat_target.prefix}-idempotent-{client_name}"
    wire.create_topic(topic, PARTITIONS)

    before = int(time.time() * 1000)
    acked = PRODUCE[client_name](bootstrap, topic)
    after = int(time.time() * 1000)
    assert acked == [(part, i) for i in range(N) for part in range(PARTITIONS)]  # each at its own offset

    clients = Clients(client_name, bootstrap)
    try:
        for part in range(PARTITIONS):
            consumer = clients.consumer("read_uncommitted", topic, part)
            assert settle(consumer, N) == [(i, f"v{part}-{i}".encode()) for i in range(N)]
    finally:
        clients.close_all()

    states = {part: wire.describe_producers(topic, part) for part in range(PARTITIONS)}
    assert [len(states[part]) for part in range(PARTITIONS)] == [1] * PARTITIONS, states
    for part in range(PARTITIONS):
        (s,) = states[part]
        assert s.producer_id >= 0
        assert (s.producer_epoch, s.last_sequence, s.current_txn_start_offset) == (0, N - 1, -1), s
        assert s.coordinator_epoch == -1, s  # no transaction marker ever written for it
        assert before <= s.last_timestamp <= after, (before, s, after)  # the last batch's CreateTime
    assert states[0][0].producer_id == states[1][0].producer_id  # one producer id for the whole producer
