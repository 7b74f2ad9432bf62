"""The partition and coordinator APIs of a simulated three-broker cluster (shim.cluster), through
the dispatch seam as each broker would receive them."""

from __future__ import annotations

import datetime
import itertools

import pytest

from kafka_codecs import encode_batch
from kafka_codecs.batch import parse_header
from shim.apis.dispatch import dispatch_request
from shim.cluster import GROUP, TRANSACTION
from shim.config import BrokerConfig
from shim.errors import ErrorCode
from shim.node import Node
from shim.protocol.messages import RequestHeader, decode_response, encode_request, join_parts, request_module

_corr = itertools.count(1)
PORTS = {0: 9000, 1: 9001, 2: 9002}


@pytest.fixture
def node(tmp_path):
    n = Node(BrokerConfig(data_dir=tmp_path, brokers=3, group_initial_rebalance_delay_ms=0))
    for node_id, port in PORTS.items():
        n.bound(n.listeners[0], port, node_id)
    n.logs.create_topic("t", 3)
    n.cluster.set_replication_factor("t", 3)
    yield n
    n.close()


async def call(node, node_id, api_key, version, build):
    m = request_module(api_key, version)
    corr = next(_corr)
    answer = await dispatch_request(node, encode_request(RequestHeader(api_key, version, corr, "t"), build(m)),
                                    node_id=node_id)
    got, response = decode_response(join_parts(answer.parts), api_key, version)
    assert got == corr
    return response


async def produce(node, node_id, partition=0, version=10, values=(b"a", b"b")):
    batch = encode_batch([(None, v, (), 1_700_000_000_000) for v in values])
    r = await call(node, node_id, 0, version, lambda m: m.ProduceRequest(
        transactional_id=None, acks=1, timeout=datetime.timedelta(seconds=5),
        topic_data=(m.TopicProduceData(name="t", partition_data=(m.PartitionProduceData(index=partition, records=batch),)),)))
    return r, r.responses[0].partition_responses[0]


async def fetch(node, node_id, epoch=-1, offset=0, version=16):
    info = node.logs.topics["t"]
    r = await call(node, node_id, 1, version, lambda m: m.FetchRequest(
        cluster_id=None, replica_state=m.ReplicaState(replica_id=-1, replica_epoch=-1), max_wait=datetime.timedelta(0),
        min_bytes=1, max_bytes=1 << 20, isolation_level=0, session_id=0, session_epoch=-1, forgotten_topics_data=(),
        rack_id="", topics=(m.FetchTopic(topic_id=info.topic_id, partitions=(m.FetchPartition(
            partition=0, current_leader_epoch=epoch, fetch_offset=offset, last_fetched_epoch=-1, log_start_offset=-1,
            partition_max_bytes=1 << 20),)),)))
    return r, r.responses[0].partitions[0]


async def test_metadata_lists_every_broker_and_each_partitions_leader_replicas_and_isr(node):
    r = await call(node, 1, 3, 12, lambda m: m.MetadataRequest(
        topics=(m.MetadataRequestTopic(topic_id=None, name="t"),), allow_auto_topic_creation=False,
        include_topic_authorized_operations=False))
    assert [(b.node_id, b.port) for b in r.brokers] == [(0, 9000), (1, 9001), (2, 9002)]
    parts = sorted(r.topics[0].partitions, key=lambda p: p.partition_index)
    assert [p.leader_id for p in parts] == [0, 1, 2]
    assert [tuple(p.replica_nodes) for p in parts] == [(0, 1, 2), (1, 2, 0), (2, 0, 1)]
    assert all(sorted(p.isr_nodes) == [0, 1, 2] and p.leader_epoch == 0 for p in parts)


async def test_a_node_down_is_left_out_and_its_replicas_are_offline(node):
    node.cluster.node_down(0, 0)
    r = await call(node, 1, 3, 12, lambda m: m.MetadataRequest(
        topics=(m.MetadataRequestTopic(topic_id=None, name="t"),), allow_auto_topic_creation=False,
        include_topic_authorized_operations=False))
    assert [b.node_id for b in r.brokers] == [1, 2] and r.controller_id == 1
    p0 = next(p for p in r.topics[0].partitions if p.partition_index == 0)
    assert (p0.leader_id, p0.leader_epoch, tuple(p0.offline_replicas)) == (1, 1, (0,))
    assert 0 not in p0.isr_nodes


