"""CreatePartitions (37), v0-3.

Grows a topic to ``count`` partitions: the new partition logs are created (off the event loop) and the count is written
to the topic metadata before the answer, so it survives a restart. As Kafka's controller answers
(ReplicationControlManager.createPartitions): INVALID_PARTITIONS when the count is not larger,
UNKNOWN_TOPIC_OR_PARTITION for an unknown topic, INVALID_REQUEST for a topic named twice, and
manual assignments must be one per new partition, each naming known brokers once
(INVALID_REPLICA_ASSIGNMENT otherwise). A new partition with a manual assignment gets exactly those
replicas, in that order (the first live one leads), as a topic created with one does.
validate_only checks without changing anything.
"""

import collections

from ..errors import ErrorCode, KafkaError
from ._assignment import check_manual_assignment
from ._authz import denied_topics_paced
from ._pace import Pacer
from .registry import api

# Kafka's controller bounds the records of one request (QuorumController.MAX_RECORDS_PER_USER_OP, one
# record a new partition); the topic that would pass it fails with UNKNOWN_SERVER_ERROR.
MAX_NEW_PARTITIONS_PER_REQUEST = 10_000


@api(37, "CreatePartitions", 0, 3)
async def handle(ctx, request):
    counts = collections.Counter(t.name for t in request.topics)
    duplicates = {n for n, c in counts.items() if c > 1}
    results = [_result(ctx, n, ErrorCode.invalid_request, "Duplicate topic name.") for n in sorted(duplicates)]
    budget = [MAX_NEW_PARTITIONS_PER_REQUEST]  # what the topics answered so far have used
    pace = Pacer()  # paced: 2 MiB of distinct topics the ACLs refused took 0.5 CPU s of one turn
    denied = await denied_topics_paced(ctx, [t.name async for t in pace.each(request.topics)
                                             if t.name not in duplicates], pace)
    results += [_result(ctx, n, ErrorCode.topic_authorization_failed, "The topic authorization is failed.")
                async for n in pace.each(sorted(denied))]
    async for t in pace.each(request.topics):
        if t.name not in duplicates and t.name not in denied:
            results.append(await _grow(ctx, t, request.validate_only, budget))
    return ctx.response(results=tuple(results))


async def _grow(ctx, t, validate_only, budget):
    logs = ctx.node.logs
    try:
        if t.name not in logs.topics:  # Kafka's controller answers this one without a message
            raise KafkaError(ErrorCode.unknown_topic_or_partition)
        info = logs.topic(t.name)
        if t.count > info.partitions and t.assignments is not None:
            _check_assignments(ctx, t, t.count - info.partitions)
        first = info.partitions  # add_partitions grows it
        added = t.count - first
        if added > budget[0]:
            raise KafkaError(ErrorCode.unknown_server_error, None)
        await logs.add_partitions_async(t.name, t.count, validate_only)
        budget[0] -= added
        if t.assignments and not validate_only:
            for i, a in enumerate(t.assignments):
                ctx.node.cluster.assign(t.name, first + i, tuple(a.broker_ids))
    except KafkaError as e:
        return _result(ctx, t.name, e.code, e.message)
    return _result(ctx, t.name, ErrorCode.none, None)


def _check_assignments(ctx, t, additional):
    """One assignment per new partition, each naming known brokers once."""
    if len(t.assignments) != additional:
        raise KafkaError(ErrorCode.invalid_replica_assignment, f"Attempted to add {additional} additional "
                         f"partition(s), but only {len(t.assignments)} assignment(s) were specified.")
    for a in t.assignments:
        check_manual_assignment(ctx.node.node_ids, a.broker_ids)


def _result(ctx, name, code, message):
    return ctx.make("CreatePartitionsTopicResult", name=name, error_code=code, error_message=message)
