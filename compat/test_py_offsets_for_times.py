"""Consumers' offsetsForTimes over out-of-order timestamps: confluent-kafka (``offsets_for_times``)
and kafka-python (``KafkaConsumer.offsets_for_times``) get the first offset whose timestamp is at
or after the one asked, as from Kafka.

The records' timestamps are a shuffle of 0..N-1 (plus a base), the second largest first and the
largest last, so that the time index helps least: a lookup of the largest walks the whole
segment. With one segment, Kafka's answer is simply the first record by offset at or after the
timestamp. Runs against ``compat_target``.
"""

from __future__ import annotations

import random
import time
import uuid

N = 3000


def _stamps(base: int) -> list[int]:
    stamps = list(range(N))
    random.Random(11).shuffle(stamps)
    for value, where in ((N - 2, 0), (N - 1, N - 1)):
        i = stamps.index(value)
        stamps[i], stamps[where] = stamps[where], stamps[i]
    return [base + s for s in stamps]


def _produce(bootstrap: str, topic: str, stamps: list[int]) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "batch.num.messages": 50})
    for i, ts in enumerate(stamps):
        producer.produce(topic, value=b"%d" % i, partition=0, timestamp=ts)
    assert producer.flush(30) == 0


def _confluent(bootstrap: str, topic: str, targets: list[int]) -> list[int]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"oft-{uuid.uuid4()}"})
    try:
        out = []
        for t in targets:
            (tp,) = consumer.offsets_for_times([TopicPartition(topic, 0, t)], timeout=15)
            assert tp.error is None, tp.error
            out.append(tp.offset)
        return out
    finally:
        consumer.close()


def _kafka_python(bootstrap: str, topic: str, targets: list[int]) -> list[int]:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, request_timeout_ms=15_000)
    try:
        tp = TopicPartition(topic, 0)
        out = []
        for t in targets:
            answer = consumer.offsets_for_times({tp: t})[tp]
            out.append(-1 if answer is None else answer.offset)
            if answer is not None:
                assert answer.timestamp >= t
        return out
    finally:
        consumer.close()


def test_offsets_for_times_over_shuffled_timestamps(compat_target):
    bootstrap = compat_target.bootstrap_servers
    topic = f"oft-{uuid.uuid4().hex[:8]}"
    base = int(time.time() * 1000) - 3_600_000  # an hour ago: inside every timestamp bound
    stamps = _stamps(base)
    _produce(bootstrap, topic, stamps)
    targets = [base + N - 1, base + N - 2, base + N // 2, base + 17, base, base - 5, base + N]
    expected = [next((o for o, ts in enumerate(stamps) if ts >= t), -1) for t in targets]
    assert expected[0] == N - 1 and expected[1] == 0 and expected[-1] == -1
    assert _confluent(bootstrap, topic, targets) == expected
    assert _kafka_python(bootstrap, topic, targets) == expected
