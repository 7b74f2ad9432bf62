"""Cold share partitions (Kafka 4.1, KAFKA-18170: ShareCoordinatorShard.snapshotColdPartitions).

``__share_group_state`` is pruned below the oldest of its keys' latest snapshots, so one share
partition nobody writes any more -- a quiet group, a partition no member fetches -- held the
pruning of its whole state partition back for ever while busier keys kept appending. Every
``share.coordinator.cold.partition.snapshot.interval.ms`` (5 minutes) the share coordinator writes
each key whose last snapshot is that old as a new snapshot (snapshot epoch + 1, written now, its
creation time kept), and the log start moves past the old records; a partition whose keys are all
such copies already is left alone. The share coordinator's clock is driven through ``node.tick``.
"""

from __future__ import annotations

import time

import pytest

from node_support import NodeFactory
from share.test_share_apis import acquired, heartbeat, produce, share_ack, share_fetch
from share.test_share_state_store import _open, _records
from shim.config import BrokerConfig
from shim.coordinators.share import records as sr
from shim.coordinators.share.store import SHARE_STATE_TOPIC
from shim.errors import ErrorCode

INTERVAL = 60_000
SETTINGS = {"share.coordinator.state.topic.num.partitions": "1",  # every key in one state partition
            "share.coordinator.snapshot.update.records.per.snapshot": "2",
            "share.coordinator.cold.partition.snapshot.interval.ms": str(INTERVAL)}


async def _quiet_group_then_a_busy_one(node):
    """Group ``quiet`` is initialized (a snapshot of each of its two partitions) and leaves; group
    ``g`` then accepts eight records one by one: updates, and a snapshot every two of them."""
    r = await heartbeat(node, "q" * 22, 0, group="quiet")
    assert r.error_code == ErrorCode.none
    assert (await heartbeat(node, "q" * 22, -1, group="quiet")).error_code == ErrorCode.none
    await produce(node, 0, *[b"v%d" % i for i in range(8)])
    assert acquired(await share_fetch(node, "m1", 0)) == [(0, 7, 1)]
    for epoch, offset in enumerate(range(8), start=1):
        r = await share_ack(node, "m1", epoch, 0, [(offset, offset, (1,))])
        assert r.responses[0].partitions[0].error_code == ErrorCode.none


def _latest(node) -> dict:
    """(group, partition) -> (record type, snapshot epoch) of each key's last record."""
    return {(k.group_id, k.partition): (k.kind, v.snapshot_epoch) for _, _, k, v in _records(node)}


async def test_a_quiet_key_no_longer_holds_the_state_topic_back(tmp_path):
    nodes = NodeFactory(tmp_path / "data", kafka_version="4.1")
    node = _open(nodes, **SETTINGS)
    try:
        await _quiet_group_then_a_busy_one(node)
        plog = node.logs.get(SHARE_STATE_TOPIC, 0)
        quiet = {(k.group_id, k.partition): offset for _, offset, k, _ in _records(node) if k.group_id == "quiet"}
        assert plog.log_start_offset == min(quiet.values()) == 0  # held back by the quiet group's snapshots
        quiet_state = {key: node.share.store.entries[key].snapshot for key in node.share.store.entries
                       if key[0] == "quiet"}
        [busy] = [e.snapshot for key, e in node.share.store.entries.items() if key[0] == "g"]
        assert busy.snapshot_epoch > 0 and busy.create_timestamp == busy.write_timestamp  # a snapshot for a change
        now = int(time.time() * 1000)
        assert node.share.next_deadline() <= now + INTERVAL  # the job is due within the interval
        node.tick(now + INTERVAL)
        assert plog.log_start_offset > max(quiet.values())
        latest = _latest(node)
        # each key's last record is a new snapshot: quiet's two, and g's own (written before the tick)
        assert latest[("quiet", 0)] == latest[("quiet", 1)] == (sr.SNAPSHOT, 1)
        assert latest[("g", 0)][0] == sr.SNAPSHOT
        for key, before in quiet_state.items():
            after = node.share.store.entries[key].snapshot
            assert after._replace(snapshot_epoch=0, write_timestamp=0) == before._replace(write_timestamp=0)
            assert after.create_timestamp == before.create_timestamp < after.write_timestamp == now + INTERVAL
        end = plog.log_end_offset
        node.tick(now + 3 * INTERVAL)  # nothing was written since: every key is a copy already
        assert plog.log_end_offset == end
        state = {key: e.snapshot for key, e in node.share.store.entries.items()}
        nodes.crash(node)
        again = _open(nodes, **SETTINGS)
        assert {key: e.snapshot for key, e in again.share.store.entries.items()} == state
        assert again.logs.get(SHARE_STATE_TOPIC, 0).log_start_offset == plog.log_start_offset
    finally:
        nodes.crash_all()


