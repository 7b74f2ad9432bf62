"""A share group's partitions get share state when the group first sees them, before any fetch
(Kafka 4.1: the heartbeat's maybeCreateInitializeShareGroupStateRequest sends InitializeShareGroupState
with start offset -1 to the share coordinator). The start offset itself is still chosen by
share.auto.offset.reset when the partition is first fetched (SharePartition.maybeInitialize), so
records produced between the assignment and the first ShareFetch are skipped under ``latest``, in
Kafka as here. Driven through the dispatcher on a node emulating Kafka 4.1."""

from __future__ import annotations

import uuid

from node_support import crash
from share.test_share_admin_apis import G, T, call, describe, fetch, heartbeat, offsets, open_node, produce
from shim.configs.admin import Op
from shim.errors import ErrorCode as E
from shim.protocol.messages import request_module


def _snapshot(node, partition):
    return node.share.store.get((G, node.logs.topics[T].topic_id, partition))


async def _summary(node, partition):
    m = request_module(87, 0)
    r = await call(node, 87, 0, group_id=G, topics=(m.ReadStateSummaryData(
        topic_id=node.logs.topics[T].topic_id, partitions=(m.PartitionData(partition=partition, leader_epoch=0),)),))
    p = r.results[0].partitions[0]
    return p.error_code, p.start_offset, p.state_epoch, p.leader_epoch


def _open(path):
    n = open_node(path)
    n.finalize_features({"share.version": 1})
    return n


async def test_joining_initializes_every_subscribed_partition_without_a_start_offset(tmp_path):
    n = _open(tmp_path / "data")
    try:
        await produce(n, 0, 3)
        member = str(uuid.uuid4())
        joined = await heartbeat(n, member, 0)
        epoch = joined.member_epoch
        assert joined.error_code == E.none and epoch == n.share.groups[G].group_epoch
        for p in (0, 1):
            snap = _snapshot(n, p)
            # Kafka: ShareGroupOffset.fromRequest -- snapshot epoch 0, the group epoch, leader epoch 0
            assert (snap.snapshot_epoch, snap.state_epoch, snap.leader_epoch, snap.start_offset, snap.batches) == (
                0, epoch, 0, -1, ())
            assert await _summary(n, p) == (E.none, -1, epoch, 0)
        assert offsets(await describe(n)) == {(T, 0): (-1, E.none), (T, 1): (-1, E.none)}
        again = await heartbeat(n, member, epoch)
        assert again.error_code == E.none and _snapshot(n, 0).snapshot_epoch == 0  # written once
    finally:
        n.close()


async def test_latest_still_starts_at_the_first_fetch_even_after_a_crash(tmp_path):
    """The initialized state (-1) outlives kill -9; the first fetch after it starts at the end of
    the log then, not at offset 0 and not where the log ended when the member joined."""
    n = _open(tmp_path / "data")
    await produce(n, 0, 2)  # offsets 0-1, before the group exists
    member = str(uuid.uuid4())
    await heartbeat(n, member, 0)
    await produce(n, 0, 3)  # offsets 2-4, assigned but never fetched
    crash(n)
    n = _open(tmp_path / "data")
    try:
        assert offsets(await describe(n)) == {(T, 0): (-1, E.none), (T, 1): (-1, E.none)}
        assert _snapshot(n, 0).start_offset == -1
        await heartbeat(n, member, 0)  # the member rejoins the restarted broker
        assert await fetch(n, member, 0) == []  # share.auto.offset.reset=latest: the end, offset 5
        await produce(n, 0, 1)
        assert await fetch(n, member, 1) == [(5, 5)]
    finally:
        n.close()


async def test_earliest_is_the_log_start_at_the_first_fetch_not_at_the_assignment(tmp_path):
    n = _open(tmp_path / "data")
    n.share.configs.alter(G, [Op("share.auto.offset.reset", 0, "earliest")], False)
    try:
        member = str(uuid.uuid4())
        await heartbeat(n, member, 0)
        await produce(n, 0, 3)
        n.logs.get(T, 0).delete_records(2)  # the log start moves on after the assignment
        assert await fetch(n, member, 0) == [(2, 2)]
    finally:
        n.close()