async def test_produce_to_a_follower_is_not_leader_with_the_leaders_address(node):
    r, p = await produce(node, 1)
    assert p.error_code == ErrorCode.not_leader_or_follower
    assert (p.current_leader.leader_id, p.current_leader.leader_epoch) == (0, 0)  # KIP-951
    assert [(e.node_id, e.port) for e in r.node_endpoints] == [(0, 9000)]
    assert node.logs.get("t", 0).log_end_offset == 0
    _, p = await produce(node, 0)
    assert (p.error_code, p.base_offset) == (ErrorCode.none, 0)


async def test_batches_carry_the_leader_epoch_they_were_written_in(node):
    await produce(node, 0)
    node.cluster.move_leader("t", 0, 2, 0)
    _, p = await produce(node, 2)
    assert p.error_code == ErrorCode.none
    epochs = [parse_header(b).partition_leader_epoch for b in node.logs.get("t", 0).iter_batches()]
    assert epochs == [0, 1]


async def test_fetch_checks_the_leader_and_its_epoch(node):
    await produce(node, 0)
    node.cluster.move_leader("t", 0, 1, 0)
    _, p = await fetch(node, 0)
    assert p.error_code == ErrorCode.not_leader_or_follower
    assert (p.current_leader.leader_id, p.current_leader.leader_epoch) == (1, 1)
    r, p = await fetch(node, 1, epoch=0)
    assert p.error_code == ErrorCode.fenced_leader_epoch and p.current_leader.leader_id == 1
    assert [e.node_id for e in r.node_endpoints] == [1]
    _, p = await fetch(node, 1, epoch=2)
    assert p.error_code == ErrorCode.unknown_leader_epoch
    _, p = await fetch(node, 1, epoch=1)
    assert p.error_code == ErrorCode.none and p.high_watermark == 2 and len(p.records) > 0


async def test_a_fetch_error_carries_unknown_offsets(node):
    """Kafka's readFromLog answers every failed read with a LogReadResult of unknown offsets: no
    high watermark, last stable or log start offset leaks with NOT_LEADER_OR_FOLLOWER,
    FENCED_LEADER_EPOCH or OFFSET_OUT_OF_RANGE."""
    await produce(node, 0)
    _, p = await fetch(node, 0, offset=5)
    assert (p.error_code, p.high_watermark, p.last_stable_offset, p.log_start_offset) == (
        ErrorCode.offset_out_of_range, -1, -1, -1)
    node.cluster.move_leader("t", 0, 1, 0)
    _, p = await fetch(node, 0)
    assert (p.error_code, p.high_watermark, p.last_stable_offset, p.log_start_offset) == (
        ErrorCode.not_leader_or_follower, -1, -1, -1)
    _, p = await fetch(node, 1, epoch=0)
    assert (p.error_code, p.high_watermark, p.last_stable_offset, p.log_start_offset) == (
        ErrorCode.fenced_leader_epoch, -1, -1, -1)
    _, p = await fetch(node, 1, epoch=1)
    assert (p.error_code, p.high_watermark, p.log_start_offset) == (ErrorCode.none, 2, 0)


async def test_a_slowed_follower_holds_the_high_watermark_of_fetch(node):
    await produce(node, 0)
    node.cluster.slow_follower("t", 0, 1, 0)
    await produce(node, 0)
    _, p = await fetch(node, 0)
    assert p.high_watermark == 2 and node.logs.get("t", 0).log_end_offset == 4
    _, p = await fetch(node, 0, offset=2)
    assert p.error_code == ErrorCode.none and len(p.records) == 0
    node.cluster.unslow_follower("t", 0, 1, 0)
    _, p = await fetch(node, 0, offset=2)
    assert p.high_watermark == 4 and len(p.records) > 0


