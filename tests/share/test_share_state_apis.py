"""The share coordinator's APIs (InitializeShareGroupState 83, ReadShareGroupState 84,
WriteShareGroupState 85, DeleteShareGroupState 86, ReadShareGroupStateSummary 87) and
FindCoordinator key type 2, through the dispatcher on a node emulating Kafka 4.1."""

from __future__ import annotations

import time
import uuid

import pytest

from share.test_share_apis import TOPIC, acquired, call, node, produce, share_fetch, share_node, topic_id  # noqa: F401
from shim.apis.dispatch import dispatch_request
from shim.config import BrokerConfig
from shim.coordinators.partitioning import partition_for
from shim.coordinators.share import records as sr
from shim.coordinators.share.store import SHARE_STATE_TOPIC, share_partition_key
from shim.errors import ErrorCode
from shim.node import Node
from shim.protocol.messages import RequestHeader, decode_response, encode_request, make, request_class, request_module

ACKED, ARCHIVED, AVAILABLE = 2, 4, 0


def test_keys_hash_as_kafkas_utils_abs():
    # observed from kafka-clients: Utils.abs(s.hashCode()) % 50 -- negative hashes are negated
    assert partition_for("orders-consumer", 50) == 40
    assert partition_for("zzzzzzzz", 50) == 12
    assert partition_for("g:Dx4tPEtaaXiHlqW0w9Lh8A:3", 50) == 13


async def write(node, partition, start, batches, state_epoch=0, leader_epoch=0, group="g", tid=None):
    m = request_module(85, 0)
    data = m.PartitionData(partition=partition, state_epoch=state_epoch, leader_epoch=leader_epoch, start_offset=start,
                           state_batches=tuple(m.StateBatch(first_offset=f, last_offset=l, delivery_state=s,
                                                            delivery_count=c) for f, l, s, c in batches))
    r = await call(node, 85, 0, group_id=group, topics=(m.WriteStateData(topic_id=tid or topic_id(node),
                                                                         partitions=(data,)),))
    return r.results[0].partitions[0].error_code if r.results else None


async def write_answer(node, partition, start, batches=(), state_epoch=0, leader_epoch=0, tid=None):
    m = request_module(85, 0)
    data = m.PartitionData(partition=partition, state_epoch=state_epoch, leader_epoch=leader_epoch, start_offset=start,
                           state_batches=())
    r = await call(node, 85, 0, group_id="g", topics=(m.WriteStateData(topic_id=tid or topic_id(node),
                                                                       partitions=(data,)),))
    p = r.results[0].partitions[0]
    return p.error_code, p.error_message


async def read(node, partition, leader_epoch=0, group="g", tid=None, message=False):
    m = request_module(84, 0)
    r = await call(node, 84, 0, group_id=group, topics=(m.ReadStateData(topic_id=tid or topic_id(node), partitions=(
        m.PartitionData(partition=partition, leader_epoch=leader_epoch),)),))
    p = r.results[0].partitions[0]
    got = (p.error_code, p.state_epoch, p.start_offset, [
        (b.first_offset, b.last_offset, b.delivery_state, b.delivery_count) for b in p.state_batches])
    return (*got, p.error_message) if message else got


async def initialize(node, partition, start, state_epoch=0, tid=None):
    m = request_module(83, 0)
    r = await call(node, 83, 0, group_id="g", topics=(m.InitializeStateData(topic_id=tid or topic_id(node), partitions=(
        m.PartitionData(partition=partition, state_epoch=state_epoch, start_offset=start),)),))
    p = r.results[0].partitions[0]
    return p.error_code, p.error_message


async def summary(node, partition, group="g"):
    m = request_module(87, 0)
    r = await call(node, 87, 0, group_id=group, topics=(m.ReadStateSummaryData(topic_id=topic_id(node), partitions=(
        m.PartitionData(partition=partition, leader_epoch=0),)),))
    p = r.results[0].partitions[0]
    return p.error_code, p.state_epoch, p.leader_epoch, p.start_offset


async def test_write_then_read_lays_updates_over_the_snapshot(share_node):  # noqa: F811
    assert await initialize(share_node, 0, -1) == (ErrorCode.none, None)
    assert await read(share_node, 0) == (ErrorCode.none, 0, -1, [])  # no start offset yet
    assert await write(share_node, 0, 10, [(10, 19, AVAILABLE, 1)], state_epoch=1, leader_epoch=3) == ErrorCode.none
    assert await write(share_node, 0, 12, [(12, 13, ACKED, 1)], state_epoch=1, leader_epoch=3) == ErrorCode.none
    assert await read(share_node, 0, leader_epoch=3) == (
        ErrorCode.none, 1, 12, [(12, 13, ACKED, 1), (14, 19, AVAILABLE, 1)])
    assert await summary(share_node, 0) == (ErrorCode.none, 1, 3, 12)


