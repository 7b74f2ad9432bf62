"""A heartbeat that finds 100,000 share partitions to initialize does not hold the event loop: as
Kafka answers the heartbeat and has InitializeShareGroupState carried out after it, the partitions
are written ``initializing`` with the heartbeat, their first states a slice a turn of the loop
(the shell's deadline timer runs the next at once), and ``initialized`` after the last slice. All
of it in one turn held the loop for 2.2 s of CPU (5.6 s on a loaded machine).

The topic is known to the metadata only (its 100,000 logs are not made; initializing reads none).
"""

from __future__ import annotations

import asyncio
import uuid

import pytest

from loop_stall import stall_during
from share.test_share_apis import heartbeat
from shim.config import BrokerConfig
from shim.deadline_timer import DeadlineTimer
from shim.errors import ErrorCode
from shim.node import Node
from shim.storage.log_manager import TopicInfo

WIDE, PARTITIONS = "wide", 100_000
CPU_PER_TURN = 0.15  # seconds of the loop thread's CPU in any one turn: ~20-60 ms now, 2.2 s in one turn before


@pytest.fixture
def node(tmp_path):
    n = Node(BrokerConfig(data_dir=tmp_path / "data", kafka_version="4.1"))
    n.finalize_features({"share.version": 1})
    yield n
    n.close()


async def _initialized(node, group: str, count: int) -> None:
    """Until the group's key-15 record lists ``count`` initialized partitions (state, not time)."""
    while sum(len(t.partitions) for t in node.share.initialized.get(group).initialized.values()) < count:
        await asyncio.sleep(0.001)


async def test_initializing_100000_partitions_keeps_the_loop(node):
    node.logs.create_topic("small", 1)  # the internal topics made first, as any share group's first heartbeat does
    assert (await heartbeat(node, uuid.uuid4().hex[:22], 0, topics=("small",), group="warm")).error_code == 0
    node.logs.topics[WIDE] = TopicInfo(WIDE, topic_id := uuid.uuid4(), PARTITIONS)
    timer = DeadlineTimer(asyncio.get_running_loop(), node)
    timer.start()
    ticks = timer.ticks
    try:
        member = uuid.uuid4().hex[:22]
        r, stall = await stall_during(heartbeat(node, member, 0, topics=(WIDE,)))
        assert r.error_code == ErrorCode.none and r.assignment.topic_partitions == ()  # none initialized yet
        assert stall.cpu < CPU_PER_TURN, stall
        _, stall = await stall_during(asyncio.wait_for(_initialized(node, "g", PARTITIONS), 120))
        assert stall.cpu < CPU_PER_TURN, stall
        assert timer.ticks - ticks >= PARTITIONS // 1_000 - 1  # a slice a turn, the first in the heartbeat
    finally:
        timer.stop()
    store = node.share.store
    assert sum(1 for g, tid, _ in store.entries if (g, tid) == ("g", topic_id)) == PARTITIONS
    assert node.share.initialized.get("g").initializing == {}
    r = await heartbeat(node, member, r.member_epoch, topics=None)  # the heartbeat after assigns them all
    assert sum(len(t.partitions) for t in r.assignment.topic_partitions) == PARTITIONS
