"""Idempotent producers whose Produce responses get lost leave no duplicates.

A proxy between client and broker lets chosen Produce requests through, waits for the broker's
answer (so the batch is in the log), then drops the answer and the connection. The client retries
the same batch with the same producer id, epoch and sequence; the broker must recognise it as a
duplicate and answer with the original offset. The partition must end with exactly N records at
offsets 0..N-1, each acknowledged at its own offset, even though some batches were sent twice.

The clients: kafka-python, aiokafka, confluent-kafka, and the Java kafka-clients producer
(compat/java/KafkaDriver.java's producer.idempotent_retries, run through the same proxy). Runs
against ``compat_target`` (a broker on this machine): the proxy rewrites Metadata to name itself,
and the log is read back over the wire.
"""

from __future__ import annotations

import functools
import time

import pytest

N = 3_000
DROP = {3, 8, 15, 16, 22}  # ordinals of the Produce requests whose responses are lost
# The Java producer pipelines up to 5 Produce requests on its connection: those sent behind a lost
# response die with the connection the proxy cuts, before their own responses could be dropped.
# Its lost responses are 6 requests apart, so that each falls on a connection of its own.
DROP_FOR = {"java": {3, 9, 15, 21, 27}}
DEADLINE = 60.0


def kafka_python_produce(bootstrap, topic):
    from kafka import KafkaProducer

    # kafka-python 3 is idempotent by default (acks=all, retries, at most 5 in flight).
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=2, batch_size=2048, retry_backoff_ms=20,
                             reconnect_backoff_ms=20)  # fmt: skip
    assert producer.config["enable_idempotence"]
    futures = []
    for i in range(N):
        futures.append(producer.send(topic, key=b"%d" % i, value=b"value-%06d" % i, partition=0))
        if i % 100 == 99:
            time.sleep(0.002)  # spread the records over many requests
    producer.flush(DEADLINE)
    offsets = [f.get(timeout=DEADLINE).offset for f in futures]
    producer.close()
    return offsets


def confluent_produce(bootstrap, topic):
    import confluent_kafka as ck

    producer = ck.Producer({
        "bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all", "linger.ms": 2,
        "batch.num.messages": 100, "retry.backoff.ms": 20, "reconnect.backoff.ms": 20,
        "max.in.flight.requests.per.connection": 5,
    })  # fmt: skip
    offsets: dict[int, int] = {}
    errors = []

    def delivered(err, msg):
        if err is not None:
            errors.append(err)
        else:
            offsets[int(msg.key())] = msg.offset()

    for i in range(N):
        producer.produce(topic, key=b"%d" % i, value=b"value-%06d" % i, partition=0, on_delivery=delivered)
        if i % 100 == 99:
            producer.poll(0.002)
    assert producer.flush(DEADLINE) == 0
    assert errors == []
    return [offsets[i] for i in range(N)]


def aiokafka_produce(bootstrap, topic):
    import asyncio

    from aiokafka import AIOKafkaProducer

    async def run():
        producer = AIOKafkaProducer(
            bootstrap_servers=bootstrap, enable_idempotence=True, acks="all", linger_ms=2, max_batch_size=2048,
            retry_backoff_ms=20,
        )  # fmt: skip
        await producer.start()
        try:
            futures = []
            for i in range(N):
                futures.append(await producer.send(topic, key=b"%d" % i, value=b"value-%06d" % i, partition=0))
                if i % 100 == 99:
                    await asyncio.sleep(0.002)
            metadata = await asyncio.wait_for(asyncio.gather(*futures), DEADLINE)
        finally:
            await producer.stop()
        return [m.offset for m in metadata]

    return asyncio.run(run())


def java_produce(bootstrap, topic, java_drivers):
    # The Java default producer: idempotent, acks=all, at most 5 requests in flight.
    scenario = "producer.idempotent_retries"
    out = java_drivers.run("KafkaDriver", scenario, bootstrap, timeout=DEADLINE * 4,
                           timeout_s=int(DEADLINE * 3), topic=topic, records=N)
    result = out["results"][scenario]
    if not result["ok"]:
        pytest.fail(f"{scenario}: {result['error']}\n{result['trace']}")
    assert result["observed"]["callbacks_per_record"] == {"1": N}, "a record was acknowledged more than once"
    return result["observed"]["offsets"]


PRODUCE = {"kafka-python": kafka_python_produce, "confluent-kafka": confluent_produce, "aiokafka": aiokafka_produce,
           "java": java_produce}


def read_back(bootstrap, topic):
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                             auto_offset_reset="earliest", max_partition_fetch_bytes=8 << 20)  # fmt: skip
    tp = TopicPartition(topic, 0)
    consumer.assign([tp])
    got = []
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        for batch in consumer.poll(timeout_ms=300).values():
            got += [(m.offset, m.value) for m in batch]
        if len(got) >= N and consumer.position(tp) >= consumer.end_offsets([tp])[tp]:
            break
    consumer.close()
    return got


@pytest.mark.parametrize("client", sorted(PRODUCE))
def test_lost_produce_responses_are_retried_without_duplicates(compat_target, wire, dropping_proxy, client, request):
    topic = f"{compat_target.prefix}-idempotent-{client}"
    produce = PRODUCE[client]
    if client == "java":  # skips here when there is no JDK or no client jars
        produce = functools.partial(produce, java_drivers=request.getfixturevalue("java_drivers"))
    host, port = compat_target.bootstrap_servers.split(",")[0].rsplit(":", 1)
    assert host in ("127.0.0.1", "localhost"), "the proxy forwards to a broker on this machine"
    drop = DROP_FOR.get(client, DROP)
    # Metadata answers are rewritten to name the proxy, so that every connection, not only the
    # bootstrap one, goes through it.
    proxy = dropping_proxy(int(port), drop, advertise=True)
    bootstrap = f"127.0.0.1:{proxy.port}"
    if client != "java":  # the Java scenario creates its topic itself
        wire.create_topic(topic)

    offsets = produce(bootstrap, topic)

    assert proxy.dropped == len(drop), "the proxy did not get to drop every planned response"
    assert proxy.connections > 1, "the client never reconnected"
    # The clients really sent some batches twice (same producer, epoch and sequence)...
    sent = proxy.produced_batches
    resent = len(sent) - len(set(sent))
    assert resent >= len(drop), f"{resent} batches were sent again, expected at least {len(drop)}"
    assert sum(count for *_, count in sent) > N
    assert offsets == list(range(N)), "acknowledged offsets are not one per record in order"
    assert wire.list_offset(topic, 0, 0) == N

    # Every batch in the log belongs to the one idempotent producer, in sequence without repeats...
    headers = wire.fetch_batches(topic, 0, N)
    assert len({h.producer_id for h in headers}) == 1 and headers[0].producer_id >= 0
    expected_seq = 0
    for h in headers:
        assert h.base_sequence == expected_seq
        expected_seq += h.records_count
    assert expected_seq == N
    # ... and the broker appended each of them once.
    assert len(headers) == len(set(sent))

    got = read_back(bootstrap, topic)
    assert got == [(i, b"value-%06d" % i) for i in range(N)]
