"""EndTxn (26), v0-4 (never v5: no transaction version 2): commit or abort; markers are written before the answer.

Retries of a completed EndTxn succeed; a commit after an abort (or any EndTxn with no transaction)
is INVALID_TXN_STATE; a stale epoch is PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before v2).
"""

from ..errors import ErrorCode, KafkaError
from ..node import now_ms
from ._txn_errors import for_version
from .registry import api


@api(26, "EndTxn", 0, 4)
def handle(ctx, request):
    try:
        ctx.node.txn.end_txn(request.transactional_id, request.producer_id, request.producer_epoch,
                             request.committed, now_ms())
    except KafkaError as e:
        return ctx.response(error_code=for_version(e.code, ctx.version))
    return ctx.response(error_code=ErrorCode.none)
