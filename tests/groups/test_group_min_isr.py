"""The group coordinator's writes honour ``__consumer_offsets``' min.insync.replicas in a simulated
cluster. Kafka creates the offsets topic without a min.insync.replicas of its own
(GroupCoordinatorService.groupMetadataTopicConfigs), so the broker's applies; every write of the
coordinator is an acks=all append, refused with NOT_ENOUGH_REPLICAS while the partition's ISR is
smaller, which each API answers as Kafka maps it: COORDINATOR_NOT_AVAILABLE for OffsetCommit,
TxnOffsetCommit, SyncGroup, ConsumerGroupHeartbeat and ShareGroupHeartbeat."""

from __future__ import annotations

import uuid

from shim.coordinators.group.consumer_coordinator import HeartbeatRequest
from shim.coordinators.txn.coordinator import OFFSETS_TOPIC

from group_helpers import E, T0, TOPIC, fetched, form_group, join, offsets, sync

GROUP = "g"


def three_brokers(nodes, min_isr="2"):
    node = nodes(brokers=3, extra={"min.insync.replicas": min_isr})
    node.logs.create_topic(TOPIC, 6)
    return node


def below_min_isr(node, group=GROUP) -> int:
    """Take down both followers of ``group``'s offsets partition (its leader stays); returns the partition."""
    node.logs.ensure_topic(OFFSETS_TOPIC, node.txn.offsets_partitions)
    p = node.groups.store.partition_for(group)
    s = node.cluster.state(OFFSETS_TOPIC, p)
    for n in [r for r in s.replicas if r != s.leader]:
        node.cluster.node_down(n, T0)
    assert node.cluster.state(OFFSETS_TOPIC, p).isr == (s.leader,)
    return p


def restore(node) -> None:
    for n in sorted(node.cluster.down):
        node.cluster.node_up(n, T0)


def log_end(node, group=GROUP) -> int:
    return node.logs.get(OFFSETS_TOPIC, node.groups.store.partition_for(group)).log_end_offset


def test_the_offsets_topic_takes_the_brokers_min_insync_replicas(nodes):
    node = three_brokers(nodes)
    node.logs.ensure_topic(OFFSETS_TOPIC, node.txn.offsets_partitions)
    assert "min.insync.replicas" not in node.logs.topics[OFFSETS_TOPIC].configs
    assert node.logs.get(OFFSETS_TOPIC, 0).config.min_insync_replicas == 2


def test_offset_commit_below_min_isr_is_coordinator_not_available_until_the_isr_is_back(nodes):
    node = three_brokers(nodes)
    gc = node.groups
    below_min_isr(node)
    end = log_end(node)
    assert gc.commit_offsets(GROUP, "", None, -1, offsets((0, 5), (1, 7)), T0) == {
        (TOPIC, 0): E.coordinator_not_available, (TOPIC, 1): E.coordinator_not_available}
    assert log_end(node) == end  # nothing written
    assert fetched(gc, partitions=[(TOPIC, 0)]) == {(TOPIC, 0): -1}
    restore(node)
    assert gc.commit_offsets(GROUP, "", None, -1, offsets((0, 5)), T0) == {(TOPIC, 0): E.none}
    assert fetched(gc, partitions=[(TOPIC, 0)]) == {(TOPIC, 0): 5}


def test_the_default_min_isr_of_one_keeps_a_lone_leader_writing(nodes):
    node = three_brokers(nodes, min_isr="1")
    below_min_isr(node)
    assert node.groups.commit_offsets(GROUP, "", None, -1, offsets((0, 5)), T0) == {(TOPIC, 0): E.none}


def test_txn_offset_commit_below_min_isr_is_coordinator_not_available(nodes):
    node = three_brokers(nodes)
    txn, gc = node.txn, node.groups
    pid, epoch = txn.init_producer_id("tx", 60_000, -1, -1, T0)
    txn.add_offsets("tx", pid, epoch, GROUP, T0)
    below_min_isr(node)
    assert gc.commit_txn_offsets(GROUP, "tx", pid, epoch, "", None, -1, offsets((0, 3)), T0) == {
        (TOPIC, 0): E.coordinator_not_available}
    restore(node)
    assert gc.commit_txn_offsets(GROUP, "tx", pid, epoch, "", None, -1, offsets((0, 3)), T0) == {(TOPIC, 0): E.none}


