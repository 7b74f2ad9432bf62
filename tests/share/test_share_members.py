"""Share-group membership in ``__consumer_offsets``: Kafka 4.1's ShareGroup* records (layouts
checked byte by byte against the group coordinator's JSON schemas; kio has none of them), written
on every change and replayed at start-up, so a restarted broker describes the group, its epoch and
its members as before; share sessions are not kept (SHARE_SESSION_NOT_FOUND) and members go on."""

from __future__ import annotations

import struct
import uuid

from kafka_codecs.records import decode_batch
from node_support import NodeFactory
from share.test_share_apis import TOPIC, _set, acquired, call, heartbeat, produce, share_fetch
from shim.coordinators.share import members as sm
from shim.errors import ErrorCode

TID = uuid.UUID("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0")


def test_the_records_are_kafkas_layout():
    key, value = sm.encode(sm.Record(sm.MEMBER_METADATA, "g", "m", sm.Member(None, "c", "h", ("a", "b"))))
    assert key == b"\x00\x0a\x00\x01g\x00\x01m"
    assert value == b"\x00\x00" + b"\x00" + b"\x02c" + b"\x02h" + b"\x03\x02a\x02b" + b"\x00"
    key, value = sm.encode(sm.Record(sm.GROUP_METADATA, "g", None, (7, -5)))
    # Kafka 4.1's ShareGroupMetadataValue: MetadataHash is a plain field, not tagged as in
    # ConsumerGroupMetadataValue
    assert key == b"\x00\x0b\x00\x01g" and value == b"\x00\x00" + struct.pack(">iq", 7, -5) + b"\x00"
    assert sm.decode(key, b"\x00\x00" + struct.pack(">i", 7) + b"\x00").value == (7, 0)  # older kafka-shim's
    key, value = sm.encode(sm.Record(sm.CURRENT_ASSIGNMENT, "g", "m", (3, ((TID, (0, 2)),), 2)))
    assert key[:2] == b"\x00\x0e"
    assert value == (b"\x00\x00" + struct.pack(">iib", 3, 2, 0) + b"\x02" + TID.bytes + b"\x03"
                     + struct.pack(">ii", 0, 2) + b"\x00" + b"\x00")
    for kind, v in [(sm.MEMBER_METADATA, sm.Member("r", "c", "h", ("a",))), (sm.TARGET_MEMBER, ((TID, (1,)),)),
                    (sm.TARGET_METADATA, 4), (sm.CURRENT_ASSIGNMENT, (3, ((TID, (0, 2)),), 1)),
                    (sm.GROUP_METADATA, (9, 1 << 40))]:
        r = sm.Record(kind, "g", "m" if kind in (10, 13, 14) else None, v)
        assert sm.decode(*sm.encode(r)) == r
    assert sm.decode(b"\x00\x0a\x00\x01g\x00\x01m", None).value is None  # a tombstone


def _share_kinds(node):
    out = []
    for p in range(node.logs.topics["__consumer_offsets"].partitions):
        for raw in node.logs.get("__consumer_offsets", p).iter_batches():
            out += [int.from_bytes(r.key[:2], "big") for r in decode_batch(raw)[1]
                    if int.from_bytes(r.key[:2], "big") in sm.KINDS]
    return out


def _open(nodes):
    node = nodes()
    if TOPIC not in node.logs.topics:
        node.logs.create_topic(TOPIC, 2)
        node.finalize_features({"share.version": 1})
        node.share.configs.alter("g", [_set("share.auto.offset.reset", "earliest")], False)
    return node


async def describe(node):
    [g] = (await call(node, 77, 1, group_ids=("g",), include_authorized_operations=False)).groups
    return g.error_code, g.group_state, g.group_epoch, g.assignment_epoch, sorted(
        (m.member_id, m.member_epoch, sorted(p for t in m.assignment.topic_partitions for p in t.partitions))
        for m in g.members)


