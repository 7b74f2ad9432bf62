"""Committed-offset expiration (KIP-211, ``offsets.retention.minutes``) seen by stock clients:
kafka-python, aiokafka and confluent-kafka (Java kafka-clients: compat/test_control_java.py).

A broker with ``offsets.retention.minutes=1`` and a one-second retention check (the last test: a
KIP-848 consumer group of confluent-kafka members, under Kafka 4.1 emulation). Three groups of
one client library commit: ``kept`` stays subscribed and Stable, ``gone`` commits and leaves (its
member closes: LeaveGroup, the group is Empty), ``solo`` commits without group management
(manual assignment, no protocol type). ``advance_clock`` then runs the retention checks of the next
61 seconds at once (README.md, Fault injection): ``gone`` and ``solo`` lose their offsets (OffsetFetch
answers -1, the client's admin lists none) and are deleted (ListGroups no longer lists them,
DescribeGroups answers Dead), ``kept`` keeps its offsets and stays Stable. A restart over the same
data directory agrees: the tombstones are in ``__consumer_offsets``.

The members' session timeout (120 s) outlasts the advance, so ``kept``'s member is not expired by it.
"""

from __future__ import annotations

import asyncio

import pytest

from compat.groups_support import admin_group_offsets, create_topic, describe_group, offset_fetch, start_member
from compat.support import wait_for
from compat.txn_clients import CLIENT_NAMES
from shim import BrokerThread

pytestmark = pytest.mark.shim_only("advances the broker's clock through its control plane")
LONG_SESSION = {"kafka-python": dict(session_timeout_ms=120_000, heartbeat_interval_ms=1_000),
                "aiokafka": dict(session_timeout_ms=120_000, heartbeat_interval_ms=1_000),
                "confluent-kafka": {"session.timeout.ms": 120_000, "heartbeat.interval.ms": 1_000}}


def broker(data_dir) -> BrokerThread:
    return BrokerThread(data_dir=data_dir, listen="127.0.0.1:0", group_initial_rebalance_delay_ms=0,
                        offsets_retention_minutes=1, offsets_retention_check_interval_ms=1_000).start()


def commit_standalone(client: str, bootstrap: str, group: str, topic: str, offset: int) -> None:
    """A commit with manual assignment: generation -1, a group without a protocol type."""
    if client == "kafka-python":
        from kafka import KafkaConsumer, TopicPartition
        from kafka.structs import OffsetAndMetadata

        c = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
        try:
            c.assign([TopicPartition(topic, 0)])
            c.commit({TopicPartition(topic, 0): OffsetAndMetadata(offset, "", -1)})
        finally:
            c.close()
    elif client == "aiokafka":
        from aiokafka import AIOKafkaConsumer, TopicPartition

        async def run():
            c = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
            await c.start()
            try:
                c.assign([TopicPartition(topic, 0)])
                await c.commit({TopicPartition(topic, 0): offset})
            finally:
                await c.stop()
        asyncio.run(run())
    else:
        import confluent_kafka as ck

        c = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
        try:
            c.assign([ck.TopicPartition(topic, 0)])
            c.commit(offsets=[ck.TopicPartition(topic, 0, offset)], asynchronous=False)
        finally:
            c.close()


def listed_groups(client: str, bootstrap: str) -> set[str]:
    """ListGroups through ``client``'s admin API."""
    if client == "kafka-python":
        from kafka import KafkaAdminClient

        admin = KafkaAdminClient(bootstrap_servers=bootstrap)
        try:
            return {g["group_id"] for g in admin.list_groups()}
        finally:
            admin.close()
    if client == "aiokafka":
        from aiokafka.admin import AIOKafkaAdminClient

        async def run():
            admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
            await admin.start()
            try:
                return {g[0] for g in await admin.list_consumer_groups()}
            finally:
                await admin.close()
        return asyncio.run(run())
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})  # held: the result needs its handle alive
    result = admin.list_consumer_groups().result(20)
    assert not result.errors, result.errors
    return {g.group_id for g in result.valid}


def consume_and_commit(member, n: int) -> None:
    got: list = []
    wait_for(lambda: got.extend(member.take()) or len(got) >= n, 60, 0.02, f"{n} records")
    member.commit()


