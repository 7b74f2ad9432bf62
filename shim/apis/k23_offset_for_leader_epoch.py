"""OffsetForLeaderEpoch (23), v2-4.

There is one leader epoch, 0, stamped on every batch: its end offset is the log end offset. A
larger requested epoch is unknown (-1/-1, as Kafka answers for an epoch it has not seen), and a
current leader epoch above ours is UNKNOWN_LEADER_EPOCH.
"""

from ..errors import ErrorCode, KafkaError
from ..storage.partition_log import LEADER_EPOCH
from ..security.acls import AclOperation as O
from ._authz import denied_topics
from .registry import api


@api(23, "OffsetForLeaderEpoch", 2, 4)
def handle(ctx, request):
    topics = []
    # Kafka: a replica's CLUSTER_ACTION covers every topic; otherwise DESCRIBE on each
    denied = set() if ctx.authorize_cluster(O.CLUSTER_ACTION) else denied_topics(ctx, [t.topic for t in request.topics])
    for t in request.topics:
        parts = tuple(_partition(ctx, t.topic, p, t.topic in denied) for p in t.partitions)
        topics.append(ctx.make("OffsetForLeaderTopicResult", topic=t.topic, partitions=parts))
    return ctx.response(topics=tuple(topics))


def _partition(ctx, topic, p, denied=False):
    try:
        if denied:
            raise KafkaError(ErrorCode.topic_authorization_failed)
        if p.current_leader_epoch > LEADER_EPOCH:
            raise KafkaError(ErrorCode.unknown_leader_epoch)
        plog = ctx.node.logs.get(topic, p.partition)
    except KafkaError as e:
        return ctx.make("EpochEndOffset", error_code=e.code, partition=p.partition, leader_epoch=-1, end_offset=-1)
    if p.leader_epoch == LEADER_EPOCH:
        epoch, end = LEADER_EPOCH, plog.log_end_offset
    else:
        epoch, end = -1, -1
    return ctx.make("EpochEndOffset", error_code=ErrorCode.none, partition=p.partition, leader_epoch=epoch, end_offset=end)
