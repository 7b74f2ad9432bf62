"""The lowest versions Kafka 3.9 serves of OffsetFetch, CreateTopics, DeleteTopics,
OffsetForLeaderEpoch, WriteTxnMarkers and DescribeConfigs (Kafka 4.0 removed them), through
dispatch. Requests are encoded and answers decoded by kafka-python's codec, generated from Kafka's
own JSON schemas independently of kio: an answer must re-encode to exactly the bytes kafka-shim
sent, so a field too many or too few fails."""

from __future__ import annotations

import itertools

import pytest
from kafka.protocol.admin import CreateTopicsRequest, CreateTopicsResponse, DeleteTopicsRequest, DeleteTopicsResponse
from kafka.protocol.admin.configs import DescribeConfigsRequest, DescribeConfigsResponse
from kafka.protocol.consumer import (
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
)
from kafka.protocol.producer.transaction import WriteTxnMarkersRequest, WriteTxnMarkersResponse

from kafka_codecs import ControlRecordType, encode_batch, iter_batches, read_control_type
from shim.apis.dispatch import dispatch
from shim.errors import ErrorCode as E
from shim.storage.producer_state import Origin
from shim.storage.validation import validate_client_batch

from apis_support import call

_corr = itertools.count(1)


async def kp_call(node, request, response_cls, version):
    """``request`` (kafka-python) as ``version`` through dispatch; its answer decoded by
    kafka-python, checked to be exactly the bytes sent."""
    corr = next(_corr)
    request.with_header(correlation_id=corr, client_id="tests")
    raw = await dispatch(node, bytes(request.encode(version=version, header=True)))
    response = response_cls.decode(raw, version=version, header=True)
    assert response.header.correlation_id == corr
    response._version = version  # encode(version=...) would set it on the header too, which a response header lacks
    assert bytes(response.encode(header=True)) == raw  # nothing left over, nothing missing
    return response


def append(node, topic, n):
    plog = node.logs.get(topic, 0)
    for i in range(n):
        data = bytearray(encode_batch([(None, b"v%d" % i, (), 1_700_000_000_000)]))
        plog.append(data, validate_client_batch(data, 1 << 20), 0, origin=Origin.CLIENT)


OFFSET_FETCH_TOPIC = OffsetFetchRequest.OffsetFetchRequestTopic


async def offset_fetch(node, version, partitions):
    r = await kp_call(node, OffsetFetchRequest(group_id="g", topics=[OFFSET_FETCH_TOPIC(name="t", partition_indexes=partitions)]),
                      OffsetFetchResponse, version)
    return {p.partition_index: (p.committed_offset, p.metadata, p.error_code) for t in r.topics for p in t.partitions}


async def test_offset_fetch_v0_is_unsupported_in_kraft_while_v1_reads_the_commit(node):
    # Kafka 3.9: v0 read ZooKeeper; a KRaft broker throws from requireZkOrThrow
    # (KafkaApis.handleOffsetFetchRequestFromZookeeper), UNSUPPORTED_VERSION on every partition
    node.logs.create_topic("t", 2)
    commit = OffsetCommitRequest(group_id="g", generation_id_or_member_epoch=-1, member_id="", retention_time_ms=-1,
                                 topics=[OffsetCommitRequest.OffsetCommitRequestTopic(name="t", partitions=[
                                     OffsetCommitRequest.OffsetCommitRequestTopic.OffsetCommitRequestPartition(
                                         partition_index=0, committed_offset=7, committed_metadata="m")])])
    r = await kp_call(node, commit, OffsetCommitResponse, 2)
    assert r.topics[0].partitions[0].error_code == E.none
    assert await offset_fetch(node, 1, [0, 1]) == {0: (7, "m", E.none), 1: (-1, "", E.none)}
    assert await offset_fetch(node, 0, [0, 1, 9]) == {
        0: (-1, "", E.unsupported_version), 1: (-1, "", E.unsupported_version), 9: (-1, "", E.unsupported_version)}


CREATABLE = CreateTopicsRequest.CreatableTopic


def create(name, partitions=2):
    return CREATABLE(name=name, num_partitions=partitions, replication_factor=1, assignments=[], configs=[])


async def test_create_topics_v0_creates_and_v1_can_only_validate(node):
    r = await kp_call(node, CreateTopicsRequest(topics=[create("a")], timeout_ms=5000), CreateTopicsResponse, 0)
    assert [(t.name, t.error_code) for t in r.topics] == [("a", E.none)]
    assert node.logs.topic("a").partitions == 2
    # v0 has no ErrorMessage: refused by its code alone
    r = await kp_call(node, CreateTopicsRequest(topics=[create("a")], timeout_ms=5000), CreateTopicsResponse, 0)
    assert [(t.name, t.error_code) for t in r.topics] == [("a", E.topic_already_exists)]
    r = await kp_call(node, CreateTopicsRequest(topics=[create("b"), create("a")], timeout_ms=5000,
                                                validate_only=True), CreateTopicsResponse, 1)
    assert {t.name: (t.error_code, t.error_message is not None) for t in r.topics} == {
        "b": (E.none, False), "a": (E.topic_already_exists, True)}
    assert "b" not in node.logs.topics


