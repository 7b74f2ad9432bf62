"""AddPartitionsToTxn (24), v0-5.

v0-3 are the client's form: one transaction. Unknown partitions get UNKNOWN_TOPIC_OR_PARTITION and
every other partition of the request OPERATION_NOT_ATTEMPTED, as Kafka answers; coordinator errors
apply to every partition.

With an authorizer v0-3 need WRITE on the transactional id and on each topic (the topics refused
get TOPIC_AUTHORIZATION_FAILED, the others OPERATION_NOT_ATTEMPTED). An internal topic is refused
so with or without an authorizer, whoever asks: Kafka leaves internal topics out of the set it
authorizes (KafkaApis.handleAddPartitionsToTxnRequest); offsets join a transaction through
AddOffsetsToTxn.

v4-5 are the broker-to-broker form (KIP-890; they need CLUSTER_ACTION on the cluster): a batch of transactions, each either verified (VerifyOnly: NONE for the partitions in the
ongoing transaction, TRANSACTION_ABORTABLE for the others) or added, under 4.x emulation with the
client on transaction version 2, which is how Produce v12 and TxnOffsetCommit v5 add partitions
implicitly. Whole-
transaction errors apply to every partition of that transaction; the top-level error is NONE.
"""

from ..cluster import TRANSACTION
from ..errors import ErrorCode, KafkaError
from ..node import now_ms
from ..protocol.kafka_releases import TRANSACTION_VERSION
from ..storage.log_manager import INTERNAL_TOPICS
from ._txn_errors import for_version
from ._authz import denied_topics_paced
from ._loading import LOADING, loading
from ._pace import Pacer
from .registry import api

BATCHED_VERSION = 4  # Kafka: TransactionVersion.transactionVersionForAddPartitionsToTxn (v4+ -> TV_2)


@api(24, "AddPartitionsToTxn", 0, 5)
async def handle(ctx, request):
    # Paced: 2 MiB of transactions or partitions took 0.9-1.4 CPU s in one turn of the loop. Each
    # transaction is still added whole, one after another in the request's order. A group-commit
    # job failing meanwhile is answered by the dispatcher (shim.apis._coordinator_sync).
    return await _answer(ctx, request, Pacer())


async def _answer(ctx, request, pace):
    if ctx.version < BATCHED_VERSION:
        wanted = [tp async for tp in pace.each((t.name, p) for t in request.v3_and_below_topics for p in t.partitions)]
        names = {t async for t, _ in pace.each(wanted)}
        denied = await denied_topics_paced(ctx, names, pace) | INTERNAL_TOPICS.intersection(names)
        if denied:  # Kafka: the topics it may not WRITE fail, the rest are not attempted
            return ctx.response(results_by_topic_v3_and_below=await _topic_results(ctx, {
                tp: ErrorCode.topic_authorization_failed if tp[0] in denied else
                ErrorCode.unknown_topic_or_partition if tp not in ctx.node.logs.logs else
                ErrorCode.operation_not_attempted async for tp in pace.each(wanted)}, pace))
        errors = await _transaction(ctx, request.v3_and_below_transactional_id, request.v3_and_below_producer_id,
                                    request.v3_and_below_producer_epoch, wanted, pace, verify_only=False)
        return ctx.response(results_by_topic_v3_and_below=await _topic_results(ctx, errors, pace))
    results = []
    async for txn in pace.each(request.transactions):
        wanted = [tp async for tp in pace.each((t.name, p) for t in txn.topics for p in t.partitions)]
        errors = await _transaction(ctx, txn.transactional_id, txn.producer_id, txn.producer_epoch, wanted, pace,
                                    verify_only=txn.verify_only)
        results.append(ctx.make("AddPartitionsToTxnResult", transactional_id=txn.transactional_id,
                                topic_results=await _topic_results(ctx, errors, pace)))
    return ctx.response(error_code=ErrorCode.none, results_by_transaction=tuple(results))


async def _transaction(ctx, txn_id, pid, epoch, wanted, pace, *, verify_only) -> dict:
    if not ctx.coordinates(TRANSACTION, txn_id):  # shim.cluster: another broker coordinates it
        return {tp: ErrorCode.not_coordinator async for tp in pace.each(wanted)}
    unknown = {tp async for tp in pace.each(wanted) if tp not in ctx.node.logs.logs}
    if unknown:
        return {tp: ErrorCode.unknown_topic_or_partition if tp in unknown else ErrorCode.operation_not_attempted
                async for tp in pace.each(wanted)}
    if txn_id and loading(ctx):  # after the topics' checks (shim.apis._loading); "" is INVALID_REQUEST first
        return {tp: LOADING async for tp in pace.each(wanted)}
    txn, partitions = ctx.node.txn, {tp async for tp in pace.each(wanted)}
    try:
        if verify_only:
            return txn.verify_partitions(txn_id, pid, epoch, partitions)
        # Kafka 4.x records the client as on transaction version 2 for v4+; 3.x has no such notion.
        tv = 2 if ctx.version >= BATCHED_VERSION and ctx.node.quorum.level(TRANSACTION_VERSION) >= 2 else 0
        txn.add_partitions(txn_id, pid, epoch, partitions, now_ms(), transaction_version=tv)
        code = ErrorCode.none
    except KafkaError as e:
        code = for_version(e.code, ctx.version)
    return {tp: code async for tp in pace.each(wanted)}


async def _topic_results(ctx, errors: dict, pace) -> tuple:
    """The partitions' errors as topic results, in first-seen order. Paced to the end: grouping half
    a million partitions of a 2 MiB v3 request took 0.07 CPU s of one turn."""
    topics: dict[str, list] = {}
    async for (topic, partition), code in pace.each(errors.items()):
        topics.setdefault(topic, []).append(ctx.make("AddPartitionsToTxnPartitionResult", partition_index=partition,
                                                     partition_error_code=code))
    return tuple([ctx.make("AddPartitionsToTxnTopicResult", name=t, results_by_partition=tuple(ps))
                  async for t, ps in pace.each(topics.items())])


async def error_response(ctx, request, code):
    """Kafka: AddPartitionsToTxnRequest.getErrorResponse -- v4+ on the request, v0-3 on every
    partition, paced as the answer is."""
    if ctx.version >= BATCHED_VERSION:
        return ctx.response(error_code=code, results_by_transaction=())
    pace = Pacer()
    wanted = {tp: code async for tp in pace.each((t.name, p) for t in request.v3_and_below_topics
                                                 for p in t.partitions)}
    return ctx.response(results_by_topic_v3_and_below=await _topic_results(ctx, wanted, pace))
