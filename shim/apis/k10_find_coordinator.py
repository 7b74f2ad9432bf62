"""FindCoordinator (10), v0-6: this broker coordinates every group and transactional id.

v0-3 carry one key; v4+ a batch of keys. Key type 1 (transaction) needs v1+. Key type 2 (share
group, v6) is COORDINATOR_NOT_AVAILABLE, as Kafka 3.9 answers with share groups not built
(KafkaApis.getCoordinator); below v6 it is INVALID_REQUEST, like any other unknown type. v5 only
allows TRANSACTION_ABORTABLE, which this API never returns. With an authorizer a group key needs
DESCRIBE on the group (GROUP_AUTHORIZATION_FAILED), a transaction key DESCRIBE on the transactional
id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
"""

from ..errors import ErrorCode
from ..security.acls import AclOperation as O
from ..security.acls import ResourceType as R
from .registry import api

GROUP, TRANSACTION, SHARE = 0, 1, 2
BATCHED_VERSION = 4
SHARE_VERSION = 6


@api(10, "FindCoordinator", 0, 6)
def handle(ctx, request):
    node = ctx.node
    key_type = getattr(request, "key_type", GROUP)
    if ctx.version < BATCHED_VERSION:
        return ctx.response(error_message=None, **_coordinator(ctx, key_type, request.key))
    coordinators = tuple(
        ctx.make("Coordinator", key=key, error_message=None, **_coordinator(ctx, key_type, key))
        for key in request.coordinator_keys
    )
    return ctx.response(coordinators=coordinators)


def _coordinator(ctx, key_type, key) -> dict:
    """Kafka: KafkaApis.getCoordinator -- DESCRIBE on the group or transactional id comes first."""
    node = ctx.node
    if key_type == GROUP and not ctx.authorize(O.DESCRIBE, R.GROUP, key):
        code = ErrorCode.group_authorization_failed
    elif key_type == TRANSACTION and not ctx.authorize(O.DESCRIBE, R.TRANSACTIONAL_ID, key):
        code = ErrorCode.transactional_id_authorization_failed
    elif key_type in (GROUP, TRANSACTION):
        code = ErrorCode.none
    elif key_type == SHARE and ctx.version >= SHARE_VERSION:
        code = ErrorCode.coordinator_not_available
    else:
        code = ErrorCode.invalid_request
    if code != ErrorCode.none:
        return dict(error_code=code, node_id=-1, host="", port=-1)
    return dict(error_code=code, node_id=node.config.node_id, host=ctx.endpoint[0], port=ctx.endpoint[1])
