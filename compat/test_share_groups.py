"""Share groups (KIP-932) with confluent-kafka's ShareConsumer against Kafka 4.1 emulation.

Several consumers of one group share a topic and every record is delivered once; in explicit
acknowledgement mode a released record comes back with a higher delivery count, a rejected one
never does, and a record released every time is delivered ``group.share.delivery.count.limit`` (5)
times and then archived. The seed scenario: a transactional producer commits, aborts and leaves a
transaction open while a read_committed and a read_uncommitted share group consume the topic; the
first never sees an aborted or open-transaction record, the second sees them all. Share groups are
turned on with share.version=1 (UpdateFeatures) and ``share.auto.offset.reset=earliest`` is set
as a group config through the AdminClient. Synchronised on consumed records and described members.
"""

from __future__ import annotations

import collections
import time

import pytest

from compat.groups_support import create_topic
from shim.errors import ErrorCode
from compat.share_support import (
    FAST_HEARTBEATS, describe_share_group, poll_until, produce, set_group_configs, share_broker,
    share_consumer, share_topic,
)

pytest.importorskip("confluent_kafka")

pytestmark = pytest.mark.compat(client="confluent-kafka", scenario="share.groups")


FAST_HEARTBEAT_ARGS = tuple(a for k, v in FAST_HEARTBEATS.items() for a in ("--override", f"{k}={v}"))


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with share_broker(tmp_path_factory.mktemp("share")) as b:
        yield b


def one_partition_each(group) -> bool:
    """Every member has heard of its own single partition (the simple assignor with 3 members on 3)."""
    owned = [{(t.topic_name, p) for t in m.assignment.topic_partitions for p in t.partitions} for m in group.members]
    return len(owned) == 3 and all(len(o) == 1 for o in owned) and len(set().union(*owned)) == 3


def test_consumers_share_a_topic_and_every_record_is_delivered_once(broker):
    bs = broker.bootstrap_servers
    create_topic(bs, "shared", 3)
    set_group_configs(bs, "g-shared", share_auto_offset_reset="earliest")
    consumers = [share_consumer(bs, "g-shared") for _ in range(3)]
    try:
        for c in consumers:
            c.subscribe(["shared"])
        poll_until(consumers, lambda: one_partition_each(describe_share_group(bs, "g-shared")))
        seen = collections.Counter()
        by_consumer = collections.defaultdict(set)

        def record(i, c, m):
            seen[m.value()] += 1
            by_consumer[i].add(m.partition())

        # Which member reads which partition is the client's affair: the broker serves what a share
        # session names, as Kafka's does, and librdkafka 2.16 does not always take a partition it
        # no longer owns out of its share session, so a member may keep reading it next to its own
        # (more often when each join moves the group epoch by one, as Kafka's does, than by the
        # three kafka-shim used to). Waves of records go out until one shows each member on its own
        # partition or five have; every record is delivered once in every wave.
        for wave in range(1, 6):
            by_consumer.clear()
            produce(bs, "shared", [(p, b"w%d-%d-%d" % (wave, p, i)) for p in range(3) for i in range(20)])
            poll_until(consumers, lambda: len(seen) == 60 * wave, record)
            assert set(seen.values()) == {1}  # every record once, across the members
            if sorted(by_consumer.values(), key=sorted) == [{0}, {1}, {2}]:
                break
        assert one_partition_each(describe_share_group(bs, "g-shared"))  # the assignment stayed
    finally:
        for c in consumers:
            c.close()


