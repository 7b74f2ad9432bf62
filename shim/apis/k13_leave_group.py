"""LeaveGroup (13), v0-5 (classic protocol).

v0-2 remove one member by member id and answer with one error code; v3+ (KIP-345) remove a batch
of members, each by member id or, with an empty member id, by group instance id (administrative
removal of static members), with an error per member. A departure rebalances the group. In a
consumer group (KIP-848) the members named leave whichever protocol they speak, fenced together
with one group epoch bump (Kafka 4: classicGroupLeaveToConsumerGroup, KAFKA-18188). So the
members leave in one step, and the walks before and after it, over what may be 100,000 members of a
2 MiB request, are paced (shim.apis._pace).
"""

from ..cluster import GROUP
from ..errors import ErrorCode
from ..node import now_ms
from ._pace import Pacer
from .registry import api

BATCH_VERSION = 3


@api(13, "LeaveGroup", 0, 5)
async def handle(ctx, request):
    pace = Pacer()
    if ctx.version < BATCH_VERSION:
        leaving = [(request.member_id, None)]
    else:
        leaving = [(m.member_id, m.group_instance_id) async for m in pace.each(request.members)]
    if not ctx.coordinates(GROUP, request.group_id):  # shim.cluster: another broker coordinates it
        return ctx.response(error_code=ErrorCode.not_coordinator, members=())
    top, codes = ctx.node.groups.leave_group(request.group_id, leaving, now_ms())
    if ctx.version < BATCH_VERSION:
        # Kafka: LeaveGroupResponse puts the member's error at the top level for old versions.
        return ctx.response(error_code=top if top != ErrorCode.none else codes[0])
    members = tuple([ctx.make("MemberResponse", member_id=m, group_instance_id=i, error_code=c)
                     async for (m, i), c in pace.each(zip(leaving, codes))])
    return ctx.response(error_code=top, members=members)


def error_response(ctx, request, code):
    return ctx.response(error_code=code, members=())