async def test_older_epochs_are_fenced(share_node):  # noqa: F811
    assert await initialize(share_node, 0, 0) == (ErrorCode.none, None)
    assert await write(share_node, 0, 0, [], state_epoch=2, leader_epoch=5) == ErrorCode.none
    assert await write(share_node, 0, 0, [], state_epoch=1, leader_epoch=5) == ErrorCode.fenced_state_epoch
    assert await write(share_node, 0, 0, [], state_epoch=2, leader_epoch=4) == ErrorCode.fenced_leader_epoch
    assert await write_answer(share_node, 0, 0, state_epoch=1, leader_epoch=5) == (
        ErrorCode.fenced_state_epoch,
        "The share coordinator rejected the request because the share-group state epoch did not match.")
    assert await write_answer(share_node, 0, 0, state_epoch=2, leader_epoch=4) == (
        ErrorCode.fenced_leader_epoch, "The leader epoch in the request is older than the epoch on the broker.")
    assert await write_answer(share_node, 0, 0, state_epoch=-1, leader_epoch=-1) == (ErrorCode.none, None)  # not set
    assert (await read(share_node, 0, leader_epoch=4))[0] == ErrorCode.fenced_leader_epoch
    assert (await read(share_node, 0, leader_epoch=-1))[0] == ErrorCode.fenced_leader_epoch  # Read does not skip -1
    assert (await read(share_node, 0, leader_epoch=7))[0] == ErrorCode.none  # a newer leader epoch is recorded
    assert (await summary(share_node, 0))[2] == 7


async def test_a_higher_state_epoch_is_written_as_a_snapshot(share_node, tmp_path):  # noqa: F811
    """Kafka 4.1 (KAFKA-19337, ShareCoordinatorShard.generateShareStateRecord): a ShareUpdate has
    no state epoch, so a write with a higher one is a new snapshot (snapshot epoch + 1, the batches
    merged over the recorded ones) whatever the count of updates; an update dropped it, and the
    next write at the old epoch was taken instead of fenced."""
    assert await initialize(share_node, 0, 0) == (ErrorCode.none, None)
    assert await write(share_node, 0, 0, [(0, 10, AVAILABLE, 1)], state_epoch=0) == ErrorCode.none
    assert await write(share_node, 0, 0, [(0, 4, AVAILABLE, 2)], state_epoch=0) == ErrorCode.none  # an update
    assert await write(share_node, 0, 2, [(2, 3, ACKED, 2)], state_epoch=1) == ErrorCode.none
    expected = (ErrorCode.none, 1, 2, [(2, 3, ACKED, 2), (4, 4, AVAILABLE, 2), (5, 10, AVAILABLE, 1)])
    assert await read(share_node, 0) == expected
    assert (await summary(share_node, 0))[1] == 1
    key = ("g", topic_id(share_node), 0)
    snap = share_node.share.store.get(key)
    assert (snap.snapshot_epoch, share_node.share.store.entries[key].updates) == (1, 0)
    assert await write(share_node, 0, -1, [(5, 5, ACKED, 1)], state_epoch=0) == ErrorCode.fenced_state_epoch
    share_node.close()
    again = Node(BrokerConfig(data_dir=tmp_path / "data", kafka_version="4.1"))  # replayed from the log
    try:
        assert await read(again, 0) == expected
    finally:
        again.close()


async def test_initialize_and_delete(share_node):  # noqa: F811
    m = request_module(83, 0)
    r = await call(share_node, 83, 0, group_id="g", topics=(m.InitializeStateData(topic_id=topic_id(share_node), partitions=(
        m.PartitionData(partition=1, state_epoch=4, start_offset=7),)),))
    assert r.results[0].partitions[0].error_code == ErrorCode.none
    assert await read(share_node, 1) == (ErrorCode.none, 4, 7, [])
    m = request_module(86, 0)
    r = await call(share_node, 86, 0, group_id="g", topics=(m.DeleteStateData(topic_id=topic_id(share_node), partitions=(
        m.PartitionData(partition=1),)),))
    assert r.results[0].partitions[0].error_code == ErrorCode.none
    assert (await read(share_node, 1))[0] == ErrorCode.invalid_request  # uninitialized again


