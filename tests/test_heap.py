"""shim.heap: the state a broker holds leaves the walks of the oldest generation's collections, and
memory stays bounded (a dead cycle frozen is freed once the heap has doubled).

A collection of the oldest generation walks every tracked object: with 100,000 ACLs held, or
10,000 partitions, each such collection paused the loop 40-130 ms wherever it fell. With the
policy, the first one after a bulk load freezes what it left alive; the later ones walk only what
was allocated since. The pauses are measured with gc.callbacks, in the loop thread's CPU time.
"""

from __future__ import annotations

import gc
import struct
import threading
import time
import weakref

import pytest

from shim import Broker, heap
from shim.errors import ErrorCode as E
from shim.protocol.messages import RequestHeader, decode_response, encode_request, make, request_module
from shim.security.acls import AclBinding, AclOperation as O, AclPermissionType as A, PatternType as P
from shim.security.acls import ResourceType as R

from test_server_limits import connect

PAUSE_LIMIT = 0.015  # seconds of CPU for one collection of the oldest generation


@pytest.fixture
def policy():
    installed = heap.install()
    yield installed
    heap.uninstall()


def _oldest_collection_pause() -> float:
    """One collection of the oldest generation, as the collector starts one when its counts say so."""
    began, pauses, me = [0.0], [], threading.get_ident()

    def on_gc(phase, info):
        if info["generation"] == 2 and threading.get_ident() == me:
            if phase == "start":
                began[0] = time.thread_time()
            else:
                pauses.append(time.thread_time() - began[0])

    gc.callbacks.insert(0, on_gc)  # before the policy's: the pause is the collection's own
    try:
        gc.collect()
    finally:
        gc.callbacks.remove(on_gc)
    (pause,) = pauses
    return pause


async def test_with_100000_acls_created_a_collection_walks_only_what_is_new(policy, tmp_path):
    """Created by one CreateAcls at run time, as a client would: the collection after it freezes
    them; the next collections took 40-60 ms each here, now a few ms."""
    n = 100_000
    m = request_module(30, 3)
    creations = tuple(m.AclCreation(resource_type=2, resource_name=f"topic-{i}", resource_pattern_type=3,
                                    principal="User:alice", host="*", operation=3, permission_type=3) for i in range(n))
    async with Broker(data_dir=tmp_path / "d", listen="127.0.0.1:0", super_users="User:ANONYMOUS",
                      authorizer_class_name="org.apache.kafka.metadata.authorizer.StandardAuthorizer") as broker:
        reader, writer = await connect(broker)
        payload = encode_request(RequestHeader(30, 3, 1, "heap"), make(m.CreateAclsRequest, creations=creations))
        writer.write(struct.pack(">i", len(payload)) + payload)
        size = struct.unpack(">i", await reader.readexactly(4))[0]
        response = decode_response(await reader.readexactly(size), 30, 3)[1]
        assert {r.error_code for r in response.results} == {E.none} and len(broker.node.acls) == n
        del creations, payload, response
        _oldest_collection_pause()  # the one that comes after the load: it freezes what lives
        pauses = [_oldest_collection_pause() for _ in range(3)]
        assert max(pauses) < PAUSE_LIMIT, pauses
        alice = AclBinding(R.TOPIC, "topic-99999", P.LITERAL, "User:alice", "*", O.READ, A.ALLOW)
        assert alice in broker.node.acls.applying_to(R.TOPIC, "topic-99999")  # frozen, still in force
        writer.close()


async def test_with_10000_partitions_a_collection_walks_only_what_is_new(policy, node):
    for t in range(100):
        node.logs.create_topic(f"t{t}", 100)
    _oldest_collection_pause()
    pauses = [_oldest_collection_pause() for _ in range(3)]
    assert max(pauses) < PAUSE_LIMIT, pauses
    assert len(node.logs.logs) == 10_000


class _Cycle:
    __slots__ = ("other", "payload", "__weakref__")


def test_cycles_that_die_frozen_are_freed_once_the_heap_has_doubled(policy):
    """Frozen objects are never walked, so a cycle that dies frozen stays; the policy unfreezes
    once the frozen objects reach twice the live heap last counted, and the next collection frees
    it. Without that, each round below would leave its 240,000 objects behind for good."""
    rounds, tracked = 0, []
    gc.collect()  # the policy counts the live heap
    kept = [_Cycle() for _ in range(10)]
    first = None
    while rounds < 40:
        rounds += 1
        held = []  # alive across one collection of the oldest generation: frozen with the rest
        for _ in range(60_000):
            a, b = _Cycle(), _Cycle()
            a.other, b.other, a.payload, b.payload = b, a, [], []
            held.append(a)
        first = first or weakref.ref(held[0])
        gc.collect()
        del held  # now dead, frozen: only an unfreeze and a collection free them
        tracked.append(gc.get_freeze_count() + len(gc.get_objects()))
        if first() is None:
            break
    assert first() is None, (rounds, tracked)
    assert policy.unfreezes >= 1 and kept  # freed by a walk of the whole heap, after an unfreeze
    live = policy.live_at_full_walk
    assert max(tracked) <= heap.GROWTH * max(live, heap.FREEZE_ABOVE) + 2 * 240_000, (live, tracked)
