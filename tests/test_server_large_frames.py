"""Large Produce requests (librdkafka's 1 MB batches to one partition) are received into buffers
the server's pool lends again once a request is done with (shim.protocol.framing.BufferPool):
every record comes back as it was sent, over plain, TLS and SASL_SSL connections."""

from __future__ import annotations

import os

import pytest

confluent_kafka = pytest.importorskip("confluent_kafka")
pytest.importorskip("cryptography")

RECORDS = 4_000  # 1 KiB each: four 1 MB requests and more


def _security(broker, protocol: str) -> dict:
    conf = {"bootstrap.servers": broker.bootstrap(protocol), "security.protocol": protocol}
    if "SSL" in protocol:
        conf["ssl.ca.location"] = broker.certs["ca"]
    if "SASL" in protocol:
        conf.update({"sasl.mechanism": "SCRAM-SHA-256", "sasl.username": "alice", "sasl.password": "alice-secret"})
    return conf


@pytest.mark.parametrize("protocol", ["PLAINTEXT", "SSL", "SASL_SSL"])
def test_one_partitions_large_requests_come_back_whole_in_reused_buffers(kafka_shim_secure, protocol):
    broker = kafka_shim_secure
    conf = _security(broker, protocol)
    topic = f"large-{protocol.lower()}"
    broker.call(lambda: broker.broker.node.logs.create_topic(topic, 1))
    values = [b"%06d" % i + os.urandom(1018) for i in range(RECORDS)]
    producer = confluent_kafka.Producer({**conf, "acks": "all", "linger.ms": 1000, "batch.size": 1_000_000,
                                         "enable.idempotence": False})
    errors = []
    for v in values:
        producer.produce(topic, v, partition=0, on_delivery=lambda e, m: e and errors.append(e))
        producer.poll(0)
    assert producer.flush(60) == 0 and not errors
    pool = broker.broker._server.frame_buffers
    assert pool.lent >= 1  # a later request's bytes went into an earlier one's buffer

    consumer = confluent_kafka.Consumer({**conf, "group.id": "large", "enable.auto.commit": False})
    consumer.assign([confluent_kafka.TopicPartition(topic, 0, 0)])
    got = []
    try:
        while len(got) < RECORDS:
            batch = consumer.consume(1000, timeout=30)
            assert batch, f"read {len(got)} of {RECORDS}"
            for m in batch:
                assert m.error() is None, m.error()
                got.append(m.value())
    finally:
        consumer.close()
    assert got == values


@pytest.mark.parametrize("protocol", ["PLAINTEXT", "SSL", "SASL_SSL"])
def test_many_partitions_20_kb_requests_handed_out_as_views_come_back_whole(kafka_shim_secure, protocol):
    """librdkafka spreading records over many partitions sends ~20 KB Produce requests, many to a
    read: they are views of the connection's read buffer (shim.protocol.framing.LENT_BYTES), read
    into again only once nothing refers to them."""
    broker = kafka_shim_secure
    conf = _security(broker, protocol)
    topic, partitions = f"spread-{protocol.lower()}", 50
    broker.call(lambda: broker.broker.node.logs.create_topic(topic, partitions))
    values = {p: [b"%02d%06d" % (p, i) + os.urandom(1016) for i in range(RECORDS // partitions)]
              for p in range(partitions)}
    producer = confluent_kafka.Producer({**conf, "acks": "all", "linger.ms": 1000, "batch.size": 20_000,
                                         "enable.idempotence": False})
    errors = []
    for i in range(RECORDS // partitions):
        for p in range(partitions):
            producer.produce(topic, values[p][i], partition=p, on_delivery=lambda e, m: e and errors.append(e))
        producer.poll(0)
    assert producer.flush(60) == 0 and not errors

    consumer = confluent_kafka.Consumer({**conf, "group.id": "spread", "enable.auto.commit": False})
    consumer.assign([confluent_kafka.TopicPartition(topic, p, 0) for p in range(partitions)])
    got: dict[int, list[bytes]] = {p: [] for p in range(partitions)}
    try:
        while sum(map(len, got.values())) < RECORDS:
            batch = consumer.consume(1000, timeout=30)
            assert batch, f"read {sum(map(len, got.values()))} of {RECORDS}"
            for m in batch:
                assert m.error() is None, m.error()
                got[m.partition()].append(m.value())
    finally:
        consumer.close()
    assert got == values
