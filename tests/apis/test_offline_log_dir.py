"""Once a group-commit fsync failed, the data directory is offline (shim.storage.group_commit), and
every request answers as a Kafka broker whose log directory failed: the partitions' own requests
KAFKA_STORAGE_ERROR (ReplicaManager's HostedPartition.Offline), DescribeLogDirs the directory's
error, Metadata every partition leaderless with its replicas offline (the controller's
handleDirectoriesOffline), the coordinators resigned; what needs no partition is still served."""

from __future__ import annotations

import datetime
import uuid

from shim.errors import ErrorCode as E
from shim.storage import fs
from tests.test_produce_group_commit import FailingDisk, _errors, _node, _produce

from apis_support import call
from shim.apis.dispatch import dispatch

ZERO = uuid.UUID(int=0)
TIMEOUT = datetime.timedelta(seconds=5)


async def _fetch(node):
    def build(m):
        return m.FetchRequest(replica_id=-1, max_wait=datetime.timedelta(seconds=5), min_bytes=1, max_bytes=1 << 20,
                              isolation_level=0, session_id=0, session_epoch=-1, topics=(m.FetchTopic(
                                  topic="t", partitions=(m.FetchPartition(
                                      partition=0, current_leader_epoch=0, fetch_offset=0, last_fetched_epoch=-1,
                                      log_start_offset=-1, partition_max_bytes=1 << 20),)),),
                              forgotten_topics_data=(), rack_id="")
    [p] = (await call(node, 1, 12, build)).responses[0].partitions
    return p.error_code, p.high_watermark, p.log_start_offset


async def _list_offsets(node):
    def build(m):
        return m.ListOffsetsRequest(replica_id=-1, isolation_level=0, topics=(m.ListOffsetsTopic(
            name="t", partitions=(m.ListOffsetsPartition(partition_index=0, current_leader_epoch=0, timestamp=-1),)),))
    [p] = (await call(node, 2, 7, build)).topics[0].partitions
    return p.error_code, p.offset


async def _epoch_end(node):
    def build(m):
        return m.OffsetForLeaderEpochRequest(replica_id=-1, topics=(m.OffsetForLeaderTopic(
            topic="t", partitions=(m.OffsetForLeaderPartition(partition=0, current_leader_epoch=0, leader_epoch=0),)),))
    [p] = (await call(node, 23, 4, build)).topics[0].partitions
    return p.error_code, p.end_offset


async def _delete_records(node):
    def build(m):
        return m.DeleteRecordsRequest(timeout=TIMEOUT, topics=(m.DeleteRecordsTopic(
            name="t", partitions=(m.DeleteRecordsPartition(partition_index=0, offset=0),)),))
    [p] = (await call(node, 21, 2, build)).topics[0].partitions
    return p.error_code, p.low_watermark


async def _producers(node):
    def build(m):
        return m.DescribeProducersRequest(topics=(m.TopicRequest(name="t", partition_indexes=(0,)),))
    [p] = (await call(node, 61, 0, build)).topics[0].partitions
    return p.error_code, p.error_message


async def _metadata(node):
    def build(m):
        return m.MetadataRequest(topics=(m.MetadataRequestTopic(name="t", topic_id=ZERO),), allow_auto_topic_creation=False,
                                 include_topic_authorized_operations=False)
    r = await call(node, 3, 12, build)
    return [(p.error_code, p.leader_id, p.leader_epoch, p.replica_nodes, p.isr_nodes, p.offline_replicas)
            for p in r.topics[0].partitions], [b.node_id for b in r.brokers]


async def _describe_topic_partitions(node):
    def build(m):
        return m.DescribeTopicPartitionsRequest(topics=(m.TopicRequest(name="t"),), response_partition_limit=10,
                                                cursor=None)
    r = await call(node, 75, 0, build)
    return [(p.error_code, p.leader_id, p.leader_epoch, p.offline_replicas) for p in r.topics[0].partitions]


async def _find_coordinator(node):
    def build(m):
        return m.FindCoordinatorRequest(key_type=0, coordinator_keys=("g",))
    [c] = (await call(node, 10, 4, build)).coordinators
    return c.error_code, c.node_id


async def _offset_commit(node):
    def build(m):
        return m.OffsetCommitRequest(group_id="g", generation_id_or_member_epoch=-1, member_id="",
                                     group_instance_id=None, topics=(m.OffsetCommitRequestTopic(
                                         name="t", partitions=(m.OffsetCommitRequestPartition(
                                             partition_index=0, committed_offset=0, committed_leader_epoch=-1,
                                             committed_metadata=""),)),))
    return (await call(node, 8, 8, build)).topics[0].partitions[0].error_code


async def _log_dirs(node):
    r = await call(node, 35, 4, lambda m: m.DescribeLogDirsRequest(topics=None))
    [d] = r.results
    return d.error_code, d.log_dir, len(d.topics), d.total_bytes, d.usable_bytes