async def test_partitions_added_later_are_initialized_at_the_next_heartbeat(tmp_path):
    n = _open(tmp_path / "data")
    try:
        member = str(uuid.uuid4())
        first = (await heartbeat(n, member, 0)).member_epoch
        n.logs.add_partitions(T, 3)
        r = await heartbeat(n, member, first)
        assert r.error_code == E.none and r.member_epoch > first  # the topic's size changed: a new group epoch
        snap = _snapshot(n, 2)
        assert (snap.start_offset, snap.state_epoch) == (-1, r.member_epoch)
        assert _snapshot(n, 0).state_epoch == first  # the others keep theirs
    finally:
        n.close()


async def test_deleting_the_group_deletes_state_no_fetch_ever_wrote(tmp_path):
    n = _open(tmp_path / "data")
    try:
        member = str(uuid.uuid4())
        await heartbeat(n, member, 0)
        await heartbeat(n, member, -1)
        assert _snapshot(n, 0) is not None and _snapshot(n, 1) is not None
        assert (await call(n, 42, 2, groups_names=(G,))).results[0].error_code == E.none
        assert _snapshot(n, 0) is None and _snapshot(n, 1) is None
    finally:
        n.close()


async def test_describe_shows_the_leader_epoch_the_state_was_written_with(tmp_path):
    """Kafka answers DescribeShareGroupOffsets from ReadShareGroupStateSummary: the leader epoch
    stored with the state (0 as initialized), not the partition's current one."""
    from share.test_share_state_apis import write

    n = _open(tmp_path / "data")
    try:
        await heartbeat(n, str(uuid.uuid4()), 0)
        m = request_module(90, 0)
        r = await call(n, 90, 0, groups=(m.DescribeShareGroupOffsetsRequestGroup(group_id=G, topics=None),))
        assert {p.leader_epoch for t in r.groups[0].topics for p in t.partitions} == {0}
        epoch = n.share.groups[G].group_epoch
        assert await write(n, 0, 3, [], state_epoch=epoch, leader_epoch=5, group=G,
                           tid=n.logs.topics[T].topic_id) == E.none
        r = await call(n, 90, 0, groups=(m.DescribeShareGroupOffsetsRequestGroup(group_id=G, topics=None),))
        shown = {(t.topic_name, p.partition_index): (p.start_offset, p.leader_epoch) for t in r.groups[0].topics
                 for p in t.partitions}
        assert shown == {(T, 0): (3, 5), (T, 1): (-1, 0)}
        assert n.cluster.state(T, 0).leader_epoch == 0  # the partition's own is another
    finally:
        n.close()


async def test_records_produced_between_the_join_and_the_assignment_are_before_a_latest_start(tmp_path):
    """The partition is initialized (start -1) after the joining heartbeat and assigned by the next;
    under share.auto.offset.reset=latest its start is the log end at the first ShareFetch, so
    records produced while the member waited for its assignment are not delivered."""
    n = _open(tmp_path / "data")
    try:
        member = str(uuid.uuid4())
        joined = await heartbeat(n, member, 0)
        assert joined.assignment.topic_partitions == () and _snapshot(n, 0).start_offset == -1
        await produce(n, 0, 3)  # offsets 0-2: initialized, not yet assigned
        assigned = await heartbeat(n, member, joined.member_epoch)
        assert {p for t in assigned.assignment.topic_partitions for p in t.partitions} == {0, 1}
        assert _snapshot(n, 0).start_offset == -1  # the assignment chose no start offset either
        assert await fetch(n, member, 0) == []
        await produce(n, 0, 1)
        assert await fetch(n, member, 1) == [(3, 3)]
    finally:
        n.close()
