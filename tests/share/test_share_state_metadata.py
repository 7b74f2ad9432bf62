"""ShareGroupStatePartitionMetadata (key 15) and ShareGroupMetadata's MetadataHash as Kafka 4.1
writes them to ``__consumer_offsets`` (layouts checked byte by byte against the group coordinator's
JSON schemas), and what their replay restores after a crash: the initialized partitions
DescribeShareGroupOffsets lists, and the metadata hash that moves the group epoch when a subscribed
topic changed while the broker was down. The group epoch moves once per heartbeat, as Kafka's."""

from __future__ import annotations

import datetime
import struct
import uuid

from kafka_codecs.records import decode_batch
from node_support import crash
from share.test_share_admin_apis import G, T, call, delete, describe, fetch, heartbeat, offsets, open_node, produce
from shim.coordinators.share import members as sm
from shim.coordinators.share import state_metadata as spm
from shim.errors import ErrorCode as E
from shim.protocol.messages import request_module

TID = uuid.UUID("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0")
OTHER = uuid.UUID("1f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0")


def _open(path):
    n = open_node(path)
    n.finalize_features({"share.version": 1})
    return n


def _records(node, kind):
    """(key, decoded value) of every share record of ``kind`` in __consumer_offsets, in log order."""
    out = []
    info = node.logs.topics.get("__consumer_offsets")
    for p in range(info.partitions if info else 0):
        for raw in node.logs.get("__consumer_offsets", p).iter_batches():
            for r in decode_batch(raw)[1]:
                if int.from_bytes(r.key[:2], "big") == kind:
                    out.append(sm.decode(r.key, r.value))
    return out


def test_key_15_is_kafkas_layout():
    meta = spm.PartitionMetadata({TID: spm.Topic("a", frozenset({1}))}, {OTHER: spm.Topic("b", frozenset({0, 2}))},
                                 {TID: "a"})
    key, value = sm.encode(sm.Record(sm.STATE_PARTITION_METADATA, "g", None, meta))
    assert key == b"\x00\x0f\x00\x01g"
    topic_a = TID.bytes + b"\x02a" + b"\x02" + struct.pack(">i", 1) + b"\x00"
    topic_b = OTHER.bytes + b"\x02b" + b"\x03" + struct.pack(">ii", 0, 2) + b"\x00"
    assert value == b"\x00\x00" + b"\x02" + topic_a + b"\x02" + topic_b + b"\x02" + TID.bytes + b"\x02a\x00" + b"\x00"
    assert sm.decode(key, value) == sm.Record(sm.STATE_PARTITION_METADATA, "g", None, meta)
    assert sm.decode(key, None).value is None  # the group's tombstone


async def test_a_join_writes_initializing_then_initialized_and_bumps_the_epoch_once(tmp_path):
    n = _open(tmp_path / "data")
    try:
        first, second = str(uuid.uuid4()), str(uuid.uuid4())
        assert (await heartbeat(n, first, 0)).member_epoch == 1  # Kafka: one bump for the new member
        tid = n.logs.topics[T].topic_id
        both = spm.Topic(T, frozenset({0, 1}))
        assert [r.value for r in _records(n, sm.STATE_PARTITION_METADATA)] == [
            spm.PartitionMetadata({tid: both}, {}, {}), spm.PartitionMetadata({}, {tid: both}, {})]
        epochs = [r.value for r in _records(n, sm.GROUP_METADATA)]
        assert [e for e, _ in epochs] == [1] and epochs[0][1] != 0  # the subscribed topic's hash
        assert (await heartbeat(n, second, 0)).member_epoch == 2
        assert len(_records(n, sm.STATE_PARTITION_METADATA)) == 2  # nothing more to initialize
        assert (await heartbeat(n, second, -1)).error_code == E.none
        assert n.share.groups[G].group_epoch == 3
    finally:
        n.close()


async def test_the_replay_restores_the_initialized_partitions_and_the_hash(tmp_path):
    n = _open(tmp_path / "data")
    member = str(uuid.uuid4())
    await heartbeat(n, member, 0)
    assert (await heartbeat(n, member, 1)).member_epoch == 2  # the initialized partitions assigned
    before = (n.share.initialized.get(G), n.share.groups[G].metadata_hash, n.share.groups[G].group_epoch)
    crash(n)
    n = _open(tmp_path / "data")
    try:
        assert (n.share.initialized.get(G), n.share.groups[G].metadata_hash, n.share.groups[G].group_epoch) == before
        assert offsets(await describe(n)) == {(T, 0): (-1, E.none), (T, 1): (-1, E.none)}
        r = await heartbeat(n, member, 2)
        assert (r.error_code, r.member_epoch) == (E.none, 2)  # the topics are as hashed: no new epoch
    finally:
        n.close()


async def test_a_topic_grown_before_a_crash_moves_the_epoch_at_the_next_heartbeat(tmp_path):
    """The new partition is assigned although the group never heartbeat between the growth and the
    crash: the hash it wrote no longer matches the topic it finds. That heartbeat initializes the
    new partition and the next assigns it (Kafka 4.1's two steps)."""
    n = _open(tmp_path / "data")
    member = str(uuid.uuid4())
    await heartbeat(n, member, 0)
    assert (await heartbeat(n, member, 1)).member_epoch == 2
    n.logs.add_partitions(T, 3)
    crash(n)
    n = _open(tmp_path / "data")
    try:
        r = await heartbeat(n, member, 2)
        assert (r.error_code, r.member_epoch) == (E.none, 3)
        assert sorted(r.assignment.topic_partitions[0].partitions) == [0, 1]
        assert offsets(await describe(n))[(T, 2)] == (-1, E.none)  # initialized by that heartbeat
        r = await heartbeat(n, member, 3)
        assert (r.error_code, r.member_epoch) == (E.none, 4)
        assert sorted(r.assignment.topic_partitions[0].partitions) == [0, 1, 2]
    finally:
        n.close()


