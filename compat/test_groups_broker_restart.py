"""Group state and committed offsets survive a broker restart, clean (SIGTERM) or kill -9.

Two aiokafka members of a stable group keep running while the broker subprocess is stopped
and started again on the same port and data directory. The broker loads the group from
__consumer_offsets: it is Stable with the same members and generation (a Heartbeat with the old
generation is accepted, so no member had to rejoin), the committed offsets are unchanged, and the
members go on consuming their own partitions. After a second restart a new member resumes at the
offsets committed after the first one.

(aiokafka rather than kafka-python: kafka-python 3.0's poll() can block for good inside its own IO
layer, with no request outstanding at the broker, and does so more often around reconnections.)
"""

from __future__ import annotations

import signal

import pytest

from compat.groups_support import create_topic, describe_group, offset_fetch, produce, start_member, take_all, wait_for
from shim.protocol.messages import RequestHeader, decode_response, encode_request, make, request_class

PARTITIONS = 4
PER_PARTITION = 10
TOPIC, GROUP = "restart", "restart-group"

pytestmark = [pytest.mark.compat(client="aiokafka", scenario="broker.restart_groups"), pytest.mark.shim_only("restarts the broker")]


def batch(tag):
    return {p: [f"{tag}-{p}-{i}".encode() for i in range(PER_PARTITION)] for p in range(PARTITIONS)}


def consume(members, expected):
    return take_all(members, expected, 60)


def heartbeat(bootstrap, member_id, generation):
    """One raw Heartbeat v4 for a member: its error code."""
    import socket
    import struct

    from compat.support import coordinator_address

    payload = encode_request(RequestHeader(12, 4, 1, "restart-test"), make(
        request_class(12, 4), group_id=GROUP, generation_id=generation, member_id=member_id, group_instance_id=None))
    with socket.create_connection(coordinator_address(bootstrap, GROUP), timeout=10) as s:
        s.sendall(struct.pack(">i", len(payload)) + payload)
        size = struct.unpack(">i", s.recv(4, socket.MSG_WAITALL))[0]
        _, response = decode_response(s.recv(size, socket.MSG_WAITALL), 12, 4)
    return response.error_code


def restart(shim_process, broker, data_dir, port, clean):
    if clean:
        broker.send_signal(signal.SIGTERM)
        assert broker.wait() == 0
    else:
        broker.kill9()
    broker = shim_process(data_dir, port=port)
    broker.wait_ready()
    return broker


def await_split(members) -> None:
    wait_for(lambda: sorted(len(m.assignment()) for m in members) == [2, 2]
             and set().union(*(m.assignment() for m in members)) == set(range(PARTITIONS)), 60, "a 2/2 split")


def assert_each_read_its_own(got, owned, members, values) -> None:
    """Each member read the records of the partitions it owned before, still owns, and no other's,
    each partition's in the order they were produced."""
    for records, partitions, m in zip(got, owned, members):
        assert {p for p, _, _ in records} == partitions == m.assignment()
        for p in partitions:
            assert [v for q, _, v in records if q == p] == values[p]


@pytest.mark.parametrize("clean", [True, False], ids=["clean", "kill-9"])
def test_group_state_and_offsets_survive_a_broker_restart(shim_process, free_port, tmp_path, clean):
    port, data_dir = free_port(), tmp_path / "broker"
    broker = shim_process(data_dir, port=port)
    bootstrap = broker.wait_ready()
    create_topic(bootstrap, TOPIC, PARTITIONS)
    members = [start_member("aiokafka", bootstrap, TOPIC, GROUP) for _ in range(2)]
    try:
        await_split(members)
        owned = [m.assignment() for m in members]
        first = batch("first")
        produce(bootstrap, TOPIC, first)
        consume(members, first)
        for m in members:
            m.commit()
        generations = [m.call(lambda c: c.generation()) for m in members]
        before = describe_group(bootstrap, GROUP)
        assert before == ("Stable", sorted(member_id for _, member_id in generations))
        committed = offset_fetch(bootstrap, GROUP, TOPIC, range(PARTITIONS))
        assert committed == {p: PER_PARTITION for p in range(PARTITIONS)}

        broker = restart(shim_process, broker, data_dir, port, clean)

        assert describe_group(bootstrap, GROUP) == before
        assert offset_fetch(bootstrap, GROUP, TOPIC, range(PARTITIONS)) == committed
        for generation, member_id in generations:
            assert heartbeat(bootstrap, member_id, generation) == 0  # same member, same generation
        second = batch("second")
        produce(bootstrap, TOPIC, second)
        assert_each_read_its_own(consume(members, second), owned, members, second)
        assert [m.call(lambda c: c.generation()) for m in members] == generations  # no rebalance
        for m in members:
            m.commit()
    finally:
        for m in members:
            m.close()

    broker = restart(shim_process, broker, data_dir, port, clean)
    assert offset_fetch(bootstrap, GROUP, TOPIC, range(PARTITIONS)) == {p: 2 * PER_PARTITION for p in range(PARTITIONS)}
    third = batch("third")
    produce(bootstrap, TOPIC, third)
    fresh = start_member("aiokafka", bootstrap, TOPIC, GROUP)
    try:
        (got,) = consume([fresh], third)
        assert sorted(v for _, _, v in got) == sorted(v for vs in third.values() for v in vs)
    finally:
        fresh.close()