@pytest.mark.parametrize("client", CLIENT_NAMES)
def test_offsets_of_a_group_that_left_expire_and_a_stable_group_keeps_its(tmp_path, client):
    topic = f"expiry-{client}"
    kept, gone, solo = (f"{g}-{client}" for g in ("kept", "gone", "solo"))
    b = broker(tmp_path / "data")
    try:
        bootstrap = b.bootstrap_servers
        create_topic(bootstrap, topic, 1)
        from kafka import KafkaProducer

        producer = KafkaProducer(bootstrap_servers=bootstrap)
        for i in range(3):
            producer.send(topic, b"%d" % i, partition=0).get(10)
        producer.close()
        stays = start_member(client, bootstrap, topic, kept, **LONG_SESSION[client])
        leaves = start_member(client, bootstrap, topic, gone, **LONG_SESSION[client])
        try:
            consume_and_commit(stays, 3)
            consume_and_commit(leaves, 3)
            leaves.close()
            wait_for(lambda: describe_group(bootstrap, gone) == ("Empty", []), 30, 0.05, f"{gone} Empty")
            commit_standalone(client, bootstrap, solo, topic, 2)
            assert offset_fetch(bootstrap, solo, topic, [0]) == {0: 2}
            assert {kept, gone, solo} <= listed_groups(client, bootstrap)

            got = b.control.advance_clock(ms=61_000, clock="groups")
            assert got["expired_members"] == []
            assert sorted(got["deleted_groups"]) == sorted([gone, solo])
            assert sorted(got["expired_offsets"]) == sorted([f"{gone}/{topic}/0", f"{solo}/{topic}/0"])

            for group in (gone, solo):
                assert offset_fetch(bootstrap, group, topic, [0]) == {0: -1}
                assert admin_group_offsets(client, bootstrap, group) == {}
                assert describe_group(bootstrap, group) == ("Dead", [])
            assert describe_group(bootstrap, kept)[0] == "Stable"
            assert offset_fetch(bootstrap, kept, topic, [0]) == {0: 3}
            listed = listed_groups(client, bootstrap)
            assert kept in listed and gone not in listed and solo not in listed
        finally:
            stays.close()
    finally:
        b.stop()
    b = broker(tmp_path / "data")  # the same data directory: the tombstones were written
    try:
        bootstrap = b.bootstrap_servers
        assert offset_fetch(bootstrap, gone, topic, [0]) == {0: -1}
        assert offset_fetch(bootstrap, kept, topic, [0]) == {0: 3}
        listed = listed_groups(client, bootstrap)
        assert kept in listed and gone not in listed and solo not in listed
    finally:
        b.stop()


def test_a_consumer_group_loses_the_offsets_of_topics_it_does_not_subscribe_to(tmp_path):
    """KIP-848 (confluent-kafka ``group.protocol=consumer``, the broker emulating Kafka 4.1): a
    consumer group's offsets of a topic it does not subscribe to expire a retention after their
    commit while its member stays; a consumer group its member left loses them all and goes."""
    pytest.importorskip("confluent_kafka")
    import confluent_kafka as ck

    # the member's session (the broker's, 120 s) outlasts the advance; Kafka checks it against the bounds
    with BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", kafka_version="4.1",
                      group_initial_rebalance_delay_ms=0, group_consumer_session_timeout_ms=120_000,
                      extra={"group.consumer.max.session.timeout.ms": "120000"},
                      offsets_retention_minutes=1, offsets_retention_check_interval_ms=1_000) as b:
        bootstrap = b.bootstrap_servers
        create_topic(bootstrap, "a", 1)
        create_topic(bootstrap, "b", 1)
        conf = {"bootstrap.servers": bootstrap, "group.protocol": "consumer", "enable.auto.commit": False,
                "auto.offset.reset": "earliest"}
        stays = ck.Consumer({**conf, "group.id": "kept-848"})
        leaves = ck.Consumer({**conf, "group.id": "gone-848"})
        try:
            for c in (stays, leaves):
                c.subscribe(["a"])
                wait_for(lambda c=c: c.poll(0.1) is None and c.assignment(), 60, 0.02, "an assignment")
                c.commit(offsets=[ck.TopicPartition("a", 0, 4)], asynchronous=False)
            stays.commit(offsets=[ck.TopicPartition("b", 0, 7)], asynchronous=False)  # not subscribed
            leaves.close()
            wait_for(lambda: b.call(lambda: not b.node.groups.consumer.groups["gone-848"].members), 30, 0.05,
                     "gone-848 Empty")

            got = b.control.advance_clock(ms=61_000, clock="groups")
            assert got["expired_members"] == [] and got["deleted_groups"] == ["gone-848"]
            assert sorted(got["expired_offsets"]) == ["gone-848/a/0", "kept-848/b/0"]
            assert offset_fetch(bootstrap, "kept-848", "a", [0]) == {0: 4}
            assert offset_fetch(bootstrap, "kept-848", "b", [0]) == {0: -1}
            assert offset_fetch(bootstrap, "gone-848", "a", [0]) == {0: -1}
            listed = listed_groups("confluent-kafka", bootstrap)
            assert "kept-848" in listed and "gone-848" not in listed
            (tp,) = stays.committed([ck.TopicPartition("a", 0)], timeout=20)  # the member's own view
            assert tp.offset == 4
        finally:
            stays.close()


@pytest.mark.parametrize("client", CLIENT_NAMES)
def test_a_deleted_topics_offsets_go_with_it(tmp_path, client):
    """Kafka deletes every group's offsets of a deleted topic without waiting for their retention
    (GroupCoordinator.onPartitionsDeleted): the client's admin lists only the other topic's, and a
    topic created again under the name starts without a committed offset."""
    from kafka import KafkaAdminClient

    gone, kept, group = f"deleted-{client}", f"other-{client}", f"del-{client}"
    b = broker(tmp_path / "data")
    try:
        bootstrap = b.bootstrap_servers
        create_topic(bootstrap, gone, 1)
        create_topic(bootstrap, kept, 1)
        commit_standalone(client, bootstrap, group, gone, 5)
        commit_standalone(client, bootstrap, group, kept, 2)
        assert admin_group_offsets(client, bootstrap, group) == {(gone, 0): 5, (kept, 0): 2}
        admin = KafkaAdminClient(bootstrap_servers=bootstrap)
        try:
            admin.delete_topics([gone], timeout_ms=20_000)
        finally:
            admin.close()
        wait_for(lambda: admin_group_offsets(client, bootstrap, group) == {(kept, 0): 2}, 30, 0.05,
                 f"the offsets of {gone} gone")
        create_topic(bootstrap, gone, 1)
        assert offset_fetch(bootstrap, group, gone, [0]) == {0: -1}
    finally:
        b.stop()
