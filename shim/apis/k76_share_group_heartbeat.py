"""ShareGroupHeartbeat (76), v1: share groups' membership (KIP-932).

A member joins with epoch 0, its own member id (a UUID the client chose; empty: INVALID_REQUEST)
and its subscribed topic names; heartbeats with the epoch it was given; leaves with -1. The
coordinator assigns the subscribed topics' partitions itself (Kafka's SimpleAssignor, partitions
may be shared) and answers the assignment whenever it changed
(:mod:`shim.coordinators.share.group`). A member silent for ``share.session.timeout.ms`` (group
config, else group.share.session.timeout.ms, 45 s) is removed and what it had acquired becomes
available again.

Served where the emulated Kafka serves it (4.1) and, as Kafka 4.1 does, only once ``share.version``
1 is finalized (UpdateFeatures); before that every request is UNSUPPORTED_VERSION. READ on the
group (GROUP_AUTHORIZATION_FAILED) and DESCRIBE on every subscribed topic
(TOPIC_AUTHORIZATION_FAILED) are required. A group id a classic or consumer group already has is
GROUP_ID_NOT_FOUND ("... is not a share group."), as Kafka's one namespace of groups answers.
"""

from ..cluster import GROUP
from ..errors import ErrorCode, KafkaError
from ..node import now_ms
from ..security.acls import AclOperation as O
from ..security.acls import ResourceType as R
from ._share import is_other_group, share_groups_enabled, topic_id
from ._pace import Pacer
from .registry import api


def _error(ctx, code, message=None):
    return ctx.response(error_code=code, error_message=message, member_epoch=0, heartbeat_interval=0)


@api(76, "ShareGroupHeartbeat", 1, 1)
async def handle(ctx, request):
    if not share_groups_enabled(ctx):
        return _error(ctx, ErrorCode.unsupported_version)
    if not ctx.authorize(O.READ, R.GROUP, request.group_id):
        return _error(ctx, ErrorCode.group_authorization_failed)
    names = request.subscribed_topic_names
    if names:  # once each, paced (a 2 MiB request names 700,000): the group keeps a set of them
        pace = Pacer()
        names = tuple({name: None async for name in pace.each(names)})
        if len(await ctx.authorized_paced(O.DESCRIBE, R.TOPIC, names, pace)) < len(names):
            return _error(ctx, ErrorCode.topic_authorization_failed)
    if problem := _invalid(request):
        return _error(ctx, ErrorCode.invalid_request, problem)
    if not ctx.coordinates(GROUP, request.group_id):
        return _error(ctx, ErrorCode.not_coordinator)
    share = ctx.node.share
    if is_other_group(ctx, request.group_id):  # Kafka: one namespace for every group type
        return _error(ctx, ErrorCode.group_id_not_found, f"Group {request.group_id} is not a share group.")
    try:
        r = share.heartbeat(request.group_id, request.member_id, request.member_epoch, names, request.rack_id,
                            (ctx.header.client_id or "", ctx.client_host), now_ms())
    except KafkaError as e:
        return _error(ctx, e.code, e.message)
    assignment = None
    if r.assignment is not None:
        assignment = ctx.make("Assignment", topic_partitions=tuple(
            ctx.make("TopicPartitions", topic_id=tid, partitions=tuple(sorted(ps)))
            for t, ps in sorted(r.assignment.items()) if (tid := topic_id(ctx, t)) is not None))
    return ctx.response(error_code=ErrorCode.none, error_message=None, member_id=r.member_id,
                        member_epoch=r.member_epoch, heartbeat_interval=share.heartbeat_interval_ms(request.group_id),
                        assignment=assignment)


def _invalid(request) -> str | None:
    """Kafka: GroupMetadataManager.throwIfShareGroupHeartbeatRequestIsInvalid."""
    if not request.group_id:
        return "GroupId can't be empty."
    if not request.member_id:
        return "MemberId can't be empty."
    if request.member_epoch < -1:
        return f"MemberEpoch is {request.member_epoch}, but must be greater than or equal to -1."
    if request.member_epoch == 0 and not request.subscribed_topic_names:
        return "SubscribedTopicNames must be set in first request."
    return None
