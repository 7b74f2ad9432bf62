"""Topic configs on the produce path, through the Produce handler: compression.type recompression,
message.timestamp.before/after.max.ms with per-record errors, min.insync.replicas, segment.ms and
segment.index.bytes rolls, and topic config changes applied live."""

from __future__ import annotations

import datetime

import pytest

from kafka_codecs import Compression, encode_batch
from kafka_codecs.batch import iter_batches
from kafka_codecs.records import decode_batch
from shim.errors import ErrorCode

from .support import call, module

PRODUCE = 0
NOW_ISH = 1_700_000_000_000


def records(n, ts):
    return [(b"k%d" % i, b"value-%d" % i, [("h", b"x")], ts + i) for i in range(n)]


async def produce(node, topic, batch, *, acks=-1, version=9):
    m = module(PRODUCE, version)
    request = m.ProduceRequest(transactional_id=None, acks=acks, timeout=datetime.timedelta(seconds=5), topic_data=(
        m.TopicProduceData(name=topic, partition_data=(m.PartitionProduceData(index=0, records=batch),)),))
    response = await call(node, PRODUCE, version, request)
    return response.responses[0].partition_responses[0]


def stored(node, topic):
    plog = node.logs.get(topic, 0)
    return [seg.read(pos, h.size) for seg in plog.segments for pos, h in iter_batches(seg.read(0, seg.size))]


@pytest.mark.parametrize("topic_codec, sent, expected", [
    ("zstd", Compression.GZIP, Compression.ZSTD),
    ("zstd", Compression.NONE, Compression.ZSTD),
    ("uncompressed", Compression.LZ4, Compression.NONE),
    ("gzip", Compression.GZIP, Compression.GZIP),
    ("producer", Compression.SNAPPY, Compression.SNAPPY),
])
async def test_compression_type_decides_the_stored_codec(node, topic_codec, sent, expected):
    node.logs.create_topic("t", 1, {"compression.type": topic_codec})
    sent_batch = encode_batch(records(3, NOW_ISH), compression=sent, producer_id=7, producer_epoch=0, base_sequence=0)
    r = await produce(node, "t", sent_batch)
    assert r.error_code == ErrorCode.none
    (batch,) = stored(node, "t")
    header, got = decode_batch(batch)
    assert header.compression == expected
    assert (header.producer_id, header.base_sequence, header.records_count) == (7, 0, 3)
    assert [(x.key, x.value, x.timestamp) for x in got] == [(k, v, ts) for k, v, _, ts in records(3, NOW_ISH)]
    if expected == sent:
        assert batch[16:] == sent_batch[16:]  # kept as sent: only base offset and leader epoch stamped


async def test_timestamps_out_of_range_get_record_errors(node):
    node.logs.create_topic("t", 1, {"message.timestamp.before.max.ms": "60000",
                                    "message.timestamp.after.max.ms": "60000"})
    import time
    now = int(time.time() * 1000)
    batch = encode_batch([(None, b"old", [], now - 3_600_000), (None, b"ok", [], now),
                          (None, b"future", [], now + 3_600_000)])
    r = await produce(node, "t", batch)
    assert r.error_code == ErrorCode.invalid_timestamp
    assert r.error_message == "One or more records have been rejected due to invalid timestamp"
    assert [e.batch_index for e in r.record_errors] == [0, 2]
    first = r.record_errors[0].batch_index_error_message
    assert first.startswith(f"Timestamp {now - 3_600_000} of message with offset 0 is out of range. "
                            "The timestamp should be within [")
    assert stored(node, "t") == []
    ok = await produce(node, "t", encode_batch([(None, b"ok", [], int(time.time() * 1000))]))
    assert ok.error_code == ErrorCode.none


async def test_default_timestamp_bounds_print_as_java_wraps_them(node):
    node.logs.create_topic("t", 1, {"message.timestamp.after.max.ms": "1000"})
    r = await produce(node, "t", encode_batch([(None, b"x", [], 9_000_000_000_000_000)]))
    message = r.record_errors[0].batch_index_error_message
    low = message.split("[")[1].split(",")[0]
    assert int(low) < 0  # now - Long.MAX_VALUE


async def test_min_insync_replicas_above_one_refuses_acks_all_only(node):
    node.logs.create_topic("t", 1, {"min.insync.replicas": "2"})
    refused = await produce(node, "t", encode_batch(records(1, NOW_ISH)), acks=-1)
    assert refused.error_code == ErrorCode.not_enough_replicas
    accepted = await produce(node, "t", encode_batch(records(1, NOW_ISH)), acks=1)
    assert accepted.error_code == ErrorCode.none


