"""DeleteRecords, ListOffsets and Fetch below the log start, on the wire through dispatch."""

from __future__ import annotations

import datetime
import itertools
import time

import pytest

from kafka_codecs import encode_batch
from shim.storage.producer_state import Origin
from shim.apis.dispatch import dispatch
from shim.config import BrokerConfig
from shim.errors import ErrorCode
from shim.node import Node
from shim.protocol.messages import RequestHeader, decode_response, encode_request, request_module
from shim.storage.validation import validate_client_batch

TS = 1_700_000_000_000
EARLIEST, LATEST, MAX_TIMESTAMP = -2, -1, -3
_corr = itertools.count(1)


async def call(node, api_key, version, build):
    m = request_module(api_key, version)
    corr = next(_corr)
    raw = await dispatch(node, encode_request(RequestHeader(api_key, version, corr, "offsets"), build(m)))
    got_corr, response = decode_response(raw, api_key, version)
    assert got_corr == corr
    return response


def ms(value) -> int:
    if isinstance(value, datetime.datetime):
        return round(value.timestamp() * 1000)
    return -1 if value is None else value


async def list_offsets(node, timestamp, version=8):
    extra = {"timeout": datetime.timedelta(seconds=1)} if version >= 10 else {}
    response = await call(node, 2, version, lambda m: m.ListOffsetsRequest(
        replica_id=-1, isolation_level=0, **extra,
        topics=(m.ListOffsetsTopic(name="t", partitions=(
            m.ListOffsetsPartition(partition_index=0, current_leader_epoch=-1, timestamp=timestamp),)),)))
    p = response.topics[0].partitions[0]
    return p.error_code, p.offset, ms(p.timestamp)


async def delete_records(node, offset):
    response = await call(node, 21, 2, lambda m: m.DeleteRecordsRequest(
        topics=(m.DeleteRecordsTopic(name="t", partitions=(m.DeleteRecordsPartition(partition_index=0, offset=offset),)),),
        timeout=datetime.timedelta(seconds=5)))  # fmt: skip
    p = response.topics[0].partitions[0]
    return p.error_code, p.low_watermark


async def fetch(node, offset, version=12):
    response = await call(node, 1, version, lambda m: m.FetchRequest(
        cluster_id=None, replica_id=-1, max_wait=datetime.timedelta(0), min_bytes=1, max_bytes=1 << 20,
        isolation_level=0, session_id=0, session_epoch=-1, forgotten_topics_data=(), rack_id="",
        topics=(m.FetchTopic(topic="t", partitions=(m.FetchPartition(
            partition=0, current_leader_epoch=-1, fetch_offset=offset, last_fetched_epoch=-1, log_start_offset=-1,
            partition_max_bytes=1 << 20),)),)))  # fmt: skip
    return response.responses[0].partitions[0]


def fill(node, stamps):
    """One batch per list of timestamps; records are numbered by offset."""
    plog = node.logs.get("t", 0)
    for ts in stamps:
        base = plog.log_end_offset
        data = bytearray(encode_batch([(None, b"r%d" % (base + i), (), TS + t) for i, t in enumerate(ts)]))
        plog.append(data, validate_client_batch(data, 1 << 20), 0, origin=Origin.CLIENT)
    return plog


@pytest.fixture
def topic(node):
    node.logs.create_topic("t", 1, {"segment.bytes": "300"})
    return fill(node, [[10, 30, 20], [25, 5], [40], [35, 60, 50], [55], [45]])  # offsets 0..10


async def test_list_offsets_by_timestamp_and_specials(node, topic):
    assert await list_offsets(node, EARLIEST) == (ErrorCode.none, 0, -1)
    assert await list_offsets(node, LATEST) == (ErrorCode.none, 11, -1)
    assert await list_offsets(node, TS) == (ErrorCode.none, 0, TS + 10)
    assert await list_offsets(node, TS + 21) == (ErrorCode.none, 1, TS + 30)
    assert await list_offsets(node, TS + 31) == (ErrorCode.none, 5, TS + 40)
    assert await list_offsets(node, TS + 51) == (ErrorCode.none, 7, TS + 60)
    assert await list_offsets(node, TS + 61) == (ErrorCode.none, -1, -1)
    assert await list_offsets(node, MAX_TIMESTAMP) == (ErrorCode.none, 7, TS + 60)
    # MAX_TIMESTAMP needs ListOffsets v7.
    assert (await list_offsets(node, MAX_TIMESTAMP, version=6))[0] == ErrorCode.unsupported_version


