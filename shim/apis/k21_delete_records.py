"""DeleteRecords (21), v0-2: advance the log start offset; -1 means the high watermark.

The internal topics are refused with INVALID_TOPIC_EXCEPTION (Kafka: ReplicaManager.deleteRecords),
a topic whose cleanup.policy lacks delete with POLICY_VIOLATION (Kafka: Partition.deleteRecordsOnLeader).
Only the partition's leader deletes (NOT_LEADER_OR_FOLLOWER elsewhere, shim.cluster); the high
watermark bounds the offset, so a slowed follower bounds it too. Each partition's log start moves
on its own, as Kafka's per-partition handling allows, and the handler gives the loop up between
partitions (shim.apis._pace).
A partition of the offline data directory (a failed fsync, shim.storage.group_commit) is
KAFKA_STORAGE_ERROR before any leader check (Kafka: ReplicaManager's HostedPartition.Offline).
"""

from ..errors import ErrorCode, KafkaError
from ..storage.log_manager import INTERNAL_TOPICS
from ._authz import denied_topics_paced
from ._pace import Pacer
from .registry import api


@api(21, "DeleteRecords", 0, 2)
async def handle(ctx, request):
    topics, pace = [], Pacer()  # the ACLs asked paced: 2 MiB of distinct topics took 0.32 CPU s of one turn
    denied = await denied_topics_paced(ctx, [t.name for t in request.topics], pace)
    async for t in pace.each(request.topics):
        parts = tuple([_partition(ctx, t.name, p, t.name in denied) async for p in pace.each(t.partitions)])
        topics.append(ctx.make("DeleteRecordsTopicResult", name=t.name, partitions=parts))
    return ctx.response(topics=tuple(topics))


def _partition(ctx, topic, p, denied):
    try:
        if denied:
            raise KafkaError(ErrorCode.topic_authorization_failed)
        if topic in INTERNAL_TOPICS:
            raise KafkaError(ErrorCode.invalid_topic_exception, f"Cannot delete records of internal topic {topic}")
        plog = ctx.node.logs.get(topic, p.partition_index)
        ctx.leader_of(topic, p.partition_index)
        if not plog.config.delete:  # Kafka: Partition.deleteRecordsOnLeader
            raise KafkaError(ErrorCode.policy_violation, f"Records of partition {topic}-{p.partition_index} can not "
                             f"be deleted due to the configured policy")
        low = plog.delete_records(p.offset)
    except KafkaError as e:
        return ctx.make("DeleteRecordsPartitionResult", partition_index=p.partition_index, low_watermark=-1, error_code=e.code)
    return ctx.make("DeleteRecordsPartitionResult", partition_index=p.partition_index, low_watermark=low,
                    error_code=ErrorCode.none)
