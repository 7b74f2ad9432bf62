"""Incremental fetch sessions (KIP-227) through the Fetch API, as Kafka's FetchManager answers."""

from __future__ import annotations

import asyncio
import datetime

import pytest

from kafka_codecs import decode_batch, encode_batch, iter_batches
from shim.config import BrokerConfig
from shim.errors import ErrorCode as E
from shim.fetch_sessions import SLOTS_CONFIG
from shim.node import Node
from shim.storage.producer_state import Origin
from shim.storage.validation import validate_client_batch

from apis_support import call

FETCH, TS = 1, 1_700_000_000_000


def append(node, partition, *values: bytes, topic="t") -> None:
    data = bytearray(encode_batch([(None, v, (), TS) for v in values]))
    node.logs.get(topic, partition).append(data, validate_client_batch(data, 1 << 20), 0, origin=Origin.CLIENT)


async def fetch(node, session_id, epoch, parts=(), *, forget=(), version=12, replica_id=-1, topic="t", client="c",
                wait_ms=0):
    """``parts``: (partition, fetch_offset); ``forget``: partitions of ``topic`` to leave the session."""
    by_id = version >= 13
    key = None if topic is None else node.logs.topic(topic).topic_id if by_id else topic
    field = "topic_id" if by_id else "topic"

    def build(m):
        partitions = tuple(m.FetchPartition(partition=i, current_leader_epoch=-1, fetch_offset=o, last_fetched_epoch=-1,
                                            log_start_offset=-1, partition_max_bytes=1 << 20) for i, o in parts)
        return m.FetchRequest(
            cluster_id=None, replica_id=replica_id, max_wait=datetime.timedelta(milliseconds=wait_ms),
            min_bytes=1 if wait_ms else 0, max_bytes=1 << 20,
            isolation_level=0, session_id=session_id, session_epoch=epoch, rack_id="",
            topics=(m.FetchTopic(partitions=partitions, **{field: key}),) if parts else (),
            forgotten_topics_data=(m.ForgottenTopic(partitions=tuple(forget), **{field: key}),) if forget else ())
    return await call(node, FETCH, version, build, client_id=client)


def answered(r) -> dict[int, list[bytes]]:
    """partition -> the values it returned, for every partition in the answer."""
    out = {}
    for t in r.responses:
        for p in t.partitions:
            assert p.error_code == E.none
            records = bytes(p.records)
            out[p.partition_index] = [rec.value for pos, h in iter_batches(records)
                                      for rec in decode_batch(records[pos:pos + h.size])[1]]
    return out


@pytest.fixture
def topic(node):
    node.logs.create_topic("t", 3)
    append(node, 0, b"a0")
    return node


async def test_a_full_fetch_makes_a_session_and_an_incremental_one_answers_only_what_changed(topic):
    node = topic
    r = await fetch(node, 0, 0, [(0, 0), (1, 0), (2, 0)])
    assert r.error_code == E.none and r.session_id != 0
    assert answered(r) == {0: [b"a0"], 1: [], 2: []}
    assert node.fetch_sessions.stats()["sessions"] == 1
    session = r.session_id
    # nothing new: every partition is left out, its fetch offset taken from the session
    r = await fetch(node, session, 1, [(0, 1)])
    assert (r.error_code, r.session_id, answered(r)) == (E.none, session, {})
    append(node, 1, b"b0")
    r = await fetch(node, session, 2)
    assert answered(r) == {1: [b"b0"]}
    # partition 1's offset was never moved on in a request: the session still reads it from 0
    append(node, 2, b"c0")
    r = await fetch(node, session, 3, [(1, 1)])
    assert answered(r) == {2: [b"c0"]}
    assert node.fetch_sessions.stats()["incremental_fetches"] == 3


async def test_a_changed_high_watermark_alone_is_answered_once(topic):
    node = topic
    r = await fetch(node, 0, 0, [(0, 1)])
    session = r.session_id
    append(node, 0, b"a1")
    # the request moves the fetch offset past the new record: no records, but a new high watermark
    r = await fetch(node, session, 1, [(0, 2)])
    (p,) = r.responses[0].partitions
    assert (p.partition_index, p.high_watermark, len(p.records)) == (0, 2, 0)
    r = await fetch(node, session, 2)
    assert answered(r) == {}