async def test_offset_for_leader_epoch_answers_from_the_epoch_cache(node):
    await produce(node, 0)  # epoch 0: offsets 0-1
    node.cluster.move_leader("t", 0, 1, 0)
    await produce(node, 1, values=(b"c", b"d", b"e"))  # epoch 1: offsets 2-4

    async def ask(node_id, leader_epoch, current=-1):
        r = await call(node, node_id, 23, 4, lambda m: m.OffsetForLeaderEpochRequest(replica_id=-1, topics=(
            m.OffsetForLeaderTopic(topic="t", partitions=(m.OffsetForLeaderPartition(
                partition=0, current_leader_epoch=current, leader_epoch=leader_epoch),)),)))
        p = r.topics[0].partitions[0]
        return p.error_code, p.leader_epoch, p.end_offset

    assert await ask(1, 0) == (ErrorCode.none, 0, 2)
    assert await ask(1, 1) == (ErrorCode.none, 1, 5)
    assert await ask(1, 2) == (ErrorCode.none, -1, -1)
    assert (await ask(0, 0))[0] == ErrorCode.not_leader_or_follower
    assert (await ask(1, 0, current=0))[0] == ErrorCode.fenced_leader_epoch


async def test_list_offsets_and_delete_records_are_for_the_leader(node):
    await produce(node, 0)

    async def latest(node_id):
        r = await call(node, node_id, 2, 8, lambda m: m.ListOffsetsRequest(replica_id=-1, isolation_level=0, topics=(
            m.ListOffsetsTopic(name="t", partitions=(
                m.ListOffsetsPartition(partition_index=0, current_leader_epoch=-1, timestamp=-1),)),)))
        p = r.topics[0].partitions[0]
        return p.error_code, p.offset, p.leader_epoch

    assert await latest(2) == (ErrorCode.not_leader_or_follower, -1, -1)
    node.cluster.move_leader("t", 0, 2, 0)
    assert await latest(2) == (ErrorCode.none, 2, 1)
    r = await call(node, 0, 21, 2, lambda m: m.DeleteRecordsRequest(timeout=datetime.timedelta(seconds=5), topics=(
        m.DeleteRecordsTopic(name="t", partitions=(m.DeleteRecordsPartition(partition_index=0, offset=1),)),)))
    assert r.topics[0].partitions[0].error_code == ErrorCode.not_leader_or_follower


async def test_list_offsets_answers_the_epoch_each_offset_was_written_in(node):
    """Kafka: LATEST carries the leader's current epoch; EARLIEST, a timestamp and MAX_TIMESTAMP the
    epoch of the batch found (UnifiedLog.fetchOffsetByTimestamp), which a consumer's position
    validation (OffsetForLeaderEpoch) then asks about."""
    await produce(node, 0, values=(b"a", b"b"))  # offsets 0-1 in epoch 0, stamped 1_700_000_000_000
    node.cluster.move_leader("t", 0, 2, 0)
    late = encode_batch([(None, b"c", (), 1_700_000_009_000)])
    r = await call(node, 2, 0, 10, lambda m: m.ProduceRequest(
        transactional_id=None, acks=1, timeout=datetime.timedelta(seconds=5),
        topic_data=(m.TopicProduceData(name="t", partition_data=(m.PartitionProduceData(index=0, records=late),)),)))
    assert r.responses[0].partition_responses[0].error_code == ErrorCode.none  # offset 2, epoch 1

    async def lookup(timestamp):
        r = await call(node, 2, 2, 8, lambda m: m.ListOffsetsRequest(replica_id=-1, isolation_level=0, topics=(
            m.ListOffsetsTopic(name="t", partitions=(
                m.ListOffsetsPartition(partition_index=0, current_leader_epoch=-1, timestamp=timestamp),)),)))
        p = r.topics[0].partitions[0]
        return p.error_code, p.offset, p.leader_epoch

    assert await lookup(-1) == (ErrorCode.none, 3, 1)  # LATEST
    assert await lookup(-2) == (ErrorCode.none, 0, 0)  # EARLIEST
    assert await lookup(1_700_000_000_000) == (ErrorCode.none, 0, 0)
    assert await lookup(-3) == (ErrorCode.none, 2, 1)  # MAX_TIMESTAMP


