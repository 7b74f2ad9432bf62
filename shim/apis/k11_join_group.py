"""JoinGroup (11), v0-9 (classic protocol).

A long-poll: members that join a rebalance get their answer when it completes (every member
rejoined, or the rebalance timeout passed), so the request holds its connection until then. The
coordinator relays the members' protocol metadata untouched and picks the protocol they all
support by vote (range, roundrobin, cooperative-sticky... are the clients' business). v0 uses the
session timeout as rebalance timeout. From v4 a new dynamic member first gets MEMBER_ID_REQUIRED
with its id (KIP-394). v5+ static membership (group.instance.id, KIP-345); v9 lets a rejoining
static leader skip the assignment (SkipAssignment). The Reason field (v8+) is only logged.
Below v7 a missing protocol name is "" rather than null, as Kafka's JoinGroupResponse does.
The id of a share group is INCONSISTENT_GROUP_PROTOCOL (Kafka: one namespace of group ids).
"""

import logging

from ..cluster import GROUP
from ..errors import ErrorCode
from ..node import now_ms
from ._groups import ms, settle
from ._share import is_share_group
from .registry import api

log = logging.getLogger(__name__)

KNOWN_MEMBER_ID_VERSION = 4  # KIP-394
SKIP_ASSIGNMENT_VERSION = 9
NULLABLE_PROTOCOL_NAME_VERSION = 7


@api(11, "JoinGroup", 0, 9)
async def handle(ctx, request):
    session_timeout = ms(request.session_timeout)
    rebalance_timeout = ms(request.rebalance_timeout) if ctx.version >= 1 else session_timeout
    instance_id = getattr(request, "group_instance_id", None)
    if not ctx.coordinates(GROUP, request.group_id):  # shim.cluster: another broker coordinates it
        return ctx.response(error_code=ErrorCode.not_coordinator, generation_id=-1, protocol_type=None,
                            protocol_name=None if ctx.version >= NULLABLE_PROTOCOL_NAME_VERSION else "",
                            leader="", skip_assignment=False, member_id=request.member_id, members=())
    if is_share_group(ctx, request.group_id):  # Kafka: GroupMetadataManager.classicGroupJoin
        return error_response(ctx, request, ErrorCode.inconsistent_group_protocol)
    if getattr(request, "reason", None):
        log.info("member %r joins group %s: %s", request.member_id, request.group_id, request.reason)
    pending = ctx.node.groups.join_group(
        request.group_id, request.member_id, instance_id, request.protocol_type,
        [(p.name, p.metadata) for p in request.protocols],
        session_timeout_ms=session_timeout, rebalance_timeout_ms=rebalance_timeout, now_ms=now_ms(),
        client_id=ctx.header.client_id or "", client_host=ctx.client_host,
        require_known_member_id=ctx.version >= KNOWN_MEMBER_ID_VERSION and instance_id is None,
        support_skip_assignment=ctx.version >= SKIP_ASSIGNMENT_VERSION,
    )
    r = await settle(pending)
    members = tuple(ctx.make("JoinGroupResponseMember", member_id=m.member_id, group_instance_id=m.group_instance_id,
                             metadata=m.metadata) for m in r.members)
    protocol_name = r.protocol_name
    if ctx.version < NULLABLE_PROTOCOL_NAME_VERSION and protocol_name is None:
        protocol_name = ""
    elif ctx.version >= NULLABLE_PROTOCOL_NAME_VERSION and protocol_name == "":
        protocol_name = None
    return ctx.response(error_code=r.error, generation_id=r.generation_id, protocol_type=r.protocol_type,
                        protocol_name=protocol_name, leader=r.leader, skip_assignment=r.skip_assignment,
                        member_id=r.member_id, members=members)


def error_response(ctx, request, code):
    """Kafka: JoinGroupRequest.getErrorResponse."""
    return ctx.response(error_code=code, generation_id=-1, protocol_type=None,
                        protocol_name="" if ctx.version < NULLABLE_PROTOCOL_NAME_VERSION else None,
                        leader="", skip_assignment=False, member_id="", members=())
