"""ShareGroupDescribe (77), v1: share groups as Kafka 4.1 describes them.

Per group: state (Empty, Stable), group epoch, assignment epoch, the assignor ("simple") and per
member its epoch, client id and host, rack, subscribed topic names and assignment. A group that
does not exist is GROUP_ID_NOT_FOUND ("... is not a share group." for a classic or consumer group's
id). UNSUPPORTED_VERSION for every group until share.version 1 is finalized (Kafka 4.1's gate);
DESCRIBE on the group is required (GROUP_AUTHORIZATION_FAILED).
"""

from ..cluster import GROUP
from ..errors import ErrorCode, KafkaError
from ..security.acls import AclOperation as O
from ..security.acls import ResourceType as R
from ._loading import LOADING, loading
from ._operations import NOT_REQUESTED
from ._pace import Pacer
from ._repeats import Repeats
from ._share import is_other_group, share_groups_enabled, topic_id
from ..coordinators.share.group import ASSIGNOR
from .registry import api


@api(77, "ShareGroupDescribe", 1, 1)
async def handle(ctx, request):
    # paced: 2 MiB of one group's id took 0.15 CPU s in one turn of the loop
    repeats = Repeats("ShareGroupDescribe")  # a group named again: answered again, from one build
    return ctx.response(groups=tuple([repeats.entry(g, lambda: _describe(ctx, g, request.include_authorized_operations))
                                      async for g in Pacer().each(request.group_ids)]))


def _empty(ctx, group_id, code, message=None):
    return ctx.make("DescribedGroup", error_code=code, error_message=message, group_id=group_id, group_state="",
                    group_epoch=0, assignment_epoch=0, assignor_name="", members=())


def _describe(ctx, group_id, want_ops):
    if not share_groups_enabled(ctx):
        return _empty(ctx, group_id, ErrorCode.unsupported_version)
    if not ctx.authorize(O.DESCRIBE, R.GROUP, group_id):
        return _empty(ctx, group_id, ErrorCode.group_authorization_failed)
    if not ctx.coordinates(GROUP, group_id):
        return _empty(ctx, group_id, ErrorCode.not_coordinator)
    if loading(ctx):  # after the group's own checks (shim.apis._loading)
        return _empty(ctx, group_id, LOADING)
    try:
        if is_other_group(ctx, group_id):  # Kafka: GroupMetadataManager.shareGroup
            raise KafkaError(ErrorCode.group_id_not_found, f"Group {group_id} is not a share group.")
        group = ctx.node.share.describe(group_id)
    except KafkaError as e:
        return _empty(ctx, group_id, e.code, e.message)
    members = tuple(
        ctx.make("Member", member_id=m.member_id, rack_id=m.rack_id, member_epoch=m.member_epoch,
                 client_id=m.client_id, client_host=m.client_host, subscribed_topic_names=m.subscribed,
                 assignment=_assignment(ctx, m.assignment))
        for m in group.members.values())
    operations = ctx.authorized_operations(R.GROUP, group_id) if want_ops else NOT_REQUESTED
    return ctx.make("DescribedGroup", error_code=ErrorCode.none, error_message=None, group_id=group_id,
                    group_state=group.state, group_epoch=group.group_epoch, assignment_epoch=group.assignment_epoch,
                    assignor_name=ASSIGNOR, members=members, authorized_operations=operations)


def _assignment(ctx, assignment):
    return ctx.make("Assignment", topic_partitions=tuple(
        ctx.make("TopicPartitions", topic_id=tid, topic_name=t, partitions=tuple(sorted(ps)))
        for t, ps in sorted(assignment.items()) if (tid := topic_id(ctx, t)) is not None))
