"""AlterPartitionReassignments (45), v0-1 (v1: AllowReplicationFactorChange, KIP-1101).

On one broker a reassignment can only name this broker, and then there is nothing to move: it is
accepted and complete at once (Kafka's controller builds no change when the target equals the
current replicas). As ReplicationControlManager.alterPartitionReassignment answers otherwise:
UNKNOWN_TOPIC_OR_PARTITION for an unknown topic or partition; INVALID_REPLICA_ASSIGNMENT for an
empty list, another broker or this broker twice; a cancellation (null replicas)
NO_REASSIGNMENT_IN_PROGRESS, since none ever is. A v1 request that does not allow a change of
replication factor gets INVALID_REPLICATION_FACTOR for a valid target of another size than the
partition's replicas (in a simulated cluster; on one broker no such target is valid). The handler
gives the loop up as it walks the partitions (shim.apis._pace).
"""

from ..errors import ErrorCode, KafkaError
from ._assignment import check_manual_assignment
from ._pace import Pacer
from .registry import api


@api(45, "AlterPartitionReassignments", 0, 1)
async def handle(ctx, request):
    pace, same_size = Pacer(), not getattr(request, "allow_replication_factor_change", True)
    responses = tuple([
        ctx.make("ReassignableTopicResponse", name=t.name,
                 partitions=tuple([_alter(ctx, t.name, p, same_size) async for p in pace.each(t.partitions)]))
        for t in request.topics])
    return ctx.response(error_code=ErrorCode.none, error_message=None, responses=responses)


def _alter(ctx, topic, p, same_size: bool):
    try:
        if topic not in ctx.node.logs.topics:
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"Unable to find a topic named {topic}.")
        if (topic, p.partition_index) not in ctx.node.logs.logs:
            raise KafkaError(ErrorCode.unknown_topic_or_partition,
                             f"Unable to find partition {topic}:{p.partition_index}.")
        if p.replicas is None:
            raise KafkaError(ErrorCode.no_reassignment_in_progress, "No partition reassignment is in progress.")
        check_manual_assignment(ctx.node.node_ids, p.replicas)
        current = len(ctx.node.cluster.state(topic, p.partition_index).replicas)
        if same_size and current != len(p.replicas):  # Kafka: validatePartitionReplicationFactorUnchanged
            raise KafkaError(ErrorCode.invalid_replication_factor,
                             f"The replication factor is changed from {current} to {len(p.replicas)}")
    except KafkaError as e:
        return ctx.make("ReassignablePartitionResponse", partition_index=p.partition_index, error_code=e.code,
                        error_message=e.message)
    return ctx.make("ReassignablePartitionResponse", partition_index=p.partition_index, error_code=ErrorCode.none,
                    error_message=None)


def error_response(ctx, request, code):
    """Kafka: AlterPartitionReassignmentsRequest.getErrorResponse -- on the request and every partition."""
    return ctx.response(error_code=code, error_message=None, responses=tuple(
        ctx.make("ReassignableTopicResponse", name=t.name, partitions=tuple(
            ctx.make("ReassignablePartitionResponse", partition_index=p.partition_index, error_code=code,
                     error_message=None) for p in t.partitions)) for t in request.topics))