async def test_delete_topics_v0(node):
    node.logs.create_topic("t", 1)
    r = await kp_call(node, DeleteTopicsRequest(topic_names=["t", "nope"], timeout_ms=5000), DeleteTopicsResponse, 0)
    assert {t.name: t.error_code for t in r.responses} == {"t": E.none, "nope": E.unknown_topic_or_partition}
    assert "t" not in node.logs.topics


async def end_offsets(node, version, epochs):
    partition = OffsetForLeaderEpochRequest.OffsetForLeaderTopic.OffsetForLeaderPartition
    request = OffsetForLeaderEpochRequest(replica_id=-1, topics=[OffsetForLeaderEpochRequest.OffsetForLeaderTopic(
        topic="t", partitions=[partition(partition=0, current_leader_epoch=-1, leader_epoch=e) for e in epochs])])
    r = await kp_call(node, request, OffsetForLeaderEpochResponse, version)
    return [(p.error_code, p.leader_epoch if version >= 1 else None, p.end_offset) for p in r.topics[0].partitions]


@pytest.mark.parametrize("version", [0, 1])
async def test_offset_for_leader_epoch_v0_v1_answer_as_v2(node, version):
    node.logs.create_topic("t", 1)
    append(node, "t", 3)
    v2 = await end_offsets(node, 2, [0, 1])
    assert v2[0] == (E.none, 0, 3)
    assert await end_offsets(node, version, [0, 1]) == [
        (code, epoch if version else None, offset) for code, epoch, offset in v2]


async def test_write_txn_markers_v0_writes_the_marker(node):
    node.logs.create_topic("t", 1)
    marker = WriteTxnMarkersRequest.WritableTxnMarker
    request = WriteTxnMarkersRequest(markers=[marker(
        producer_id=5, producer_epoch=0, transaction_result=True, coordinator_epoch=0,
        topics=[marker.WritableTxnMarkerTopic(name="t", partition_indexes=[0])])])
    r = await kp_call(node, request, WriteTxnMarkersResponse, 0)
    assert [(m.producer_id, [(p.partition_index, p.error_code) for t in m.topics for p in t.partitions])
            for m in r.markers] == [(5, [(0, E.none)])]
    stored = b"".join(node.logs.get("t", 0).iter_batches())
    assert [(h.producer_id, read_control_type(stored[pos:pos + h.size])) for pos, h in iter_batches(stored)] == [
        (5, ControlRecordType.COMMIT)]


async def describe_configs(node, version, keys):
    resource = DescribeConfigsRequest.DescribeConfigsResource(resource_type=2, resource_name="t", configuration_keys=keys)
    r = await kp_call(node, DescribeConfigsRequest(resources=[resource], include_synonyms=version >= 1),
                      DescribeConfigsResponse, version)
    (result,) = r.results
    assert result.error_code == E.none
    return {c.name: c for c in result.configs}


async def test_describe_configs_v0_is_default_is_false_as_kafka_3_9_answers_it(node):
    node.logs.create_topic("t", 1, {"retention.ms": "1234"})
    keys = ["retention.ms", "cleanup.policy"]
    v1 = await describe_configs(node, 1, keys)
    assert {k: (c.value, c.config_source) for k, c in v1.items()} == {"retention.ms": ("1234", 1),  # TOPIC_CONFIG
                                                                      "cleanup.policy": ("delete", 5)}  # DEFAULT
    v0 = await describe_configs(node, 0, keys)
    assert {k: (c.value, c.read_only, c.is_sensitive) for k, c in v0.items()} == {
        k: (c.value, c.read_only, c.is_sensitive) for k, c in v1.items()}
    # Kafka 3.9's ConfigHelper sets only ConfigSource: IsDefault stays false, defaults included
    assert [c.is_default for c in v0.values()] == [False, False]


API_VERSIONS = 18
LOWEST = {9: 0, 19: 0, 20: 0, 23: 0, 27: 0, 32: 0}


async def test_3_x_advertises_the_lowest_versions_and_4_x_does_not(tmp_path):
    from shim.config import BrokerConfig
    from shim.node import Node
    lows = {}
    for release in ("3.7", "3.9", "4.0", "4.1"):
        node = Node(BrokerConfig(data_dir=tmp_path / release, kafka_version=release))
        try:
            r = await call(node, API_VERSIONS, 3, lambda m: m.ApiVersionsRequest(client_software_name="t",
                                                                                 client_software_version="1"))
            lows[release] = {k.api_key: k.min_version for k in r.api_keys if k.api_key in LOWEST}
        finally:
            node.close()
    assert lows["3.7"] == lows["3.9"] == LOWEST
    # KIP-896: Kafka 4.0 removed them (and WriteTxnMarkers v0)
    assert lows["4.0"] == lows["4.1"] == {9: 1, 19: 2, 20: 1, 23: 2, 27: 1, 32: 1}
