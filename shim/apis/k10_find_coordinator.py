"""FindCoordinator (10), v0-4: this broker coordinates every group and transactional id.

v0-3 carry one key; v4+ a batch of keys. Key type 1 (transaction) needs v1+.
"""

from ..errors import ErrorCode
from .registry import api

GROUP, TRANSACTION = 0, 1
BATCHED_VERSION = 4


@api(10, "FindCoordinator", 0, 4)
def handle(ctx, request):
    node = ctx.node
    key_type = getattr(request, "key_type", GROUP)
    code = ErrorCode.none if key_type in (GROUP, TRANSACTION) else ErrorCode.invalid_request
    me = dict(node_id=node.config.node_id, host=ctx.endpoint[0], port=ctx.endpoint[1]) if code == ErrorCode.none \
        else dict(node_id=-1, host="", port=-1)
    if ctx.version < BATCHED_VERSION:
        return ctx.response(error_code=code, error_message=None, **me)
    coordinators = tuple(
        ctx.make("Coordinator", key=key, error_code=code, error_message=None, **me)
        for key in request.coordinator_keys
    )
    return ctx.response(coordinators=coordinators)