async def test_coordinators_are_found_where_keys_hash_and_refuse_elsewhere(node):
    group, txn = "g-1", "tx-1"
    find = lambda m: m.FindCoordinatorRequest(key_type=GROUP, coordinator_keys=(group,))  # noqa: E731
    r = await call(node, 0, 10, 4, find)
    assert r.coordinators[0].error_code == ErrorCode.coordinator_not_available  # __consumer_offsets is created
    r = await call(node, 0, 10, 4, find)
    coordinator = r.coordinators[0].node_id
    assert coordinator == node.cluster.coordinator(GROUP, group)
    assert r.coordinators[0].port == PORTS[coordinator]
    elsewhere = (coordinator + 1) % 3
    r = await call(node, elsewhere, 12, 4, lambda m: m.HeartbeatRequest(
        group_id=group, generation_id=1, member_id="m", group_instance_id=None))
    assert r.error_code == ErrorCode.not_coordinator
    r = await call(node, coordinator, 12, 4, lambda m: m.HeartbeatRequest(
        group_id=group, generation_id=1, member_id="m", group_instance_id=None))
    assert r.error_code == ErrorCode.unknown_member_id  # this one coordinates it
    node.cluster.move_coordinator(GROUP, group, elsewhere, 0)
    r = await call(node, coordinator, 12, 4, lambda m: m.HeartbeatRequest(
        group_id=group, generation_id=1, member_id="m", group_instance_id=None))
    assert r.error_code == ErrorCode.not_coordinator

    txn_node = node.cluster.coordinator(TRANSACTION, txn)
    init = lambda m: m.InitProducerIdRequest(  # noqa: E731
        transactional_id=txn, transaction_timeout=datetime.timedelta(seconds=60), producer_id=-1, producer_epoch=-1)
    assert (await call(node, (txn_node + 1) % 3, 22, 4, init)).error_code == ErrorCode.not_coordinator
    assert (await call(node, txn_node, 22, 4, init)).error_code == ErrorCode.none


async def produce_all(node, node_id, timeout_ms):
    batch = encode_batch([(None, b"v", (), 1_700_000_000_000)])
    r = await call(node, node_id, 0, 9, lambda m: m.ProduceRequest(
        transactional_id=None, acks=-1, timeout=datetime.timedelta(milliseconds=timeout_ms),
        topic_data=(m.TopicProduceData(name="t", partition_data=(m.PartitionProduceData(index=0, records=batch),)),)))
    return r.responses[0].partition_responses[0]


async def test_acks_all_times_out_while_a_slowed_follower_holds_the_high_watermark(node):
    node.cluster.slow_follower("t", 0, 1, 0)
    p = await produce_all(node, 0, 50)
    assert p.error_code == ErrorCode.request_timed_out
    assert node.logs.get("t", 0).log_end_offset == 1 and node.logs.get("t", 0).high_watermark == 0
    node.cluster.unslow_follower("t", 0, 1, 0)
    p = await produce_all(node, 0, 5000)
    assert (p.error_code, p.base_offset) == (ErrorCode.none, 1)


async def test_acks_all_is_answered_when_the_isr_drops_the_slowed_follower(node):
    import asyncio

    node.cluster.slow_follower("t", 0, 2, 0)
    pending = asyncio.ensure_future(produce_all(node, 0, 30_000))
    while node.logs.get("t", 0).log_end_offset == 0:  # appended, now waiting for the high watermark
        await asyncio.sleep(0)
    assert not pending.done()
    node.cluster.replica_lag_time_max_ms = 0
    node.cluster.tick(1 << 50)  # the follower has been behind for longer than replica.lag.time.max.ms
    assert 2 not in node.cluster.state("t", 0).isr
    p = await pending
    assert (p.error_code, p.base_offset) == (ErrorCode.none, 0)


