"""Helpers for the group coordinator tests (imported as ``group_helpers``): nodes without sockets,
a fake clock passed as ``now_ms``, shortcuts for the membership protocol, and requests through
shim.apis.dispatch with kio types.
"""

from __future__ import annotations

import itertools
import struct

from shim.apis.dispatch import dispatch
from shim.coordinators.group import GroupCoordinator, OffsetAndMetadata, Pending
from shim.errors import ErrorCode
from shim.protocol.messages import RequestHeader, decode_response, encode_request, make, request_class

T0 = 1_700_000_000_000  # the fake clock's start
TOPIC = "t"
SESSION = 10_000
REBALANCE = 30_000
E = ErrorCode
_correlation = itertools.count(1)


def subscription(*topics: str, user_data: bytes = b"") -> bytes:
    """A ConsumerProtocolSubscription v0: version, topics, user data."""
    out = struct.pack(">hi", 0, len(topics))
    for t in topics:
        out += struct.pack(">h", len(t)) + t.encode()
    return out + struct.pack(">i", len(user_data)) + user_data


PROTOCOLS = [("range", subscription(TOPIC))]


def join(gc: GroupCoordinator, group: str = "g", member_id: str = "", *, now: int = T0, instance_id=None,
         protocols=None, protocol_type="consumer", session=SESSION, rebalance=REBALANCE, known=False,
         skip=False) -> Pending:
    return gc.join_group(group, member_id, instance_id, protocol_type, list(PROTOCOLS if protocols is None else protocols),
                         session_timeout_ms=session, rebalance_timeout_ms=rebalance, now_ms=now, client_id="c",
                         client_host="/127.0.0.1", require_known_member_id=known, support_skip_assignment=skip)


def sync(gc: GroupCoordinator, member_id: str, generation: int, assignments=None, *, group="g", now=T0,
         instance_id=None, protocol_type=None, protocol_name=None) -> Pending:
    return gc.sync_group(group, generation, member_id, instance_id, dict(assignments or {}), now_ms=now,
                         protocol_type=protocol_type, protocol_name=protocol_name)


def form_group(gc: GroupCoordinator, n: int, group: str = "g", now: int = T0, **join_kw):
    """``n`` dynamic members join an empty group in one rebalance and sync at ``now`` + 6 s; returns
    (member ids, leader first, and the generation). The leader assigns b"a-<index>" to each member."""
    gc.initial_rebalance_delay_ms = 3_000
    pendings = [join(gc, group, now=now, **join_kw) for _ in range(n)]
    assert not any(p.done for p in pendings)
    gc.tick(now + 3_000)  # members arrived during the initial delay: Kafka waits one more delay
    gc.tick(now + 6_000)
    results = [p.result for p in pendings]
    assert all(r.error == E.none for r in results), results
    ids = [r.member_id for r in results]
    generation = results[0].generation_id
    leader = results[0].leader
    assignments = {m: b"a-%d" % i for i, m in enumerate(ids)}
    syncs = {m: sync(gc, m, generation, assignments if m == leader else {}, group=group, now=now + 6_000)
             for m in ids}
    assert all(s.done and s.result.error == E.none for s in syncs.values())
    gc.initial_rebalance_delay_ms = 0
    leader_first = [leader] + [m for m in ids if m != leader]
    return leader_first, generation


def keep_alive(gc: GroupCoordinator, members: dict, generation: int, start: int, end: int, group: str = "g") -> None:
    """Heartbeat ``members`` ({member id: group instance id}) every half session timeout from
    ``start`` until ``end``, ticking the clock at each step."""
    t = start
    while t < end:
        for member_id, instance_id in members.items():
            gc.heartbeat(group, member_id, instance_id, generation, t)
        gc.tick(t)
        t += SESSION // 2


def offsets(*pairs, metadata: str = "") -> dict:
    """{(TOPIC, partition): OffsetAndMetadata(offset)} from (partition, offset) pairs."""
    return {(TOPIC, p): OffsetAndMetadata(o, -1, metadata, T0) for p, o in pairs}


def fetched(gc: GroupCoordinator, group: str = "g", partitions=None, stable: bool = False) -> dict:
    """{(topic, partition): offset or error code} from OffsetFetch."""
    out = {}
    for tp, committed, code in gc.fetch_offsets(group, stable, partitions):
        out[tp] = code if code != E.none else (committed.offset if committed else -1)
    return out


async def call(node, api_key: int, version: int, client_host: str = "", **fields):
    """One request through the dispatcher; returns the decoded response body."""
    request = make(request_class(api_key, version), **fields)
    corr = next(_correlation)
    raw = await dispatch(node, encode_request(RequestHeader(api_key, version, corr, "group-tests"), request),
                         client_host)
    got, response = decode_response(raw, api_key, version)
    assert got == corr
    return response
