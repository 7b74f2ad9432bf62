"""DescribeTransactions (65), v0 (KIP-664). Unknown or Dead ids: TRANSACTIONAL_ID_NOT_FOUND; empty: INVALID_REQUEST."""

from ..cluster import TRANSACTION
from ..coordinators.txn import TxnState
from ..errors import ErrorCode
from ..security.acls import AclOperation as O
from ..security.acls import ResourceType as R
from ._loading import LOADING, loading
from ._pace import Pacer
from .registry import api


@api(65, "DescribeTransactions", 0, 0)
async def handle(ctx, request):
    # paced: 2 MiB of ids took 5 CPU s in one turn of the loop
    return ctx.response(transaction_states=tuple([_describe(ctx, t) async for t in Pacer().each(
        request.transactional_ids)]))


def _describe(ctx, txn_id):
    m = ctx.node.txn.txns.get(txn_id)
    allowed = ctx.authorize(O.DESCRIBE, R.TRANSACTIONAL_ID, txn_id)
    elsewhere = txn_id and not ctx.coordinates(TRANSACTION, txn_id)  # shim.cluster
    held = allowed and txn_id and not elsewhere and loading(ctx)  # after the id's own checks (shim.apis._loading)
    if not allowed or not txn_id or m is None or m.state is TxnState.DEAD or elsewhere or held:
        code = ErrorCode.invalid_request if not txn_id else ErrorCode.transactional_id_not_found
        code = LOADING if held else code
        code = ErrorCode.not_coordinator if elsewhere else code
        if not allowed:  # Kafka checks DESCRIBE on the transactional id first
            code = ErrorCode.transactional_id_authorization_failed
        # Kafka sets only the id and the error: the other fields keep their zero defaults
        return ctx.make("TransactionState", error_code=code, transactional_id=txn_id,
                        transaction_state="", transaction_timeout=0, transaction_start_time=0, producer_id=0,
                        producer_epoch=0, topics=())
    by_topic = {}
    for topic, p in sorted(m.partitions):
        if not ctx.authorize(O.DESCRIBE, R.TOPIC, topic):  # Kafka: only the topics it may describe
            continue
        by_topic.setdefault(topic, []).append(p)
    topics = tuple(ctx.make("TopicData", topic=t, partitions=tuple(ps)) for t, ps in by_topic.items())
    return ctx.make("TransactionState", error_code=ErrorCode.none, transactional_id=txn_id,
                    transaction_state=m.state.kafka_name, transaction_timeout=m.timeout_ms,
                    transaction_start_time=m.txn_start_ms, producer_id=m.producer_id,
                    producer_epoch=m.producer_epoch, topics=topics)