def test_release_reject_and_the_delivery_limit(broker):
    from confluent_kafka import AcknowledgeType

    bs = broker.bootstrap_servers
    create_topic(bs, "acks", 1)
    set_group_configs(bs, "g-acks", share_auto_offset_reset="earliest")
    produce(bs, "acks", [(0, b"keep%d" % i) for i in range(4)] + [(0, b"release-once"), (0, b"reject"),
                                                                  (0, b"release-always")])
    c = share_consumer(bs, "g-acks", explicit=True)
    deliveries = collections.defaultdict(list)

    def handle(_, consumer, m):
        deliveries[m.value()].append(m.delivery_count())
        if m.value() == b"reject":
            consumer.acknowledge(m, AcknowledgeType.REJECT)
        elif m.value() == b"release-always" or (m.value() == b"release-once" and m.delivery_count() == 1):
            consumer.acknowledge(m, AcknowledgeType.RELEASE)
        else:
            consumer.acknowledge(m, AcknowledgeType.ACCEPT)

    try:
        c.subscribe(["acks"])
        poll_until([c], lambda: len(deliveries[b"release-always"]) == 5 and deliveries[b"release-once"] == [1, 2],
                   handle)
        c.commit_sync()
        produce(bs, "acks", [(0, b"sentinel")])  # redeliveries come before newer records
        poll_until([c], lambda: b"sentinel" in deliveries, handle)
        c.commit_sync()
    finally:
        c.close()
    assert deliveries[b"release-always"] == [1, 2, 3, 4, 5]  # then archived: the limit held
    assert deliveries[b"release-once"] == [1, 2]
    assert deliveries[b"reject"] == [1]
    assert all(deliveries[b"keep%d" % i] == [1] for i in range(4))


def test_seed_scenario_read_committed_and_read_uncommitted_share_groups(broker):
    import confluent_kafka as ck

    bs = broker.bootstrap_servers
    create_topic(bs, "orders", 1)
    set_group_configs(bs, "business", share_auto_offset_reset="earliest", share_isolation_level="read_committed")
    set_group_configs(bs, "monitoring", share_auto_offset_reset="earliest")
    producer = ck.Producer({"bootstrap.servers": bs, "transactional.id": "orders-tx"})
    producer.init_transactions(30)

    def transaction(values, commit):
        producer.begin_transaction()
        for v in values:
            producer.produce("orders", value=v, partition=0)
        producer.flush(30)
        if commit is True:
            producer.commit_transaction(30)
        elif commit is False:
            producer.abort_transaction(30)

    committed = [b"c%d" % i for i in range(5)]
    aborted = [b"a%d" % i for i in range(5)]
    open_txn = [b"o%d" % i for i in range(3)]
    business, monitoring = share_consumer(bs, "business"), share_consumer(bs, "monitoring")
    seen = {"business": [], "monitoring": []}
    try:
        business.subscribe(["orders"])
        monitoring.subscribe(["orders"])
        transaction(committed[:3], True)
        transaction(aborted, False)
        transaction(committed[3:], True)
        transaction(open_txn, None)  # left open while both groups read
        poll_until([business, monitoring], lambda: set(seen["monitoring"]) >= set(committed + aborted + open_txn),
                   lambda i, c, m: seen["business" if i == 0 else "monitoring"].append(m.value()))
        poll_until([business], lambda: set(seen["business"]) >= set(committed),
                   lambda i, c, m: seen["business"].append(m.value()))
        producer.abort_transaction(30)
        transaction([b"end"], True)
        poll_until([business, monitoring], lambda: b"end" in seen["business"] and b"end" in seen["monitoring"],
                   lambda i, c, m: seen["business" if i == 0 else "monitoring"].append(m.value()))
    finally:
        business.close()
        monitoring.close()
    assert sorted(seen["business"]) == sorted(committed + [b"end"])
    assert sorted(seen["monitoring"]) == sorted(committed + aborted + open_txn + [b"end"])


