"""UnregisterBroker (64), v0 (KIP-631): remove a broker's registration.

Kafka's broker forwards it to the controller (ReplicationControlManager.unregisterBroker): an id
that is not registered is BROKER_ID_NOT_REGISTERED (no message); a registered one is fenced and
unregistered, and a live broker registers again with its next heartbeat. This node is the only
registered broker and is always live, so unregistering it succeeds and changes nothing a client
can observe afterwards. With an authorizer it needs ALTER on the cluster.
"""

from ..errors import ErrorCode
from .registry import api


@api(64, "UnregisterBroker", 0, 0)
def handle(ctx, request):
    code = ErrorCode.none if request.broker_id == ctx.node.config.node_id else ErrorCode.broker_id_not_registered
    return ctx.response(error_code=code, error_message=None)


def error_response(ctx, request, code):
    return ctx.response(error_code=code, error_message=None)
