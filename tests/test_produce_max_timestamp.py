"""A batch whose header MaxTimestamp disagrees with its records (a producer that understates or
overstates it, or any hand-built batch): Kafka's LogValidator takes the largest record timestamp
whatever the header says, checks every record against message.timestamp.*.max.ms, and rewrites
MaxTimestamp and the CRC before the append (DefaultRecordBatch.setMaxTimestamp), so the segment's
largest timestamp, the time index, ListOffsets and retention all see the records' own times.

Each test runs with the C record walk and with its Python twin (``walker``), which must answer the
same."""

from __future__ import annotations

import struct

import pytest

from kafka_codecs import Compression, crc_ok, decode_batch, encode_batch, iter_batches, parse_header
from kafka_codecs import records as records_module
from kafka_codecs.batch import MAX_TIMESTAMP_OFFSET, write_crc
from shim.config import BrokerConfig
from shim.errors import ErrorCode
from shim.node import Node, now_ms

from test_offsets_apis import MAX_TIMESTAMP, fetch, list_offsets
from test_produce_handler import produce_one

HOUR = 3_600_000
TS = 1_700_000_000_000


def forged(stamps, header_max: int, compression=Compression.NONE, keys=True, **kw) -> bytes:
    """A batch of records stamped ``stamps`` whose header says MaxTimestamp ``header_max``, CRC valid."""
    records = [(b"k%d" % i if keys else None, b"v%d" % i, (), ts) for i, ts in enumerate(stamps)]
    data = bytearray(encode_batch(records, compression=compression, **kw))
    struct.pack_into(">q", data, MAX_TIMESTAMP_OFFSET, header_max)
    write_crc(data)
    return bytes(data)


@pytest.fixture(params=["native", "python"])
def walker(request, monkeypatch):
    if request.param == "native":
        if not records_module.NATIVE_WALK:
            pytest.skip("kafka_codecs._walk was not built")
    else:
        monkeypatch.setattr(records_module, "_walk", records_module._walk_records_py)
        monkeypatch.setattr(records_module, "_scan", records_module.scan_records_py)
    return request.param


@pytest.fixture
def node4(tmp_path):
    """Kafka 4.0 emulation: log.message.timestamp.after.max.ms is an hour (KIP-1030)."""
    n = Node(BrokerConfig(data_dir=tmp_path / "data4", kafka_version="4.0", group_initial_rebalance_delay_ms=0))
    yield n
    n.close()


def stored(node, topic="t"):
    """(header, records) of every batch of ``topic``-0, as a Fetch reads them."""
    data = node.logs.get(topic, 0).read(0, 1 << 20, False).data
    return [(h, decode_batch(bytes(data[pos:pos + h.size]))[1], crc_ok(data[pos:pos + h.size]))
            for pos, h in iter_batches(data)]


@pytest.mark.parametrize("compression", [Compression.NONE, Compression.LZ4, Compression.ZSTD])
@pytest.mark.parametrize("config", [{}, {"cleanup.policy": "compact"}])
async def test_a_record_past_the_after_bound_is_refused_whatever_the_header_says(node4, walker, compression, config):
    node4.logs.create_topic("t", 1, config)
    now = now_ms()
    batch = forged([now, now + 2 * HOUR, now + 3 * HOUR, now], header_max=now, compression=compression)
    r = await produce_one(node4, batch)
    assert r.error_code == ErrorCode.invalid_timestamp
    assert [e.batch_index for e in r.record_errors] == [1, 2]
    assert f"Timestamp {now + 2 * HOUR} of message with offset 1 is out of range" in \
        r.record_errors[0].batch_index_error_message
    assert node4.logs.get("t", 0).log_end_offset == 0