def test_an_expired_lock_redelivers_to_another_member(tmp_path):
    """A member that holds records without acknowledging them loses them when the acquisition lock
    (here group.share.record.lock.duration.ms=1500 on the broker, its minimum lowered to Kafka's
    floor of 1000 to allow it) expires: another member gets them
    with delivery count 2, while the first is still in the group."""
    from shim import BrokerThread

    with BrokerThread(data_dir=tmp_path / "share", listen="127.0.0.1:0", kafka_version="4.1",
                      extra={"group.share.record.lock.duration.ms": "1500",
                             "group.share.min.record.lock.duration.ms": "1000", **FAST_HEARTBEATS}) as b:
        bs = b.bootstrap_servers
        share_topic(bs, "locks", 1, "g-locks")
        produce(bs, "locks", [(0, b"x%d" % i) for i in range(3)])
        holder, other = share_consumer(bs, "g-locks", explicit=True), share_consumer(bs, "g-locks", explicit=True)
        held, redelivered = [], []
        try:
            holder.subscribe(["locks"])
            poll_until([holder], lambda: len(held) == 3, lambda i, c, m: held.append((m.value(), m.delivery_count())))
            other.subscribe(["locks"])  # the holder never acknowledges nor polls again

            def take(i, c, m):
                redelivered.append((m.value(), m.delivery_count()))
                c.acknowledge(m)

            poll_until([other], lambda: len(redelivered) == 3, take)
            other.commit_sync()
            assert len(describe_share_group(bs, "g-locks").members) == 2  # the holder is still a member
        finally:
            other.close()
            holder.close()
        assert sorted(held) == [(b"x0", 1), (b"x1", 1), (b"x2", 1)]
        assert sorted(redelivered) == [(b"x0", 2), (b"x1", 2), (b"x2", 2)]


@pytest.mark.parametrize("clean", [True, False], ids=["clean", "kill-9"])
def test_acknowledgements_survive_a_broker_restart(shim_process, free_port, tmp_path, clean):
    """Records a share consumer accepted stay delivered after the broker restarts (clean or kill -9);
    the ones it released come back to the group once more, with their delivery count."""
    import signal

    from confluent_kafka import AcknowledgeType

    port, data_dir = free_port(), tmp_path / "broker"
    broker = shim_process(data_dir, port=port, args=("--kafka-version", "4.1", *FAST_HEARTBEAT_ARGS))
    bs = broker.wait_ready()
    share_topic(bs, "durable", 1, "g-durable")
    produce(bs, "durable", [(0, b"d%d" % i) for i in range(10)])
    first = share_consumer(bs, "g-durable", explicit=True)
    seen = []

    def half(_, c, m):
        seen.append(m.value())
        c.acknowledge(m, AcknowledgeType.ACCEPT if int(m.value()[1:]) < 5 else AcknowledgeType.RELEASE)

    first.subscribe(["durable"])
    poll_until([first], lambda: len(seen) >= 10, half)
    first.commit_sync()
    first.close()
    if clean:
        broker.send_signal(signal.SIGTERM)
        assert broker.wait() == 0
    else:
        broker.kill9()
    broker = shim_process(data_dir, port=port, args=("--kafka-version", "4.1", *FAST_HEARTBEAT_ARGS))
    bs = broker.wait_ready()
    second = share_consumer(bs, "g-durable")
    again = []
    try:
        second.subscribe(["durable"])
        poll_until([second], lambda: len(again) >= 5, lambda i, c, m: again.append((m.value(), m.delivery_count())))
        produce(bs, "durable", [(0, b"after")])
        poll_until([second], lambda: any(v == b"after" for v, _ in again),
                   lambda i, c, m: again.append((m.value(), m.delivery_count())))
    finally:
        second.close()
    assert sorted(again) == sorted([(b"d%d" % i, 2) for i in range(5, 10)] + [(b"after", 1)])


def test_close_delivers_the_last_acknowledgements(broker):
    """Acknowledgements still pending at close() (explicit mode, not committed) are sent by close()
    itself; they reach the broker whatever the order of the leave heartbeat and the final
    ShareAcknowledge, so the next member of the group gets only what came after."""
    bs = broker.bootstrap_servers
    create_topic(bs, "closing", 1)
    set_group_configs(bs, "g-closing", share_auto_offset_reset="earliest")
    produce(bs, "closing", [(0, b"k%d" % i) for i in range(5)])
    first, got = share_consumer(bs, "g-closing", explicit=True), []

    def accept(i, c, m):
        got.append(m.value())
        c.acknowledge(m)

    first.subscribe(["closing"])
    poll_until([first], lambda: len(got) == 5, accept)
    first.close()  # sends the five acceptances
    produce(bs, "closing", [(0, b"next")])
    second, later = share_consumer(bs, "g-closing"), []
    try:
        second.subscribe(["closing"])
        poll_until([second], lambda: b"next" in later, lambda i, c, m: later.append(m.value()))
    finally:
        second.close()
    assert later == [b"next"]


