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
