"""Which partition goes to which member: confluent-kafka consumers with ``group.protocol=consumer``
see the target assignment Kafka 4.1's ``uniform`` assignor computes, partition for partition.

Members join one at a time, each after the previous assignment settled, so every rebalance has one
known input: the previous target and the members' own ids (client-generated, read back from the
clients). The expected placement is kafka-shim's assignor on that input, the assignor that
tests/groups/test_assignor_vectors.py holds to Apache Kafka's own test vectors. A group of one
subscription (3 members over a 6-partition topic) and one of two subscriptions (one member on two
topics, one on the larger topic only, then a third on both) are checked. The members name racks;
Kafka 4.1's assignors do not use them, so neither does the placement; the
group records each member's rack from its heartbeat. Synchronised on the clients'
observed assignments, never on sleeps.
"""

from __future__ import annotations

import pytest

from compat.groups_support import Polling, create_topic, wait_for
from shim.coordinators.group.consumer_assignors import MemberSpec, kafka_order, uniform

pytest.importorskip("confluent_kafka")

TIMEOUT = 60
FAST_BOUNDS = {"group.consumer.min.heartbeat.interval.ms": "500", "group.consumer.min.session.timeout.ms": "10000"}

pytestmark = [pytest.mark.compat(client="confluent-kafka", scenario="consumer.group_protocol_consumer"),
              pytest.mark.shim_only("compares with kafka-shim's assignor on the clients' member ids")]


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    from shim import BrokerThread

    with BrokerThread(data_dir=tmp_path_factory.mktemp("placement"), listen="127.0.0.1:0", kafka_version="4.1",
                      group_initial_rebalance_delay_ms=0, group_consumer_heartbeat_interval_ms=500,
                      group_consumer_session_timeout_ms=10_000, extra=FAST_BOUNDS) as b:
        yield b


class Member:
    def __init__(self, bootstrap, topics, group, rack):
        import confluent_kafka as ck

        self.consumer = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": group, "group.protocol": "consumer",
                                     "enable.auto.commit": False, "client.rack": rack})
        self.consumer.subscribe(list(topics))

    def poll(self):
        self.consumer.consume(num_messages=100, timeout=0.1)
        return []

    def assignment(self):
        return {(tp.topic, tp.partition) for tp in self.consumer.assignment()}

    def close(self):
        self.consumer.close()


class Group:
    """Members joining one by one; ``expected`` follows the target as Kafka's assignor moves it."""

    def __init__(self, broker, name, partitions):
        self.broker, self.name, self.members, self.target = broker, name, [], {}
        bootstrap = broker.bootstrap_servers
        for topic, n in partitions.items():
            create_topic(bootstrap, topic, n)
        self.ids = broker.call(lambda: {t: broker.node.groups.consumer.topics[t].topic_id for t in partitions})
        self.counts = {self.ids[t]: n for t, n in partitions.items()}
        self.names = {v: k for k, v in self.ids.items()}
        self.subscriptions: dict[str, frozenset] = {}
        self.racks: dict[str, str] = {}

    def join(self, topics, rack):
        polling = Polling(lambda: Member(self.broker.bootstrap_servers, topics, self.name, rack))
        member_id = wait_for(lambda: polling.call(lambda m: m.consumer.memberid()) or None, TIMEOUT, "a member id")
        self.members.append((member_id, polling))
        self.racks[member_id] = rack
        self.subscriptions[member_id] = frozenset(self.ids[t] for t in topics)
        specs = {m: MemberSpec(subs, self.target.get(m, {})) for m, subs in self.subscriptions.items()}
        self.target = uniform(kafka_order(specs), self.counts,
                              homogeneous=len(set(self.subscriptions.values())) == 1)
        settled = self.settle()
        recorded = self.broker.call(lambda: {m: x.rack_id for m, x in
                                             self.broker.node.groups.consumer.groups[self.name].members.items()})
        assert recorded == self.racks  # each ConsumerGroupHeartbeat carried the member's client.rack
        return settled

    def settle(self):
        expected = {m: {(self.names[t], p) for t, ps in self.target.get(m, {}).items() for p in ps}
                    for m, _ in self.members}
        observed = {}

        def seen():
            observed.update({m: polling.assignment() for m, polling in self.members})
            return observed == expected
        try:
            wait_for(seen, TIMEOUT, "the assignment Kafka's uniform assignor gives")
        except AssertionError:
            raise AssertionError(f"observed {observed}, expected {expected}") from None
        return expected

    def close(self):
        for _, polling in self.members:
            polling.close()


def test_one_subscription_three_members_over_six_partitions(broker):
    group = Group(broker, "placement-1", {"p6": 6})
    try:
        first = group.join(["p6"], "rack-a")
        assert len(next(iter(first.values()))) == 6
        second = group.join(["p6"], "rack-b")
        assert sorted(map(len, second.values())) == [3, 3]
        third = group.join(["p6"], "rack-c")
        assert sorted(map(len, third.values())) == [2, 2, 2]
    finally:
        group.close()


def test_two_subscriptions_heterogeneous_placement(broker):
    group = Group(broker, "placement-2", {"hx": 3, "hy": 6})
    try:
        group.join(["hx", "hy"], "rack-a")
        second = group.join(["hy"], "rack-b")
        assert sorted(map(len, second.values())) == [4, 5]
        third = group.join(["hx", "hy"], "rack-a")
        assert sorted(map(len, third.values())) == [3, 3, 3]
    finally:
        group.close()