async def test_forgotten_partitions_leave_the_session(topic):
    node = topic
    session = (await fetch(node, 0, 0, [(0, 1), (1, 0), (2, 0)])).session_id
    assert node.fetch_sessions.stats()["partitions_cached"] == 3
    r = await fetch(node, session, 1, forget=[2])
    assert answered(r) == {}
    assert node.fetch_sessions.stats()["partitions_cached"] == 2
    append(node, 2, b"c0")
    append(node, 1, b"b0")
    assert answered(await fetch(node, session, 2)) == {1: [b"b0"]}
    # forgetting every partition ends the session: the answer is sessionless
    r = await fetch(node, session, 3, forget=[0, 1])
    assert (r.session_id, node.fetch_sessions.stats()["sessions"]) == (0, 0)


async def test_session_errors_answer_the_whole_request(topic):
    node = topic
    session = (await fetch(node, 0, 0, [(0, 0)])).session_id
    r = await fetch(node, session, 5, [(0, 0)])
    assert (r.error_code, r.session_id, r.responses) == (E.invalid_fetch_session_epoch, 0, ())
    r = await fetch(node, session + 1, 1, [(0, 0)])
    assert (r.error_code, r.session_id, r.responses) == (E.fetch_session_id_not_found, 0, ())
    # the session is still there at the epoch it expects
    r = await fetch(node, session, 1)
    assert (r.error_code, r.session_id) == (E.none, session)


async def test_the_final_epoch_closes_the_session(topic):
    node = topic
    session = (await fetch(node, 0, 0, [(0, 0)])).session_id
    r = await fetch(node, session, -1, [(0, 0)])
    assert (r.error_code, r.session_id, answered(r)) == (E.none, 0, {0: [b"a0"]})
    assert node.fetch_sessions.stats()["sessions"] == 0
    r = await fetch(node, session, 1)
    assert r.error_code == E.fetch_session_id_not_found
    # a full request naming a session closes it and opens another
    first = (await fetch(node, 0, 0, [(0, 0)])).session_id
    second = (await fetch(node, first, 0, [(0, 0)])).session_id
    assert second not in (0, first) and node.fetch_sessions.stats()["sessions"] == 1


async def test_a_name_session_is_not_continued_by_topic_ids_nor_the_reverse(topic):
    node = topic
    by_name = (await fetch(node, 0, 0, [(0, 0)], version=12)).session_id
    r = await fetch(node, by_name, 1, version=13)
    assert (r.error_code, r.session_id, r.responses) == (E.fetch_session_topic_id_error, 0, ())
    by_id = (await fetch(node, 0, 0, [(0, 0)], version=13)).session_id
    r = await fetch(node, by_id, 1, version=12)
    assert r.error_code == E.fetch_session_topic_id_error
    append(node, 0, b"a1")
    r = await fetch(node, by_id, 1, version=13)
    assert r.error_code == E.none and r.responses[0].topic_id == node.logs.topic("t").topic_id
    assert answered(r) == {0: [b"a0", b"a1"]}


async def test_a_partition_in_error_is_answered_every_time(topic):
    node = topic
    session = (await fetch(node, 0, 0, [(0, 50)])).session_id
    for epoch in (1, 2):
        r = await fetch(node, session, epoch)
        assert [p.error_code for p in r.responses[0].partitions] == [E.offset_out_of_range]


async def test_eviction_at_the_slot_limit(tmp_path):
    """8 slots are one per shard, and new sessions go to the shards in turn: the ninth consumer
    session (shard 0) is refused, as no session has lived the 2 minutes that make it evictable by a
    consumer; the tenth, a follower's (shard 1), evicts the consumer session there."""
    node = Node(BrokerConfig(data_dir=tmp_path / "d", extra={SLOTS_CONFIG: "8"}))
    try:
        node.logs.create_topic("t", 3)
        sessions = [(await fetch(node, 0, 0, [(0, 0), (1, 0)])).session_id for _ in range(8)]
        assert 0 not in sessions and node.fetch_sessions.stats()["sessions"] == 8
        assert (await fetch(node, 0, 0, [(0, 0), (1, 0), (2, 0)])).session_id == 0
        follower = (await fetch(node, 0, 0, [(0, 0)], replica_id=1)).session_id
        assert follower != 0
        stats = node.fetch_sessions.stats()
        assert (stats["sessions"], stats["evictions"]) == (8, 1)
        assert (await fetch(node, sessions[1], 1)).error_code == E.fetch_session_id_not_found
        assert [(await fetch(node, s, 1)).error_code for s in sessions[:1] + sessions[2:]] == [E.none] * 7
        assert (await fetch(node, follower, 1)).error_code == E.none
    finally:
        node.close()


