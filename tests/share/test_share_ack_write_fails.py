"""An acknowledgement whose share-state write is lost by a failed --fsync always job (the group
commit's fsync on the flusher's thread) is rolled back and answered per partition, as Kafka 4.1
answers one whose WriteShareGroupState fails: SharePartition.rollbackOrProcessStateUpdates returns
the records to their state before it (still acquired by the member), and fetchPersisterError maps
the share coordinator's NOT_COORDINATOR (its append's KAFKA_STORAGE_ERROR, retried by the persister
until it gives up) to COORDINATOR_NOT_AVAILABLE, the partition's error in SharePartitionManager's
answer. The request itself is no coordinator's: its top-level error stays NONE."""

from __future__ import annotations

import pytest

from share.test_share_apis import TOPIC, _set, acquired, produce, share_ack, share_fetch
from shim.config import BrokerConfig
from shim.errors import ErrorCode, KafkaError
from shim.node import Node
from shim.storage import fs
from tests.test_produce_group_commit import FailingDisk

EXHAUSTED = "Error in write state RPC. Exhausted max retries to complete write state RPC without success."


@pytest.fixture
async def held(tmp_path):
    """A node on a disk whose next segment fsync fails once armed, member m1 holding offsets 0-1
    of partition 0."""
    disk = FailingDisk()
    disk.failures = -1  # armed below
    previous = fs.use(disk)
    node = Node(BrokerConfig(data_dir=tmp_path / "data", kafka_version="4.1", fsync="always"))
    try:
        node.logs.create_topic(TOPIC, 2)
        node.finalize_features({"share.version": 1})
        node.share.configs.alter("g", [_set("share.auto.offset.reset", "earliest")], False)
        await produce(node, 0, b"a", b"b")
        assert acquired(await share_fetch(node, "m1", 0)) == [(0, 1, 1)]
        disk.failures = 0  # the next segment fsync fails: the job that has the acknowledgement's write
        yield node
    finally:
        node.close()
        fs.use(previous)


def _records(node, partition=0):
    sp = node.share.partitions[("g", TOPIC, partition)]
    return sp.start_offset, sorted((o, r.state.name, r.member_id, r.delivery_count) for o, r in sp.records.items())


HELD = (0, [(0, "ACQUIRED", "m1", 1), (1, "ACQUIRED", "m1", 1)])


async def test_a_share_acknowledge_whose_write_fails_is_rolled_back(held):
    r = await share_ack(held, "m1", 1, 0, [(0, 1, (1,))])
    assert held.logs.offline  # the job with the write failed
    assert r.error_code == ErrorCode.none
    p = r.responses[0].partitions[0]
    assert (p.error_code, p.error_message) == (ErrorCode.coordinator_not_available, EXHAUSTED)
    assert _records(held) == HELD  # accepted in memory, never on disk: acquired by m1 again


async def test_a_release_acknowledged_in_a_share_fetch_whose_write_fails_is_rolled_back(held):
    r = await share_fetch(held, "m1", 1, acks={0: [(0, 1, (2,))]})
    assert held.logs.offline
    assert r.error_code == ErrorCode.none
    p = next(p for t in r.responses for p in t.partitions if p.partition_index == 0)
    assert (p.acknowledge_error_code, p.acknowledge_error_message) == (ErrorCode.coordinator_not_available,
                                                                        EXHAUSTED)
    assert _records(held) == HELD  # not released: not acquired again, nor by anyone else


async def test_an_acknowledgement_whose_write_fails_at_once_is_coordinator_not_available(held, monkeypatch):
    """A write refused at once (the directory went offline while the request was being walked, after
    its partitions were looked at) applies nothing and is answered as a lost one is."""
    def offline(*args):
        raise KafkaError(ErrorCode.kafka_storage_error, "offline after a failed fsync")
    fs.disk.failures = -1  # no fsync fails: the write does, before any
    monkeypatch.setattr(held.share.store, "write", offline)
    r = await share_ack(held, "m1", 1, 0, [(0, 1, (1,))])
    p = r.responses[0].partitions[0]
    assert (r.error_code, p.error_code, p.error_message) == (ErrorCode.none, ErrorCode.coordinator_not_available,
                                                             EXHAUSTED)
    assert _records(held) == HELD
