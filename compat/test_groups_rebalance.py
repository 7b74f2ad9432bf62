"""Three consumers of one group share a 6-partition topic, for each Python client library (a group
per library, each with another assignor: kafka-python range, aiokafka roundrobin, confluent-kafka
cooperative-sticky). Each record goes to the member that owns its partition, exactly once; when one
member leaves, the other two take its partitions; after every member has committed and closed, new
members of the group resume at the committed offsets and see only what was written afterwards.
Runs against ``compat_target`` (kafka-shim in-process, or any broker given with --kafka-bootstrap);
the committed offsets are read back with the Admin API."""

from __future__ import annotations

import pytest

from compat.groups_support import admin_group_offsets, create_topic, produce, start_member, take_all, wait_for

PARTITIONS = 6
PER_PARTITION = 10
TIMEOUT = 60

pytestmark = pytest.mark.compat(scenario="consumer.group_rebalance")


def batch(tag: str) -> dict[int, list[bytes]]:
    return {p: [f"{tag}-{p}-{i}".encode() for i in range(PER_PARTITION)] for p in range(PARTITIONS)}


def settle(members, sizes: list[int]) -> list[set[int]]:
    """Poll every member until their assignments have these sizes and split the partitions; returns them."""
    def settled():
        for m in members:
            assert not m.take(), "no records are expected while the group settles"
        owned = [m.assignment() for m in members]
        disjoint = sum(len(o) for o in owned) == PARTITIONS and set().union(*owned) == set(range(PARTITIONS))
        return owned if disjoint and sorted(len(o) for o in owned) == sorted(sizes) else None
    return wait_for(settled, TIMEOUT, f"assignments of sizes {sizes}")


def consume(members, expected: dict[int, list[bytes]]) -> list[list[tuple[int, int, bytes]]]:
    """Poll every member until all expected values arrived; returns what each member got."""
    return take_all(members, expected, TIMEOUT)


def check_ownership(got, owned, expected) -> None:
    """Each record once, from the member owning its partition, in partition order."""
    for records, partitions in zip(got, owned):
        assert {p for p, _, _ in records} <= partitions
        for p in partitions:
            assert [v for q, _, v in records if q == p] == expected[p]


@pytest.mark.parametrize("client", [pytest.param(c, marks=pytest.mark.compat(client=c))
                                    for c in ("kafka-python", "aiokafka", "confluent-kafka")])
def test_three_members_share_six_partitions_and_resume_at_committed_offsets(compat_target, client):
    pytest.importorskip({"kafka-python": "kafka", "aiokafka": "aiokafka", "confluent-kafka": "confluent_kafka"}[client])
    bootstrap = compat_target.bootstrap_servers
    topic, group = f"{compat_target.prefix}-share-{client}", f"{compat_target.prefix}-group-{client}"
    create_topic(bootstrap, topic, PARTITIONS)
    members = [start_member(client, bootstrap, topic, group) for _ in range(3)]
    try:
        owned = settle(members, [2, 2, 2])
        first = batch("first")
        produce(bootstrap, topic, first)
        check_ownership(consume(members, first), owned, first)
        for m in members:
            m.commit()

        leaving = members.pop(1)
        leaving.close()
        owned = settle(members, [3, 3])
        second = batch("second")
        produce(bootstrap, topic, second)
        check_ownership(consume(members, second), owned, second)
        for m in members:
            m.commit()
    finally:
        for m in members:
            m.close()

    expected = {(topic, p): 2 * PER_PARTITION for p in range(PARTITIONS)}
    assert admin_group_offsets("confluent-kafka", bootstrap, group) == expected

    # New members settle first (settle() fails on any record: nothing before the commits comes back),
    # then the third batch; were it written first, the first member could read some of it before the
    # second joined, and the second would read it again from the committed offsets, as on Kafka.
    members = [start_member(client, bootstrap, topic, group) for _ in range(2)]
    try:
        owned = settle(members, [3, 3])
        third = batch("third")
        produce(bootstrap, topic, third)
        got = consume(members, third)
        check_ownership(got, owned, third)
        assert all(o >= 2 * PER_PARTITION for g in got for _, o, _ in g)
    finally:
        for m in members:
            m.close()
