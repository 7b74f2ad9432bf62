"""Committed-offset expiration (KIP-211; Kafka: OffsetMetadataManager.cleanupExpiredOffsets and
each group type's offsetExpirationCondition), with the fake clock: which offsets expire when, the
group deleted with its last one, tombstones a restart agrees with, and the retention check timer."""

from __future__ import annotations

import struct

import pytest

from group_helpers import T0, TOPIC, E, call, fetched, form_group, join, offsets, sync
from shim.coordinators.group import GroupState, OffsetAndMetadata
from shim.coordinators.group.consumer_coordinator import HeartbeatRequest
from shim.control.ops import call as control
from shim.node import now_ms
from shim.errors import KafkaError
from shim.apis.dispatch import dispatch
from shim.protocol.messages import RequestHeader, decode_response, encode_request, make, request_module

S = GroupState
MINUTE = 60_000
RETENTION = 5 * MINUTE
INTERVAL = 1_000
TP0, TP1 = (TOPIC, 0), (TOPIC, 1)


@pytest.fixture
def node(nodes):
    n = nodes(offsets_retention_minutes=5, offsets_retention_check_interval_ms=INTERVAL)
    n.logs.create_topic(TOPIC, 6)
    n.logs.create_topic("other", 2)
    return n


def commit(gc, group, pairs, now, *, member="", generation=-1, topic=TOPIC, expire=-1):
    return gc.commit_offsets(group, member, None, generation,
                             {(topic, p): OffsetAndMetadata(o, -1, "", now, expire) for p, o in pairs}, now)


def listed(gc):
    return {g for g, *_ in gc.list_groups()}


def restarted(nodes, node):
    nodes.crash(node)
    return nodes(offsets_retention_minutes=5).groups


def test_the_broker_properties_set_retention_and_check_interval(node, nodes):
    assert (node.groups.expiration.retention_ms, node.groups.expiration.check_interval_ms) == (RETENTION, INTERVAL)
    default = nodes().groups.expiration
    assert (default.retention_ms, default.check_interval_ms) == (10_080 * MINUTE, 600_000)


def test_a_standalone_commit_expires_by_its_commit_time_and_its_group_goes(nodes, node, gc):
    commit(gc, "solo", [(0, 5)], T0)
    commit(gc, "solo", [(1, 6)], T0 + MINUTE)
    assert gc.expiration.cleanup(T0 + RETENTION - 1).expired_offsets == []
    got = gc.expiration.cleanup(T0 + RETENTION)
    assert (got.expired_offsets, got.deleted_groups) == ([f"solo/{TOPIC}/0"], [])
    assert fetched(gc, "solo", [TP0, TP1]) == {TP0: -1, TP1: 6}
    got = gc.expiration.cleanup(T0 + MINUTE + RETENTION)
    assert (got.expired_offsets, got.deleted_groups) == ([f"solo/{TOPIC}/1"], ["solo"])
    assert "solo" not in listed(gc) and gc.describe_group("solo")[1].state == "Dead"
    gc = restarted(nodes, node)  # the tombstones are in __consumer_offsets
    assert "solo" not in gc.groups and fetched(gc, "solo", [TP0, TP1]) == {TP0: -1, TP1: -1}


def test_a_stable_group_keeps_its_offsets_and_an_empty_one_counts_from_when_it_emptied(nodes, node, gc):
    (leader,), gen = form_group(gc, 1)
    commit(gc, "g", [(0, 10)], T0 + 6_000, member=leader, generation=gen)
    assert gc.expiration.cleanup(T0 + 100 * RETENTION).expired_offsets == []  # Stable, subscribed to the topic
    left = T0 + 100 * RETENTION
    gc.leave_group("g", [(leader, None)], left)
    assert gc.groups["g"].state is S.EMPTY
    assert gc.expiration.cleanup(left + RETENTION - 1).expired_offsets == []  # the commit is long past: not what counts
    got = gc.expiration.cleanup(left + RETENTION)
    assert (got.expired_offsets, got.deleted_groups) == ([f"g/{TOPIC}/0"], ["g"])
    assert "g" not in listed(gc) and fetched(gc, "g", [TP0]) == {TP0: -1}
    gc = restarted(nodes, node)  # the group's own tombstone too: it does not come back Empty
    assert "g" not in gc.groups and "g" not in listed(gc)


