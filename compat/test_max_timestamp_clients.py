"""A batch whose header understates its MaxTimestamp (valid CRC, records stamped later than the
header says), sent with a raw Produce: the broker takes MaxTimestamp from the records, as Kafka's
LogValidator does, so

- a record past message.timestamp.after.max.ms is refused with INVALID_TIMESTAMP and listed, though
  the header claims to be within the bound;
- an accepted batch is stored with the records' MaxTimestamp and a CRC that still holds: consumers
  that check CRCs (confluent-kafka with check.crcs, kafka-python) read every record;
- ListOffsets MAX_TIMESTAMP (confluent-kafka's AdminClient) and by timestamp (kafka-python's
  offsets_for_times) answer from the records' times.

Runs against ``compat_target``: each of these is Apache Kafka's answer too.
"""

from __future__ import annotations

import struct
import time
import uuid

import pytest

from compat.txn_clients import wait_for
from kafka_codecs import Compression, encode_batch
from kafka_codecs.batch import MAX_TIMESTAMP_OFFSET, write_crc
from shim.errors import ErrorCode
from shim.protocol.messages import request_module

HOUR = 3_600_000


def forged(stamps, header_max: int, compression=Compression.NONE) -> bytes:
    data = bytearray(encode_batch([(b"k%d" % i, b"v%d" % i, (), ts) for i, ts in enumerate(stamps)],
                                  compression=compression))
    struct.pack_into(">q", data, MAX_TIMESTAMP_OFFSET, header_max)
    write_crc(data)
    return bytes(data)


def produce(wire, topic: str, batch: bytes):
    m = request_module(0, 9)
    part = m.PartitionProduceData(index=0, records=batch)
    r = wire.call(0, 9, transactional_id=None, acks=-1, timeout=10_000,
                  topic_data=(m.TopicProduceData(name=topic, partition_data=(part,)),))
    return r.responses[0].partition_responses[0]


def new_topic(wire, configs=None) -> str:
    name = f"maxts-{uuid.uuid4().hex[:8]}"
    wire.create_topic(name, configs=configs)
    wait_for(lambda: wire.list_offset(name, 0, 0, check=False) is not None, 30, 0.05, f"a leader for {name}")
    return name


@pytest.mark.parametrize("compression", [Compression.NONE, Compression.LZ4])
def test_a_record_past_the_after_bound_is_refused_whatever_the_header_says(wire, compression):
    topic = new_topic(wire, {"message.timestamp.after.max.ms": str(HOUR)})
    now = int(time.time() * 1000)
    r = produce(wire, topic, forged([now, now + 2 * HOUR, now], header_max=now, compression=compression))
    assert r.error_code == ErrorCode.invalid_timestamp
    assert [e.batch_index for e in r.record_errors] == [1]
    assert wire.list_offset(topic, 0, 0) == 0


@pytest.fixture(scope="module")
def rewritten(compat_target):
    """A topic holding a forged batch of each codec (offsets 0-2 and 3-5, the header saying the
    first record's time) and an honest one (offsets 6-7)."""
    from compat.wire import Wire

    wire = Wire(compat_target.bootstrap_servers)
    try:
        base = int(time.time() * 1000) - HOUR  # inside every timestamp bound
        topic = new_topic(wire)
        for batch in (forged([base + 10, base + 90, base + 20], base + 10),
                      forged([base + 30, base + 80, base + 40], base + 30, Compression.LZ4),
                      encode_batch([(None, b"x", (), base + 50), (None, b"y", (), base + 60)])):
            assert produce(wire, topic, batch).error_code == ErrorCode.none
        yield compat_target.bootstrap_servers, topic, base, wire.fetch_batches(topic, 0, 8)
    finally:
        wire.close()


def test_the_stored_headers_carry_the_records_max_timestamp(rewritten):
    _, _, base, headers = rewritten
    assert [(h.base_offset, h.max_timestamp) for h in headers] == [(0, base + 90), (3, base + 80), (6, base + 60)]


STAMPS = [10, 90, 20, 30, 80, 40, 50, 60]


def test_confluent_kafka_checking_crcs_reads_every_record(rewritten):
    from confluent_kafka import Consumer, TopicPartition

    bootstrap, topic, base, _ = rewritten
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"maxts-{uuid.uuid4()}", "check.crcs": True,
                         "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        got, deadline = [], time.monotonic() + 30
        while len(got) < len(STAMPS) and time.monotonic() < deadline:
            for m in consumer.consume(10, timeout=1):
                assert m.error() is None, m.error()
                got.append((m.offset(), m.timestamp()[1]))
        assert got == [(o, base + t) for o, t in enumerate(STAMPS)]
    finally:
        consumer.close()


def test_kafka_python_checking_crcs_reads_every_record(rewritten):
    from kafka import KafkaConsumer, TopicPartition

    bootstrap, topic, base, _ = rewritten
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, check_crcs=True, enable_auto_commit=False,
                             auto_offset_reset="earliest", consumer_timeout_ms=10_000)
    try:
        consumer.assign([TopicPartition(topic, 0)])
        got = []
        for m in consumer:
            got.append((m.offset, m.timestamp))
            if len(got) == len(STAMPS):
                break
        assert got == [(o, base + t) for o, t in enumerate(STAMPS)]
    finally:
        consumer.close()


def test_list_offsets_answer_from_the_records_times(rewritten):
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import AdminClient, OffsetSpec
    from kafka import KafkaConsumer
    from kafka import TopicPartition as KTopicPartition

    bootstrap, topic, base, _ = rewritten
    admin = AdminClient({"bootstrap.servers": bootstrap})
    answer = admin.list_offsets({TopicPartition(topic, 0): OffsetSpec.max_timestamp()})[TopicPartition(topic, 0)]
    info = answer.result(30)
    assert (info.offset, info.timestamp) == (1, base + 90)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, request_timeout_ms=15_000)
    try:
        tp = KTopicPartition(topic, 0)
        found = {t: consumer.offsets_for_times({tp: base + t})[tp] for t in (85, 70, 55)}
        # the first batch reaching base + 70 is the first one, not the honest batch at offset 6
        assert {t: (a.offset, a.timestamp) for t, a in found.items()} == {
            85: (1, base + 90), 70: (1, base + 90), 55: (1, base + 90)}
    finally:
        consumer.close()
