"""Share-partition state in ``__share_group_state``: Kafka's ShareSnapshot/ShareUpdate records,
snapshots every ``share.coordinator.snapshot.update.records.per.snapshot`` updates, pruning below
the oldest latest snapshot, replay at start-up and the move of older kafka-shim's JSON files.

kio carries no schemas of coordinator records, so the layouts are checked byte by byte against
Kafka's ShareSnapshotValue/ShareUpdateValue JSON schemas (version 0, flexible)."""

from __future__ import annotations

import base64
import json
import struct
import uuid

from hypothesis import given, settings
from hypothesis import strategies as st
from kafka_codecs.records import decode_batch
from node_support import NodeFactory
from share.test_share_apis import TOPIC, _set, acquired, produce, share_ack, share_fetch
from shim.coordinators.share import records as sr
from shim.coordinators.share.store import SHARE_STATE_TOPIC, from_snapshot, share_partition_key, to_batches
from shim.errors import ErrorCode
from shim.log_cleaner import LogCleaner

TOPIC_ID = uuid.UUID("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0")


def test_a_snapshot_is_kafkas_layout():
    key = sr.encode_key(sr.ShareKey(sr.SNAPSHOT, "g", TOPIC_ID, 3))
    assert key == b"\x00\x00" + b"\x00\x01g" + TOPIC_ID.bytes + b"\x00\x00\x00\x03"
    snap = sr.ShareSnapshot(7, 1, 2, 100, 1_000, 2_000, (sr.StateBatch(100, 104, 0, 2), sr.StateBatch(105, 105, 4, 1)))
    value = sr.encode_snapshot(snap)
    head = struct.pack(">hiiiqqq", 0, 7, 1, 2, 100, 1_000, 2_000)
    batches = b"\x03" + struct.pack(">qqbh", 100, 104, 0, 2) + b"\x00" + struct.pack(">qqbh", 105, 105, 4, 1) + b"\x00"
    assert value == head + batches + b"\x00"
    assert sr.decode_key(key) == sr.ShareKey(sr.SNAPSHOT, "g", TOPIC_ID, 3)
    assert sr.decode_value(sr.SNAPSHOT, value) == snap


def test_an_update_is_kafkas_layout():
    key = sr.encode_key(sr.ShareKey(sr.UPDATE, "g", TOPIC_ID, 0))
    assert key[:2] == b"\x00\x01"
    update = sr.ShareUpdate(3, 5, -1, (sr.StateBatch(9, 9, 2, 1),))
    value = sr.encode_update(update)
    assert value == struct.pack(">hiiq", 0, 3, 5, -1) + b"\x02" + struct.pack(">qqbh", 9, 9, 2, 1) + b"\x00\x00"
    assert sr.decode_value(sr.UPDATE, value) == update
    assert sr.decode_value(sr.SNAPSHOT, None) is None  # a tombstone


def test_an_update_lays_its_batches_over_the_snapshot():
    old = (sr.StateBatch(10, 19, 0, 1),)
    new = (sr.StateBatch(12, 13, 2, 1),)
    assert sr.combine(old, new, 11) == (sr.StateBatch(11, 11, 0, 1), sr.StateBatch(12, 13, 2, 1),
                                        sr.StateBatch(14, 19, 0, 1))


def test_the_key_hashes_as_kafkas_share_partition_key():
    # Kafka: SharePartitionKey.toString -- the topic id in Uuid.toString's base64url form
    assert share_partition_key("g", TOPIC_ID, 3) == "g:Dx4tPEtaaXiHlqW0w9Lh8A:3"
    assert base64.urlsafe_b64decode("Dx4tPEtaaXiHlqW0w9Lh8A==") == TOPIC_ID.bytes


def _records(node):
    out = []
    for p in range(node.logs.topics[SHARE_STATE_TOPIC].partitions):
        plog = node.logs.get(SHARE_STATE_TOPIC, p)
        for raw in plog.iter_batches():
            for r in decode_batch(raw)[1]:
                key = sr.decode_key(r.key)
                out.append((p, r.offset, key, sr.decode_value(key.kind, r.value)))
    return out


def _open(nodes, **extra):
    node = nodes(extra=extra) if extra else nodes()
    if TOPIC not in node.logs.topics:
        node.logs.create_topic(TOPIC, 2)
        node.finalize_features({"share.version": 1})
        node.share.configs.alter("g", [_set("share.auto.offset.reset", "earliest")], False)
    return node


async def test_acknowledgements_are_updates_then_a_snapshot_and_the_log_is_pruned(tmp_path):
    nodes = NodeFactory(tmp_path / "data", kafka_version="4.1")
    node = _open(nodes, **{"share.coordinator.snapshot.update.records.per.snapshot": "2"})
    try:
        await produce(node, 0, *[b"v%d" % i for i in range(6)])
        assert acquired(await share_fetch(node, "m1", 0)) == [(0, 5, 1)]
        for epoch, offset in enumerate(range(5), start=1):  # accept 0 to 4 one at a time
            r = await share_ack(node, "m1", epoch, 0, [(offset, offset, (1,))])
            assert r.responses[0].partitions[0].error_code == ErrorCode.none
        info = node.logs.topics[SHARE_STATE_TOPIC]
        assert info.partitions == 50 and info.configs["cleanup.policy"] == "delete"
        assert info.configs["retention.ms"] == "-1"
        kinds = [(key.kind, value.snapshot_epoch) for _, _, key, value in _records(node)]
        # snapshot 0, two updates, then snapshot 1 (whose write prunes what came before it), one update
        assert kinds == [(sr.SNAPSHOT, 1), (sr.UPDATE, 1)]
        (partition, first, key, snap), (_, _, _, update) = _records(node)
        assert (key.group_id, key.topic_id, key.partition) == ("g", node.logs.topics[TOPIC].topic_id, 0)
        assert partition == node.share.store.partition_for("g", key.topic_id, 0)
        assert node.logs.get(SHARE_STATE_TOPIC, partition).log_start_offset == first == 3
        assert update.start_offset == 5 and update.batches == (sr.StateBatch(5, 5, 0, 1),)
    finally:
        nodes.crash_all()


