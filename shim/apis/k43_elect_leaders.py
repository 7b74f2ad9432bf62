"""ElectLeaders (43), v0-2.

This broker is the only replica, the preferred leader and the leader of every partition, so, as
Kafka's controller answers (ReplicationControlManager.electLeaders): a preferred (0) or unclean (1)
election of an existing partition is ELECTION_NOT_NEEDED, an unknown topic or partition
UNKNOWN_TOPIC_OR_PARTITION. A null partition list means every partition, and then partitions that
need no election are left out (so every topic is listed with no partitions). Another election type
is INVALID_REQUEST for the whole request (v1+ top-level error code, and on every listed partition).
v0 has no election type: preferred. The handler gives the loop up as it walks the partitions
(shim.apis._pace).
"""

from ..errors import ErrorCode, KafkaError
from ._pace import Pacer
from .registry import api

PREFERRED, UNCLEAN = 0, 1
NOT_NEEDED = "Leader election not needed for topic partition."


@api(43, "ElectLeaders", 0, 2)
async def handle(ctx, request):
    election_type = getattr(request, "election_type", PREFERRED)
    if election_type not in (PREFERRED, UNCLEAN):
        return _refused(ctx, request, f"Unknown election type {election_type}")
    logs = ctx.node.logs
    if request.topic_partitions is None:
        # Every partition already has its preferred leader: nothing to report (Kafka skips ELECTION_NOT_NEEDED).
        results = tuple(_topic(ctx, name, ()) for name in sorted(logs.topics))
    else:
        pace = Pacer()
        results = tuple([_topic(ctx, t.topic, tuple([_elect(ctx, t.topic, p) async for p in pace.each(t.partitions)]))
                         for t in request.topic_partitions])
    return ctx.response(error_code=ErrorCode.none, replica_election_results=results)


def _elect(ctx, topic, index):
    try:
        if topic not in ctx.node.logs.topics:
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"No such topic as {topic}")
        if (topic, index) not in ctx.node.logs.logs:
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"No such partition as {topic}-{index}")
        raise KafkaError(ErrorCode.election_not_needed, NOT_NEEDED)
    except KafkaError as e:
        return ctx.make("PartitionResult", partition_id=index, error_code=e.code, error_message=e.message)


def _topic(ctx, name, partitions):
    return ctx.make("ReplicaElectionResult", topic=name, partition_result=partitions)


def _refused(ctx, request, message, code=ErrorCode.invalid_request):
    """Kafka: ElectLeadersRequest.getErrorResponse -- the error on the request and on each partition named."""
    results = tuple(
        _topic(ctx, t.topic, tuple(ctx.make("PartitionResult", partition_id=p, error_code=code, error_message=message)
                                   for p in t.partitions))
        for t in request.topic_partitions or ())
    return ctx.response(error_code=code, replica_election_results=results)


def error_response(ctx, request, code):
    return _refused(ctx, request, None, code)
