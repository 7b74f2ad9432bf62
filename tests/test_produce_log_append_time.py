"""message.timestamp.type=LogAppendTime through the Produce handler: the broker's clock replaces
the batch's MaxTimestamp (and sets the timestamp-type bit, CRC rewritten), the response carries
that time, and a retried idempotent batch is answered with the time of its original append."""

from __future__ import annotations

import datetime
import itertools

import pytest

from kafka_codecs import crc_ok, decode_batch, encode_batch, parse_header
from shim.apis.dispatch import dispatch
from shim.errors import ErrorCode
from shim.node import now_ms
from shim.protocol.messages import RequestHeader, decode_response, encode_request, request_module

CREATE_TS = 1_500_000_000_000  # far from now, so the two clocks cannot be confused
_corr = itertools.count(1)


async def produce(node, topic, records, version=9):
    m = request_module(0, version)
    request = m.ProduceRequest(
        transactional_id=None, acks=-1, timeout=datetime.timedelta(seconds=5),
        topic_data=(m.TopicProduceData(name=topic, partition_data=(m.PartitionProduceData(index=0, records=records),)),),
    )  # fmt: skip
    raw = await dispatch(node, encode_request(RequestHeader(0, version, next(_corr), "lat"), request))
    _, response = decode_response(raw, 0, version)
    return response.responses[0].partition_responses[0]


def ms(value) -> int:
    """kio gives log_append_time as a datetime (or None for -1)."""
    return -1 if value is None else round(value.timestamp() * 1000)


def idempotent_batch(seq, n=3):
    records = [(b"k%d" % i, b"v%d" % i, [], CREATE_TS + i) for i in range(n)]
    return encode_batch(records, producer_id=7, producer_epoch=0, base_sequence=seq)


@pytest.fixture
def topic(node):
    node.logs.create_topic("lat", 1, {"message.timestamp.type": "LogAppendTime"})
    return node.logs.get("lat", 0)


async def test_log_append_time_replaces_the_create_time(node, topic):
    before = now_ms()
    r = await produce(node, "lat", idempotent_batch(0))
    after = now_ms()
    assert r.error_code == ErrorCode.none
    append_time = ms(r.log_append_time)
    assert before <= append_time <= after

    stored = topic.read(0, 1 << 20, False).data
    h = parse_header(stored)
    assert h.timestamp_type == 1 and h.max_timestamp == append_time
    assert crc_ok(stored)
    _, records = decode_batch(stored)
    assert [rec.timestamp for rec in records] == [append_time] * 3


async def test_create_time_topic_answers_no_log_append_time(node):
    node.logs.create_topic("ct", 1)
    r = await produce(node, "ct", idempotent_batch(0))
    assert (r.error_code, ms(r.log_append_time)) == (ErrorCode.none, -1)


async def test_duplicate_is_answered_with_the_original_append_time(node, topic):
    first = await produce(node, "lat", idempotent_batch(0))
    retry = await produce(node, "lat", idempotent_batch(0))
    assert (retry.error_code, retry.base_offset) == (ErrorCode.none, 0)
    assert topic.log_end_offset == 3
    assert ms(retry.log_append_time) == ms(first.log_append_time)
