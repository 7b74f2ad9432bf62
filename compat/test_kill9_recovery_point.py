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


def produce(bootstrap: str, first: int, count: int, **config) -> None:
    producer = ck.Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5, **config})
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
            # consume(n, timeout) returns once it has n records or the timeout is out: n no larger than
            # what is missing, or the last call waits out its whole timeout for records that do not exist
            batch = consumer.consume(min(1000, end - len(keys)), 10)
            assert batch, f"no records after {len(keys)}"
            for m in batch:
                assert m.error() is None, m.error()
                keys.append(int(m.key()))
        # and none after them: the partition ends where the records the test counts do
        assert consumer.get_watermark_offsets(ck.TopicPartition(TOPIC, 0), 10) == (0, end)
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


def batch_starts(path) -> list[tuple[int, int]]:
    """(position, base offset) of every batch in a segment file."""
    data, position, starts = path.read_bytes(), 0, []
    while position + 12 <= len(data):
        starts.append((position, int.from_bytes(data[position:position + 8], "big")))
        position += 12 + int.from_bytes(data[position + 8:position + 12], "big")
    return starts


SMALL_BATCHES = {"batch.size": 1 << 16}  # over a dozen batches a 1 MiB segment


def test_kill9_rechecks_segments_sealed_since_the_recovery_point(tmp_path, shim_process, free_port):
    """Kafka's LogLoader.recoverLog: every segment from the one holding the recovery point is
    recovered; a corrupt batch in one sealed since cuts the log there, later segments deleted, and
    segments before the recovery point are not read."""
    data_dir, port = tmp_path / "data", free_port()
    # 1 MiB segments; no timed checkpoint during the test: the clean stop writes the recovery point
    args = ("--segment-bytes", str(1 << 20), "--override", "log.flush.offset.checkpoint.interval.ms=3600000")
    broker = shim_process(data_dir, port, args=args)
    bootstrap = broker.wait_ready()
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(TOPIC, 1, 1)])[TOPIC].result(30)
    produce(bootstrap, 0, 2_500, **SMALL_BATCHES)  # two sealed segments and the active one
    broker.send_signal(signal.SIGTERM)
    assert broker.wait() == 0
    point = recovery_point.read(data_dir)[(TOPIC, 0)]
    partition = data_dir / f"{TOPIC}-0"
    before = sorted(int(p.name[:20]) for p in partition.glob("*.log"))
    assert len(before) >= 3 and point[0] == before[-1]

    broker = shim_process(data_dir, port, args=args)
    assert broker.wait_ready() == bootstrap
    produce(bootstrap, 2_500, 4_500, **SMALL_BATCHES)  # several more segments, sealed after the recovery point
    broker.kill9()
    bases = sorted(int(p.name[:20]) for p in partition.glob("*.log"))
    sealed_since = [b for b in bases if b > point[0]][:-1]
    assert len(sealed_since) >= 3
    corrupt_file = partition / f"{sealed_since[1]:020d}.log"
    position, cut_at = batch_starts(corrupt_file)[2]
    with open(corrupt_file, "r+b") as f:  # a byte of the third batch's records
        f.seek(position + 200)
        byte = f.read(1)
        f.seek(position + 200)
        f.write(bytes([byte[0] ^ 0xFF]))

    broker = shim_process(data_dir, port, args=args)
    assert broker.wait_ready() == bootstrap
    found = re.search(r"recovered \d+ partitions after an unclean stop: (\d+) bytes checked after their "
                      r"recovery points, in (\d+) segments", broker.stderr)
    assert found, broker.stderr
    # the segment holding the point, the one sealed after it and the corrupt one; none before the point
    assert int(found.group(2)) == 3
    sizes = {b: (partition / f"{b:020d}.log").stat().st_size for b in bases if b <= sealed_since[1]}
    assert int(found.group(1)) == sizes[point[0]] - point[2] + sizes[sealed_since[0]] + position
    assert sorted(int(p.name[:20]) for p in partition.glob("*.log")) == [b for b in bases if b <= sealed_since[1]]
    consumer = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": "rp-sealed"})
    try:
        assert consumer.get_watermark_offsets(ck.TopicPartition(TOPIC, 0), 10) == (0, cut_at)
    finally:
        consumer.close()
    assert count_records(bootstrap, cut_at) == list(range(cut_at))  # nothing before the cut is lost
    broker.send_signal(signal.SIGTERM)
    assert broker.wait() == 0
