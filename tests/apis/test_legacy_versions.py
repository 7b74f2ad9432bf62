"""Produce v0-2, Fetch v0-3 and ListOffsets v0 through dispatch: magic 0/1 message sets converted
to v2 on the way in and back on the way out, as Kafka 3.9 does."""

from __future__ import annotations

import datetime

import pytest

from shim.storage.producer_state import Origin
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from kafka_codecs import encode_batch
from kafka_codecs.legacy import read_message_set
from shim.errors import ErrorCode as E
from shim.storage.validation import validate_client_batch

from apis_support import call

PRODUCE, FETCH, LIST_OFFSETS = 0, 1, 2
TS = 1_700_000_000_000


def message_set(magic, n=2, codec=0, first=0):
    b = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 20)
    for i in range(n):
        b.append(i, timestamp=TS + first + i if magic else None, key=None, value=b"v%d" % (first + i))
    return bytes(b.build())


async def produce(node, version, records):
    r = await call(node, PRODUCE, version, lambda m: m.ProduceRequest(
        acks=1, timeout=datetime.timedelta(seconds=5), topic_data=(m.TopicProduceData(name="t", partition_data=(
            m.PartitionProduceData(index=0, records=records),)),)))
    return r, r.responses[0].partition_responses[0]


@pytest.mark.parametrize("version,magic,codec", [(0, 0, 0), (1, 0, 1), (2, 1, 0), (2, 1, 2)])
async def test_produce_legacy_message_sets_are_stored_as_v2(node, version, magic, codec):
    node.logs.create_topic("t", 1)
    _, first = await produce(node, version, message_set(magic, codec=codec))
    r, second = await produce(node, version, message_set(magic, codec=codec, first=2))
    assert (first.error_code, first.base_offset, second.base_offset) == (E.none, 0, 2)
    assert hasattr(r, "throttle_time") == (version >= 1)
    stored = b"".join(node.logs.get("t", 0).iter_batches())
    assert stored[16] == 2  # every batch is magic 2 on disk
    assert [(x.offset, x.value, x.timestamp) for x in read_message_set(_down(stored, magic))] == [
        (i, b"v%d" % i, TS + i if magic else -1) for i in range(4)]


def _down(data, magic):
    from kafka_codecs.legacy import down_convert
    return down_convert(data, magic)


async def test_produce_v2_corrupt_message(node):
    node.logs.create_topic("t", 1)
    data = bytearray(message_set(1))
    data[-1] ^= 0x01
    _, p = await produce(node, 2, bytes(data))
    assert p.error_code == E.corrupt_message and node.logs.get("t", 0).log_end_offset == 0


async def fetch(node, version, offset=0):
    def build(m):
        fields = dict(replica_id=-1, max_wait=datetime.timedelta(0), min_bytes=1, topics=(m.FetchTopic(
            topic="t", partitions=(m.FetchPartition(partition=0, fetch_offset=offset, partition_max_bytes=1 << 20),)),))
        if version >= 3:
            fields["max_bytes"] = 1 << 20
        return m.FetchRequest(**fields)
    return (await call(node, FETCH, version, build)).responses[0].partitions[0]


@pytest.mark.parametrize("version", range(4))
async def test_fetch_old_versions_down_convert(node, version):
    node.logs.create_topic("t", 1)
    plog = node.logs.get("t", 0)
    for batch in (encode_batch([(b"k", b"a", [("h", b"x")], TS), (None, b"b", (), TS + 1)]),
                  encode_batch([(None, b"c", (), TS + 2)])):
        data = bytearray(batch)
        plog.append(data, validate_client_batch(data, 1 << 20), 0, origin=Origin.CLIENT)
    p = await fetch(node, version, offset=1)
    magic = 0 if version <= 1 else 1
    got = [(x.offset, x.key, x.value, x.timestamp, x.magic) for x in read_message_set(bytes(p.records))]
    assert got == [(1, None, b"b", TS + 1 if magic else -1, magic), (2, None, b"c", TS + 2 if magic else -1, magic)]
    assert (p.error_code, p.high_watermark) == (E.none, 3)


