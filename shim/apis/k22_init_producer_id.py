"""InitProducerId (22), v0-5 (v5: KIP-890 part 1, TRANSACTION_ABORTABLE known to the client).

Without a transactional id (idempotent producer): always a new producer id with epoch 0, as Kafka
does; the Java client bumps idempotent epochs locally. With a transactional id the transaction
coordinator decides (shim.coordinators.txn).
"""

from ..errors import ErrorCode, KafkaError
from ..cluster import TRANSACTION
from ..node import now_ms
from .registry import api

FENCED_AS_EPOCH_VERSION = 4  # below v4, PRODUCER_FENCED is reported as INVALID_PRODUCER_EPOCH


@api(22, "InitProducerId", 0, 5)
def handle(ctx, request):
    pid, epoch = getattr(request, "producer_id", -1), getattr(request, "producer_epoch", -1)  # v3+
    try:
        if (pid == -1) != (epoch == -1):
            raise KafkaError(ErrorCode.invalid_request, "producer id and epoch must both be set or both be -1")
        if request.transactional_id is not None and not ctx.coordinates(TRANSACTION, request.transactional_id):
            raise KafkaError(ErrorCode.not_coordinator)  # shim.cluster: another broker coordinates it
        if request.transactional_id is None:
            pid, epoch = ctx.node.producer_ids.next_id(), 0
        else:
            pid, epoch = ctx.node.txn.init_producer_id(
                request.transactional_id, request.transaction_timeout.total_seconds() * 1000,
                pid, epoch, now_ms(),
            )
    except KafkaError as e:
        code = e.code
        if code == ErrorCode.producer_fenced and ctx.version < FENCED_AS_EPOCH_VERSION:
            code = ErrorCode.invalid_producer_epoch
        return ctx.response(error_code=code, producer_id=-1, producer_epoch=-1)
    return ctx.response(error_code=ErrorCode.none, producer_id=pid, producer_epoch=epoch)


def error_response(ctx, request, code):
    return ctx.response(error_code=code, producer_id=-1, producer_epoch=-1)
