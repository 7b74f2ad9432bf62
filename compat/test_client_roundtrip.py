"""kafka-python, aiokafka and confluent-kafka each produce 10,000 records with keys, headers and
timestamps under every compression type, and a fresh assign()-only consumer of the same library
reads them back identical and in order."""

from __future__ import annotations

import asyncio
import time

import pytest

from kafka_codecs import Compression

N = 10_000
BASE_TS = 1_700_000_000_000
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
CLIENTS = ["kafka-python", "aiokafka", "confluent-kafka"]
DEADLINE = 60.0


def expected_records(codec: str):
    """(key, value, headers, timestamp) per record: varied sizes, a null value now and then,
    repeated header keys, empty header values, and timestamps that go backwards sometimes."""
    out = []
    for i in range(N):
        key = b"key-%05d" % i
        value = None if i % 997 == 0 else (b"value %d of %s; " % (i, codec.encode())) * (1 + i % 13)
        headers = [("seq", str(i).encode()), ("codec", codec.encode())]
        if i % 3 == 0:
            headers.append(("seq", b""))
        ts = BASE_TS + 10 * i - (5_000 if i % 50 == 49 else 0)
        out.append((key, value, headers, ts))
    return out


# -- one producer and one consumer per library ------------------------------------------------


def kafka_python_roundtrip(bootstrap, topic, codec, records):
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    producer = KafkaProducer(
        bootstrap_servers=bootstrap, compression_type=None if codec == "none" else codec,
        linger_ms=20, batch_size=512 * 1024, max_request_size=8 << 20, acks="all",
    )  # fmt: skip
    futures = [producer.send(topic, key=k, value=v, headers=h, timestamp_ms=ts, partition=0) for k, v, h, ts in records]
    producer.flush(DEADLINE)
    offsets = [f.get(timeout=DEADLINE).offset for f in futures]
    producer.close()

    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False, auto_offset_reset="earliest",
        fetch_max_bytes=64 << 20, max_partition_fetch_bytes=32 << 20, max_poll_records=N,
    )  # fmt: skip
    tp = TopicPartition(topic, 0)
    consumer.assign([tp])
    consumer.seek_to_beginning(tp)
    got = []
    deadline = time.monotonic() + DEADLINE
    while len(got) < N and time.monotonic() < deadline:
        for batch in consumer.poll(timeout_ms=500).values():
            got += [(m.offset, m.key, m.value, list(m.headers), m.timestamp, m.timestamp_type) for m in batch]
    consumer.close()
    return offsets, got


def aiokafka_roundtrip(bootstrap, topic, codec, records):
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

    async def run():
        producer = AIOKafkaProducer(
            bootstrap_servers=bootstrap, compression_type=None if codec == "none" else codec,
            linger_ms=20, max_batch_size=512 * 1024, max_request_size=8 << 20, acks="all",
        )  # fmt: skip
        await producer.start()
        try:
            # send() only waits for room in the accumulator; the returned futures resolve on delivery.
            futures = [await producer.send(topic, key=k, value=v, headers=h, timestamp_ms=ts, partition=0)
                       for k, v, h, ts in records]  # fmt: skip
            metadata = await asyncio.wait_for(asyncio.gather(*futures), DEADLINE)
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(
            bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False, auto_offset_reset="earliest",
            fetch_max_bytes=64 << 20, max_partition_fetch_bytes=32 << 20,
        )  # fmt: skip
        await consumer.start()
        got = []
        try:
            tp = TopicPartition(topic, 0)
            consumer.assign([tp])
            await consumer.seek_to_beginning(tp)
            deadline = time.monotonic() + DEADLINE
            while len(got) < N and time.monotonic() < deadline:
                for batch in (await consumer.getmany(timeout_ms=500, max_records=N)).values():
                    got += [(m.offset, m.key, m.value, list(m.headers), m.timestamp, m.timestamp_type) for m in batch]
        finally:
            await consumer.stop()
        return [m.offset for m in metadata], got

    return asyncio.run(run())


