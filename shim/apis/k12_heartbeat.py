"""Heartbeat (12), v0-4 (classic protocol).

Keeps a member's session alive. REBALANCE_IN_PROGRESS tells it to rejoin; UNKNOWN_MEMBER_ID,
ILLEGAL_GENERATION and FENCED_INSTANCE_ID (v3+ static members) as Kafka's handleHeartbeat.
"""

from ..cluster import GROUP
from ..errors import ErrorCode
from ..node import now_ms
from .registry import api


@api(12, "Heartbeat", 0, 4)
def handle(ctx, request):
    if not ctx.coordinates(GROUP, request.group_id):  # shim.cluster: another broker coordinates it
        return ctx.response(error_code=ErrorCode.not_coordinator)
    code = ctx.node.groups.heartbeat(request.group_id, request.member_id, getattr(request, "group_instance_id", None),
                                     request.generation_id, now_ms())
    return ctx.response(error_code=code)


def error_response(ctx, request, code):
    return ctx.response(error_code=code)
