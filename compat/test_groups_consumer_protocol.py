"""The consumer group protocol (KIP-848) with confluent-kafka's ``group.protocol=consumer``.

One member of a group on a 6-partition topic owns every partition; two more join and the three
split the partitions 2/2/2 with each partition at one member at a time; two leave and the first
owns all six again; it then subscribes to a second topic as well and is assigned its partitions
too. Every record reaches the member owning its partition once, each member commits what it
read, and after every member closed a new member resumes at the committed offsets. Two running
members carry on through a broker restart (SIGTERM or kill -9) without rejoining. The broker
emulates Kafka 4.1 (the consumer protocol is off under 3.9, as in Kafka 3.9) with the server-side
``uniform`` assignor. Synchronised on observed assignments, never on sleeps.
"""

from __future__ import annotations

import signal

import pytest

from compat.groups_support import Polling, create_topic, offset_fetch, produce, take_all, wait_for

pytest.importorskip("confluent_kafka")

PARTITIONS = 6
PER_PARTITION = 5
TIMEOUT = 60
# Kafka refuses a session timeout or heartbeat interval outside the broker's bounds, even at start-up
FAST_BOUNDS = {"group.consumer.min.heartbeat.interval.ms": "500", "group.consumer.min.session.timeout.ms": "10000"}

pytestmark = pytest.mark.compat(client="confluent-kafka", scenario="consumer.group_protocol_consumer")


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    from shim import BrokerThread

    with BrokerThread(data_dir=tmp_path_factory.mktemp("kip848"), listen="127.0.0.1:0", kafka_version="4.1",
                      group_initial_rebalance_delay_ms=0, group_consumer_heartbeat_interval_ms=500,
                      group_consumer_session_timeout_ms=10_000, extra=FAST_BOUNDS) as b:
        yield b


class ConsumerProtocolMember:
    """A confluent-kafka consumer of the KIP-848 protocol: no assignor, session or heartbeat
    settings on the client (librdkafka refuses them); the broker assigns."""

    def __init__(self, bootstrap, topics, group, **extra):
        import confluent_kafka as ck

        conf = {"bootstrap.servers": bootstrap, "group.id": group, "group.protocol": "consumer",
                "enable.auto.commit": False, "auto.offset.reset": "earliest", **extra}
        self.consumer = ck.Consumer(conf)
        self.consumer.subscribe(list(topics))

    def poll(self):
        return [(m.topic(), m.partition(), m.value()) for m in self.consumer.consume(num_messages=500, timeout=0.1)
                if m.error() is None]

    def assignment(self):
        return {(tp.topic, tp.partition) for tp in self.consumer.assignment()}

    def subscribe(self, topics):
        self.consumer.subscribe(list(topics))

    def commit(self):
        self.consumer.commit(asynchronous=False)

    def close(self):
        self.consumer.close()


def member(bootstrap, topics, group, **extra) -> Polling:
    return Polling(lambda: ConsumerProtocolMember(bootstrap, topics, group, **extra))


def settle(members, sizes, topics=("a",)):
    """Poll until the members' assignments have these sizes and split every partition of ``topics``."""
    every = {(t, p) for t in topics for p in range(PARTITIONS)}

    def settled():
        for m in members:
            assert not m.take(), "no records are expected while the group settles"
        owned = [m.assignment() for m in members]
        disjoint = sum(len(o) for o in owned) == len(every) and set().union(*owned) == every
        return owned if disjoint and [len(o) for o in owned] == sizes else None
    return wait_for(settled, TIMEOUT, f"assignments of sizes {sizes}")


def consume_and_check(members, owned, expected):
    """Every expected record once, at the member that owns its partition."""
    got = take_all(members, expected, TIMEOUT)
    for records, partitions in zip(got, owned):
        assert {(t, p) for t, p, _ in records} <= partitions
        for tp in partitions:
            assert [v for t, p, v in records if (t, p) == tp] == expected.get(tp, [])


