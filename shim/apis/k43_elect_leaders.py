"""ElectLeaders (43), v0-2.

As Kafka's controller answers (ReplicationControlManager.electLeaders): an unknown topic or
partition is UNKNOWN_TOPIC_OR_PARTITION; a preferred (0) election of a partition its preferred
(first) replica leads, or an unclean (1) one of a partition with a leader, ELECTION_NOT_NEEDED. One
broker is the only replica and the leader of every partition, so that is every answer there. In a
simulated cluster (shim.cluster.Cluster.elect_leader) a preferred election makes the preferred
replica leader if it is a live ISR member, else PREFERRED_LEADER_NOT_AVAILABLE; an unclean one of a
leaderless partition elects a live replica outside the ISR, else ELIGIBLE_LEADERS_NOT_AVAILABLE. A
null partition list means every partition, and then partitions that need no election are left out. Another election type
is INVALID_REQUEST for the whole request (v1+ top-level error code, and on every listed partition).
v0 has no election type: preferred. The handler gives the loop up as it walks the partitions
(shim.apis._pace).
"""

from ..errors import ErrorCode, KafkaError
from ..node import now_ms
from ._pace import Pacer
from .registry import api

PREFERRED, UNCLEAN = 0, 1
NOT_NEEDED = "Leader election not needed for topic partition."


@api(43, "ElectLeaders", 0, 2)
async def handle(ctx, request):
    election_type = getattr(request, "election_type", PREFERRED)
    if election_type not in (PREFERRED, UNCLEAN):
        return await _refused(ctx, request, f"Unknown election type {election_type}")
    logs, unclean = ctx.node.logs, election_type == UNCLEAN
    if request.topic_partitions is None:
        if ctx.node.cluster.single:
            # Every partition already has its preferred leader: nothing to report (Kafka skips ELECTION_NOT_NEEDED).
            results = tuple(_topic(ctx, name, ()) for name in sorted(logs.topics))
        else:
            results = await _every_partition(ctx, unclean)
    else:
        pace = Pacer()
        results = tuple([_topic(ctx, t.topic, tuple([_elect(ctx, t.topic, p, unclean)
                                                     async for p in pace.each(t.partitions)]))
                         async for t in pace.each(request.topic_partitions)])
    return ctx.response(error_code=ErrorCode.none, replica_election_results=results)


async def _every_partition(ctx, unclean):
    """Kafka: every topic listed, with the partitions whose election was needed."""
    by_topic = {name: [] for name in sorted(ctx.node.logs.topics)}
    async for topic, index in Pacer().each(sorted(ctx.node.logs.logs)):
        result = _elect(ctx, topic, index, unclean)
        if result.error_code != ErrorCode.election_not_needed and topic in by_topic:
            by_topic[topic].append(result)
    return tuple(_topic(ctx, name, tuple(found)) for name, found in by_topic.items())


NOT_AVAILABLE = {False: ErrorCode.preferred_leader_not_available, True: ErrorCode.eligible_leaders_not_available}


def _elect(ctx, topic, index, unclean):
    try:
        if topic not in ctx.node.logs.topics:
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"No such topic as {topic}")
        if (topic, index) not in ctx.node.logs.logs:
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"No such partition as {topic}-{index}")
        cluster = ctx.node.cluster
        outcome = "not_needed" if cluster.single else cluster.elect_leader(topic, index, unclean, now_ms())
        if outcome == "not_needed":
            raise KafkaError(ErrorCode.election_not_needed, NOT_NEEDED)
        if outcome == "not_available":
            raise KafkaError(NOT_AVAILABLE[unclean], None)  # Kafka's ApiError without a message
        return ctx.make("PartitionResult", partition_id=index, error_code=ErrorCode.none, error_message=None)
    except KafkaError as e:
        return ctx.make("PartitionResult", partition_id=index, error_code=e.code, error_message=e.message)


def _topic(ctx, name, partitions):
    return ctx.make("ReplicaElectionResult", topic=name, partition_result=partitions)


async def _refused(ctx, request, message, code=ErrorCode.invalid_request):
    """Kafka: ElectLeadersRequest.getErrorResponse -- the error on the request and on each partition
    named. Paced: 2 MiB of partitions took 1.2 CPU s in one turn of the loop."""
    pace = Pacer()
    results = tuple([
        _topic(ctx, t.topic, tuple([ctx.make("PartitionResult", partition_id=p, error_code=code, error_message=message)
                                    async for p in pace.each(t.partitions)]))
        async for t in pace.each(request.topic_partitions or ())])
    return ctx.response(error_code=code, replica_election_results=results)


async def error_response(ctx, request, code):
    return await _refused(ctx, request, None, code)