async def test_acks_all_needs_min_insync_replicas_in_the_isr(node):
    node.logs.set_topic_configs("t", {"min.insync.replicas": "3"})
    assert (await produce_all(node, 0, 1000)).error_code == ErrorCode.none
    node.cluster.node_down(2, 0)
    leader = node.cluster.state("t", 0).leader
    assert (await produce_all(node, leader, 1000)).error_code == ErrorCode.not_enough_replicas
    assert node.logs.get("t", 0).log_end_offset == 1  # refused before the append


async def test_each_broker_describes_its_own_broker_configs(node):
    async def describe(node_id, resource_name):
        r = await call(node, node_id, 32, 4, lambda m: m.DescribeConfigsRequest(resources=(m.DescribeConfigsResource(
            resource_type=4, resource_name=resource_name, configuration_keys=("node.id",)),),
            include_synonyms=False, include_documentation=False))
        return r.results[0].error_code

    assert await describe(1, "1") == ErrorCode.none
    assert await describe(0, "1") == ErrorCode.invalid_request  # Kafka: only the broker itself describes it


async def test_a_broker_describes_its_own_id_and_listeners(node):
    node.bound(node.listeners[0], 9101, 1)
    r = await call(node, 1, 32, 4, lambda m: m.DescribeConfigsRequest(resources=(m.DescribeConfigsResource(
        resource_type=4, resource_name="1", configuration_keys=("node.id", "listeners")),),
        include_synonyms=False, include_documentation=False))
    assert {c.name: c.value for c in r.results[0].configs} == {"node.id": "1", "listeners": "PLAINTEXT://127.0.0.1:9101"}


async def test_create_partitions_gives_new_partitions_their_manual_assignments_in_order(node):
    """librdkafka's 0081_admin (do_test_CreatePartitions) reads each new partition's replicas back
    from Metadata in the order it asked for."""
    def grow(m):
        return m.CreatePartitionsRequest(topics=(m.CreatePartitionsTopic(name="t", count=5, assignments=(
            m.CreatePartitionsAssignment(broker_ids=(2, 1, 0)), m.CreatePartitionsAssignment(broker_ids=(1, 0, 2)))),),
            timeout=datetime.timedelta(seconds=5), validate_only=False)
    r = await call(node, 0, 37, 3, grow)
    assert r.results[0].error_code == ErrorCode.none
    m = await call(node, 1, 3, 12, lambda m: m.MetadataRequest(
        topics=(m.MetadataRequestTopic(topic_id=None, name="t"),), allow_auto_topic_creation=False,
        include_topic_authorized_operations=False))
    parts = {p.partition_index: p for p in m.topics[0].partitions}
    assert [tuple(parts[i].replica_nodes) for i in (3, 4)] == [(2, 1, 0), (1, 0, 2)]
    assert [parts[i].leader_id for i in (3, 4)] == [2, 1]


def _stable_member(node, group: str, now: int, session_ms: int = 10_000) -> str:
    """One classic member joins ``group`` and syncs its assignment at ``now``; returns its id."""
    gc = node.groups
    join = lambda member_id: gc.join_group(  # noqa: E731
        group, member_id, None, "consumer", [("range", b"")], session_timeout_ms=session_ms,
        rebalance_timeout_ms=30_000, now_ms=now, require_known_member_id=bool(member_id == ""))
    member_id = join("").result.member_id  # MEMBER_ID_REQUIRED, then the join proper
    joined = join(member_id).result
    assert joined.error == ErrorCode.none
    synced = gc.sync_group(group, joined.generation_id, member_id, None, {member_id: b"a"}, now_ms=now).result
    assert synced.error == ErrorCode.none
    return member_id


