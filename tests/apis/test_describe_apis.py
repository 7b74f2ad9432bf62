"""DescribeTopicPartitions with its cursor, the authorized-operations fields as Kafka fills them
without an authorizer, FindCoordinator v5-6 and Fetch v17, through dispatch."""

from __future__ import annotations

import datetime
import uuid

import pytest

from shim.storage.producer_state import Origin

from shim.errors import ErrorCode as E

from apis_support import call

METADATA, FETCH, FIND_COORDINATOR, DESCRIBE_CLUSTER, DESCRIBE_TOPIC_PARTITIONS = 3, 1, 10, 60, 75
NOT_REQUESTED = -(2**31)
# AclEntry.supportedOperations in Kafka 3.9, as AclOperation codes
TOPIC_OPS = {3, 4, 5, 6, 7, 8, 10, 11}           # READ WRITE CREATE DELETE ALTER DESCRIBE DESCRIBE_CONFIGS ALTER_CONFIGS
CLUSTER_OPS = {5, 7, 8, 9, 10, 11, 12}           # CREATE ALTER DESCRIBE CLUSTER_ACTION DESCRIBE/ALTER_CONFIGS IDEMPOTENT_WRITE


def bits(field: int) -> set[int]:
    return {i for i in range(32) if field >> i & 1}


# -- DescribeTopicPartitions ----------------------------------------------------------------------

async def describe(node, names=(), limit=2000, cursor=None):
    def build(m):
        c = None if cursor is None else m.Cursor(topic_name=cursor[0], partition_index=cursor[1])
        return m.DescribeTopicPartitionsRequest(topics=tuple(m.TopicRequest(name=n) for n in names),
                                                response_partition_limit=limit, cursor=c)
    r = await call(node, DESCRIBE_TOPIC_PARTITIONS, 0, build)
    nxt = None if r.next_cursor is None else (r.next_cursor.topic_name, r.next_cursor.partition_index)
    return r, nxt


def listed(r):
    return [(t.name, [p.partition_index for p in t.partitions]) for t in r.topics]


async def test_describe_topic_partitions_pages_with_the_cursor(node):
    for name, n in (("b", 3), ("a", 2), ("c", 1)):
        node.logs.create_topic(name, n)
    pages, cursor = [], None
    while True:
        r, cursor = await describe(node, limit=2, cursor=cursor)
        pages.append(listed(r))
        if cursor is None:
            break
    assert pages == [[("a", [0, 1])], [("b", [0, 1])], [("b", [2]), ("c", [0])]]


async def test_describe_topic_partitions_limit_falls_on_a_topic_end(node):
    node.logs.create_topic("a", 2)
    node.logs.create_topic("b", 1)
    r, cursor = await describe(node, limit=2)
    assert listed(r) == [("a", [0, 1])] and cursor == ("b", 0)


async def test_describe_topic_partitions_named_topics(node):
    info = node.logs.create_topic("t", 2)
    r, cursor = await describe(node, names=("zz-missing", "t", "bad/name"))
    assert cursor is None
    got = {t.name: (t.error_code, t.topic_id, t.is_internal, len(t.partitions)) for t in r.topics}
    # kio reads the zero uuid on the wire as None
    assert got == {"t": (E.none, info.topic_id, False, 2), "zz-missing": (E.unknown_topic_or_partition, None, False, 0),
                   "bad/name": (E.invalid_topic_exception, None, False, 0)}
    assert [t.name for t in r.topics] == sorted(got)
    assert all(bits(t.topic_authorized_operations) == TOPIC_OPS for t in r.topics)
    p = r.topics[[t.name for t in r.topics].index("t")].partitions[1]
    me = node.config.node_id
    assert (p.leader_id, p.replica_nodes, p.isr_nodes, p.eligible_leader_replicas) == (me, (me,), (me,), ())


@pytest.mark.parametrize("cursor", [("other", 0), ("t", -1)])
async def test_describe_topic_partitions_bad_cursor(node, cursor):
    node.logs.create_topic("t", 1)
    r, _ = await describe(node, names=("t",), cursor=cursor)
    assert [(t.name, t.error_code, t.partitions) for t in r.topics] == [("t", E.invalid_request, ())]


# -- authorized operations ------------------------------------------------------------------------

async def metadata(node, version, topics, *, cluster_ops=False, topic_ops=False):
    def build(m):
        if version >= 10:
            topics_ = [{"topic_id": None, **t} for t in topics]
        else:
            topics_ = topics
        fields = dict(topics=tuple(m.MetadataRequestTopic(**t) for t in topics_), allow_auto_topic_creation=False)
        if version >= 8:
            fields["include_topic_authorized_operations"] = topic_ops
        if 8 <= version <= 10:
            fields["include_cluster_authorized_operations"] = cluster_ops
        return m.MetadataRequest(**fields)
    return await call(node, METADATA, version, build)


@pytest.mark.parametrize("version", [8, 9, 10])
async def test_metadata_v8_to_v10_operations_when_asked(node, version):
    node.logs.create_topic("t", 1)
    asked = await metadata(node, version, [dict(name="t"), dict(name="nope")], cluster_ops=True, topic_ops=True)
    assert bits(asked.cluster_authorized_operations) == CLUSTER_OPS
    assert [bits(t.topic_authorized_operations) for t in asked.topics] == [TOPIC_OPS, TOPIC_OPS]
    plain = await metadata(node, version, [dict(name="t")])
    assert plain.cluster_authorized_operations == NOT_REQUESTED
    assert plain.topics[0].topic_authorized_operations == NOT_REQUESTED