async def test_read_and_write_of_a_partition_never_initialized_are_invalid_request(share_node):  # noqa: F811
    """Kafka 4.1.0 (KAFKA-19338, ShareCoordinatorShard.maybeGetReadStateError/maybeGetWriteStateError):
    before InitializeShareGroupState, Read and Write are INVALID_REQUEST with the shard's message,
    checked before the topic is looked up; Read's error answer has Kafka's default start offset 0.
    The summary and Delete of such a partition still answer."""
    read_refused = (ErrorCode.invalid_request, 0, 0, [], "Read operation on uninitialized share partition not allowed.")
    write_refused = (ErrorCode.invalid_request, "Write operation on uninitialized share partition not allowed.")
    assert await read(share_node, 0, message=True) == read_refused
    assert await write_answer(share_node, 0, 10) == write_refused
    assert await read(share_node, 5, message=True) == read_refused  # no partition 5: the state check comes first
    assert await write_answer(share_node, 0, 10, tid=uuid.uuid4()) == write_refused
    assert share_node.share.store.get(("g", topic_id(share_node), 0)) is None  # nothing was written
    assert await summary(share_node, 0) == (ErrorCode.none, 0, 0, -1)
    assert await initialize(share_node, 0, -1, state_epoch=2) == (ErrorCode.none, None)
    assert await read(share_node, 0, message=True) == (ErrorCode.none, 2, -1, [], None)
    assert await write_answer(share_node, 0, 10, state_epoch=2) == (ErrorCode.none, None)


async def test_initialize_over_existing_state_starts_afresh_at_leader_epoch_0(share_node, tmp_path):  # noqa: F811
    """Kafka 4.1 (ShareCoordinatorShard.initializeState, ShareGroupOffset.fromRequest): a snapshot
    of the start offset and state epoch as given (-1 too), leader epoch 0, nothing in flight, its
    snapshot epoch one past the last; the old start offset and leader epoch were kept. Requests
    are still fenced by the highest epochs recorded (leaderEpochMap, stateEpochMap), not by the
    snapshot's; a Read at the leader epoch recorded writes nothing."""
    key = ("g", topic_id(share_node), 0)
    assert await initialize(share_node, 0, 0) == (ErrorCode.none, None)
    assert await write(share_node, 0, 10, [(10, 19, AVAILABLE, 2)], state_epoch=2, leader_epoch=5) == ErrorCode.none
    before = share_node.share.store.get(key).snapshot_epoch
    assert await initialize(share_node, 0, -1, state_epoch=3) == (ErrorCode.none, None)
    assert await read(share_node, 0, leader_epoch=5) == (ErrorCode.none, 3, -1, [])
    assert await summary(share_node, 0) == (ErrorCode.none, 3, 0, -1)
    assert share_node.share.store.get(key).snapshot_epoch == before + 1
    assert await initialize(share_node, 0, 7, state_epoch=2) == (
        ErrorCode.fenced_state_epoch,
        "The share coordinator rejected the request because the share-group state epoch did not match.")
    assert await initialize(share_node, 0, 7, state_epoch=-1) == (ErrorCode.none, None)  # -1 is not fenced ...
    assert await summary(share_node, 0) == (ErrorCode.none, -1, 0, 7)  # ... and written as it is
    assert await write_answer(share_node, 0, 8, state_epoch=3, leader_epoch=4) == (
        ErrorCode.fenced_leader_epoch, "The leader epoch in the request is older than the epoch on the broker.")
    assert await write_answer(share_node, 0, 8, state_epoch=1, leader_epoch=5) == (
        ErrorCode.fenced_state_epoch,
        "The share coordinator rejected the request because the share-group state epoch did not match.")
    assert (await read(share_node, 0, leader_epoch=0))[0] == ErrorCode.fenced_leader_epoch
    end = share_node.logs.get(SHARE_STATE_TOPIC, share_node.share.store.partition_for(*key)).high_watermark
    assert await read(share_node, 0, leader_epoch=5) == (ErrorCode.none, -1, 7, [])
    assert share_node.logs.get(SHARE_STATE_TOPIC, share_node.share.store.partition_for(*key)).high_watermark == end
    assert await summary(share_node, 0) == (ErrorCode.none, -1, 0, 7)  # 5 was recorded already: nothing written
    assert await read(share_node, 0, leader_epoch=6) == (ErrorCode.none, -1, 7, [])
    assert await summary(share_node, 0) == (ErrorCode.none, -1, 6, 7)
    share_node.close()
    again = Node(BrokerConfig(data_dir=tmp_path / "data", kafka_version="4.1"))
    try:  # the records replayed give the same state
        assert await summary(again, 0) == (ErrorCode.none, -1, 6, 7)
        assert await read(again, 0, leader_epoch=6) == (ErrorCode.none, -1, 7, [])
    finally:
        again.close()


