"""A steady heartbeat costs what its group's topics count, not their partitions (KIP-1101 as Kafka
4.1 has it: GroupMetadataManager keeps each topic's hash in its topicHashCache, drops it when the
metadata image changes the topic, and a heartbeat combines the kept hashes).

A share or consumer group over a topic of 100,000 partitions whose brokers have racks: each
heartbeat hashed every partition's racks, and a share group also worked out its assignable
partitions, held them against its target and sorted every member's assignment into its records:
about 80 ms of the event loop's CPU per share heartbeat without racks, 185 ms with them, and
145 ms per consumer heartbeat with racks. The topic is known to the metadata only (its 100,000
logs are not made; no heartbeat reads a log).

And what the kept hashes must not hide: a topic grown, or deleted and made again, still moves the
group epoch and the assignment at the next heartbeat.
"""

from __future__ import annotations

import statistics
import time
import uuid

import pytest

from share.test_share_apis import call, heartbeat
from shim.config import BrokerConfig
from shim.coordinators.group.consumer_config import consumer_group_config
from shim.coordinators.group.consumer_coordinator import HeartbeatRequest
from shim.coordinators.group.topic_hash import TopicHashes
from shim.coordinators.share import GroupConfigs, ShareCoordinator, ShareStateStore
from shim.coordinators.share.configs import ShareSettings
from shim.errors import ErrorCode
from shim.protocol.messages import request_module
from shim.node import Node
from shim.storage.log_manager import TopicInfo

WIDE, PARTITIONS = "wide", 100_000
CPU_LIMIT = 0.02  # seconds of the loop's CPU for a steady heartbeat: 0.1-0.3 ms now; 80-185 ms walking the partitions


@pytest.fixture
def node(tmp_path):
    n = Node(BrokerConfig(data_dir=tmp_path / "data", kafka_version="4.1", extra={"broker.rack": "rack-a"}))
    n.finalize_features({"share.version": 1})
    yield n
    n.close()


def _declare_wide(node) -> None:
    """A topic of 100,000 partitions in the metadata, without its logs."""
    node.logs.topics[WIDE] = TopicInfo(WIDE, uuid.uuid4(), PARTITIONS)


def _cpu(call_it) -> float:
    """The median CPU time of five calls on this thread (the heartbeat runs on the event loop's)."""
    spent = []
    for _ in range(5):
        start = time.thread_time()
        call_it()
        spent.append(time.thread_time() - start)
    return statistics.median(spent)


def test_a_steady_share_heartbeat_does_not_walk_100000_partitions():
    """The share coordinator itself, its state kept in memory: at this size, writing the first
    heartbeat's 100,000 initial states to ``__share_group_state`` takes seconds."""
    topic_id = uuid.uuid4()
    configs = GroupConfigs(None, ShareSettings(), consumer_group_config(45_000, 5_000, {}))
    share = ShareCoordinator(ShareSettings(), configs, {WIDE: PARTITIONS}.get, ShareStateStore(None),
                             topic_id={WIDE: topic_id}.get)
    share.topic_hashes = TopicHashes(lambda topic, partition: ["rack-a"])
    now = 1_700_000_000_000
    joined = share.heartbeat("g", "m", 0, [WIDE], None, ("c", "h"), now)
    while share.initialized.jobs:  # the partitions' first states, a slice a turn
        share.tick(now)
    assigned = share.heartbeat("g", "m", joined.member_epoch, None, None, ("c", "h"), now)  # the initialized partitions
    assert assigned.assignment == {WIDE: frozenset(range(PARTITIONS))}
    epoch = assigned.member_epoch

    def beat():
        r = share.heartbeat("g", "m", epoch, None, None, ("c", "h"), now)
        assert (r.member_epoch, r.assignment) == (epoch, None)

    assert _cpu(beat) < CPU_LIMIT