async def test_a_header_within_the_bound_over_records_within_it_is_taken(node4, walker):
    node4.logs.create_topic("t", 1)
    now = now_ms()
    r = await produce_one(node4, forged([now - HOUR, now + HOUR // 2], header_max=now - HOUR))
    assert (r.error_code, r.base_offset) == (ErrorCode.none, 0)
    ((h, _, ok),) = stored(node4)
    assert (h.max_timestamp, ok) == (now + HOUR // 2, True)


@pytest.mark.parametrize("compression", list(Compression))
@pytest.mark.parametrize("header_max", [TS, TS + 1000, -1, 0])  # understated, overstated, none, zero
async def test_the_stored_batch_carries_the_records_max_timestamp_and_a_valid_crc(node, walker, compression,
                                                                                  header_max):
    node.logs.create_topic("t", 1)
    stamps = [TS + 10, TS + 90, TS + 20]
    r = await produce_one(node, forged(stamps, header_max=header_max, compression=compression))
    assert r.error_code == ErrorCode.none
    ((h, records, ok),) = stored(node)
    assert (h.max_timestamp, h.base_timestamp, h.compression, ok) == (TS + 90, TS + 10, compression, True)
    assert [x.timestamp for x in records] == stamps
    # what a consumer fetches, CRC and all
    fetched = bytes((await fetch(node, 0)).records)
    assert crc_ok(fetched) and parse_header(fetched).max_timestamp == TS + 90


async def test_records_without_timestamps_give_no_timestamp(node, walker):
    # LogValidator starts from RecordBatch.NO_TIMESTAMP (-1): records below it do not count
    node.logs.create_topic("t", 1)
    assert (await produce_one(node, forged([-5, -3], header_max=-3))).error_code == ErrorCode.none
    ((h, _, ok),) = stored(node)
    assert (h.max_timestamp, ok) == (-1, True)


async def test_list_offsets_and_the_segment_answer_from_the_records(tmp_path, walker):
    node = Node(BrokerConfig(data_dir=tmp_path / "data"))
    node.logs.create_topic("t", 1)
    # offsets 0-2, the header saying TS + 20; then offsets 3-4 with an honest header
    assert (await produce_one(node, forged([TS + 10, TS + 90, TS + 20], header_max=TS + 20))).error_code == 0
    assert (await produce_one(node, encode_batch([(None, b"x", (), TS + 50), (None, b"y", (), TS + 60)]))).error_code == 0
    for _ in range(2):  # and again from the files after a restart
        assert await list_offsets(node, MAX_TIMESTAMP) == (ErrorCode.none, 1, TS + 90)
        assert await list_offsets(node, TS + 70) == (ErrorCode.none, 1, TS + 90)
        assert await list_offsets(node, TS + 55) == (ErrorCode.none, 1, TS + 90)
        assert node.logs.get("t", 0).segments[-1].max_timestamp == TS + 90  # retention.ms reads this
        node.close()
        node = Node(BrokerConfig(data_dir=tmp_path / "data"))
    node.close()


async def test_an_idempotent_retry_of_a_rewritten_batch_is_its_duplicate(node, walker):
    node.logs.create_topic("t", 1)
    batch = forged([TS, TS + 5], header_max=TS, producer_id=9, producer_epoch=0, base_sequence=0)
    first = await produce_one(node, batch)
    again = await produce_one(node, batch)
    assert (first.error_code, again.error_code, again.base_offset) == (ErrorCode.none, ErrorCode.none, first.base_offset)
    ((h, _, ok),) = stored(node)
    assert (h.max_timestamp, ok) == (TS + 5, True)


async def test_log_append_time_topics_still_stamp_the_broker_time(node, walker):
    node.logs.create_topic("t", 1, {"message.timestamp.type": "LogAppendTime"})
    before = now_ms()
    r = await produce_one(node, forged([TS, TS + 5], header_max=TS))
    ((h, records, ok),) = stored(node)
    assert before <= h.max_timestamp <= now_ms() and h.timestamp_type == 1 and ok
    assert {x.timestamp for x in records} == {h.max_timestamp}
    assert r.error_code == ErrorCode.none


async def test_recompression_writes_the_records_max_timestamp(node, walker):
    node.logs.create_topic("t", 1, {"compression.type": "gzip"})
    r = await produce_one(node, forged([TS + 10, TS + 90, TS + 20], header_max=TS + 10))
    assert r.error_code == ErrorCode.none
    ((h, _, ok),) = stored(node)
    assert (h.compression, h.max_timestamp, ok) == (Compression.GZIP, TS + 90, True)
