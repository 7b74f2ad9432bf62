"""FindCoordinator (10), v0-6: the coordinator of a group or transactional id is the leader of the
partition of __consumer_offsets or __transaction_state its key hashes to (shim.cluster), wherever
the request came; with that partition's replicas all down, COORDINATOR_NOT_AVAILABLE.

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
    key_type = getattr(request, "key_type", GROUP)
    if key_type in (GROUP, TRANSACTION):
        code = ErrorCode.none
    elif key_type == SHARE and ctx.version >= SHARE_VERSION:
        code = ErrorCode.coordinator_not_available
    else:
        code = ErrorCode.invalid_request
    if ctx.version < BATCHED_VERSION:
        return ctx.response(error_message=None, **_coordinator(ctx, key_type, request.key, code))
    coordinators = tuple(
        ctx.make("Coordinator", key=key, error_message=None, **_coordinator(ctx, key_type, key, code))
        for key in request.coordinator_keys
    )
    return ctx.response(coordinators=coordinators)


def _coordinator(ctx, key_type, key, code) -> dict:
    node_id = ctx.node.cluster.coordinator(key_type, key) if code == ErrorCode.none else -1
    if node_id < 0:
        code = code if code != ErrorCode.none else ErrorCode.coordinator_not_available
        return dict(error_code=code, node_id=-1, host="", port=-1)
    host, port = ctx.endpoint_of(node_id)
    return dict(error_code=code, node_id=node_id, host=host, port=port)