def confluent_roundtrip(bootstrap, topic, codec, records):
    return _confluent_produce(bootstrap, topic, codec, records), _confluent_read(bootstrap, topic)


def _confluent_produce(bootstrap, topic, codec, records) -> list[int]:
    """The offset each record was acknowledged at."""
    import confluent_kafka as ck

    producer = ck.Producer({
        # Batches must stay under the broker's max.message.bytes (1048588): librdkafka does not split
        # a batch the broker refuses as too large.
        "bootstrap.servers": bootstrap, "compression.type": codec, "linger.ms": 20, "batch.size": 1_000_000,
        "batch.num.messages": N, "acks": "all",
    })  # fmt: skip
    offsets: dict[int, int] = {}
    errors = []

    def delivered(err, msg, i):
        if err is not None:
            errors.append((i, err))
        else:
            offsets[i] = msg.offset()

    for i, (k, v, h, ts) in enumerate(records):
        while True:
            try:
                producer.produce(topic, key=k, value=v, headers=h, timestamp=ts, partition=0,
                                 on_delivery=lambda err, msg, i=i: delivered(err, msg, i))  # fmt: skip
                break
            except BufferError:
                producer.poll(0.05)
        if i % 1000 == 0:
            producer.poll(0)
    assert producer.flush(DEADLINE) == 0
    assert errors == []
    return [offsets[i] for i in range(len(records))]


def _confluent_read(bootstrap, topic) -> list[tuple]:
    import confluent_kafka as ck

    consumer = ck.Consumer({
        "bootstrap.servers": bootstrap, "group.id": f"assign-only-{topic}", "enable.auto.commit": False,
        "enable.auto.offset.store": False, "auto.offset.reset": "earliest",
        # librdkafka consumers default to read_committed; these records are not transactional either way.
        "isolation.level": "read_uncommitted",
        "fetch.max.bytes": 64 << 20, "max.partition.fetch.bytes": 32 << 20, "receive.message.max.bytes": 100 << 20,
    })  # fmt: skip
    got = []
    try:
        consumer.assign([ck.TopicPartition(topic, 0, ck.OFFSET_BEGINNING)])
        deadline = time.monotonic() + DEADLINE
        while len(got) < N and time.monotonic() < deadline:
            for m in consumer.consume(N, 0.5):
                assert m.error() is None, m.error()
                ts_type, ts = m.timestamp()
                got.append((m.offset(), m.key(), m.value(), list(m.headers() or []), ts,
                            0 if ts_type == ck.TIMESTAMP_CREATE_TIME else ts_type))  # fmt: skip
    finally:
        consumer.close()
    return got


ROUNDTRIP = {"kafka-python": kafka_python_roundtrip, "aiokafka": aiokafka_roundtrip, "confluent-kafka": confluent_roundtrip}


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("client", CLIENTS)
def test_client_roundtrip(compat_target, wire, client, codec):
    topic = f"{compat_target.prefix}-roundtrip-{client}-{codec}"
    wire.create_topic(topic)
    records = expected_records(codec)
    offsets, got = ROUNDTRIP[client](compat_target.bootstrap_servers, topic, codec, records)

    assert offsets == list(range(N)), "acknowledged offsets are not 0..N-1 in send order"
    assert len(got) == N
    assert [g[0] for g in got] == list(range(N))
    for (key, value, headers, ts), (offset, gkey, gvalue, gheaders, gts, ts_type) in zip(records, got):
        assert (gkey, gvalue, gheaders, gts, ts_type) == (key, value, headers, ts, 0), f"record {offset}"

    # The batches as the broker stored them (a Fetch serves them unchanged): the client's codec kept.
    headers = wire.fetch_batches(topic, 0, N)
    assert sum(h.records_count for h in headers) == N
    assert len(headers) < N / 10, "the client did not batch"
    assert {h.compression for h in headers} == {Compression[codec.upper()]}