async def test_segment_ms_rolls_on_record_time(node):
    node.logs.create_topic("t", 1, {"segment.ms": "1000"})
    for ts in (NOW_ISH, NOW_ISH + 500, NOW_ISH + 1_600):
        assert (await produce(node, "t", encode_batch(records(1, ts)))).error_code == ErrorCode.none
    assert [s.base_offset for s in node.logs.get("t", 0).segments] == [0, 2]


async def test_segment_index_bytes_rolls_when_the_index_is_full(node):
    # 24 bytes hold three 8-byte offset index entries but two 12-byte time index entries: the time
    # index (one entry per batch with index.interval.bytes=0 and rising timestamps) fills first.
    node.logs.create_topic("t", 1, {"segment.index.bytes": "24", "index.interval.bytes": "0"})
    for i in range(5):
        await produce(node, "t", encode_batch(records(1, NOW_ISH + i)))
    assert [s.base_offset for s in node.logs.get("t", 0).segments] == [0, 2, 4]


async def test_a_topic_config_change_applies_to_the_next_append(node):
    node.logs.create_topic("t", 1)
    assert (await produce(node, "t", encode_batch(records(1, NOW_ISH)))).error_code == ErrorCode.none
    node.logs.set_topic_configs("t", {"max.message.bytes": "50"})
    r = await produce(node, "t", encode_batch(records(1, NOW_ISH)))
    assert r.error_code == ErrorCode.message_too_large


async def test_the_deprecated_difference_bound_applies_while_the_new_ones_are_unset(node):
    import time
    node.logs.create_topic("t", 1, {"message.timestamp.difference.max.ms": "60000"})
    node.logs.create_topic("u", 1, {"message.timestamp.difference.max.ms": "60000",
                                    "message.timestamp.before.max.ms": "7200000"})
    old = encode_batch([(None, b"old", [], int(time.time() * 1000) - 3_600_000)])
    assert (await produce(node, "t", old)).error_code == ErrorCode.invalid_timestamp
    assert (await produce(node, "u", old)).error_code == ErrorCode.none


async def test_record_errors_stop_at_a_thousand(node):
    node.logs.create_topic("t", 1, {"message.timestamp.before.max.ms": "0"})
    r = await produce(node, "t", encode_batch(records(1_500, 1_000)))
    assert r.error_code == ErrorCode.invalid_timestamp
    assert [e.batch_index for e in r.record_errors] == list(range(1_000))


async def test_a_recompressed_idempotent_batch_retried_is_a_duplicate(node):
    from kafka_codecs.batch import crc_ok

    node.logs.create_topic("t", 1, {"compression.type": "zstd"})
    sent = encode_batch(records(2, NOW_ISH), compression=Compression.GZIP, producer_id=9, producer_epoch=0,
                        base_sequence=0)
    first = await produce(node, "t", sent)
    again = await produce(node, "t", sent)
    assert (first.error_code, again.error_code, again.base_offset) == (ErrorCode.none, ErrorCode.none, 0)
    (batch,) = stored(node, "t")
    assert crc_ok(batch)


@pytest.mark.parametrize("codec, levels", [("gzip", ("1", "9")), ("zstd", ("1", "19")), ("lz4", ("1", "17"))])
async def test_compression_levels_apply_to_recompressed_batches(node, codec, levels):
    values = [(b"k", (b"abcdefghij%d" % i) * 50, [], NOW_ISH) for i in range(200)]
    sizes = []
    for level in levels:
        topic = f"t{level}"
        node.logs.create_topic(topic, 1, {"compression.type": codec, f"compression.{codec}.level": level})
        assert (await produce(node, topic, encode_batch(values))).error_code == ErrorCode.none
        (batch,) = stored(node, topic)
        assert [(r.key, r.value) for r in decode_batch(batch)[1]] == [(k, v) for k, v, _, _ in values]
        sizes.append(len(batch))
    assert sizes[1] < sizes[0]  # the higher level compresses better


@pytest.mark.parametrize("release, accepted", [("3.9", True), ("4.0", False), ("4.1", False)])
async def test_kafka_4_refuses_records_stamped_over_an_hour_ahead_by_default(tmp_path, release, accepted):
    """KIP-1030: Kafka 4.0 changed log.message.timestamp.after.max.ms's default from Long.MAX_VALUE
    to one hour, so a CreateTime record more than an hour ahead of the broker is INVALID_TIMESTAMP."""
    import time

    from shim.config import BrokerConfig
    from shim.node import Node

    node = Node(BrokerConfig(data_dir=tmp_path / "data", kafka_version=release))
    try:
        node.logs.create_topic("t", 1, {})
        now = int(time.time() * 1000)
        r = await produce(node, "t", encode_batch([(None, b"ahead", [], now + 2 * 3_600_000)]))
        assert (r.error_code == ErrorCode.none) == accepted
        near = await produce(node, "t", encode_batch([(None, b"near", [], now + 60_000)]))
        assert near.error_code == ErrorCode.none
    finally:
        node.close()
