"""AddOffsetsToTxn (25), v0-4: adds the group's __consumer_offsets partition to the transaction."""

from ..cluster import TRANSACTION
from ..errors import ErrorCode, KafkaError
from ..node import now_ms
from ._txn_errors import for_version
from .registry import api


@api(25, "AddOffsetsToTxn", 0, 4)
def handle(ctx, request):
    try:
        if not ctx.coordinates(TRANSACTION, request.transactional_id):
            raise KafkaError(ErrorCode.not_coordinator)  # shim.cluster: another broker coordinates it
        ctx.node.txn.add_offsets(request.transactional_id, request.producer_id, request.producer_epoch,
                                 request.group_id, now_ms())
    except KafkaError as e:
        return ctx.response(error_code=for_version(e.code, ctx.version))
    return ctx.response(error_code=ErrorCode.none)


def error_response(ctx, request, code):
    return ctx.response(error_code=code)