async def _markers(node):
    def build(m):
        return m.WriteTxnMarkersRequest(markers=(m.WritableTxnMarker(
            producer_id=9, producer_epoch=0, transaction_result=True, coordinator_epoch=0,
            topics=(m.WritableTxnMarkerTopic(name="t", partition_indexes=(0,)),)),))
    return (await call(node, 27, 1, build)).markers[0].topics[0].partitions[0].error_code


async def _fail_the_directory(node, disk):
    assert _errors(await dispatch(node, _produce([1]))) == [E.kafka_storage_error]
    assert disk.failures == 1 and node.logs.offline


async def test_a_partition_of_an_offline_directory_answers_kafka_storage_error(tmp_path):
    disk = FailingDisk()
    node, previous = await _node(tmp_path, disk, 2)
    try:
        disk.failures = -1  # the first segment fsync succeeds: one record on disk
        assert _errors(await dispatch(node, _produce([0]))) == [E.none]
        disk.failures = 0
        assert (await _fetch(node))[0] == E.none
        assert await _list_offsets(node) == (E.none, 1)
        assert await _epoch_end(node) == (E.none, 1)
        assert await _producers(node) == (E.none, None)
        await _fail_the_directory(node, disk)
        # Kafka: ReplicaManager.getPartitionOrException on a HostedPartition.Offline; nothing read
        assert await _fetch(node) == (E.kafka_storage_error, -1, -1)
        assert await _list_offsets(node) == (E.kafka_storage_error, -1)
        assert await _epoch_end(node) == (E.kafka_storage_error, -1)
        assert await _delete_records(node) == (E.kafka_storage_error, -1)
        assert await _producers(node) == (E.kafka_storage_error, None)
        assert _errors(await dispatch(node, _produce([0], correlation_id=9))) == [E.kafka_storage_error]
        assert await _markers(node) == E.unknown_topic_or_partition  # Kafka: getMagic finds no online log
        assert node.logs.get("t", 0).log_end_offset == 1
    finally:
        node.close()
        fs.use(previous)


async def test_an_offline_directory_is_described_and_its_partitions_have_no_leader(tmp_path):
    disk = FailingDisk()
    node, previous = await _node(tmp_path, disk, 2)
    try:
        assert (await _log_dirs(node))[0] == E.none
        assert (await _metadata(node))[0][0] == (E.none, 0, 0, (0,), (0,), ())
        await _find_coordinator(node)  # creates __consumer_offsets (COORDINATOR_NOT_AVAILABLE meanwhile)
        assert await _find_coordinator(node) == (E.none, 0)
        await _fail_the_directory(node, disk)
        assert await _log_dirs(node) == (E.kafka_storage_error, str((tmp_path / "d").absolute()), 0, -1, -1)
        # the controller took the leadership away at a new epoch; the last ISR member stays
        partitions, brokers = await _metadata(node)
        assert partitions == [(E.leader_not_available, -1, 1, (0,), (0,), (0,))] * 2
        assert brokers == [0]  # the broker is up: only its directory failed
        assert await _describe_topic_partitions(node) == [(E.none, -1, 1, (0,))] * 2
        assert await _find_coordinator(node) == (E.coordinator_not_available, -1)
        assert await _offset_commit(node) == E.not_coordinator
    finally:
        node.close()
        fs.use(previous)


class DeadDisk(FailingDisk):
    """A disk that, once a segment fsync failed, fails every segment fsync after it."""

    def fsync(self, fd):
        if self.failures > 0 and str(self.names.get(fd, "")).endswith(".log"):
            raise OSError(5, "Input/output error")
        super().fsync(fd)


async def test_a_clean_shutdown_leaves_an_offline_directory_as_it_failed(tmp_path):
    """Kafka's LogManager.handleLogDirFailure closes the failed directory's logs without flushing
    them and its shutdown writes no clean-shutdown marker there: closing the node flushes nothing
    (the dead disk would refuse it) and the next start recovers the directory."""
    from shim.config import BrokerConfig
    from shim.node import Node
    from shim.storage.log_manager import CLEAN_SHUTDOWN

    disk = DeadDisk()
    node, previous = await _node(tmp_path, disk, 2)
    try:
        disk.failures = -1
        assert _errors(await dispatch(node, _produce([0]))) == [E.none]
        disk.failures = 0
        await _fail_the_directory(node, disk)
        node.close()  # raised the dead disk's OSError from the first segment it flushed
        assert not (tmp_path / "d" / CLEAN_SHUTDOWN).exists()
    finally:
        fs.use(previous)
    again = Node(BrokerConfig(data_dir=tmp_path / "d", fsync="always"))
    try:
        assert not again.logs.offline and again.logs.get("t", 0).log_end_offset >= 1
    finally:
        again.close()
