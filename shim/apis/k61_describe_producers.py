"""DescribeProducers (61), v0 (KIP-664): the active producers of each partition.

A partition of the offline data directory (a failed fsync, shim.storage.group_commit) is
KAFKA_STORAGE_ERROR with no message (Kafka: activeProducerState's getPartitionOrError).
"""

from ..errors import ErrorCode, KafkaError
from ._authz import denied_topics
from ._pace import Pacer
from .registry import api


@api(61, "DescribeProducers", 0, 0)
async def handle(ctx, request):
    topics, pace = [], Pacer()
    denied = denied_topics(ctx, [t.name for t in request.topics])
    for t in request.topics:
        parts = tuple([_partition(ctx, t.name, p, t.name in denied) async for p in pace.each(t.partition_indexes)])
        topics.append(ctx.make("TopicResponse", name=t.name, partitions=parts))
    return ctx.response(topics=tuple(topics))


def _partition(ctx, topic, index, denied=False):
    try:
        if denied:
            raise KafkaError(ErrorCode.topic_authorization_failed)
        plog = ctx.node.logs.get(topic, index)
        ctx.leader_of(topic, index)  # shim.cluster: the leader's producer state (Kafka: ReplicaManager.activeProducerState)
    except KafkaError as e:
        # Kafka: activeProducerState answers getPartitionOrError's code without a message
        message = None if e.code == ErrorCode.kafka_storage_error else e.message
        return ctx.make("PartitionResponse", partition_index=index, error_code=e.code, error_message=message,
                        active_producers=())
    producers = tuple(
        ctx.make("ProducerState", producer_id=e.producer_id, producer_epoch=e.producer_epoch, last_sequence=e.last_seq,
                 last_timestamp=e.last_timestamp, coordinator_epoch=e.coordinator_epoch,
                 current_txn_start_offset=-1 if e.current_txn_first_offset is None else e.current_txn_first_offset)
        for e in plog.producer_state.active_producers()
    )
    return ctx.make("PartitionResponse", partition_index=index, error_code=ErrorCode.none, error_message=None,
                    active_producers=producers)
