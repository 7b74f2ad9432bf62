"""A kill -9 with a large active segment: the restart CRC-checks only the bytes written after the
partition's last recovery point, not the whole segment, and every acknowledged record is there."""

from __future__ import annotations

import re
import signal

import confluent_kafka as ck
from confluent_kafka.admin import AdminClient, NewTopic
import pytest

from shim.storage import recovery_point

pytestmark = pytest.mark.shim_only("kills the broker with SIGKILL and restarts it")

TOPIC = "rp"
VALUE = b"v" * 1000


def produce(bootstrap: str, first: int, count: int) -> None:
    producer = ck.Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5})
    failed = []
    for i in range(first, first + count):
        producer.produce(TOPIC, key=b"%d" % i, value=VALUE, partition=0,
                         on_delivery=lambda err, msg: err is None or failed.append(err))
        if i % 1000 == 0:
            producer.poll(0)
    assert producer.flush(60) == 0 and failed == []


def count_records(bootstrap: str, end: int) -> list[int]:
    consumer = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": "rp-check", "enable.auto.commit": False})
    keys = []
    try:
        consumer.assign([ck.TopicPartition(TOPIC, 0, ck.OFFSET_BEGINNING)])
        while len(keys) < end:
            batch = consumer.consume(1000, 10)
            assert batch, f"no records after {len(keys)}"
            for m in batch:
                assert m.error() is None, m.error()
                keys.append(int(m.key()))
    finally:
        consumer.close()
    return keys


def test_kill9_rechecks_only_what_follows_the_recovery_point(tmp_path, shim_process, free_port, poll):
    data_dir = tmp_path / "data"
    port = free_port()
    args = ("--override", "log.flush.offset.checkpoint.interval.ms=1000")  # Kafka's 1 GiB segments, the default
    broker = shim_process(data_dir, port, args=args)
    bootstrap = broker.wait_ready()
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(TOPIC, 1, 1)])[TOPIC].result(30)
    produce(bootstrap, 0, 20_000)  # about 20 MB in the one active segment
    segment = data_dir / f"{TOPIC}-0" / f"{0:020d}.log"
    size = segment.stat().st_size

    def checkpointed() -> bool:
        point = recovery_point.read(data_dir).get((TOPIC, 0))
        return point is not None and point[2] == size

    poll(checkpointed, 30, message="a recovery point at the end of what was produced")
    produce(bootstrap, 20_000, 50)
    tail = segment.stat().st_size - size
    broker.kill9()

    broker = shim_process(data_dir, port, args=args)
    assert broker.wait_ready() == bootstrap
    found = re.search(r"recovered \d+ partitions after an unclean stop: (\d+) bytes checked", broker.stderr)
    assert found, broker.stderr
    assert int(found.group(1)) <= tail < size // 100  # at most the tail written after the checkpoint
    assert count_records(bootstrap, 20_050) == list(range(20_050))
    broker.send_signal(signal.SIGTERM)
    assert broker.wait() == 0