@pytest.mark.parametrize(("version", "release"), [(9, "3.9"), (10, "4.0")])
async def test_latest_tiered_is_minus_one_without_tiered_storage(tmp_path, version, release):
    """KIP-1005: Kafka's UnifiedLog answers LATEST_TIERED (-5) with offset -1 when remote storage is off."""
    node = Node(BrokerConfig(data_dir=tmp_path / "data", kafka_version=release))
    node.logs.create_topic("t", 1, {"segment.bytes": "300"})
    fill(node, [[10, 30, 20], [25, 5], [40], [35, 60, 50], [55], [45]])
    assert await list_offsets(node, -5, version=version) == (ErrorCode.none, -1, -1)
    assert await list_offsets(node, LATEST, version=version) == (ErrorCode.none, 11, -1)
    assert (await list_offsets(node, -5, version=8))[0] == ErrorCode.unsupported_version
    assert (await list_offsets(node, -6, version=version))[0] == ErrorCode.unsupported_version
    node.close()


async def test_delete_records_moves_earliest_and_fences_fetch(node, topic):
    assert await delete_records(node, 4) == (ErrorCode.none, 4)
    assert await list_offsets(node, EARLIEST) == (ErrorCode.none, 4, -1)
    assert await list_offsets(node, TS) == (ErrorCode.none, 4, TS + 5)

    below = await fetch(node, 3)
    assert below.error_code == ErrorCode.offset_out_of_range  # offsets unknown, as Kafka's failed read
    assert (below.high_watermark, below.last_stable_offset, below.log_start_offset) == (-1, -1, -1)
    at = await fetch(node, 4)
    assert at.error_code == ErrorCode.none and at.log_start_offset == 4 and at.high_watermark == 11

    assert await delete_records(node, 2) == (ErrorCode.none, 4)  # never backwards
    assert (await delete_records(node, 12))[0] == ErrorCode.offset_out_of_range
    assert await delete_records(node, -1) == (ErrorCode.none, 11)
    assert await list_offsets(node, EARLIEST) == (ErrorCode.none, 11, -1)
    assert (await fetch(node, 11)).records in (b"", None)


async def test_offsets_survive_a_clean_restart(tmp_path):
    config = BrokerConfig(data_dir=tmp_path / "data")
    node = Node(config)
    node.logs.create_topic("t", 1, {"segment.bytes": "300"})
    fill(node, [[10, 30, 20], [25, 5], [40], [35, 60, 50], [55], [45]])
    await delete_records(node, 4)
    before = [await list_offsets(node, ts) for ts in (EARLIEST, LATEST, MAX_TIMESTAMP, TS, TS + 41)]
    node.close()
    node = Node(config)
    try:
        after = [await list_offsets(node, ts) for ts in (EARLIEST, LATEST, MAX_TIMESTAMP, TS, TS + 41)]
    finally:
        node.close()
    assert after == before
    assert before[2] == (ErrorCode.none, 7, TS + 60)


async def test_delete_records_of_a_compact_only_topic_is_policy_violation(node):
    # Kafka: Partition.deleteRecordsOnLeader refuses unless cleanup.policy includes delete
    node.logs.create_topic("t", 1, {"cleanup.policy": "compact"})
    assert await delete_records(node, 0) == (ErrorCode.policy_violation, -1)
    node.logs.set_topic_configs("t", {"cleanup.policy": "compact,delete"})
    assert await delete_records(node, 0) == (ErrorCode.none, 0)


async def test_an_offset_commit_of_many_partitions_looks_each_up_once(node):
    """The partitions found in the log were a list searched once per requested partition: a
    TxnOffsetCommit naming the 5,000 partitions of a topic 20 times held the event loop 8.6 s."""
    partitions, n = 5_000, 100_000
    node.logs.create_topic("many", partitions)
    m = request_module(8, 9)
    request = m.OffsetCommitRequest(group_id="g", generation_id_or_member_epoch=-1, member_id="",
                                    group_instance_id=None, topics=(m.OffsetCommitRequestTopic(name="many", partitions=tuple(
                                        m.OffsetCommitRequestPartition(partition_index=i % partitions, committed_offset=i,
                                                                       committed_leader_epoch=-1, committed_metadata="")
                                        for i in range(n))),))
    frame = encode_request(RequestHeader(8, 9, 1, "offsets"), request)
    started = time.process_time()
    _, response = decode_response(await dispatch(node, frame), 8, 9)
    elapsed = time.process_time() - started
    assert [(p.partition_index, p.error_code) for t in response.topics for p in t.partitions] == [
        (p, ErrorCode.none) for p in range(partitions)]  # each partition answered once, as named first
    committed = node.groups.fetch_offsets("g", False, [("many", p) for p in (0, partitions - 1)])
    assert [c.offset for _, c, _ in committed] == [n - partitions, n - 1]  # the last one named wins
    assert elapsed < 3.0, f"{elapsed:.1f} s of CPU"  # under 1 s here; the list took 6 s
