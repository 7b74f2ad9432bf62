"""ListTransactions (66), v0-1 (KIP-664): filters by state names, producer ids, and (v1) duration."""

from ..cluster import TRANSACTION
from ..coordinators.txn import TxnState
from ..errors import ErrorCode
from ..node import now_ms
from ..security.acls import AclOperation as O
from ..security.acls import ResourceType as R
from .registry import api

NAMES = {s.kafka_name: s for s in TxnState}


@api(66, "ListTransactions", 0, 1)
def handle(ctx, request):
    unknown = tuple(f for f in request.state_filters if f not in NAMES)
    states = {NAMES[f] for f in request.state_filters if f in NAMES}
    pids = set(request.producer_id_filters)
    duration = getattr(request, "duration_filter", -1)
    now = now_ms()
    listed = tuple(
        ctx.make("TransactionState", transactional_id=m.transactional_id, producer_id=m.producer_id,
                 transaction_state=m.state.kafka_name)
        for m in ctx.node.txn.txns.values()
        if m.state is not TxnState.DEAD and ctx.coordinates(TRANSACTION, m.transactional_id)
        and ctx.authorize(O.DESCRIBE, R.TRANSACTIONAL_ID, m.transactional_id)
        and (not request.state_filters or m.state in states)
        and (not pids or m.producer_id in pids)
        and (duration < 0 or now - m.txn_start_ms > duration)  # Kafka keeps Empty ones (start -1)
    )
    return ctx.response(error_code=ErrorCode.none, unknown_state_filters=unknown, transaction_states=listed)