async def test_a_steady_consumer_heartbeat_does_not_walk_100000_partitions(node):
    _declare_wide(node)
    consumer, now = node.groups.consumer, int(time.time() * 1000)
    joined = consumer.heartbeat(HeartbeatRequest("g", "m", 0, rebalance_timeout_ms=30_000,
                                                 subscribed_topic_names=(WIDE,), owned={}), now)
    assert joined.error == ErrorCode.none and len(next(iter(joined.assignment.values()))) == PARTITIONS

    def beat():
        r = consumer.heartbeat(HeartbeatRequest("g", "m", joined.member_epoch), now)
        assert (r.error, r.member_epoch) == (ErrorCode.none, joined.member_epoch)

    assert _cpu(beat) < CPU_LIMIT


async def _epoch_and_assigned(node, member, epoch):
    r = await heartbeat(node, member, epoch, topics=None)
    assert r.error_code == ErrorCode.none
    parts = None if r.assignment is None else {p for t in r.assignment.topic_partitions for p in t.partitions}
    return r.member_epoch, parts


async def test_a_grown_topic_moves_the_share_group_on(node):
    """CreatePartitions: the next heartbeat sees the new count (a new hash, a new epoch), the new
    partitions are initialized after it and assigned by the one after, as in Kafka."""
    node.logs.create_topic("t", 2)
    member = uuid.uuid4().hex[:22]
    epoch = (await heartbeat(node, member, 0, topics=("t",))).member_epoch
    epoch, parts = await _epoch_and_assigned(node, member, epoch)
    assert parts == {0, 1}
    steady, before = await _epoch_and_assigned(node, member, epoch)
    assert (steady, before) == (epoch, None)
    m = request_module(37, 3)
    m = await call(node, 37, 3, topics=(m.CreatePartitionsTopic(name="t", count=4, assignments=None),), timeout=5000,
                   validate_only=False)
    assert m.results[0].error_code == ErrorCode.none
    grown, _ = await _epoch_and_assigned(node, member, epoch)
    assert grown > epoch
    last, parts = await _epoch_and_assigned(node, member, grown)
    assert last > grown and parts == {0, 1, 2, 3}


async def test_a_topic_made_again_with_the_same_size_moves_the_share_group_on(node):
    """Deleted and made again at once, with as many partitions: only its topic id differs, and the
    kept hash of the old topic is not trusted for the new one."""
    node.logs.create_topic("t", 2)
    member = uuid.uuid4().hex[:22]
    epoch = (await heartbeat(node, member, 0, topics=("t",))).member_epoch
    epoch, _ = await _epoch_and_assigned(node, member, epoch)
    node.logs.delete_topic("t")
    node.logs.create_topic("t", 2)
    moved, _ = await _epoch_and_assigned(node, member, epoch)
    assert moved > epoch


def test_a_steady_share_heartbeat_does_not_walk_every_members_subscription():
    """Members may each subscribe to as many names as a request holds: each heartbeat took the
    union of every member's subscription again, so four members naming 60,000 topics made every
    heartbeat of the group, a one-topic member's included, cost 0.1 s or more of the loop. Kafka
    works that union out only when a subscription or the topics change; a topic made meanwhile is
    still seen by the next heartbeat."""
    counts = {"t": 2}
    configs = GroupConfigs(None, ShareSettings(), consumer_group_config(45_000, 5_000, {}))
    share = ShareCoordinator(ShareSettings(), configs, lambda t: counts.get(t, 0), ShareStateStore(None),
                             topic_id=lambda t: uuid.UUID(int=hash(t) & (2**128 - 1)) if t in counts else None)
    version = [0]
    share.topics_version = lambda: version[0]
    now = 1_700_000_000_000
    names = [f"n{i:06d}" for i in range(60_000)] + ["t"]
    for m in "abcd":
        assert share.heartbeat("g", m, 0, names, None, ("c", "h"), now).member_epoch > 0
    started = time.thread_time()
    epoch = share.heartbeat("g", "small", 0, ["t"], None, ("c", "h"), now).member_epoch  # a join walks them
    join = time.thread_time() - started

    def beat():
        assert share.heartbeat("g", "small", epoch, None, None, ("c", "h"), now).member_epoch == epoch

    assert _cpu(beat) < join / 10
    counts["n000007"] = 3
    version[0] += 1
    assert share.heartbeat("g", "small", epoch, None, None, ("c", "h"), now).member_epoch > epoch
    assert "n000007" in share.groups["g"].subscribed_topics()