async def test_delete_offsets_and_delete_group_write_deleting_first(tmp_path):
    n = _open(tmp_path / "data")
    member = str(uuid.uuid4())
    await heartbeat(n, member, 0)
    await heartbeat(n, member, -1)
    tid = n.logs.topics[T].topic_id
    assert (await delete(n, [T])).error_code == E.none
    written = [r.value for r in _records(n, sm.STATE_PARTITION_METADATA)][2:]
    assert written == [spm.PartitionMetadata({}, {}, {tid: T}), spm.EMPTY]
    assert (await describe(n)).topics == ()
    await heartbeat(n, member, 0)  # initialized again
    await heartbeat(n, member, -1)
    assert (await call(n, 42, 2, groups_names=(G,))).results[0].error_code == E.none
    tail = _records(n, sm.STATE_PARTITION_METADATA)[-2:]
    assert [r.value for r in tail] == [spm.PartitionMetadata({}, {}, {tid: T}), None]  # deleting, tombstone
    crash(n)
    n = _open(tmp_path / "data")
    try:
        assert G not in n.share.groups and G not in n.share.initialized.groups
    finally:
        n.close()


async def test_a_deleted_topic_leaves_the_record(tmp_path):
    n = _open(tmp_path / "data")
    try:
        await heartbeat(n, str(uuid.uuid4()), 0)
        m = request_module(20, 6)
        r = await call(n, 20, 6, topics=(m.DeleteTopicState(name=T, topic_id=None),), topic_names=(), timeout=datetime.timedelta(seconds=5))
        assert r.responses[0].error_code == E.none
        assert n.share.initialized.get(G) == spm.EMPTY
        assert _records(n, sm.STATE_PARTITION_METADATA)[-1].value == spm.EMPTY
    finally:
        n.close()


async def test_state_from_before_key_15_is_listed_after_an_upgrade(tmp_path):
    """Share state an older kafka-shim wrote (no key-15 record) counts as initialized."""
    n = _open(tmp_path / "data")
    member = str(uuid.uuid4())
    await heartbeat(n, member, 0)
    assert await fetch(n, member, 0) == []  # latest: the share partition starts at 0, the end
    await produce(n, 0, 3)
    assert await fetch(n, member, 1) == [(0, 2)]
    await fetch(n, member, 2, acks=[(0, 2, 1)])
    n.close()
    n = _open(tmp_path / "data")
    n.share.initialized.groups.clear()  # as replayed from a log without key 15
    n.share.load_members([], lambda i: None, 0)
    try:
        assert offsets(await describe(n)) == {(T, 0): (3, E.none), (T, 1): (-1, E.none)}
    finally:
        n.close()


async def test_a_restart_with_another_broker_rack_moves_the_epoch_once(tmp_path):
    """KIP-1101: each partition's replica racks are in the hash; the same racks move nothing."""
    n = open_node(tmp_path / "data", extra={"broker.rack": "a"})
    n.finalize_features({"share.version": 1})
    member = str(uuid.uuid4())
    first = (await heartbeat(n, member, (await heartbeat(n, member, 0)).member_epoch)).member_epoch  # assigned
    n.close()
    n = open_node(tmp_path / "data", extra={"broker.rack": "a"})
    r = await heartbeat(n, member, first)
    assert (r.error_code, r.member_epoch) == (E.none, first)
    n.close()
    n = open_node(tmp_path / "data", extra={"broker.rack": "b"})
    try:
        r = await heartbeat(n, member, first)
        assert (r.error_code, r.member_epoch) == (E.none, first + 1)
    finally:
        n.close()


async def test_partitions_are_assigned_by_the_heartbeat_after_their_initialization(tmp_path):
    """Kafka 4.1: the target assignment takes only initialized partitions; the heartbeat that first
    sees a subscribed partition answers without it and has it initialized (key 15 initializing,
    InitializeShareGroupState, initialized); the next heartbeat finds initialized partitions the
    target leaves out, bumps the epoch and assigns them. A member joining later gets them at once."""
    n = _open(tmp_path / "data")
    try:
        first, second = str(uuid.uuid4()), str(uuid.uuid4())
        joined = await heartbeat(n, first, 0)
        assert (joined.member_epoch, joined.assignment.topic_partitions) == (1, ())
        tid = n.logs.topics[T].topic_id
        both = spm.Topic(T, frozenset({0, 1}))
        assert [r.value for r in _records(n, sm.STATE_PARTITION_METADATA)] == [
            spm.PartitionMetadata({tid: both}, {}, {}), spm.PartitionMetadata({}, {tid: both}, {})]
        assert [r.value for r in _records(n, sm.TARGET_MEMBER)] == [()]  # the target had nothing to assign
        assigned = await heartbeat(n, first, 1)
        assert assigned.member_epoch == 2
        assert [(t.topic_id, sorted(t.partitions)) for t in assigned.assignment.topic_partitions] == [(tid, [0, 1])]
        assert [e for e, _ in (r.value for r in _records(n, sm.GROUP_METADATA))] == [1, 2]
        assert len(_records(n, sm.STATE_PARTITION_METADATA)) == 2  # initialized once
        steady = await heartbeat(n, first, 2)
        assert (steady.member_epoch, steady.assignment) == (2, None)  # nothing pending: no new epoch
        later = await heartbeat(n, second, 0)
        assert later.member_epoch == 3 and later.assignment.topic_partitions[0].partitions
    finally:
        n.close()