def batch(topic, tag):
    return {(topic, p): [f"{tag}-{topic}-{p}-{i}".encode() for i in range(PER_PARTITION)] for p in range(PARTITIONS)}


def send(bootstrap, records):
    for topic in {t for t, _ in records}:
        produce(bootstrap, topic, {p: v for (t, p), v in records.items() if t == topic})


def test_one_three_one_members_a_subscription_change_and_committed_offsets(broker):
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, "a", PARTITIONS)
    create_topic(bootstrap, "b", PARTITIONS)
    first = member(bootstrap, ["a"], "g1")
    members = [first]
    try:
        owned = settle(members, [6])
        records = batch("a", "one")
        send(bootstrap, records)
        consume_and_check(members, owned, records)
        first.commit()

        members += [member(bootstrap, ["a"], "g1") for _ in range(2)]
        owned = settle(members, [2, 2, 2])
        records = batch("a", "three")
        send(bootstrap, records)
        consume_and_check(members, owned, records)
        for m in members:
            m.commit()

        for m in members[1:]:
            m.close()
        members = [first]
        owned = settle(members, [6])
        records = batch("a", "back-to-one")
        send(bootstrap, records)
        consume_and_check(members, owned, records)

        first.call(lambda c: c.subscribe(["a", "b"]))
        owned = settle(members, [12], topics=("a", "b"))
        records = batch("a", "both") | batch("b", "both")
        send(bootstrap, records)
        consume_and_check(members, owned, records)
        first.commit()
    finally:
        for m in members:
            m.close()

    resumed = member(bootstrap, ["a", "b"], "g1")
    try:
        # settle() fails on any record: nothing read and committed before is read again
        owned = settle([resumed], [12], topics=("a", "b"))
        later = batch("a", "later") | batch("b", "later")
        send(bootstrap, later)
        consume_and_check([resumed], owned, later)
    finally:
        resumed.close()


def consumer_group_describe(bootstrap, group):
    """(state, group epoch, {member id: member epoch}) through one ConsumerGroupDescribe v1."""
    import socket
    import struct

    from compat import support
    from shim.protocol.messages import RequestHeader, decode_response, encode_request, make, request_class

    payload = encode_request(RequestHeader(69, 1, 1, "kip848-compat"),
                             make(request_class(69, 1), group_ids=(group,), include_authorized_operations=False))
    try:
        with socket.create_connection(support.coordinator_address(bootstrap, group), timeout=5) as s:
            s.sendall(struct.pack(">i", len(payload)) + payload)
            _, response = decode_response(support.recv_frame(s), 69, 1)
    except OSError:
        return None
    (g,) = response.groups
    return g.group_state, g.group_epoch, {m.member_id: m.member_epoch for m in g.members}


@pytest.mark.shim_only("kills and restarts the broker")
@pytest.mark.parametrize("how", ["sigterm", "kill9"])
def test_members_carry_on_through_a_broker_restart(shim_process, free_port, tmp_path, how):
    """The broker goes down under two running members and comes back on the same data directory:
    the group is as it was (same members, member epochs and group epoch: nobody rejoined), the
    committed offsets hold, and the members go on reading their own partitions."""
    port, data_dir = free_port(), tmp_path / "broker"
    args = ("--kafka-version", "4.1", "--override", "group.consumer.heartbeat.interval.ms=500",
            "--override", "group.consumer.min.heartbeat.interval.ms=500")
    broker = shim_process(data_dir, port=port, args=args)
    bootstrap = broker.wait_ready()
    create_topic(bootstrap, "a", PARTITIONS)
    members = [member(bootstrap, ["a"], "restart") for _ in range(2)]
    try:
        owned = settle(members, [3, 3])
        records = batch("a", "before")
        send(bootstrap, records)
        consume_and_check(members, owned, records)
        for m in members:
            m.commit()
        before = wait_for(lambda: (d := consumer_group_describe(bootstrap, "restart")) and d[0] == "Stable" and d,
                          TIMEOUT, "a stable group")
        if how == "kill9":
            broker.kill9()
        else:
            broker.send_signal(signal.SIGTERM)
            broker.wait()
        broker = shim_process(data_dir, port=port, args=args)
        broker.wait_ready()
        assert consumer_group_describe(bootstrap, "restart") == before
        records = batch("a", "after")
        send(bootstrap, records)
        consume_and_check(members, owned, records)  # the same owners: no rebalance happened
        assert consumer_group_describe(bootstrap, "restart")[1] == before[1]
        assert offset_fetch(bootstrap, "restart", "a", range(PARTITIONS)) == {p: PER_PARTITION for p in range(PARTITIONS)}
    finally:
        for m in members:
            m.close()


