"""AddPartitionsToTxn (24), v0-3 (the client form; v4+ is broker-to-broker and not served).

Unknown partitions get UNKNOWN_TOPIC_OR_PARTITION and every other partition of the request
OPERATION_NOT_ATTEMPTED, as Kafka answers; coordinator errors apply to every partition.
"""

from ..errors import ErrorCode, KafkaError
from ..node import now_ms
from ._txn_errors import for_version
from .registry import api


@api(24, "AddPartitionsToTxn", 0, 3)
def handle(ctx, request):
    wanted = [(t.name, p) for t in request.v3_and_below_topics for p in t.partitions]
    unknown = {tp for tp in wanted if tp not in ctx.node.logs.logs}
    if unknown:
        errors = {tp: ErrorCode.unknown_topic_or_partition if tp in unknown else ErrorCode.operation_not_attempted
                  for tp in wanted}
    else:
        try:
            ctx.node.txn.add_partitions(request.v3_and_below_transactional_id, request.v3_and_below_producer_id,
                                        request.v3_and_below_producer_epoch, set(wanted), now_ms())
            code = ErrorCode.none
        except KafkaError as e:
            code = for_version(e.code, ctx.version)
        errors = {tp: code for tp in wanted}
    topics = {}
    for (topic, p), code in errors.items():
        topics.setdefault(topic, []).append(
            ctx.make("AddPartitionsToTxnPartitionResult", partition_index=p, partition_error_code=code))
    results = tuple(ctx.make("AddPartitionsToTxnTopicResult", name=t, results_by_partition=tuple(ps))
                    for t, ps in topics.items())
    return ctx.response(results_by_topic_v3_and_below=results)