async def test_list_offsets_v0(node):
    node.logs.create_topic("t", 1, {"segment.bytes": "200"})
    plog = node.logs.get("t", 0)
    for i in range(4):
        data = bytearray(encode_batch([(None, b"x" * 100, (), TS)]))
        plog.append(data, validate_client_batch(data, 1 << 20), 0, origin=Origin.CLIENT)
    bases = sorted((s.base_offset for s in plog.segments), reverse=True)
    assert len(bases) > 1

    async def offsets(timestamp, n):
        r = await call(node, LIST_OFFSETS, 0, lambda m: m.ListOffsetsRequest(replica_id=-1, topics=(m.ListOffsetsTopic(
            name="t", partitions=(m.ListOffsetsPartition(partition_index=0, timestamp=timestamp, max_num_offsets=n),)),)))
        p = r.topics[0].partitions[0]
        return p.error_code, list(p.old_style_offsets)
    assert await offsets(-1, 100) == (E.none, [4] + bases)
    assert await offsets(-1, 1) == (E.none, [4])
    assert await offsets(-2, 100) == (E.none, [0])
    assert await offsets(0, 100) == (E.none, [])  # no segment was last modified before 1970
    assert (await offsets(-3, 1))[0] == E.unsupported_version


OFFSET_COMMIT = 8


async def offset_commit(node, version, topics, **fields):
    """``topics``: [(name, [(partition, offset), ...])]; per-partition codes."""
    def build(m):
        extra = {"commit_timestamp": fields.pop("commit_timestamp", -1)} if version == 1 else {}
        return m.OffsetCommitRequest(group_id="g", **fields, topics=tuple(m.OffsetCommitRequestTopic(
            name=n, partitions=tuple(m.OffsetCommitRequestPartition(
                partition_index=i, committed_offset=o, committed_metadata=None, **extra) for i, o in ps))
            for n, ps in topics))
    r = await call(node, OFFSET_COMMIT, version, build)
    return {(t.name, p.partition_index): p.error_code for t in r.topics for p in t.partitions}


async def test_offset_commit_v1_commits_with_its_commit_timestamp(node):
    node.logs.create_topic("t", 1)
    codes = await offset_commit(node, 1, [("t", [(0, 7)])], generation_id_or_member_epoch=-1, member_id="",
                                commit_timestamp=TS)
    assert codes == {("t", 0): E.none}
    committed = node.groups.groups["g"].offsets[("t", 0)].value
    assert (committed.offset, committed.commit_timestamp) == (7, TS)


async def test_offset_commit_v0_is_unsupported_once_a_partition_is_left(node):
    # Kafka 3.9 in KRaft mode: v0 would store the offsets in ZooKeeper (KafkaApis.commitOffsetsToZookeeper)
    node.logs.create_topic("t", 1)
    assert await offset_commit(node, 0, [("t", [(0, 7), (5, 1)]), ("nope", [(0, 1)])]) == {
        ("t", 0): E.unsupported_version, ("t", 5): E.unsupported_version, ("nope", 0): E.unsupported_version}
    assert await offset_commit(node, 0, [("t", [(5, 1)]), ("nope", [(0, 1)])]) == {
        ("t", 5): E.unknown_topic_or_partition, ("nope", 0): E.unknown_topic_or_partition}
    assert "g" not in node.groups.groups


async def test_offset_commit_v0_1_are_not_advertised_under_4_x(tmp_path):
    from shim.config import BrokerConfig
    from shim.node import Node
    versions = {}
    for release in ("3.9", "4.1"):
        node = Node(BrokerConfig(data_dir=tmp_path / release, kafka_version=release))
        try:
            r = await call(node, 18, 3, lambda m: m.ApiVersionsRequest(client_software_name="t",
                                                                       client_software_version="1"))
            versions[release] = next((k.min_version, k.max_version) for k in r.api_keys if k.api_key == OFFSET_COMMIT)
        finally:
            node.close()
    assert versions == {"3.9": (0, 9), "4.1": (2, 9)}  # KIP-896: Kafka 4.0 removed v0-1
