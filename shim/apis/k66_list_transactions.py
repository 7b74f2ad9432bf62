"""ListTransactions (66), v0-2 (KIP-664): filters by state names, producer ids, (v1) duration and
(v2, KIP-1152) a transactional id pattern.

The pattern is a regular expression the whole transactional id must match, as Kafka 4.1 matches it
with RE2/J's ``Pattern.matcher(id).matches()``; RE2 here, through the same byte-bounded cache as
the group coordinator's subscription regexes (shim.regexes). A null or empty pattern filters
nothing; one that does not compile is answered INVALID_REGULAR_EXPRESSION with nothing listed.
"""

import re2

from .. import regexes
from ..cluster import TRANSACTION
from ..coordinators.txn import TxnState
from ..errors import ErrorCode
from ..node import now_ms
from ..security.acls import AclOperation as O
from ..security.acls import ResourceType as R
from .registry import api

NAMES = {s.kafka_name: s for s in TxnState}
_compiled = regexes.cache()


@api(66, "ListTransactions", 0, 2)
def handle(ctx, request):
    pattern = getattr(request, "transactional_id_pattern", None)
    try:
        matches = _compiled(pattern).fullmatch if pattern else None
    except re2.error:
        return ctx.response(error_code=ErrorCode.invalid_regular_expression, unknown_state_filters=(),
                            transaction_states=())
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
        and (matches is None or matches(m.transactional_id) is not None)
    )
    return ctx.response(error_code=ErrorCode.none, unknown_state_filters=unknown, transaction_states=listed)
