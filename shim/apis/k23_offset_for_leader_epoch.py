"""OffsetForLeaderEpoch (23), v0-4 (v0-1 under 3.x emulation only: Kafka 4.0 removed them,
KIP-896). v0-1 carry no CurrentLeaderEpoch, so they are never fenced; v0 answers no LeaderEpoch.

The end offset of a leader epoch from the partition's leader-epoch cache (shim.cluster): the start
offset of the next larger epoch, the log end offset for the current epoch, -1/-1 for an epoch above
it (Kafka: LeaderEpochFileCache.endOffsetFor). Only the leader answers (NOT_LEADER_OR_FOLLOWER
elsewhere); a current leader epoch below the partition's is FENCED_LEADER_EPOCH, above it
UNKNOWN_LEADER_EPOCH. Consumers ask it after a leader change to validate their position (KIP-320).
A partition of the offline data directory (a failed fsync, shim.storage.group_commit) is
KAFKA_STORAGE_ERROR before any leader check (Kafka: ReplicaManager's HostedPartition.Offline).
"""

from ..errors import ErrorCode, KafkaError
from ..security.acls import AclOperation as O
from ._authz import denied_topics_paced
from ._pace import Pacer
from .registry import api


@api(23, "OffsetForLeaderEpoch", 0, 4)
async def handle(ctx, request):
    topics, pace = [], Pacer()
    # Kafka: a replica's CLUSTER_ACTION covers every topic; otherwise DESCRIBE on each
    denied = set() if ctx.authorize_cluster(O.CLUSTER_ACTION) else await denied_topics_paced(
        ctx, [t.topic for t in request.topics], pace)
    for t in request.topics:
        parts = tuple([_partition(ctx, t.topic, p, t.topic in denied) async for p in pace.each(t.partitions)])
        topics.append(ctx.make("OffsetForLeaderTopicResult", topic=t.topic, partitions=parts))
    return ctx.response(topics=tuple(topics))


def _partition(ctx, topic, p, denied=False):
    try:
        if denied:
            raise KafkaError(ErrorCode.topic_authorization_failed)
        plog = ctx.node.logs.get(topic, p.partition)
        state = ctx.leader_of(topic, p.partition, getattr(p, "current_leader_epoch", -1))  # v2+
    except KafkaError as e:
        return ctx.make("EpochEndOffset", error_code=e.code, partition=p.partition, leader_epoch=-1, end_offset=-1)
    epoch, end = state.end_offset_for(p.leader_epoch, plog.log_end_offset)
    return ctx.make("EpochEndOffset", error_code=ErrorCode.none, partition=p.partition, leader_epoch=epoch, end_offset=end)