def test_a_coordinator_move_restarts_the_sessions_of_the_groups_it_takes(node):
    """Kafka: onElection loads the partition's groups and onGroupLoaded schedules each member's
    heartbeat expiry a full session from then -- the members could not reach a coordinator while it
    moved. A group of another offsets partition keeps its deadline."""
    t0 = 1_700_000_000_000
    moved, other = "g-moved", "g-other"
    assert node.cluster.coordinator_partition(GROUP, moved) != node.cluster.coordinator_partition(GROUP, other)
    member = _stable_member(node, moved, t0)
    bystander = _stable_member(node, other, t0)
    coordinator = node.cluster.coordinator(GROUP, moved)
    node.cluster.move_coordinator(GROUP, moved, (coordinator + 1) % 3, t0 + 8_000)
    node.groups.tick(t0 + 10_000)
    assert node.groups.groups[other].members == {}  # its session ran out at t0 + 10 s
    assert list(node.groups.groups[moved].members) == [member]  # restarted at the move
    node.groups.tick(t0 + 17_999)
    assert list(node.groups.groups[moved].members) == [member]
    node.groups.tick(t0 + 18_000)
    assert node.groups.groups[moved].members == {}


def _join(node, group: str, member_id: str, now: int):
    return node.groups.join_group(group, member_id, None, "consumer", [("range", b"")], session_timeout_ms=10_000,
                                  rebalance_timeout_ms=30_000, now_ms=now, require_known_member_id=member_id == "")


def test_a_coordinator_move_answers_a_parked_join_not_coordinator_and_reloads_the_written_generation(node):
    """Kafka: onUnloaded completes the join futures of a rebalancing group with NOT_COORDINATOR;
    the new coordinator loads the group as last written -- the generation its members synced."""
    t0 = 1_700_000_000_000
    group = "g-parked-join"
    first = _stable_member(node, group, t0)
    second = _join(node, group, "", t0).result.member_id  # MEMBER_ID_REQUIRED
    parked = _join(node, group, second, t0 + 1)  # the rebalance waits for the first member to rejoin
    assert not parked.done
    assert node.groups.groups[group].state.value == "PreparingRebalance"
    coordinator = node.cluster.coordinator(GROUP, group)
    node.cluster.move_coordinator(GROUP, group, (coordinator + 1) % 3, t0 + 2)
    assert parked.done and parked.result.error == ErrorCode.not_coordinator
    reloaded = node.groups.groups[group]
    assert (reloaded.state.value, reloaded.generation_id, list(reloaded.members)) == ("Stable", 1, [first])
    assert reloaded.members[first].assignment == b"a"
    # the second member asks the new coordinator again: unknown there, it joins afresh
    assert _join(node, group, second, t0 + 3).result.error == ErrorCode.unknown_member_id


def test_a_coordinator_move_answers_a_parked_sync_not_coordinator(node):
    """A follower's SyncGroup waits for the leader's; the move answers it NOT_COORDINATOR and the
    group is back to the generation last written, whose members rejoin."""
    t0 = 1_700_000_000_000
    group = "g-parked-sync"
    leader = _stable_member(node, group, t0)
    follower = _join(node, group, "", t0).result.member_id
    follower_join = _join(node, group, follower, t0)
    leader_join = _join(node, group, leader, t0)
    assert follower_join.result.error == leader_join.result.error == ErrorCode.none
    generation = leader_join.result.generation_id
    parked = node.groups.sync_group(group, generation, follower, None, {}, now_ms=t0 + 1)
    assert not parked.done
    coordinator = node.cluster.coordinator(GROUP, group)
    node.cluster.move_coordinator(GROUP, group, (coordinator + 1) % 3, t0 + 2)
    assert parked.done and parked.result.error == ErrorCode.not_coordinator
    reloaded = node.groups.groups[group]
    assert (reloaded.state.value, reloaded.generation_id) == ("Stable", generation - 1)
    late = node.groups.sync_group(group, generation, leader, None, {leader: b"x", follower: b"y"}, now_ms=t0 + 3)
    assert late.result.error == ErrorCode.illegal_generation


def test_a_move_forgets_a_group_that_never_wrote_anything(node):
    """A first generation whose leader has not synced was never written: the new coordinator does
    not know the group, and the leader's SyncGroup there is UNKNOWN_MEMBER_ID (it joins again)."""
    t0 = 1_700_000_000_000
    group = "g-never-written"
    member = _join(node, group, "", t0).result.member_id
    joined = _join(node, group, member, t0).result  # no initial delay: generation 1 at once
    assert node.groups.groups[group].state.value == "CompletingRebalance"
    coordinator = node.cluster.coordinator(GROUP, group)
    node.cluster.move_coordinator(GROUP, group, (coordinator + 1) % 3, t0 + 1)
    assert group not in node.groups.groups
    sync = node.groups.sync_group(group, joined.generation_id, member, None, {member: b"a"}, now_ms=t0 + 2)
    assert sync.result.error == ErrorCode.unknown_member_id


