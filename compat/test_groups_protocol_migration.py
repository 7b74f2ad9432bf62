"""A group changes protocol online, as Kafka 4 allows (group.consumer.migration.policy, default
bidirectional): two confluent-kafka members of the classic protocol (range) share a 6-partition
topic 3/3; a member with ``group.protocol=consumer`` joins and the group becomes a consumer group
in which the classic members go on with JoinGroup/SyncGroup/Heartbeat while the broker assigns
2/2/2; the consumer-protocol member leaves and the group is a classic group again, the two classic
members back at 3/3. Each record reaches the owner of its partition once throughout, commits hold.
Synchronised on observed assignments and the group's type (ListGroups), never on sleeps."""

from __future__ import annotations

import pytest

from compat.groups_support import ConfluentMember, Polling, create_topic, group_types, offset_fetch, wait_for
from compat.test_groups_consumer_protocol import (
    PARTITIONS,
    PER_PARTITION,
    TIMEOUT,
    batch,
    consume_and_check,
    member,
    send,
    settle,
)

pytest.importorskip("confluent_kafka")

pytestmark = [pytest.mark.compat(client="confluent-kafka", scenario="consumer.group_protocol_migration"),
              pytest.mark.shim_only("Kafka 4.1 emulation with a fast heartbeat interval")]


class ClassicMember(ConfluentMember):
    """A classic-protocol confluent-kafka member reporting (topic, partition) pairs."""

    def poll(self):
        return [(m.topic(), m.partition(), m.value()) for m in self.consumer.consume(num_messages=500, timeout=0.1)
                if m.error() is None]

    def assignment(self):
        return {(tp.topic, tp.partition) for tp in self.consumer.assignment()}


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    from shim import BrokerThread

    with BrokerThread(data_dir=tmp_path_factory.mktemp("migration"), listen="127.0.0.1:0", kafka_version="4.1",
                      group_initial_rebalance_delay_ms=0, group_consumer_heartbeat_interval_ms=500,
                      extra={"group.consumer.min.heartbeat.interval.ms": "500"}) as b:
        yield b


def test_classic_to_consumer_and_back(broker):
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, "a", PARTITIONS)
    classic = [Polling(lambda: ClassicMember(bootstrap, "a", "mig", strategy="range")) for _ in range(2)]
    members = list(classic)
    try:
        owned = settle(members, [3, 3])
        assert group_types(bootstrap)["mig"] == "classic"
        records = batch("a", "classic")
        send(bootstrap, records)
        consume_and_check(members, owned, records)
        for m in members:
            m.commit()

        modern = member(bootstrap, ["a"], "mig")
        members.append(modern)
        wait_for(lambda: group_types(bootstrap).get("mig") == "consumer", TIMEOUT, "the upgrade")
        owned = settle(members, [2, 2, 2])
        records = batch("a", "mixed")
        send(bootstrap, records)
        consume_and_check(members, owned, records)
        for m in members:
            m.commit()

        modern.close()
        members = list(classic)
        wait_for(lambda: group_types(bootstrap).get("mig") == "classic", TIMEOUT, "the downgrade")
        owned = settle(members, [3, 3])
        records = batch("a", "classic-again")
        send(bootstrap, records)
        consume_and_check(members, owned, records)
        for m in members:
            m.commit()
        assert offset_fetch(bootstrap, "mig", "a", range(PARTITIONS)) == {p: 3 * PER_PARTITION for p in range(PARTITIONS)}
    finally:
        for m in members:
            m.close()
