"""DescribeGroups (15), v0-6 (v6 from 4.0 emulation, as Kafka 4.0 serves it: KIP-1043).

State, protocol type, and members (member id, v4+ group instance id, client id, client host). The
protocol name and each member's metadata and assignment only for a Stable group, as Kafka does.
An unknown group is described as Dead with no error before v6; v6 adds GROUP_ID_NOT_FOUND and
Kafka's message ("Group g not found.", or "Group g is not a classic group." for a consumer or share
group's id), which kafka-clients 4's describeConsumerGroups raises as GroupIdNotFoundException.
v3+ authorized operations (when asked): the authorizer's, or every group operation Kafka 3.9 knows
(READ, DESCRIBE, DELETE) without one. A group the principal may not DESCRIBE gets
GROUP_AUTHORIZATION_FAILED. A share group (KIP-932) is no classic group: Kafka 4.1 answers its id
as it answers an unknown one.
"""

from ..cluster import GROUP as GROUP_KEY
from ..errors import ErrorCode
from ..security.acls import AclOperation as O
from ..security.acls import ResourceType as R
from ._loading import LOADING, loading
from ._operations import NOT_REQUESTED
from ._pace import Pacer
from ._repeats import Repeats
from .registry import api

NOT_FOUND_VERSION = 6  # Kafka: GroupMetadataManager.describeGroups, requestVersion >= 6


@api(15, "DescribeGroups", 0, 6)
async def handle(ctx, request):
    want_ops = getattr(request, "include_authorized_operations", False)
    repeats = Repeats("DescribeGroups")  # a group named again: answered again, from one build
    groups = [repeats.entry(g, lambda: _describe(ctx, g, want_ops) if ctx.authorize(O.DESCRIBE, R.GROUP, g)
                            else _refused(ctx, g))
              async for g in Pacer().each(request.groups)]
    return ctx.response(groups=tuple(groups))


def _refused(ctx, group_id):
    return ctx.make("DescribedGroup", error_code=ErrorCode.group_authorization_failed, group_id=group_id,
                    group_state="", protocol_type="", protocol_data="", members=(),
                    authorized_operations=NOT_REQUESTED)


def _describe(ctx, group_id, want_ops):
    operations = ctx.authorized_operations(R.GROUP, group_id) if want_ops else NOT_REQUESTED
    if not ctx.coordinates(GROUP_KEY, group_id):  # shim.cluster: another broker coordinates it
        return ctx.make("DescribedGroup", error_code=ErrorCode.not_coordinator, group_id=group_id, group_state="",
                        protocol_type="", protocol_data="", members=(), authorized_operations=NOT_REQUESTED)
    if loading(ctx):  # after the group's own checks (shim.apis._loading)
        return ctx.make("DescribedGroup", error_code=LOADING, group_id=group_id, group_state="", protocol_type="",
                        protocol_data="", members=(), authorized_operations=NOT_REQUESTED)
    code, s = ctx.node.groups.describe_group(group_id)
    if ctx.version >= NOT_FOUND_VERSION and code == ErrorCode.none and group_id not in ctx.node.groups.groups:
        other = group_id in ctx.node.groups.consumer.groups or group_id in ctx.node.share.groups
        return ctx.make("DescribedGroup", error_code=ErrorCode.group_id_not_found, group_id=group_id,
                        group_state=s.state, protocol_type="", protocol_data="", members=(),
                        authorized_operations=NOT_REQUESTED,
                        error_message=f"Group {group_id} is not a classic group." if other
                        else f"Group {group_id} not found.")
    members = tuple(
        ctx.make("DescribedGroupMember", member_id=m.member_id, group_instance_id=m.group_instance_id,
                 client_id=m.client_id, client_host=m.client_host, member_metadata=m.metadata,
                 member_assignment=m.assignment)
        for m in s.members
    )
    return ctx.make("DescribedGroup", error_code=code, group_id=group_id, group_state=s.state,
                    protocol_type=s.protocol_type, protocol_data=s.protocol, members=members,
                    authorized_operations=operations if code == ErrorCode.none else NOT_REQUESTED)