async def test_zero_slots_means_no_sessions(tmp_path):
    node = Node(BrokerConfig(data_dir=tmp_path / "d", extra={SLOTS_CONFIG: "0"}))
    try:
        node.logs.create_topic("t", 1)
        r = await fetch(node, 0, 0, [(0, 0)])
        assert (r.error_code, r.session_id) == (E.none, 0)
    finally:
        node.close()


@pytest.mark.parametrize("value", ["-1", "many"])
def test_a_bad_slot_count_is_refused_at_start_up(tmp_path, value):
    with pytest.raises(ValueError, match=SLOTS_CONFIG):
        Node(BrokerConfig(data_dir=tmp_path / "d", extra={SLOTS_CONFIG: value}))


async def test_a_topic_id_session_keeps_the_name_its_topic_id_had(topic):
    """Kafka resolves a session partition's topic id once: deleted, its partitions answer
    UNKNOWN_TOPIC_OR_PARTITION; created again under the name (a new id), INCONSISTENT_TOPIC_ID."""
    node = topic
    session = (await fetch(node, 0, 0, [(0, 1)], version=13)).session_id
    node.logs.delete_topic("t")
    r = await fetch(node, session, 1, version=13, topic=None)
    assert [p.error_code for t in r.responses for p in t.partitions] == [E.unknown_topic_or_partition]
    node.logs.create_topic("t", 3)
    r = await fetch(node, session, 2, version=13, topic=None)
    assert [p.error_code for t in r.responses for p in t.partitions] == [E.inconsistent_topic_id]
    # a new full fetch names the new id and reads the new topic
    r = await fetch(node, 0, 0, [(0, 0)], version=13)
    assert [p.error_code for t in r.responses for p in t.partitions] == [E.none]


async def set_consumer_rate(node, client, rate) -> None:
    def build(m):
        return m.AlterClientQuotasRequest(validate_only=False, entries=(m.EntryData(
            entity=(m.EntityData(entity_type="client-id", entity_name=client),),
            ops=(m.OpData(key="consumer_byte_rate", value=rate or 0.0, remove=rate is None),)),))
    r = await call(node, 49, 1, build)
    assert [e.error_code for e in r.entries] == [E.none]


async def test_a_throttled_incremental_fetch_leaves_the_session_as_it_was(node):
    """Kafka: a throttled answer is empty with the session id; the session's cached state is not
    updated, so what it held back is answered next time."""
    node.logs.create_topic("t", 2)
    session = (await fetch(node, 0, 0, [(0, 0), (1, 0)], client="reader")).session_id
    append(node, 1, b"x" * 3000)
    await set_consumer_rate(node, "reader", 400.0)
    r = await fetch(node, session, 1, client="reader")  # 3 KB over the 10 s first window: within 400 B/s
    assert answered(r) == {1: [b"x" * 3000]} and r.throttle_time.total_seconds() == 0
    append(node, 0, b"a")
    await set_consumer_rate(node, "reader", 100.0)  # the rate measured so far is now over it
    r = await fetch(node, session, 2, [(0, 1), (1, 1)], client="reader")
    assert (r.error_code, r.session_id, r.responses) == (E.none, session, ()) and r.throttle_time.total_seconds() > 0
    await set_consumer_rate(node, "reader", None)
    r = await fetch(node, session, 3, client="reader")
    (p,) = r.responses[0].partitions
    assert (p.partition_index, p.high_watermark, len(p.records)) == (0, 1, 0)


async def test_an_incremental_fetch_waits_on_every_partition_of_its_session(topic):
    """The request names no partition; the answer comes when one of the session's gets a record."""
    node = topic
    session = (await fetch(node, 0, 0, [(0, 1), (1, 0), (2, 0)])).session_id
    parked = asyncio.ensure_future(fetch(node, session, 1, wait_ms=30_000))
    while not node.changes.parked():
        assert not parked.done(), parked.result()
        await asyncio.sleep(0)
    append(node, 2, b"c0")
    r = await asyncio.wait_for(parked, 10)
    assert answered(r) == {2: [b"c0"]}
