"""A classic group's coordinator moves while a JoinGroup is parked at it (compat/test_cluster.py's
three-broker kafka-shim, stock clients on both members).

Member A consumes both partitions of a topic. Member B subscribes: its JoinGroup starts a
rebalance and waits at the coordinator for A to rejoin, which A does only from its next poll (the
Java consumer, librdkafka behind confluent-kafka and kafka-python all rejoin from the application's
poll). The coordinator moves then. As Kafka's onUnloaded does, the old coordinator answers B's
parked JoinGroup NOT_COORDINATOR at once; B finds the new coordinator, which knows the group as
last written (A alone, so B's member id is unknown there) and joins again with a new member id.
Once A polls (serving, no record due), both finish the rebalance at the new coordinator with a partition each.

Every step waits for the broker's state; without the answer, B's first JoinGroup would stay parked
and no second member id would ever appear.
"""

from __future__ import annotations

import threading
import time

import pytest

from compat.cluster_clients import steps
from compat.test_cluster import cluster, create_topic, other_node, until  # noqa: F401 (fixture)

pytestmark = pytest.mark.shim_only("operates the simulated cluster")

CLIENTS = {"java": "java", "confluent": "confluent-kafka", "kafka-python": "kafka-python"}


def members(cluster, group: str) -> dict:
    """member id -> awaiting a JoinGroup answer, and the group's state, as the broker holds them."""
    def read():
        g = cluster.node.groups.groups.get(group)
        if g is None:
            return "", {}
        return g.state.value, {m.member_id: m.awaiting_join is not None for m in g.members.values()}
    return cluster.call(read)


def parked_joiner(cluster, group: str, known: set):
    """A member not in ``known`` whose JoinGroup waits in a rebalance, or None."""
    state, ms = members(cluster, group)
    waiting = [m for m, parked in ms.items() if parked and m not in known]
    return waiting[0] if state == "PreparingRebalance" and waiting else None


@pytest.mark.parametrize("name", [pytest.param(n, id=n, marks=pytest.mark.compat(
    client=c, scenario="cluster.parked_join_coordinator_move")) for n, c in CLIENTS.items()])
def test_a_join_parked_at_a_moving_coordinator_is_answered_and_the_rebalance_ends_at_the_new_one(cluster, name,
                                                                                                request):
    drivers = request.getfixturevalue("java_drivers") if name == "java" else None
    topic = create_topic(cluster, partitions=2)
    group = f"{topic}-group"
    a, b = steps(name, cluster.bootstrap_servers, drivers), steps(name, cluster.bootstrap_servers, drivers)
    try:
        a.producer()
        assert a.send(topic, 0, 0, 10) == (10, []) and a.send(topic, 1, 10, 20) == (10, [])
        a.consumer(group, topic)
        assert sorted(a.poll(20, 60)) == list(range(20))  # A alone owns both partitions (and commits)
        (member_a,) = members(cluster, group)[1]

        got_b: list = []
        b.consumer(group, topic)
        polling = threading.Thread(target=lambda: got_b.extend(b.poll(10, 90)), daemon=True)
        polling.start()
        until(lambda: parked_joiner(cluster, group, {member_a}) is not None, 60)
        first_b = parked_joiner(cluster, group, {member_a})

        coordinator = cluster.coordinator("group", group)
        moved_at = time.monotonic()
        cluster.move_coordinator("group", group, other_node(coordinator))
        until(lambda: parked_joiner(cluster, group, {member_a, first_b}) is not None, 30)
        rejoined_in = time.monotonic() - moved_at
        assert members(cluster, group)[1].get(first_b) is None  # the new coordinator never knew it
        second_b = parked_joiner(cluster, group, {member_a, first_b})
        print(f"{name}: B joined the new coordinator {rejoined_in:.2f} s after the move")

        a.serve_until(lambda: members(cluster, group) == ("Stable", {member_a: False, second_b: False}), 60)
        assert a.send(topic, 0, 20, 30) == (10, []) and a.send(topic, 1, 30, 40) == (10, [])
        got_a = a.poll(10, 60)
        polling.join(90)
        assert not polling.is_alive()
        assert sorted(got_a + got_b) == list(range(20, 40))
        assert {tuple(sorted(got_a)), tuple(sorted(got_b))} == {tuple(range(20, 30)), tuple(range(30, 40))}
        state, ms = members(cluster, group)
        assert state == "Stable" and len(ms) == 2 and member_a in ms
    finally:
        b.close()
        a.close()
