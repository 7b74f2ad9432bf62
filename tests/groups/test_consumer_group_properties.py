"""Random sequences of consumer-group requests and timeouts: the coordinator never raises, and no
partition is ever held by two members (the invariant the revoke-before-assign protocol exists
for), whatever epochs, owned partitions and timings clients send."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from group_helpers import T0, TOPIC
from shim.coordinators.group.consumer_coordinator import HeartbeatRequest
from shim.errors import ErrorCode as E

MEMBERS = ["a", "b", "c", "d"]
ops = st.lists(st.tuples(
    st.sampled_from(["join", "beat", "beat", "beat", "stale", "leave", "static_leave", "tick", "claim"]),
    st.sampled_from(MEMBERS),
    st.integers(0, 60_000),
), min_size=1, max_size=60)


def holders(group):
    held = {}
    for m in group.members.values():
        for a in (m.assigned, m.pending_revocation):
            for t, ps in a.items():
                for p in ps:
                    held.setdefault((t, p), set()).add(m.member_id)
    return held


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=ops)
def test_no_partition_is_ever_held_twice(nodes, ops):
    node = nodes.open[0] if nodes.open else nodes()  # one node for every example; groups start empty
    if TOPIC not in node.logs.topics:
        node.logs.create_topic(TOPIC, 6)
    gc = node.groups
    gc.consumer.groups.clear()
    epochs, owned = {}, {}
    now = T0
    topic_id = node.logs.topics[TOPIC].topic_id
    for op, m, dt in ops:
        now += dt
        if op == "tick":
            gc.tick(now)
            continue
        if op == "join":
            req = HeartbeatRequest("g", m, 0, rebalance_timeout_ms=5_000, subscribed_topic_names=(TOPIC,), owned={},
                                   instance_id="i-" + m if m in "cd" else None)
        elif op in ("leave", "static_leave"):
            req = HeartbeatRequest("g", m, -2 if op == "static_leave" else -1,
                                   instance_id="i-" + m if m in "cd" else None)
        else:
            claim = {topic_id: frozenset(range(6))} if op == "claim" else owned.get(m, {})
            epoch = epochs.get(m, 1) - (1 if op == "stale" else 0)
            req = HeartbeatRequest("g", m, epoch, owned=claim, instance_id="i-" + m if m in "cd" else None)
        r = gc.consumer.heartbeat(req, now)
        if r.error == E.none and req.member_epoch >= 0:
            epochs[m] = r.member_epoch
            if r.assignment is not None:
                owned[m] = dict(r.assignment)
        group = gc.consumer.groups.get("g")
        if group is not None:
            assert all(len(h) == 1 for h in holders(group).values()), holders(group)
            for (t, p), epoch in group.partition_epochs.items():
                assert (t, p) in holders(group)
