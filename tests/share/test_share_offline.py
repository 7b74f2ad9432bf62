"""A share session closed (epoch -1) while the data directory is offline (a failed --fsync always
fsync): the release's share-state write fails, and ShareAcknowledge and ShareFetch still answer,
each partition KAFKA_STORAGE_ERROR (Kafka: getPartitionOrException of an offline log directory),
the session closed (Kafka logs a failed releaseSession)."""

from __future__ import annotations

import errno

import pytest

from share.test_share_apis import TOPIC, _set, acquired, produce, share_ack, share_fetch
from shim.config import BrokerConfig
from shim.errors import ErrorCode
from shim.node import Node


@pytest.fixture
def always_node(tmp_path):
    n = Node(BrokerConfig(data_dir=tmp_path / "data", kafka_version="4.1", fsync="always"))
    n.logs.create_topic(TOPIC, 2)
    n.finalize_features({"share.version": 1})
    n.share.configs.alter("g", [_set("share.auto.offset.reset", "earliest")], False)
    yield n
    n.close()


async def _held_then_offline(node):
    await produce(node, 0, b"a", b"b")
    assert acquired(await share_fetch(node, "m1", 0)) == [(0, 1, 1)]
    node.logs.group_commit.fail(OSError(errno.EIO, "Input/output error"))  # as the flusher's failed fsync does
    assert node.logs.offline


async def test_an_acknowledge_whose_state_write_fails_answers_the_partition(always_node):
    await _held_then_offline(always_node)
    r = await share_ack(always_node, "m1", 1, 0, [(0, 1, (1,))])
    assert r.error_code == ErrorCode.none
    assert r.responses[0].partitions[0].error_code == ErrorCode.kafka_storage_error


async def test_a_closing_acknowledge_whose_state_write_fails_still_answers(always_node):
    await _held_then_offline(always_node)
    r = await share_ack(always_node, "m1", -1, 0, [(0, 0, (1,))])
    assert r.error_code == ErrorCode.none
    assert r.responses[0].partitions[0].error_code == ErrorCode.kafka_storage_error


async def test_a_closing_share_fetch_whose_state_write_fails_still_answers(always_node):
    await _held_then_offline(always_node)
    r = await share_fetch(always_node, "m1", -1, acks={0: [(0, 0, (1,))]})
    assert r.error_code == ErrorCode.none
    assert r.responses[0].partitions[0].error_code == ErrorCode.kafka_storage_error  # its log is offline too
    assert (await share_ack(always_node, "m1", 1, 0, [(1, 1, (1,))])).error_code == ErrorCode.share_session_not_found


def _held(node, partition=0):
    """(offset, state, member) of the share partition's in-flight records, and its state on disk."""
    sp = node.share.partitions[("g", TOPIC, partition)]
    disk = node.share.store.get(("g", node.logs.topics[TOPIC].topic_id, partition))
    return sorted((o, r.state.name, r.member_id) for o, r in sp.records.items()), disk


async def test_a_release_whose_state_write_fails_is_rolled_back(always_node):
    """Kafka: SharePartition.releaseAcquiredRecords, rollbackOrProcessStateUpdates -- a release whose
    writeShareGroupState fails is rolled back: the records stay acquired by the member, as the
    disk has them (never released), instead of available in memory only."""
    await _held_then_offline(always_node)
    before = _held(always_node)
    assert before[0] == [(0, "ACQUIRED", "m1"), (1, "ACQUIRED", "m1")]
    r = await share_ack(always_node, "m1", -1, 0, [(0, 0, (1,))])  # accept 0, close: release 1
    assert r.responses[0].partitions[0].error_code == ErrorCode.kafka_storage_error
    assert _held(always_node) == before
    r = await share_fetch(always_node, "m2", 0)
    assert r.responses[0].partitions[0].error_code == ErrorCode.kafka_storage_error  # nothing acquired
    assert _held(always_node) == before


async def test_expired_locks_release_their_records_though_the_write_fails(always_node):
    """Kafka: SharePartition.releaseAcquisitionLockOnTimeout -- "even if write share group state RPC
    call fails, we will still go ahead with the state transition"; the broker's timer logs the
    failed write instead of failing, and the records are available again."""
    await _held_then_offline(always_node)
    sp = always_node.share.partitions[("g", TOPIC, 0)]
    always_node.share.tick(sp.next_deadline())
    assert _held(always_node)[0] == [(0, "AVAILABLE", None), (1, "AVAILABLE", None)]
