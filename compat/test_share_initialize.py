"""A share group's partitions have share state from the moment a member is assigned them, before
any ShareFetch, as in Kafka 4.1: the group coordinator sends InitializeShareGroupState (start
offset -1) to the share coordinator after the heartbeat that first sees them, and assigns them only
at a later heartbeat, once they are initialized (the two steps), so an assigned partition is
listed by DescribeShareGroupOffsets (the Java Admin maps it to no offset) and the state is in
``__share_group_state``, durable across kill -9.

The start offset is still chosen at the first ShareFetch (SharePartition.maybeInitialize reads -1
and asks share.auto.offset.reset), so under ``latest`` -- the default -- records produced between
the assignment and the first fetch are not delivered, in Kafka 4.1 as here. A consumer therefore
produces one record per poll until one arrives: what arrives is only records produced after its
first fetch, never the ones produced before the group or before that fetch.

confluent-kafka's ShareConsumer joins on subscribe and sends no ShareFetch until it is polled,
which is the window observed; kafka-clients 4.x's Admin lists the offsets and its KafkaShareConsumer
consumes (compat/java/ShareDriver.java). Synchronised on the described assignment and on records.
"""

from __future__ import annotations

import time

import pytest

import shim
from compat.groups_support import create_topic
from compat.share_support import describe_share_group, enable_share_groups, poll, produce
from compat.support import _ask, first_address, wait_for

pytest.importorskip("confluent_kafka")

ARGS = ("--kafka-version", "4.1", "--override", "group.share.heartbeat.interval.ms=500",
        "--override", "group.share.min.heartbeat.interval.ms=500")
TOPIC = "share-init"


def start_offsets(bootstrap: str, group: str) -> dict:
    """DescribeShareGroupOffsets (90) for every partition the group has share state of."""
    from shim.protocol.messages import make, request_class, request_module

    m = request_module(90, 0)
    r = _ask(first_address(bootstrap), 90, 0, make(request_class(90, 0), groups=(
        m.DescribeShareGroupOffsetsRequestGroup(group_id=group, topics=None),)))
    g = r.groups[0]
    assert g.error_code == 0, g
    return {(t.topic_name, p.partition_index): p.start_offset for t in g.topics for p in t.partitions}


def assigned(bootstrap: str, group: str) -> bool:
    g = describe_share_group(bootstrap, group)
    return any(t.partitions for m in g.members for t in m.assignment.topic_partitions)


def join_without_fetching(bootstrap: str, group: str):
    """A confluent-kafka share consumer subscribed and assigned the topic, never polled."""
    import confluent_kafka as ck

    consumer = ck.ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group, "reconnect.backoff.max.ms": 500})
    consumer.subscribe([TOPIC])
    wait_for(lambda: assigned(bootstrap, group), timeout=30, message="the member's assignment")
    return consumer


def consume_until_one_arrives(bootstrap: str, consumer, timeout: float = 60) -> list[bytes]:
    """Poll; until something arrives, produce one more record per round. All values received."""
    got: list[bytes] = []
    n, deadline = 0, time.monotonic() + timeout
    while not got:
        assert time.monotonic() < deadline, "no record arrived"
        try:
            got = [m.value() for m in poll(consumer, 0.3)]
        except Exception:  # noqa: BLE001 -- the restarted broker's first answers may be errors
            got = []
        if not got:
            produce(bootstrap, TOPIC, [(0, b"new-%d" % n)])
            n += 1
    return got


@pytest.mark.compat(client="confluent-kafka", scenario="share.durability")
@pytest.mark.shim_only("kills the broker process")
def test_assigned_partitions_have_state_before_any_fetch_and_keep_it_across_kill_9(shim_process, free_port, tmp_path):
    port, data_dir = free_port(), tmp_path / "broker"
    broker = shim_process(data_dir, port=port, args=ARGS)
    bs = broker.wait_ready()
    enable_share_groups(bs)
    create_topic(bs, TOPIC, 1)
    produce(bs, TOPIC, [(0, b"old-%d" % i) for i in range(2)])
    consumer = join_without_fetching(bs, "g-init")
    try:
        assert start_offsets(bs, "g-init") == {(TOPIC, 0): -1}  # initialized, no start offset yet
        produce(bs, TOPIC, [(0, b"mid-%d" % i) for i in range(3)])  # assigned, not yet fetched
        broker.kill9()
        broker = shim_process(data_dir, port=port, args=ARGS)
        assert broker.wait_ready() == bs
        assert start_offsets(bs, "g-init") == {(TOPIC, 0): -1}
        got = consume_until_one_arrives(bs, consumer)
        assert got and all(v.startswith(b"new-") for v in got), got  # latest, at the first fetch
        consumer.commit_sync(10)  # the implicit acknowledgement of what arrived
        wait_for(lambda: start_offsets(bs, "g-init")[(TOPIC, 0)] >= 5, message="the written start offset")
    finally:
        consumer.close()