async def test_a_restarted_broker_describes_the_group_and_its_members_go_on(tmp_path):
    nodes = NodeFactory(tmp_path / "data", kafka_version="4.1")
    node = _open(nodes)
    first = (await heartbeat(node, "m1", 0)).member_epoch
    epoch = (await heartbeat(node, "m2", 0)).member_epoch
    assert epoch > first and (await heartbeat(node, "m1", first)).member_epoch == epoch
    await produce(node, 0, b"a")
    assert acquired(await share_fetch(node, "m1", 0)) == [(0, 0, 1)]
    before = await describe(node)
    assert before == (ErrorCode.none, "Stable", epoch, epoch, [("m1", epoch, [0]), ("m2", epoch, [1])])
    assert _share_kinds(node)[:5] == [sm.MEMBER_METADATA, sm.GROUP_METADATA, sm.TARGET_MEMBER, sm.TARGET_METADATA,
                                      sm.CURRENT_ASSIGNMENT]
    nodes.crash(node)
    again = _open(nodes)
    try:
        assert await describe(again) == before
        # the share session is gone, the membership is not: the member heartbeats on at its epoch
        assert (await share_fetch(again, "m1", 1)).error_code == ErrorCode.share_session_not_found
        r = await heartbeat(again, "m1", epoch)
        assert (r.error_code, r.member_epoch) == (ErrorCode.none, epoch)
        # acquisition is not written (as in Kafka): the record held when the broker died comes back as it was
        assert acquired(await share_fetch(again, "m1", 0)) == [(0, 0, 1)]
    finally:
        nodes.crash_all()


async def test_a_member_that_leaves_or_times_out_is_gone_after_a_restart(tmp_path):
    nodes = NodeFactory(tmp_path / "data", kafka_version="4.1")
    node = _open(nodes)
    await heartbeat(node, "m1", 0)
    epoch = (await heartbeat(node, "m2", 0)).member_epoch
    await heartbeat(node, "m1", -1)
    node.share.tick(2**62)  # m2's session times out
    last = node.share.groups["g"].group_epoch
    assert last > epoch
    nodes.crash(node)
    again = _open(nodes)
    try:
        assert await describe(again) == (ErrorCode.none, "Empty", last, last, [])
        assert (await heartbeat(again, "m2", epoch)).error_code == ErrorCode.unknown_member_id
    finally:
        nodes.crash_all()


async def test_a_deleted_group_stays_deleted(tmp_path):
    nodes = NodeFactory(tmp_path / "data", kafka_version="4.1")
    node = _open(nodes)
    await heartbeat(node, "m1", 0)
    await heartbeat(node, "m1", -1)
    r = await call(node, 42, 2, groups_names=("g",))
    assert r.results[0].error_code == ErrorCode.none
    nodes.crash(node)
    again = _open(nodes)
    try:
        assert (await describe(again))[0] == ErrorCode.group_id_not_found
    finally:
        nodes.crash_all()


async def test_a_failed_write_leaves_the_group_as_it_was(tmp_path):
    from shim.errors import KafkaError

    nodes = NodeFactory(tmp_path / "data", kafka_version="4.1")
    node = _open(nodes)
    try:
        await heartbeat(node, "m1", 0)
        before = await describe(node)

        def refuse(*_):
            raise KafkaError(ErrorCode.coordinator_not_available, "the offsets partition is offline")

        node.share.write_group_records = refuse
        r = await heartbeat(node, "m2", 0)
        assert r.error_code == ErrorCode.coordinator_not_available
        assert await describe(node) == before  # m2 did not join
    finally:
        nodes.crash_all()


async def test_a_refused_subscription_change_leaves_the_member_as_it_was(tmp_path):
    from shim.errors import KafkaError

    nodes = NodeFactory(tmp_path / "data", kafka_version="4.1")
    node = _open(nodes)
    try:
        node.logs.create_topic("other", 1)
        epoch = (await heartbeat(node, "m1", 0)).member_epoch
        for _ in range(5):  # the partitions the join initialized get assigned by a later heartbeat
            r = await heartbeat(node, "m1", epoch)
            if r.member_epoch == epoch:
                break
            epoch = r.member_epoch
        before = await describe(node)
        write = node.share.write_group_records

        def refuse(*_):
            raise KafkaError(ErrorCode.coordinator_not_available, "the offsets partition is offline")

        node.share.write_group_records = refuse
        r = await heartbeat(node, "m1", epoch, topics=("other",))
        assert r.error_code == ErrorCode.coordinator_not_available
        node.share.write_group_records = write
        assert await describe(node) == before
        r = await heartbeat(node, "m1", epoch)  # its subscription as it was: nothing changes
        assert (r.error_code, r.member_epoch) == (ErrorCode.none, epoch)
        assert await describe(node) == before
    finally:
        nodes.crash_all()