async def test_a_written_state_is_what_the_group_consumes_next(share_node):  # noqa: F811
    await produce(share_node, 0, b"a", b"b", b"c", b"d")
    assert await initialize(share_node, 0, 0) == (ErrorCode.none, None)
    assert await write(share_node, 0, 1, [(1, 1, ACKED, 1), (2, 2, AVAILABLE, 3)]) == ErrorCode.none
    assert acquired(await share_fetch(share_node, "m1", 0)) == [(2, 2, 4), (3, 3, 1)]


async def test_bad_partitions_and_requests(share_node):  # noqa: F811
    unknown = "This server does not host this topic-partition."
    assert await initialize(share_node, 5, 0) == (ErrorCode.unknown_topic_or_partition, unknown)
    assert await initialize(share_node, 0, 0, tid=uuid.uuid4()) == (ErrorCode.unknown_topic_or_partition, unknown)
    assert await write_answer(share_node, -1, 0) == (ErrorCode.invalid_request,
                                                     "The partition id cannot be a negative number.")
    assert await initialize(share_node, 0, 0) == (ErrorCode.none, None)
    assert await write(share_node, 0, 0, [(5, 4, AVAILABLE, 1)]) == ErrorCode.invalid_request
    assert await write(share_node, 0, 0, [(0, 1 << 20, AVAILABLE, 1)]) == ErrorCode.invalid_request
    assert await write(share_node, 0, 0, [], group="") is None  # an empty answer


async def test_a_write_may_not_leave_more_than_65536_offsets_in_flight(share_node):  # noqa: F811
    """Each batch was bounded alone: 20 of 65,536 made the broker build 1.3 million records (2 s
    of the loop, 170 MiB), a thousand would take 8 GiB. The bound holds for the state a write
    leaves, this write's batches laid over the recorded ones."""
    assert await initialize(share_node, 0, 0) == (ErrorCode.none, None)
    span = 1 << 16
    many = [(i * span, i * span + span - 1, AVAILABLE, 1) for i in range(20)]
    assert await write(share_node, 0, 0, many) == ErrorCode.invalid_request
    assert await write(share_node, 0, 0, [(0, span - 1, AVAILABLE, 1)]) == ErrorCode.none
    assert await write(share_node, 0, -1, [(span, span, AVAILABLE, 1)]) == ErrorCode.invalid_request
    assert await write(share_node, 0, -1, [(0, 0, ACKED, 1), (span, span, AVAILABLE, 1)]) == ErrorCode.none
    assert await write(share_node, 0, -1, [(span + 1, 10 * span, ARCHIVED, 1)]) == ErrorCode.none  # done: no records
    assert (await read(share_node, 0))[3][:2] == [(0, 0, ACKED, 1), (1, span - 1, AVAILABLE, 1)]


def test_combining_thousands_of_batches_cuts_each_by_the_few_it_overlaps():
    """Each current batch was cut by every newer one: 3,000 of each took 3.8 s of the loop."""
    current = tuple(sr.StateBatch(2 * i, 2 * i, ARCHIVED, 1) for i in range(5_000))
    newer = tuple(sr.StateBatch(2 * i + 1, 2 * i + 1, ACKED, 1) for i in range(5_000))
    started = time.process_time()
    combined = sr.combine(current, newer, 10)
    assert time.process_time() - started < 1.0  # 25 ms here; cutting each by all took 10 s
    assert combined[:3] == (sr.StateBatch(10, 10, ARCHIVED, 1), sr.StateBatch(11, 11, ACKED, 1),
                            sr.StateBatch(12, 12, ARCHIVED, 1))
    assert len(combined) == 10_000 - 10
    overlapping = sr.combine((sr.StateBatch(0, 9, AVAILABLE, 1), sr.StateBatch(5, 14, ARCHIVED, 2)),
                             (sr.StateBatch(3, 6, ACKED, 1), sr.StateBatch(6, 7, ACKED, 1)), 0)
    assert overlapping == (sr.StateBatch(0, 2, AVAILABLE, 1), sr.StateBatch(3, 6, ACKED, 1),
                           sr.StateBatch(6, 7, ACKED, 1), sr.StateBatch(8, 9, AVAILABLE, 1),
                           sr.StateBatch(8, 14, ARCHIVED, 2))


async def test_off_until_share_version_1(node):  # noqa: F811
    assert await write(node, 0, 0, []) == ErrorCode.coordinator_not_available