async def test_a_key_with_updates_only_is_snapshotted_again_once_its_snapshot_is_old(tmp_path):
    """An update keeps its snapshot's times (Kafka: ShareCoordinatorShard.merge): a key written only
    as updates since its snapshot is written again once that snapshot is an interval old, however
    recent the updates, and not before. The share coordinator's clock is set by the test."""
    nodes = NodeFactory(tmp_path / "data", kafka_version="4.1")
    node = _open(nodes, **{**SETTINGS, "share.coordinator.snapshot.update.records.per.snapshot": "500"})
    clock = [int(time.time() * 1000)]
    start = clock[0]
    node.share.store.clock = lambda: clock[0]
    try:
        await produce(node, 0, b"a", b"b", b"c")
        assert acquired(await share_fetch(node, "m1", 0)) == [(0, 2, 1)]
        for epoch, offset in enumerate(range(3), start=1):
            clock[0] = start + offset * INTERVAL // 2  # a snapshot, then updates half an interval apart
            r = await share_ack(node, "m1", epoch, 0, [(offset, offset, (1,))])
            assert r.responses[0].partitions[0].error_code == ErrorCode.none
        assert [k.kind for _, _, k, _ in _records(node)] == [sr.SNAPSHOT, sr.UPDATE, sr.UPDATE]
        plog = node.logs.get(SHARE_STATE_TOPIC, 0)
        node.tick(start + INTERVAL - 1)  # a round now, if one is due, finds nothing old enough
        assert plog.log_end_offset == 3
        due = node.share.store.cold_snapshot_due  # the job runs every interval from start-up, as Kafka's
        assert node.share.next_deadline() <= due
        at = max(due, start + INTERVAL)  # the snapshot is an interval old, the last update half of one
        node.tick(at)
        assert plog.log_end_offset == 4 and plog.log_start_offset == 3
        [(_, _, key, snap)] = _records(node)
        assert (key.kind, snap.snapshot_epoch, snap.start_offset, snap.batches) == (sr.SNAPSHOT, 1, 3, ())
        assert (snap.create_timestamp, snap.write_timestamp) == (start, at)
    finally:
        nodes.crash_all()


def test_the_interval_is_at_least_1(tmp_path):
    with pytest.raises(ValueError, match="share.coordinator.cold.partition.snapshot.interval.ms: Value must be at least 1"):
        BrokerConfig(data_dir=tmp_path, extra={"share.coordinator.cold.partition.snapshot.interval.ms": "0"})


async def test_a_round_goes_a_slice_per_turn(tmp_path, monkeypatch):
    """At most about COLD_SNAPSHOTS_PER_TURN keys a call, the next slice due at once; a key written
    between two slices is not copied over its newer state."""
    from shim.coordinators.share import store as store_module

    monkeypatch.setattr(store_module, "COLD_SNAPSHOTS_PER_TURN", 3)
    nodes = NodeFactory(tmp_path / "data", kafka_version="4.1")
    node = _open(nodes, **SETTINGS)
    try:
        node.logs.create_topic("eight", 8)
        assert (await heartbeat(node, "q" * 22, 0, topics=("eight",), group="quiet")).error_code == ErrorCode.none
        await heartbeat(node, "q" * 22, -1, group="quiet")
        store, plog = node.share.store, node.logs.get(SHARE_STATE_TOPIC, 0)
        now = max(int(time.time() * 1000), store.cold_snapshot_due) + INTERVAL
        topic_id = node.logs.topics["eight"].topic_id
        ends = []
        for _ in range(3):
            assert store.tick(now) == now  # more to do: due at once
            ends.append(plog.log_end_offset)
            if len(ends) == 2:  # partition 7 of "eight" is written between two slices
                store.initialize("quiet", {("eight", 7): 5}, 1)
        assert store.tick(now) == now + INTERVAL  # the round is over
        ends.append(plog.log_end_offset)
        # the looking-through slice writes nothing, then 3 a slice in key order: 0-2, the
        # initialization of 7 and 3-5, then 6 alone: 7 was written since it was found cold
        assert [b - a for a, b in zip([8, *ends], ends)] == [0, 3, 4, 1]
        later = [(k.partition, v.start_offset, v.create_timestamp == v.write_timestamp)
                 for _, o, k, v in _records(node) if o >= 8]
        assert later == [(0, -1, False), (1, -1, False), (2, -1, False), (7, 5, True), (3, -1, False),
                         (4, -1, False), (5, -1, False), (6, -1, False)]
    finally:
        nodes.crash_all()