async def test_metadata_v12_topic_operations_not_on_unknown_topic_ids(node):
    info = node.logs.create_topic("t", 1)
    r = await metadata(node, 12, [dict(name=None, topic_id=info.topic_id), dict(name=None, topic_id=uuid.uuid4())],
                       topic_ops=True)
    assert [(t.error_code, t.topic_authorized_operations) for t in r.topics] == [
        (E.none, r.topics[0].topic_authorized_operations), (E.unknown_topic_id, NOT_REQUESTED)]
    assert bits(r.topics[0].topic_authorized_operations) == TOPIC_OPS


async def test_metadata_v12_a_topic_id_wins_over_an_empty_name(node):
    # Java kafka-clients 4 asks by id with the name left "" (its regex subscriptions resolve so)
    info = node.logs.create_topic("t", 2)
    r = await metadata(node, 12, [dict(name="", topic_id=info.topic_id)])
    assert [(t.error_code, t.name, t.topic_id, len(t.partitions)) for t in r.topics] == [
        (E.none, "t", info.topic_id, 2)]


@pytest.mark.parametrize("asked", [True, False])
async def test_describe_cluster_operations(node, asked):
    r = await call(node, DESCRIBE_CLUSTER, 1, lambda m: m.DescribeClusterRequest(
        include_cluster_authorized_operations=asked, endpoint_type=1))
    assert (bits(r.cluster_authorized_operations) == CLUSTER_OPS) if asked else r.cluster_authorized_operations == NOT_REQUESTED


@pytest.mark.parametrize("endpoint_type,code,message", [
    (2, E.mismatched_endpoint_type,
     "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER"),
    (0, E.unsupported_endpoint_type, "Unsupported endpoint type 0"),
    (3, E.unsupported_endpoint_type, "Unsupported endpoint type 3")])
async def test_describe_cluster_refuses_other_endpoint_types(node, endpoint_type, code, message):
    """Kafka: AuthHelper.computeDescribeClusterResponse -- a broker answers only requests for brokers
    (Java's Admin asks for controllers under bootstrap.controllers)."""
    r = await call(node, DESCRIBE_CLUSTER, 1, lambda m: m.DescribeClusterRequest(
        include_cluster_authorized_operations=True, endpoint_type=endpoint_type))
    assert (r.error_code, r.error_message, r.brokers, r.controller_id, r.cluster_id) == (code, message, (), -1, "")


# -- FindCoordinator v5-6, Fetch v17 --------------------------------------------------------------

@pytest.mark.parametrize("version,key_type,code", [
    (4, 0, E.none), (5, 1, E.none), (6, 0, E.none), (6, 2, E.coordinator_not_available), (5, 2, E.invalid_request)])
async def test_find_coordinator_batched(node, version, key_type, code):
    def find(m):
        return m.FindCoordinatorRequest(key_type=key_type, coordinator_keys=("k1", "k2"))
    r = await call(node, FIND_COORDINATOR, version, find)
    if code == E.none:  # the first creates the coordinator's topic, and the client retries (Kafka: getCoordinator)
        assert [c.error_code for c in r.coordinators] == [E.coordinator_not_available] * 2
        assert ("__consumer_offsets", "__transaction_state")[key_type] in node.logs.topics
        r = await call(node, FIND_COORDINATOR, version, find)
    assert [(c.key, c.error_code) for c in r.coordinators] == [("k1", code), ("k2", code)]
    expected_node = node.config.node_id if code == E.none else -1
    assert {c.node_id for c in r.coordinators} == {expected_node}


async def test_fetch_v17_reads_like_v16(node):
    from kafka_codecs import encode_batch
    from shim.storage.validation import validate_client_batch
    info = node.logs.create_topic("t", 1)
    data = bytearray(encode_batch([(None, b"v", (), 1_700_000_000_000)]))
    node.logs.get("t", 0).append(data, validate_client_batch(data, 1 << 20), 0, origin=Origin.CLIENT)

    def build(m):
        return m.FetchRequest(
            cluster_id=None, replica_state=m.ReplicaState(replica_id=-1, replica_epoch=-1),
            max_wait=datetime.timedelta(0), min_bytes=1, max_bytes=1 << 20,
            isolation_level=0, session_id=0, session_epoch=-1, forgotten_topics_data=(), rack_id="",
            topics=(m.FetchTopic(topic_id=info.topic_id, partitions=(m.FetchPartition(
                partition=0, current_leader_epoch=-1, fetch_offset=0, last_fetched_epoch=-1, log_start_offset=-1,
                partition_max_bytes=1 << 20, replica_directory_id=None),)),))
    r = await call(node, FETCH, 17, build)
    p = r.responses[0].partitions[0]
    stored = b"".join(node.logs.get("t", 0).iter_batches())
    assert (p.error_code, p.high_watermark, bytes(p.records)) == (E.none, 1, stored)