@pytest.mark.compat(client="java", scenario="share.groups")
@pytest.mark.shim_only("starts a broker emulating Kafka 4.1")
def test_kafka_clients_4_admin_lists_an_assigned_partition_before_its_first_fetch(tmp_path, java4):
    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", kafka_version="4.1",
                           extra={"group.share.heartbeat.interval.ms": "500",
                                  "group.share.min.heartbeat.interval.ms": "500"}) as broker:
        bs = broker.bootstrap_servers
        enable_share_groups(bs)
        create_topic(bs, TOPIC, 1)
        produce(bs, TOPIC, [(0, b"old-%d" % i) for i in range(2)])
        consumer = join_without_fetching(bs, "share-init-G")
        try:
            listed = java4.run("ShareDriver", ["share.initialized.list"], bs, timeout=300, timeout_s=60)
            produce(bs, TOPIC, [(0, b"mid-%d" % i) for i in range(3)])
        finally:
            consumer.close()
        consumed = java4.run("ShareDriver", ["share.initialized.consume"], bs, timeout=300, timeout_s=120)
    result = listed["results"]["share.initialized.list"]
    assert result["ok"], (result.get("error"), result.get("trace", "")[:2000])
    assert result["observed"] == {"offsets": {f"{TOPIC}-0": None}, "assigned": 1}
    result = consumed["results"]["share.initialized.consume"]
    assert result["ok"], (result.get("error"), result.get("trace", "")[:2000])
    o = result["observed"]
    assert o["received"] and all(v.startswith("new-") for v in o["received"]), o
    assert o["offsets"][f"{TOPIC}-0"] >= 5, o


def _share_records(broker, group: str) -> list[tuple[int, object]]:
    """(record type, decoded value) of the group's share records in ``__consumer_offsets``, in log
    order (Kafka 4.1's ShareGroup* records and ShareGroupStatePartitionMetadata)."""
    from kafka_codecs.records import decode_batch

    from shim.coordinators.share import members as sm

    def read():
        out, info = [], broker.node.logs.topics.get("__consumer_offsets")
        for p in range(info.partitions if info else 0):
            for raw in broker.node.logs.get("__consumer_offsets", p).iter_batches():
                for r in decode_batch(raw)[1]:
                    kind = int.from_bytes(r.key[:2], "big")
                    if kind in sm.KINDS and (rec := sm.decode(r.key, r.value)).group_id == group:
                        out.append((kind, rec.value))
        return out
    return broker.call(read)


@pytest.mark.compat(client="confluent-kafka", scenario="share.groups")
@pytest.mark.shim_only("reads the broker's __consumer_offsets")
def test_the_first_member_is_assigned_by_the_heartbeat_after_the_initialization(tmp_path):
    """Kafka 4.1's two steps, as librdkafka's share consumer drives them: its joining heartbeat moves
    the group to epoch 1 with an empty target (nothing is initialized yet), then the partition is
    written initializing and initialized; its next heartbeat moves the group to epoch 2 and the
    target assigns the partition."""
    from shim.coordinators.share import members as sm

    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", kafka_version="4.1",
                           extra={"group.share.heartbeat.interval.ms": "500",
                                  "group.share.min.heartbeat.interval.ms": "500"}) as broker:
        bs = broker.bootstrap_servers
        enable_share_groups(bs)
        create_topic(bs, TOPIC, 1)
        consumer = join_without_fetching(bs, "g-two-steps")
        try:
            topic_id = broker.call(lambda: broker.node.logs.topics[TOPIC].topic_id)
            trail = [(kind, value) for kind, value in _share_records(broker, "g-two-steps")
                     if kind in (sm.GROUP_METADATA, sm.TARGET_MEMBER, sm.STATE_PARTITION_METADATA)]
        finally:
            consumer.close()
    summary = []
    for kind, value in trail:
        if kind == sm.GROUP_METADATA:
            summary.append(("epoch", value[0]))
        elif kind == sm.TARGET_MEMBER:
            summary.append(("target", value))
        else:
            summary.append(("state", "initialized" if value.initialized else "initializing"))
    assert summary[:6] == [("epoch", 1), ("target", ()), ("state", "initializing"), ("state", "initialized"),
                           ("epoch", 2), ("target", ((topic_id, (0,)),))], summary


WIDE, WIDE_PARTITIONS = "share-init-wide", 1_500


@pytest.mark.compat(client="confluent-kafka", scenario="share.groups")
@pytest.mark.shim_only("the broker's turns of the event loop")
def test_a_topic_initialized_over_several_turns_is_assigned_and_consumed_whole(shim_process, free_port, tmp_path):
    """1,500 partitions: the heartbeat's turn initializes 1,000, the broker's timer the rest in the
    next turn; the member is assigned all of them and receives a record of the last."""
    from compat.share_support import set_group_configs, share_consumer

    broker = shim_process(tmp_path / "broker", port=free_port(), args=ARGS)
    bs = broker.wait_ready()
    enable_share_groups(bs)
    create_topic(bs, WIDE, WIDE_PARTITIONS)
    set_group_configs(bs, "g-wide", share_auto_offset_reset="earliest")
    produce(bs, WIDE, [(WIDE_PARTITIONS - 1, b"last"), (0, b"first")])
    consumer = share_consumer(bs, "g-wide")
    consumer.subscribe([WIDE])
    try:
        got: list[bytes] = []
        deadline = time.monotonic() + 60
        while len(got) < 2:
            assert time.monotonic() < deadline, got
            got += [m.value() for m in poll(consumer, 0.3)]
        assert sorted(got) == [b"first", b"last"]
        g = describe_share_group(bs, "g-wide")
        assert sum(len(t.partitions) for m in g.members for t in m.assignment.topic_partitions) == WIDE_PARTITIONS
        assert len(start_offsets(bs, "g-wide")) == WIDE_PARTITIONS  # every partition initialized
    finally:
        consumer.close()
