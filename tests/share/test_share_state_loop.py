"""Writing share state stays proportional to what is written: a share group with a 32,767-character
id (the longest a request carries) whose heartbeat initializes a topic's partitions must not hold
the event loop. Each ``__share_group_state`` key hashes the whole group id (Kafka:
ShareCoordinatorService.partitionFor), so a write that re-hashed every key held on each partition
it touched took seconds of CPU for a few dozen partitions."""

from __future__ import annotations

import uuid
from pathlib import Path

from loop_stall import stall_during
from share.test_share_apis import heartbeat
from shim.config import BrokerConfig
from shim.coordinators.partitioning import partition_for
from shim.coordinators.share.store import share_partition_key
from shim.errors import ErrorCode
from shim.node import Node

PARTITIONS = 60


async def test_a_long_group_id_initializing_many_partitions_keeps_the_loop(tmp_path: Path):
    node = Node(BrokerConfig(data_dir=tmp_path / "data", kafka_version="4.1"))
    try:
        node.logs.create_topic("wide", PARTITIONS)
        node.finalize_features({"share.version": 1})
        groups = ["g" * 32767, "h" * 32767]
        for group in groups:
            r, stall = await stall_during(heartbeat(node, uuid.uuid4().hex[:22], 0, topics=("wide",), group=group))
            assert r.error_code == ErrorCode.none
            assert stall.cpu < 1.0, stall
        topic_id = node.logs.topics["wide"].topic_id
        store = node.share.store
        assert {(g, p) for g, _, p in store.entries} == {(g, p) for g in groups for p in range(PARTITIONS)}
        for group in groups:  # every key is where Kafka places it
            for p in range(PARTITIONS):
                placed = partition_for(share_partition_key(group, topic_id, p), store.num_partitions)
                assert store.partition_for(group, topic_id, p) == placed
    finally:
        node.close()


def test_a_key_is_placed_by_its_whole_string_hash_whatever_its_group_id():
    """The placement that goes on from the group's hash is String.hashCode of the whole key, also
    for group ids of characters outside ASCII and outside the BMP (two UTF-16 units)."""
    from shim.coordinators.share.store import ShareStateStore

    store = ShareStateStore(None)
    topic_id = uuid.UUID("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0")
    for group in ("g", "é\u2603", "\U0001f600" * 3, "x" * 5000, ""):
        for p in (0, 7, 2**31 - 1):
            whole = partition_for(share_partition_key(group, topic_id, p), store.num_partitions)
            assert store.partition_for(group, topic_id, p) == whole
