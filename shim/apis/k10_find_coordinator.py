"""FindCoordinator (10), v0-6: this broker coordinates every group and transactional id.

v0-3 carry one key; v4+ a batch of keys. Key type 1 (transaction) needs v1+. Key type 2 (share
group, v6) is COORDINATOR_NOT_AVAILABLE, as Kafka 3.9 answers with share groups not built
(KafkaApis.getCoordinator); below v6 it is INVALID_REQUEST, like any other unknown type. v5 only
allows TRANSACTION_ABORTABLE, which this API never returns.
"""

from ..errors import ErrorCode
from .registry import api

GROUP, TRANSACTION, SHARE = 0, 1, 2
BATCHED_VERSION = 4
SHARE_VERSION = 6


@api(10, "FindCoordinator", 0, 6)
def handle(ctx, request):
    node = ctx.node
    key_type = getattr(request, "key_type", GROUP)
    if key_type in (GROUP, TRANSACTION):
        code = ErrorCode.none
    elif key_type == SHARE and ctx.version >= SHARE_VERSION:
        code = ErrorCode.coordinator_not_available
    else:
        code = ErrorCode.invalid_request
    me = dict(node_id=node.config.node_id, host=node.host, port=node.port) if code == ErrorCode.none \
        else dict(node_id=-1, host="", port=-1)
    if ctx.version < BATCHED_VERSION:
        return ctx.response(error_code=code, error_message=None, **me)
    coordinators = tuple(
        ctx.make("Coordinator", key=key, error_code=code, error_message=None, **me)
        for key in request.coordinator_keys
    )
    return ctx.response(coordinators=coordinators)
