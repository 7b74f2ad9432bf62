"""Fetch sessions grown by a client through the broker stay bounded: an incremental Fetch may add
partitions of any topic, known or not, so without a bound one connection grew one session by
100,000 partitions (50 MB) a 3 MB request, and each later request walked all of them in one turn."""

from __future__ import annotations

import datetime

from shim.apis.dispatch import dispatch
from shim.errors import ErrorCode
from shim.fetch_sessions import MAX_SESSION_PARTITIONS
from shim.protocol.messages import RequestHeader, decode_response, encode_request, make, request_module

VERSION = 12
m = request_module(1, VERSION)


async def fetch(node, session_id: int, epoch: int, partitions: range, topic: str = "no-such-topic"):
    request = make(m.FetchRequest, replica_id=-1, max_wait=datetime.timedelta(0), min_bytes=0, max_bytes=1 << 20,
                   isolation_level=0, session_id=session_id, session_epoch=epoch, rack_id="",
                   forgotten_topics_data=(), topics=(m.FetchTopic(topic=topic, partitions=tuple(m.FetchPartition(
                       partition=i, current_leader_epoch=-1, fetch_offset=0, last_fetched_epoch=-1,
                       log_start_offset=-1, partition_max_bytes=1024) for i in partitions)),))  # fmt: skip
    frame = encode_request(RequestHeader(1, VERSION, 1, "c"), request)
    return decode_response(await dispatch(node, frame), 1, VERSION)[1]


def answered(response) -> int:
    return sum(len(t.partitions) for t in response.responses)


async def test_an_incremental_fetch_growing_a_session_past_its_limit_ends_it(node):
    session = (await fetch(node, 0, 0, range(1))).session_id
    assert session != 0
    step = MAX_SESSION_PARTITIONS // 2
    grown = await fetch(node, session, 1, range(1, step))
    assert (grown.error_code, grown.session_id, answered(grown)) == (ErrorCode.none, session, step)
    over = await fetch(node, session, 2, range(step, 3 * step))  # was answered NONE, the session 3 * step
    assert (over.error_code, over.session_id, answered(over)) == (ErrorCode.fetch_session_id_not_found, 0, 0)
    assert node.fetch_sessions.stats()["sessions"] == 0 and node.fetch_sessions.stats()["partitions_cached"] == 0
    again = await fetch(node, session, 3, range(1))
    assert again.error_code == ErrorCode.fetch_session_id_not_found


async def test_a_full_fetch_over_the_limit_is_answered_in_full_without_a_session(node):
    response = await fetch(node, 0, 0, range(MAX_SESSION_PARTITIONS + 1))
    assert (response.error_code, response.session_id, answered(response)) == (
        ErrorCode.none, 0, MAX_SESSION_PARTITIONS + 1)
    assert node.fetch_sessions.stats()["partitions_cached"] == 0
    within = await fetch(node, 0, 0, range(MAX_SESSION_PARTITIONS))
    assert within.session_id != 0 and node.fetch_sessions.stats()["partitions_cached"] == MAX_SESSION_PARTITIONS