def test_a_leaders_sync_below_min_isr_fails_the_generation_with_coordinator_not_available(nodes):
    """Kafka: the SyncGroup append's error goes to every member (resetAndPropagateAssignmentWithError)
    and the group rebalances again."""
    node = three_brokers(nodes)
    gc = node.groups
    gc.initial_rebalance_delay_ms = 0
    first = join(gc)
    gc.tick(T0)
    member, generation = first.result.member_id, first.result.generation_id
    below_min_isr(node)
    end = log_end(node)
    s = sync(gc, member, generation, {member: b"a"})
    assert s.done and s.result.error == E.coordinator_not_available
    assert log_end(node) == end
    assert gc.groups[GROUP].state.name == "PREPARING_REBALANCE"
    restore(node)
    again = join(gc, member_id=member)
    gc.tick(T0 + 1)
    assert again.done and again.result.error == E.none
    s = sync(gc, member, again.result.generation_id, {member: b"a"}, now=T0 + 1)
    assert s.done and s.result.error == E.none
    assert s.result.assignment == b"a"


def test_a_static_member_rejoining_a_stable_group_below_min_isr_is_coordinator_not_available(nodes):
    node = three_brokers(nodes)
    gc = node.groups
    (leader,), generation = form_group(gc, 1, instance_id="i-1")
    below_min_isr(node)
    j = join(gc, instance_id="i-1", now=T0 + 7_000)
    assert j.done and j.result.error == E.coordinator_not_available
    assert list(gc.groups[GROUP].members) == [leader]  # the old member id keeps its place


def consumer_join(gc, member):
    return gc.consumer.heartbeat(HeartbeatRequest(GROUP, member, 0, rebalance_timeout_ms=30_000,
                                                  subscribed_topic_names=(TOPIC,), owned={}), T0)


def test_consumer_group_heartbeat_below_min_isr_is_coordinator_not_available(nodes):
    node = three_brokers(nodes)
    gc = node.groups
    below_min_isr(node)
    member = str(uuid.uuid4())
    r = consumer_join(gc, member)
    assert (r.error, r.message) == (E.coordinator_not_available, None)  # Kafka: handleOperationException's null
    assert GROUP not in gc.consumer.groups  # the group the heartbeat created goes with its records
    restore(node)
    r = consumer_join(gc, member)
    assert (r.error, r.member_epoch) == (E.none, 1)


def test_share_group_heartbeat_below_min_isr_is_coordinator_not_available(nodes):
    node = three_brokers(nodes)
    below_min_isr(node)
    member = str(uuid.uuid4())
    end = log_end(node)

    def heartbeat():
        return node.share.heartbeat(GROUP, member, 0, (TOPIC,), None, ("c", "/127.0.0.1"), T0)

    try:
        heartbeat()
    except Exception as e:  # noqa: BLE001 - the KafkaError the API answers
        assert (getattr(e, "code", None), getattr(e, "message", "")) == (E.coordinator_not_available, None), e
    else:
        raise AssertionError("the share group heartbeat was not refused")
    assert log_end(node) == end
    assert GROUP not in node.share.groups  # the group the heartbeat created goes with its records
    restore(node)
    heartbeat()
    assert member in node.share.groups[GROUP].members


def test_markers_to_an_offsets_partition_below_min_isr_wait_until_it_is_back(nodes):
    """Kafka writes markers with acks=all and its marker channel retries NOT_ENOUGH_REPLICAS: the
    transaction stays PrepareCommit, its offsets pending (UNSTABLE_OFFSET_COMMIT to a stable
    OffsetFetch), until the ISR is back. __transaction_state itself keeps writing (min ISR 1)."""
    from shim.coordinators.txn.state import TxnState

    node = nodes(brokers=3, extra={"min.insync.replicas": "2", "transaction.state.log.min.isr": "1"})
    node.logs.create_topic(TOPIC, 6)
    txn, gc = node.txn, node.groups
    pid, epoch = txn.init_producer_id("tx", 60_000, -1, -1, T0)
    txn.add_offsets("tx", pid, epoch, GROUP, T0)
    assert gc.commit_txn_offsets(GROUP, "tx", pid, epoch, "", None, -1, offsets((0, 3)), T0) == {(TOPIC, 0): E.none}
    below_min_isr(node)
    txn.end_txn("tx", pid, epoch, True, T0)
    txn.tick(T0 + 60_000)
    assert txn.txns["tx"].state is TxnState.PREPARE_COMMIT
    assert fetched(gc, partitions=[(TOPIC, 0)], stable=True) == {(TOPIC, 0): E.unstable_offset_commit}
    restore(node)
    txn.tick(T0 + 120_000)
    assert txn.txns["tx"].state is TxnState.COMPLETE_COMMIT
    assert fetched(gc, partitions=[(TOPIC, 0)], stable=True) == {(TOPIC, 0): 3}
