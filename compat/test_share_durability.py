"""Share groups (KIP-932) survive ``kill -9`` of the broker in the middle of consumption, with
confluent-kafka's ShareConsumer: share-partition state lives in ``__share_group_state`` and the
group's membership in ``__consumer_offsets``, as in Kafka 4.1; share sessions do not survive, so
the consumer gets SHARE_SESSION_NOT_FOUND, opens a new session and goes on.

A consumer in explicit mode accepts every record and commits after each poll; a record whose commit
succeeded is acknowledged. The broker is killed once some are, restarted on the same port and data
directory, and the same consumer (still running) consumes on: no acknowledged record is delivered
again, and every record is acknowledged in the end. Synchronised on records and commit results.
"""

from __future__ import annotations

import signal
import time

import pytest

from compat.share_support import describe_share_group, poll, produce, share_topic
from compat.support import wait_for

pytest.importorskip("confluent_kafka")

pytestmark = [pytest.mark.compat(client="confluent-kafka", scenario="share.durability"),
              pytest.mark.shim_only("kills the broker process")]

ARGS = ("--kafka-version", "4.1", "--override", "group.share.heartbeat.interval.ms=500",
        "--override", "group.share.min.heartbeat.interval.ms=500")
RECORDS = 60


def _consume(consumer, acknowledged: set, delivered: list, done, timeout: float = 90) -> None:
    """Poll, accept and commit until ``done()``; what a successful commit covered is acknowledged."""
    from confluent_kafka import AcknowledgeType, KafkaException

    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, f"timed out: {len(acknowledged)} of {RECORDS} acknowledged"
        try:
            batch = poll(consumer, 0.5)
        except KafkaException:
            continue
        for m in batch:
            delivered.append((m.value(), m.delivery_count()))
            consumer.acknowledge(m, AcknowledgeType.ACCEPT)
        if not batch:
            continue
        try:
            results = consumer.commit_sync(10)
        except KafkaException:
            continue
        if results and all(r is None for r in results.values()):
            acknowledged.update(m.value() for m in batch)


def test_kill_9_mid_consumption_loses_nothing_and_redelivers_nothing_acknowledged(shim_process, free_port, tmp_path):
    import confluent_kafka as ck

    port, data_dir = free_port(), tmp_path / "broker"
    broker = shim_process(data_dir, port=port, args=ARGS)
    bs = broker.wait_ready()
    share_topic(bs, "mid", 1, "g-mid")
    produce(bs, "mid", [(0, b"m%02d" % i) for i in range(RECORDS)])
    consumer = ck.ShareConsumer({"bootstrap.servers": bs, "group.id": "g-mid", "share.acknowledgement.mode": "explicit",
                                 "max.poll.records": 7, "reconnect.backoff.max.ms": 500})
    acknowledged: set = set()
    delivered: list = []
    try:
        consumer.subscribe(["mid"])
        _consume(consumer, acknowledged, delivered, lambda: len(acknowledged) >= 20)
        epoch = describe_share_group(bs, "g-mid").group_epoch
        before = set(acknowledged)
        broker.kill9()
        broker = shim_process(data_dir, port=port, args=ARGS)
        assert broker.wait_ready() == bs
        group = describe_share_group(bs, "g-mid")
        assert (group.group_epoch, len(group.members)) == (epoch, 1)  # membership was kept
        after_kill = len(delivered)
        _consume(consumer, acknowledged, delivered, lambda: len(acknowledged) == RECORDS)
    finally:
        consumer.close()
    again = {v for v, _ in delivered[after_kill:]} & before
    assert not again, f"acknowledged before the kill, delivered after it: {sorted(again)}"
    assert acknowledged == {b"m%02d" % i for i in range(RECORDS)}


def test_a_restart_with_another_broker_rack_moves_the_share_group_epoch_once(shim_process, free_port, tmp_path):
    """KIP-1101 in Kafka 4.1: partition racks are part of the share group's metadata hash, so after a
    restart with another ``broker.rack`` the member's next heartbeat moves the group epoch once;
    the consumer reads on."""
    import confluent_kafka as ck

    port, data_dir = free_port(), tmp_path / "broker"
    broker = shim_process(data_dir, port=port, args=(*ARGS, "--override", "broker.rack=rack-a"))
    bs = broker.wait_ready()
    share_topic(bs, "racks", 1, "g-racks")
    consumer = ck.ShareConsumer({"bootstrap.servers": bs, "group.id": "g-racks", "reconnect.backoff.max.ms": 500})
    try:
        consumer.subscribe(["racks"])
        produce(bs, "racks", [(0, b"before")])
        _poll_for(consumer, b"before")
        epoch = describe_share_group(bs, "g-racks").group_epoch
        broker.send_signal(signal.SIGTERM)
        broker.wait()
        broker = shim_process(data_dir, port=port, args=(*ARGS, "--override", "broker.rack=rack-b"))
        assert broker.wait_ready() == bs
        produce(bs, "racks", [(0, b"after")])
        _poll_for(consumer, b"after")
        group = wait_for(lambda: (g := describe_share_group(bs, "g-racks")).group_epoch > epoch
                         and all(m.member_epoch == g.group_epoch for m in g.members) and g,
                         timeout=30, message="the member's heartbeat after the restart")
        assert (group.group_epoch, len(group.members)) == (epoch + 1, 1)
    finally:
        consumer.close()


def _poll_for(consumer, value: bytes, timeout: float = 60) -> None:
    from confluent_kafka import KafkaException

    deadline = time.monotonic() + timeout
    while True:
        assert time.monotonic() < deadline, f"{value!r} never arrived"
        try:
            if value in [m.value() for m in poll(consumer, 0.5)]:
                return
        except KafkaException:
            continue