async def test_api_versions_of_kafka_4_1_include_the_share_coordinator_apis(node):  # noqa: F811
    r = await call(node, 18, 3, client_software_name="t", client_software_version="1")
    versions = {k.api_key: (k.min_version, k.max_version) for k in r.api_keys}
    assert {k: versions.get(k) for k in range(83, 88)} == {k: (0, 0) for k in range(83, 88)}


@pytest.fixture
def cluster_node(tmp_path):
    n = Node(BrokerConfig(data_dir=tmp_path / "data", kafka_version="4.1", brokers=3))
    n.logs.create_topic(TOPIC, 2)
    n.finalize_features({"share.version": 1})
    yield n
    n.close()


async def test_a_share_key_is_coordinated_by_its_state_partitions_leader(cluster_node):
    tid = topic_id(cluster_node)
    keys = [f"g{i}:{share_partition_key('', tid, 0).split(':')[1]}:0" for i in range(12)]
    r = await call(cluster_node, 10, 6, key_type=2, coordinator_keys=tuple(keys))
    assert {c.error_code for c in r.coordinators} == {ErrorCode.coordinator_not_available}  # the topic is created
    r = await call(cluster_node, 10, 6, key_type=2, coordinator_keys=tuple(keys))
    leaders = [cluster_node.cluster.state(SHARE_STATE_TOPIC, partition_for(k, 50)).leader for k in keys]
    assert [c.node_id for c in r.coordinators] == leaders and len(set(leaders)) > 1
    # a state request for a key sent to another broker is NOT_COORDINATOR
    other = next(i for i, leader in enumerate(leaders) if leader != cluster_node.config.node_id)
    m = request_module(84, 0)
    frame = encode_request(RequestHeader(84, 0, 1, "t"), make(request_class(84, 0), group_id=f"g{other}", topics=(
        m.ReadStateData(topic_id=tid, partitions=(m.PartitionData(partition=0, leader_epoch=0),)),)))
    answer = await dispatch_request(cluster_node, frame)
    got = decode_response(b"".join(bytes(p) for p in answer.parts), 84, 0)[1]
    assert got.results[0].partitions[0].error_code == ErrorCode.not_coordinator


def _bad_key_request(api_key: int, group: str, tid, partition: int):
    """A request of ``api_key`` (83-87) for one partition of ``tid``."""
    m = request_module(api_key, 0)
    data = {83: lambda: m.InitializeStateData(topic_id=tid, partitions=(
                m.PartitionData(partition=partition, state_epoch=0, start_offset=0),)),
            84: lambda: m.ReadStateData(topic_id=tid, partitions=(
                m.PartitionData(partition=partition, leader_epoch=0),)),
            85: lambda: m.WriteStateData(topic_id=tid, partitions=(m.PartitionData(
                partition=partition, state_epoch=0, leader_epoch=0, start_offset=0, state_batches=()),)),
            86: lambda: m.DeleteStateData(topic_id=tid, partitions=(m.PartitionData(partition=partition),)),
            87: lambda: m.ReadStateSummaryData(topic_id=tid, partitions=(
                m.PartitionData(partition=partition, leader_epoch=0),))}[api_key]()
    return dict(group_id=group, topics=(data,))


async def test_a_bad_key_another_broker_coordinates_is_not_coordinator(cluster_node):
    """Kafka's ShareCoordinatorService routes every key to its __share_group_state partition before
    the shard checks it: a null topic id or a negative partition is NOT_COORDINATOR on a broker not
    leading that partition, INVALID_REQUEST on the one that does."""
    await call(cluster_node, 10, 6, key_type=2, coordinator_keys=("g:x:0",))  # creates __share_group_state
    me = cluster_node.config.node_id
    zero = uuid.UUID(int=0)
    for tid, partition, message in ((None, 0, "The topic id cannot be null."),
                                    (topic_id(cluster_node), -1, "The partition id cannot be a negative number.")):
        routed = tid or zero
        leader = {g: cluster_node.cluster.coordinator(2, share_partition_key(g, routed, partition))
                  for g in (f"g{i}" for i in range(40))}
        elsewhere = next(g for g, n in leader.items() if n != me)
        here = next(g for g, n in leader.items() if n == me)
        for api_key in range(83, 88):
            got = await call(cluster_node, api_key, 0, **_bad_key_request(api_key, elsewhere, tid, partition))
            p = got.results[0].partitions[0]
            assert (api_key, p.error_code) == (api_key, ErrorCode.not_coordinator)
            got = await call(cluster_node, api_key, 0, **_bad_key_request(api_key, here, tid, partition))
            p = got.results[0].partitions[0]
            assert (api_key, p.error_code, p.error_message) == (api_key, ErrorCode.invalid_request, message)
