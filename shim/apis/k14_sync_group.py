"""SyncGroup (14), v0-5 (classic protocol).

The leader sends the assignment it computed; it is written to __consumer_offsets with the group
metadata, then every member gets its own part. Followers that arrive first wait for it (a
long-poll, like JoinGroup). A member that does not send SyncGroup within the rebalance timeout
is removed and the group rebalances (Kafka's pending-sync expiration). From v5 the protocol type
and name are mandatory and must match the group's (else INCONSISTENT_GROUP_PROTOCOL).
"""

from ..cluster import GROUP
from ..errors import ErrorCode
from ..node import now_ms
from ._groups import settle
from .registry import api

MANDATORY_PROTOCOL_VERSION = 5


@api(14, "SyncGroup", 0, 5)
async def handle(ctx, request):
    protocol_type = getattr(request, "protocol_type", None)
    protocol_name = getattr(request, "protocol_name", None)
    if ctx.version >= MANDATORY_PROTOCOL_VERSION and (protocol_type is None or protocol_name is None):
        return ctx.response(error_code=ErrorCode.inconsistent_group_protocol, protocol_type=None,
                            protocol_name=None, assignment=b"")
    if not ctx.coordinates(GROUP, request.group_id):  # shim.cluster: another broker coordinates it
        return ctx.response(error_code=ErrorCode.not_coordinator, protocol_type=None, protocol_name=None,
                            assignment=b"")
    pending = ctx.node.groups.sync_group(
        request.group_id, request.generation_id, request.member_id, getattr(request, "group_instance_id", None),
        {a.member_id: a.assignment for a in request.assignments}, now_ms=now_ms(),
        protocol_type=protocol_type, protocol_name=protocol_name,
    )
    r = await settle(pending)
    return ctx.response(error_code=r.error, protocol_type=r.protocol_type, protocol_name=r.protocol_name,
                        assignment=r.assignment)


def error_response(ctx, request, code):
    return ctx.response(error_code=code, protocol_type=None, protocol_name=None, assignment=b"")