async def test_the_state_topic_is_replayed_after_kill_9(tmp_path):
    nodes = NodeFactory(tmp_path / "data", kafka_version="4.1")
    node = _open(nodes)
    await produce(node, 0, b"a", b"b", b"c", b"d", b"e")
    assert acquired(await share_fetch(node, "m1", 0)) == [(0, 4, 1)]
    await share_ack(node, "m1", 1, 0, [(0, 0, (1,)), (2, 2, (3,)), (3, 3, (2,))])  # accept, reject, release
    nodes.crash(node)
    again = _open(nodes)
    try:
        sp = again.share.share_partition("g", TOPIC, 0, again.logs.get(TOPIC, 0), 0)
        assert sp.start_offset == 1
        # 1 and 4 were held (written AVAILABLE), 3 released: all back with their delivery counts
        assert acquired(await share_fetch(again, "m2", 0)) == [(1, 1, 2), (3, 4, 2)]
        assert not (tmp_path / "data" / "__cluster_metadata" / "share-state").exists()
    finally:
        nodes.crash_all()


async def test_older_json_state_moves_into_the_topic(tmp_path):
    nodes = NodeFactory(tmp_path / "data", kafka_version="4.1")
    node = _open(nodes)
    await produce(node, 0, b"a", b"b", b"c")
    nodes.close(node)
    legacy = tmp_path / "data" / "__cluster_metadata" / "share-state"
    legacy.mkdir()
    name = base64.urlsafe_b64encode(b"g").decode() + ".json"
    (legacy / name).write_text(json.dumps({"group": "g", "partitions": {
        f"{TOPIC}:0": {"start_offset": 1, "end_offset": 3, "records": [[2, 0, 1]]}}}))
    again = _open(nodes)
    try:
        assert not legacy.exists()
        [(_, _, key, snap)] = _records(again)
        assert key.kind == sr.SNAPSHOT and snap.start_offset == 1
        assert snap.batches == (sr.StateBatch(1, 1, 4, 0), sr.StateBatch(2, 2, 0, 1))
        assert acquired(await share_fetch(again, "m1", 0)) == [(2, 2, 2)]
    finally:
        nodes.crash_all()


async def test_retention_and_the_cleaner_never_remove_share_state(tmp_path):
    nodes = NodeFactory(tmp_path / "data", kafka_version="4.1")
    node = _open(nodes)
    node.logs.set_topic_configs(TOPIC, {"internal.segment.bytes": "1024"})  # Kafka 4.1's small segments for tests
    try:
        await produce(node, 0, *[b"x" * 100 for _ in range(30)])
        assert acquired(await share_fetch(node, "m1", 0)) == [(0, 29, 1)]
        for epoch, offset in enumerate(range(0, 30, 2), start=1):
            await share_ack(node, "m1", epoch, 0, [(offset + 1, offset + 1, (1,))])
        before = _records(node)
        assert len(before) == 15
        node.logs.enforce_retention(2**62)
        assert await LogCleaner(node).clean_now(2**62) == 0  # cleanup.policy=delete: never compacted
        assert _records(node) == before
    finally:
        nodes.crash_all()


async def test_a_deleted_topics_share_state_is_deleted_with_it(tmp_path):
    nodes = NodeFactory(tmp_path / "data", kafka_version="4.1")
    node = _open(nodes)
    await produce(node, 0, b"a", b"b")
    assert acquired(await share_fetch(node, "m1", 0)) == [(0, 1, 1)]
    await share_ack(node, "m1", 1, 0, [(0, 0, (1,))])
    old_id = node.logs.topics[TOPIC].topic_id
    assert node.share.store.get(("g", old_id, 0)) is not None
    node.logs.delete_topic(TOPIC)
    assert node.share.store.get(("g", old_id, 0)) is None
    # the tombstone was written, and with no key left in that partition the whole log is redundant
    partition = node.share.store.partition_for("g", old_id, 0)
    plog = node.logs.get(SHARE_STATE_TOPIC, partition)
    assert _records(node) == [] and plog.log_start_offset == plog.log_end_offset == 2
    nodes.crash(node)
    again = _open(nodes)
    try:
        assert again.share.store.entries == {}
    finally:
        nodes.crash_all()


@settings(max_examples=200, deadline=None)
@given(start=st.integers(0, 50), cells=st.lists(st.tuples(st.sampled_from([None, 0, 2, 4]), st.integers(1, 4)),
                                                  max_size=30))
def test_state_batches_keep_what_a_share_partition_needs(start, cells):
    """In-flight records survive the trip through state batches with their delivery counts; finished
    offsets and gaps keep no record; the end of the fetched window is kept."""
    records = [[start + i, state, count] for i, (state, count) in enumerate(cells) if state is not None]
    state = {"start_offset": start, "end_offset": start + len(cells), "records": records}
    snap = sr.ShareSnapshot(0, 0, 0, start, 0, 0, tuple(to_batches(state)))
    back = from_snapshot(sr.decode_value(sr.SNAPSHOT, sr.encode_snapshot(snap)))
    assert back["start_offset"] == start
    assert back["records"] == [r for r in records if r[1] == 0]
    assert back["end_offset"] == start + len(cells)
