"""The record checks a topic config asks for, through confluent-kafka (librdkafka): a keyless record
to a compacted topic and a record older than message.timestamp.before.max.ms are refused with
Kafka's errors, the rest of the topic's traffic goes through."""

from __future__ import annotations

import time

import pytest

confluent_kafka = pytest.importorskip("confluent_kafka")


@pytest.fixture
def kafka_shim(tmp_path):
    from shim.broker import BrokerThread

    with BrokerThread(data_dir=tmp_path / "kafka-shim", listen="127.0.0.1:0") as broker:
        yield broker


def _create(broker, name, config):
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    admin.create_topics([NewTopic(name, 1, 1, config=config)])[name].result(20)


def _deliveries(broker, topic, messages):
    """Each message's delivery error (None when stored), in order; no retries hide an error."""
    producer = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 0,
                                         "enable.idempotence": False, "retries": 0})
    results = []
    for kwargs in messages:
        producer.produce(topic, on_delivery=lambda err, _msg: results.append(err), **kwargs)
        producer.flush(30)  # one record a request: each gets its own answer
    assert len(results) == len(messages)
    return results


def test_a_keyless_record_to_a_compacted_topic_gets_invalid_record(kafka_shim):
    _create(kafka_shim, "compacted", {"cleanup.policy": "compact"})
    keyed, keyless = _deliveries(kafka_shim, "compacted", [{"key": b"k", "value": b"v"}, {"value": b"v"}])
    assert keyed is None
    assert keyless is not None and keyless.code() == confluent_kafka.KafkaError.INVALID_RECORD


def test_a_record_older_than_the_before_bound_gets_invalid_timestamp(kafka_shim):
    _create(kafka_shim, "bounded", {"message.timestamp.before.max.ms": "3600000"})
    now = int(time.time() * 1000)
    fresh, old = _deliveries(kafka_shim, "bounded", [{"value": b"v", "timestamp": now},
                                                     {"value": b"v", "timestamp": now - 2 * 3_600_000}])
    assert fresh is None
    assert old is not None and old.code() == confluent_kafka.KafkaError.INVALID_TIMESTAMP


def test_large_batches_recompressed_off_the_loop_arrive_whole_and_in_order(kafka_shim):
    # librdkafka fills 1 MB batches of tiny records; the topic recompresses them with gzip on a
    # worker thread (RecordPass.off_loop), and the partition's appends keep the producer's order
    _create(kafka_shim, "gz", {"compression.type": "gzip", "max.message.bytes": str(4 << 20)})
    count = 60_000
    producer = confluent_kafka.Producer({"bootstrap.servers": kafka_shim.bootstrap_servers, "linger.ms": 200,
                                         "batch.size": 1_000_000, "batch.num.messages": 100_000, "compression.type": "none",
                                         "enable.idempotence": True})
    errors = []
    for i in range(count):
        producer.produce("gz", key=b"%d" % i, value=b"v", partition=0,
                         on_delivery=lambda err, _msg: err and errors.append(err))
        if i % 10_000 == 0:
            producer.poll(0)
    assert producer.flush(60) == 0 and errors == []
    consumer = confluent_kafka.Consumer({"bootstrap.servers": kafka_shim.bootstrap_servers, "group.id": "g",
                                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.assign([confluent_kafka.TopicPartition("gz", 0, 0)])
    keys = []
    try:
        while len(keys) < count:
            for m in consumer.consume(10_000, timeout=10):
                assert m.error() is None
                keys.append(m.key())
    finally:
        consumer.close()
    assert keys == [b"%d" % i for i in range(count)]
    # librdkafka's batches were large enough to be recompressed off the loop
    from kafka_codecs import parse_header
    from shim.storage.log_validator import OFF_LOOP_BYTES

    data = kafka_shim.broker.node.logs.get("gz", 0).read(0, 64 << 20, False).data
    counts, pos = [], 0
    while pos < len(data):
        h = parse_header(data[pos:])
        counts.append(h.records_count)
        pos += h.size
    assert max(counts) * 8 >= OFF_LOOP_BYTES  # each record is at least 8 bytes