@pytest.mark.shim_only("restarts the broker with another broker.rack")
def test_a_restart_with_another_broker_rack_moves_the_group_epoch_once(shim_process, free_port, tmp_path):
    """Kafka 4.1 hashes each partition's replica racks into the group's metadata hash (KIP-1101):
    the broker comes back with another ``broker.rack``, so the member's next heartbeat finds the
    hash changed and the group epoch moves on once; the member keeps its partitions and reads on."""
    port, data_dir = free_port(), tmp_path / "broker"
    args = ("--kafka-version", "4.1", "--override", "group.consumer.heartbeat.interval.ms=500",
            "--override", "group.consumer.min.heartbeat.interval.ms=500")
    broker = shim_process(data_dir, port=port, args=(*args, "--override", "broker.rack=rack-a"))
    bootstrap = broker.wait_ready()
    create_topic(bootstrap, "a", PARTITIONS)
    members = [member(bootstrap, ["a"], "racks")]
    try:
        owned = settle(members, [PARTITIONS])
        before = wait_for(lambda: (d := consumer_group_describe(bootstrap, "racks")) and d[0] == "Stable" and d,
                          TIMEOUT, "a stable group")
        broker.send_signal(signal.SIGTERM)
        broker.wait()
        broker = shim_process(data_dir, port=port, args=(*args, "--override", "broker.rack=rack-b"))
        broker.wait_ready()
        after = wait_for(lambda: (d := consumer_group_describe(bootstrap, "racks")) and d[1] > before[1] and d,
                         TIMEOUT, "a new group epoch")
        assert after[1] == before[1] + 1
        wait_for(lambda: set(consumer_group_describe(bootstrap, "racks")[2].values()) == {after[1]}, TIMEOUT,
                 "the member at the new epoch")
        records = batch("a", "after")
        send(bootstrap, records)
        consume_and_check(members, owned, records)
    finally:
        for m in members:
            m.close()


def test_a_regex_subscription_is_resolved_by_the_broker_and_follows_new_topics(broker):
    """``subscribe(["^rx-.*"])``: librdkafka sends the regex (SubscribedTopicRegex) and the broker
    matches topic names; a matching topic created later joins the assignment, others do not."""
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, "rx-1", 2)
    create_topic(bootstrap, "other", 2)
    m = member(bootstrap, ["^rx-.*"], "regex")
    try:
        wait_for(lambda: m.assignment() == {("rx-1", 0), ("rx-1", 1)}, TIMEOUT, "rx-1's partitions")
        create_topic(bootstrap, "rx-2", 3)
        wait_for(lambda: m.assignment() == {("rx-1", 0), ("rx-1", 1), ("rx-2", 0), ("rx-2", 1), ("rx-2", 2)},
                 TIMEOUT, "rx-2's partitions too")
        regexes = broker.call(lambda: [x.subscribed_topic_regex for x in
                                       broker.node.groups.consumer.groups["regex"].members.values()])
        assert regexes == ["(^rx-.*)"]  # librdkafka sends its regex in parentheses
    finally:
        m.close()