def test_records_a_closing_consumer_held_come_back_with_their_delivery_count(broker):
    """Kafka 4.1's ShareConsumerTest.testDeliveryCountDifferentBehaviorWhenClosingSessionWithExplicitAcknowledgement:
    of two records an explicit consumer polled, one acknowledged RELEASE and one left as it was,
    the next member gets the first with delivery count 2 and the second with 1 -- the closing
    session releases what was only fetched with its delivery taken back (KAFKA-17541)."""
    from confluent_kafka import AcknowledgeType

    bs = broker.bootstrap_servers
    create_topic(bs, "close-count", 1)
    set_group_configs(bs, "g-close-count", share_auto_offset_reset="earliest")
    produce(bs, "close-count", [(0, b"released"), (0, b"held")])
    first, got = share_consumer(bs, "g-close-count", explicit=True), []

    def release_the_first(i, c, m):
        got.append((m.value(), m.delivery_count()))
        if m.value() == b"released":
            c.acknowledge(m, AcknowledgeType.RELEASE)

    first.subscribe(["close-count"])
    poll_until([first], lambda: len(got) == 2, release_the_first)
    first.commit_sync()
    first.close()
    second, again = share_consumer(bs, "g-close-count"), []
    try:
        second.subscribe(["close-count"])
        poll_until([second], lambda: len(again) == 2, lambda i, c, m: again.append((m.value(), m.delivery_count())))
    finally:
        second.close()
    assert sorted(got) == [(b"held", 1), (b"released", 1)]
    assert sorted(again) == [(b"held", 1), (b"released", 2)]


def test_admin_deletes_an_empty_share_group_and_group_ids_are_one_namespace(broker):
    """AdminClient.delete_consumer_groups (DeleteGroups) deletes a share group once its members left
    (NON_EMPTY_GROUP before), and a classic consumer of a live share group's id is refused
    (JoinGroup: INCONSISTENT_GROUP_PROTOCOL), as in Kafka 4.1's one namespace of group ids."""
    import confluent_kafka as ck
    from confluent_kafka.admin import AdminClient

    bs, topic, group = broker.bootstrap_servers, "share-delete", "share-delete-G"
    create_topic(bs, topic, 1)
    set_group_configs(bs, group, share_auto_offset_reset="earliest")
    produce(bs, topic, [(0, b"x%d" % i) for i in range(3)])
    member = share_consumer(bs, group)
    member.subscribe([topic])
    got = []
    poll_until([member], lambda: len(got) >= 3, lambda i, c, m: got.append(m.offset()))
    classic = ck.Consumer({"bootstrap.servers": bs, "group.id": group, "group.protocol": "classic"})
    classic.subscribe([topic])
    errors = []
    try:
        deadline = time.monotonic() + 30
        while not errors and time.monotonic() < deadline:  # until the join is answered
            m = classic.poll(0.1)
            if m is not None and m.error() is not None:
                errors.append(m.error().code())
    finally:
        classic.close()
    assert errors and errors[0] == ck.KafkaError.INCONSISTENT_GROUP_PROTOCOL, errors
    admin = AdminClient({"bootstrap.servers": bs})
    with pytest.raises(ck.KafkaException) as refused:
        admin.delete_consumer_groups([group])[group].result(timeout=30)
    assert refused.value.args[0].code() == ck.KafkaError.NON_EMPTY_GROUP
    member.close()
    assert admin.delete_consumer_groups([group])[group].result(timeout=30) is None
    assert describe_share_group(bs, group).error_code == ErrorCode.group_id_not_found  # gone with its state
