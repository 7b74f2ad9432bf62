"""What a share-group member's going releases (Kafka 4.1: ShareSessionCache's disconnect listener,
SharePartitionManager.onMemberLeave and releaseSession): a client connection closing ends the share
sessions it opened and releases what the member holds of those sessions' partitions; the group
coordinator's session timeout releases nothing, so records acquired under a session already gone
wait for their acquisition locks to time out."""

from __future__ import annotations

import asyncio

from share.test_share_apis import (  # noqa: F401
    _set, acquired, heartbeat, node, produce, share_fetch, share_node, topic_id,
)
from shim.apis.dispatch import dispatch
from shim.control.ops import call as control
from shim.errors import ErrorCode
from shim.protocol.messages import RequestHeader, decode_response, encode_request, make, request_module
from shim.security.session import ConnectionSession


def _connection() -> ConnectionSession:
    conn = ConnectionSession("PLAINTEXT")
    conn.gone = asyncio.get_running_loop().create_future()
    return conn


async def fetch_on(node, conn, member, epoch, partitions=(0,), max_wait=0):
    """A ShareFetch sent on the client connection ``conn``."""
    m = request_module(78, 1)
    parts = tuple(m.FetchPartition(partition_index=p, acknowledgement_batches=()) for p in partitions)
    request = make(m.ShareFetchRequest, group_id="g", member_id=member, share_session_epoch=epoch, max_wait=max_wait,
                   min_bytes=1, max_bytes=1 << 20, max_records=500, batch_size=500, forgotten_topics_data=(),
                   topics=(m.FetchTopic(topic_id=topic_id(node), partitions=parts),))
    raw = await dispatch(node, encode_request(RequestHeader(78, 1, 7, "c"), request), session=conn)
    return decode_response(raw, 78, 1)[1]


def _long_locks(node) -> None:
    node.share.configs.alter("g", [_set("share.auto.offset.reset", "earliest"),
                                   _set("share.record.lock.duration.ms", "60000")], False)


async def test_a_closed_connection_releases_its_sessions_partitions(share_node):  # noqa: F811
    """The records come back at once, with the delivery count they had before (Kafka 4.1:
    releaseAcquiredRecords' DECREASE), not when their locks expire."""
    _long_locks(share_node)
    await produce(share_node, 0, b"a", b"b")
    conn = _connection()
    assert acquired(await fetch_on(share_node, conn, "m1", 0)) == [(0, 1, 1)]
    assert acquired(await share_fetch(share_node, "m2", 0)) == []  # m1 holds them
    share_node.share.connection_closed(conn)
    assert acquired(await share_fetch(share_node, "m2", 1)) == [(0, 1, 1)]
    assert (await fetch_on(share_node, _connection(), "m1", 1)).error_code == ErrorCode.share_session_not_found


async def test_a_session_opened_again_elsewhere_is_not_ended_by_the_old_connection(share_node):  # noqa: F811
    """Kafka (KAFKA-19950): a session replaced by an epoch 0 on another connection is stale for the
    first; that connection closing leaves the member's new session and its records alone."""
    _long_locks(share_node)
    await produce(share_node, 0, b"a")
    old, new = _connection(), _connection()
    await fetch_on(share_node, old, "m1", 0)
    assert acquired(await fetch_on(share_node, new, "m1", 0)) == []  # replaced: a0 stays m1's, not released
    share_node.share.connection_closed(old)
    r = await fetch_on(share_node, new, "m1", 1)
    assert r.error_code == ErrorCode.none
    assert acquired(await share_fetch(share_node, "m2", 0)) == []  # a0 is still acquired by m1


async def test_a_members_timeout_leaves_what_it_acquired_under_a_replaced_session(share_node):  # noqa: F811
    """m1 acquired t-0 under a session it then replaced with one over t-1. Its group session times
    out, which releases nothing: the share session still open (over t-1) lives on (Kafka 4.1 does
    not evict idle share sessions) and is the only one anything is released from, here when m1
    closes it; t-0's record waits for its lock to time out, as in Kafka."""
    _long_locks(share_node)
    await produce(share_node, 0, b"a")
    await produce(share_node, 1, b"b")
    assert (await heartbeat(share_node, "m1", 0)).error_code == ErrorCode.none
    assert acquired(await share_fetch(share_node, "m1", 0, partitions=(0,))) == [(0, 0, 1)]
    assert acquired(await share_fetch(share_node, "m1", 0, partitions=(1,)), 1) == [(0, 0, 1)]
    got = await control(share_node.control, "advance_clock", {"ms": 45_000, "clock": "groups"})
    assert got["expired_share_members"] == ["g/m1"] and got["expired_acquisition_locks"] == []
    r = await share_fetch(share_node, "m2", 0, partitions=(0, 1))
    assert (acquired(r, 0), acquired(r, 1)) == ([], [])  # both still m1's
    assert (await share_fetch(share_node, "m1", -1, partitions=())).error_code == ErrorCode.none
    r = await share_fetch(share_node, "m2", 1, partitions=(0, 1))
    assert (acquired(r, 0), acquired(r, 1)) == ([], [(0, 0, 1)])
    r = await share_fetch(share_node, "m2", 2, partitions=(0, 1), acks={1: [(0, 0, (1,))]})  # accepts t-1
    assert acquired(r, 0) == []
    got = await control(share_node.control, "advance_clock", {"ms": 60_000, "clock": "groups"})
    assert got["expired_acquisition_locks"] == ["g/t-0@0"]
    assert acquired(await share_fetch(share_node, "m3", 0, partitions=(0, 1))) == [(0, 0, 2)]


async def test_a_parked_fetch_of_a_closed_session_acquires_nothing(share_node):  # noqa: F811
    """Its connection closed while it waited: the records that then arrive are not acquired for a
    session no longer open (they would wait out their locks with no one to answer)."""
    conn = _connection()
    await fetch_on(share_node, conn, "m1", 0)
    parked = asyncio.ensure_future(fetch_on(share_node, conn, "m1", 1, max_wait=86_400_000))
    while not share_node.changes.parked():
        await asyncio.sleep(0)
    share_node.share.connection_closed(conn)
    await produce(share_node, 0, b"late")  # wakes the parked fetch
    conn.gone.set_result(None)
    assert acquired(await asyncio.wait_for(parked, 5)) == []
    assert acquired(await share_fetch(share_node, "m2", 0)) == [(0, 0, 1)]