def test_an_empty_group_whose_state_time_is_unknown_counts_from_the_commit(gc):
    (leader,), gen = form_group(gc, 1)
    commit(gc, "g", [(0, 10)], T0 + 6_000, member=leader, generation=gen)
    gc.leave_group("g", [(leader, None)], T0 + 10 * RETENTION)
    gc.groups["g"].state_timestamp = -1  # a GroupMetadata record of Kafka's v0/v1 has none
    assert gc.expiration.cleanup(T0 + 10 * RETENTION).deleted_groups == ["g"]


def test_a_stable_consumer_group_loses_the_offsets_of_topics_it_no_longer_subscribes_to(gc):
    (leader,), gen = form_group(gc, 1)  # subscribed to TOPIC only
    commit(gc, "g", [(0, 10)], T0 + 6_000, member=leader, generation=gen)
    commit(gc, "g", [(0, 3)], T0 + 6_000, member=leader, generation=gen, topic="other")
    assert gc.expiration.cleanup(T0 + 6_000 + RETENTION - 1).expired_offsets == []
    got = gc.expiration.cleanup(T0 + 6_000 + RETENTION)
    assert (got.expired_offsets, got.deleted_groups) == (["g/other/0"], [])
    assert fetched(gc, "g", [TP0, ("other", 0)]) == {TP0: 10, ("other", 0): -1}


def test_other_protocol_types_keep_their_offsets_until_empty(gc):
    gc.initial_rebalance_delay_ms = 0
    r = join(gc, protocol_type="connect", protocols=[("default", b"\x00")]).result
    sync(gc, r.member_id, r.generation_id, {r.member_id: b""})
    commit(gc, "g", [(0, 1)], T0, member=r.member_id, generation=r.generation_id, topic="other")
    assert gc.expiration.cleanup(T0 + 10 * RETENTION).expired_offsets == []


def test_a_rebalancing_group_keeps_its_offsets(gc):
    (leader, follower), gen = form_group(gc, 2)
    commit(gc, "g", [(0, 3)], T0 + 6_000, member=leader, generation=gen, topic="other")
    join(gc, member_id=leader, now=T0 + 7_000)
    assert gc.groups["g"].state is S.PREPARING_REBALANCE
    assert gc.expiration.cleanup(T0 + 10 * RETENTION).expired_offsets == []


def test_an_explicit_retention_time_expires_at_its_timestamp_and_survives_a_restart(nodes, node, gc):
    commit(gc, "g", [(0, 5)], T0, expire=T0 + 1_000)  # OffsetCommit v2-4's RetentionTimeMs of 1 s
    commit(gc, "g", [(1, 6)], T0)
    gc = restarted(nodes, node)  # written as an OffsetCommitValue v1, read back with its expire timestamp
    assert gc.groups["g"].offsets[TP0].value.expire_timestamp == T0 + 1_000
    assert gc.expiration.cleanup(T0 + 999).expired_offsets == []
    assert gc.expiration.cleanup(T0 + 1_000).expired_offsets == [f"g/{TOPIC}/0"]
    assert fetched(gc, "g", [TP0, TP1]) == {TP0: -1, TP1: 6}


def test_a_partition_with_a_pending_transactional_offset_is_kept_and_so_is_its_group(node, gc):
    commit(gc, "g", [(0, 5), (1, 6)], T0)
    pid, epoch = node.txn.init_producer_id("tx", 60_000, -1, -1, T0)
    node.txn.add_offsets("tx", pid, epoch, "g", T0)
    gc.commit_txn_offsets("g", "tx", pid, epoch, "", None, -1, offsets((0, 9)), T0)
    got = gc.expiration.cleanup(T0 + RETENTION)
    assert (got.expired_offsets, got.deleted_groups) == ([f"g/{TOPIC}/1"], [])
    node.txn.end_txn("tx", pid, epoch, False, T0 + RETENTION)  # aborted: nothing pending any more
    got = gc.expiration.cleanup(T0 + RETENTION)
    assert (got.expired_offsets, got.deleted_groups) == ([f"g/{TOPIC}/0"], ["g"])


def test_an_empty_group_without_offsets_is_deleted_at_the_next_check(gc):
    (leader,), _ = form_group(gc, 1)
    assert gc.expiration.cleanup(T0 + 7_000).deleted_groups == []  # Stable
    gc.leave_group("g", [(leader, None)], T0 + 7_000)
    assert gc.expiration.cleanup(T0 + 7_000).deleted_groups == ["g"]