async def test_a_join_request_parked_at_the_old_coordinator_is_answered_not_coordinator(node):
    """Through the JoinGroup API as a broker serves it: the long-poll returns at the move."""
    import asyncio

    t0 = 1_700_000_000_000
    group = "g-parked-request"
    _stable_member(node, group, t0)
    coordinator = node.cluster.coordinator(GROUP, group)
    second = _join(node, group, "", t0).result.member_id
    request = asyncio.ensure_future(call(node, coordinator, 11, 9, lambda m: m.JoinGroupRequest(
        group_id=group, session_timeout=datetime.timedelta(seconds=10), rebalance_timeout=datetime.timedelta(seconds=30),
        member_id=second, group_instance_id=None, protocol_type="consumer", reason=None,
        protocols=(m.JoinGroupRequestProtocol(name="range", metadata=b""),))))
    while node.groups.groups[group].members.get(second) is None:
        await asyncio.sleep(0)
    assert not request.done()
    node.cluster.move_coordinator(GROUP, group, (coordinator + 1) % 3, t0 + 1)
    r = await asyncio.wait_for(request, 5)
    assert r.error_code == ErrorCode.not_coordinator


async def test_after_a_move_the_old_coordinator_refuses_commits_and_syncs_and_the_new_one_takes_them(node):
    """Kafka: a broker that no longer leads the group's offsets partition answers NOT_COORDINATOR to
    every group request; the member's commit goes through at the new coordinator, at the generation
    the new coordinator loaded."""
    t0 = 1_700_000_000_000
    group = "g-commits"
    member = _stable_member(node, group, t0)
    old = node.cluster.coordinator(GROUP, group)
    new = (old + 1) % 3
    node.cluster.move_coordinator(GROUP, group, new, t0 + 1)

    def commit(m):
        return m.OffsetCommitRequest(group_id=group, generation_id_or_member_epoch=1, member_id=member,
                                     group_instance_id=None, topics=(m.OffsetCommitRequestTopic(name="t", partitions=(
                                         m.OffsetCommitRequestPartition(partition_index=0, committed_offset=7,
                                                                        committed_leader_epoch=-1,
                                                                        committed_metadata=""),)),))

    r = await call(node, old, 8, 8, commit)
    assert r.topics[0].partitions[0].error_code == ErrorCode.not_coordinator
    r = await call(node, old, 14, 5, lambda m: m.SyncGroupRequest(
        group_id=group, generation_id=1, member_id=member, group_instance_id=None, protocol_type="consumer",
        protocol_name="range", assignments=()))
    assert r.error_code == ErrorCode.not_coordinator
    r = await call(node, new, 8, 8, commit)
    assert r.topics[0].partitions[0].error_code == ErrorCode.none
    committed = node.groups.fetch_offsets(group, False, [("t", 0)])
    assert [c.offset for _, c, _ in committed] == [7]


@pytest.mark.parametrize("include_fenced", [False, True])
async def test_describe_cluster_v2_lists_the_fenced_brokers_when_asked(tmp_path, include_fenced):
    """KIP-1073 (Kafka 4.0): DescribeCluster v2's IncludeFencedBrokers; a broker down is fenced."""
    node = Node(BrokerConfig(data_dir=tmp_path, brokers=3, kafka_version="4.0"))
    node.cluster.node_down(1, 0)
    r = await call(node, 0, 60, 2, lambda m: m.DescribeClusterRequest(
        include_cluster_authorized_operations=False, endpoint_type=1, include_fenced_brokers=include_fenced))
    expected = [(0, False), (1, True), (2, False)] if include_fenced else [(0, False), (2, False)]
    assert [(b.broker_id, b.is_fenced) for b in r.brokers] == expected
    node.close()