def test_the_check_runs_on_the_coordinator_timer(gc):
    commit(gc, "solo", [(0, 5)], T0)
    gc.expiration.schedule(T0)
    assert gc.tick(T0 + RETENTION - 1) == T0 + RETENTION - 1 + INTERVAL  # a check ran: the next is an interval on
    assert fetched(gc, "solo", [TP0]) == {TP0: 5}
    gc.tick(T0 + RETENTION + INTERVAL - 2)  # expired by now, but no check is due
    assert fetched(gc, "solo", [TP0]) == {TP0: 5}
    gc.tick(T0 + RETENTION + INTERVAL - 1)
    assert "solo" not in gc.groups and fetched(gc, "solo", [TP0]) == {TP0: -1}


def test_advance_runs_only_the_checks_due_within_it(gc):
    commit(gc, "solo", [(0, 5)], T0)
    gc.expiration.schedule(T0)  # checks at T0 + 1 s, + 2 s, ...
    assert gc.expiration.advance(T0, RETENTION - INTERVAL).expired_offsets == []
    assert gc.expiration.advance(T0, RETENTION + INTERVAL // 2).expired_offsets == [f"solo/{TOPIC}/0"]
    gc.expiration.check_interval_ms = 2 * RETENTION
    commit(gc, "late", [(0, 5)], T0)
    gc.expiration.schedule(T0)  # the next check is after the whole advance: it does not run
    assert gc.expiration.advance(T0, RETENTION + 1).expired_offsets == []


def _consumer_member(gc, group, member, topics, now):
    return gc.consumer.heartbeat(HeartbeatRequest(group, member, 0, owned={}, rebalance_timeout_ms=30_000,
                                                  subscribed_topic_names=tuple(topics)), now)


def test_a_consumer_group_expires_unsubscribed_topics_by_commit_time_then_goes_when_empty(nodes, node, gc):
    r = _consumer_member(gc, "cg", "a", [TOPIC], T0)
    assert r.error == E.none
    commit(gc, "cg", [(0, 1)], T0, member="a", generation=r.member_epoch, topic="other")
    commit(gc, "cg", [(0, 2)], T0, member="a", generation=r.member_epoch)
    got = gc.expiration.cleanup(T0 + RETENTION)
    assert (got.expired_offsets, got.deleted_groups) == (["cg/other/0"], [])
    gc.consumer.heartbeat(HeartbeatRequest("cg", "a", -1), T0 + RETENTION)  # leaves: nothing is subscribed
    got = gc.expiration.cleanup(T0 + RETENTION)
    assert (got.expired_offsets, got.deleted_groups) == ([f"cg/{TOPIC}/0"], ["cg"])
    assert "cg" not in gc.consumer.groups and "cg" not in listed(gc)
    gc = restarted(nodes, node)
    assert "cg" not in gc.consumer.groups and "cg" not in gc.groups


async def test_offset_commit_v2_retention_time_becomes_the_expire_timestamp(node, gc):
    module = request_module(8, 2)
    partition = make(module.OffsetCommitRequestPartition, partition_index=0, committed_offset=4,
                     committed_metadata="")
    topics = (make(module.OffsetCommitRequestTopic, name=TOPIC, partitions=(partition,)),)
    for retention in (-1, 60_000):
        r = await call(node, 8, 2, group_id="v2", generation_id_or_member_epoch=-1, member_id="",
                       retention_time=retention, topics=topics)
        assert r.topics[0].partitions[0].error_code == E.none
        committed = gc.groups["v2"].offsets[TP0].value
        assert committed.expire_timestamp == (-1 if retention == -1 else committed.commit_timestamp + retention)


@pytest.mark.parametrize("version", [2, 4])
@pytest.mark.parametrize("retention", [2**63 - 1, 2**62, -(2**63), -(2**60)])
async def test_offset_commit_takes_any_int64_retention_time_and_wraps_it_as_java(nodes, node, gc, version, retention):
    """kio's timedelta holds no more than 999,999,999 days: such a RetentionTimeMs closed the
    connection, where Kafka answers NONE and adds it to the commit time as a Java long."""
    module = request_module(8, version)
    partition = make(module.OffsetCommitRequestPartition, partition_index=0, committed_offset=4,
                     committed_metadata="")
    request = make(module.OffsetCommitRequest, group_id="wide", generation_id_or_member_epoch=-1, member_id="",
                   retention_time=12_345, topics=(make(module.OffsetCommitRequestTopic, name=TOPIC,
                                                       partitions=(partition,)),))
    frame = encode_request(RequestHeader(8, version, 7, "c"), request)
    at = frame.index(struct.pack(">q", 12_345))
    frame = frame[:at] + struct.pack(">q", retention) + frame[at + 8:]
    _, response = decode_response(await dispatch(node, frame), 8, version)
    assert response.topics[0].partitions[0].error_code == E.none
    committed = gc.groups["wide"].offsets[TP0].value
    wrapped = (committed.commit_timestamp + retention + 2**63) % 2**64 - 2**63
    assert committed.expire_timestamp == wrapped
    expired = gc.expiration.cleanup(committed.commit_timestamp).expired_offsets  # the next check
    assert expired == ([f"wide/{TOPIC}/0"] if wrapped < 0 else [])
    if wrapped >= 0:
        assert restarted(nodes, node).groups["wide"].offsets[TP0].value.expire_timestamp == wrapped


async def test_advance_clock_expires_offsets_and_deletes_groups(node, gc):
    now = now_ms()
    commit(gc, "solo", [(0, 5)], now)
    got = await control(node.control, "advance_clock", {"ms": RETENTION - 2 * INTERVAL})
    assert (got["expired_offsets"], got["deleted_groups"]) == ([], [])
    got = await control(node.control, "advance_clock", {"ms": RETENTION + INTERVAL, "clock": "transactions"})
    assert "expired_offsets" not in got and "solo" in gc.groups
    got = await control(node.control, "advance_clock", {"ms": RETENTION + INTERVAL, "group_id": "other"})
    assert (got["expired_offsets"], got["deleted_groups"]) == ([], [])
    got = await control(node.control, "advance_clock", {"ms": RETENTION + INTERVAL, "clock": "groups"})
    assert (got["expired_offsets"], got["deleted_groups"]) == ([f"solo/{TOPIC}/0"], ["solo"])


def test_a_cleanup_whose_tombstones_cannot_be_written_changes_nothing_and_the_next_one_does(gc, monkeypatch):
    commit(gc, "solo", [(0, 5)], T0)
    write = gc.store.write_tombstones

    def unwritable(*args, **kwargs):
        raise KafkaError(E.not_leader_or_follower)
    monkeypatch.setattr(gc.store, "write_tombstones", unwritable)
    assert gc.expiration.cleanup(T0 + RETENTION) == ([], [])
    assert fetched(gc, "solo", [TP0]) == {TP0: 5}
    monkeypatch.setattr(gc.store, "write_tombstones", write)
    assert gc.expiration.cleanup(T0 + RETENTION).deleted_groups == ["solo"]


def test_a_deleted_topics_offsets_go_at_once_from_every_group(nodes, node, gc):
    (leader,), gen = form_group(gc, 1)
    commit(gc, "g", [(0, 10)], T0 + 6_000, member=leader, generation=gen)
    commit(gc, "g", [(0, 3)], T0 + 6_000, member=leader, generation=gen, topic="other")
    commit(gc, "solo", [(1, 4)], T0)
    pid, epoch = node.txn.init_producer_id("tx", 60_000, -1, -1, T0)
    node.txn.add_offsets("tx", pid, epoch, "pending", T0)
    gc.commit_txn_offsets("pending", "tx", pid, epoch, "", None, -1, offsets((2, 9)), T0)
    node.logs.delete_topic(TOPIC)
    assert fetched(gc, "g", [TP0, ("other", 0)]) == {TP0: -1, ("other", 0): 3}  # the group stays Stable
    assert gc.groups["g"].state is S.STABLE and fetched(gc, "solo", [TP1]) == {TP1: -1}
    assert not gc.groups["pending"].has_pending_offsets((TOPIC, 2))
    node.txn.end_txn("tx", pid, epoch, True, T0 + 1)  # its commit brings nothing back
    assert fetched(gc, "pending", [(TOPIC, 2)]) == {(TOPIC, 2): -1}
    assert gc.expiration.cleanup(T0 + 2).deleted_groups == ["solo", "pending"]  # Empty and left without offsets
    gc = restarted(nodes, node)
    assert fetched(gc, "g", [TP0, ("other", 0)]) == {TP0: -1, ("other", 0): 3}
    assert fetched(gc, "solo", [TP1]) == {TP1: -1} and fetched(gc, "pending", [(TOPIC, 2)]) == {(TOPIC, 2): -1}
    assert "solo" not in gc.groups and "pending" not in gc.groups
