"""ConsumerGroupHeartbeat (68), v0-1: the consumer group protocol (KIP-848).

A member joins with epoch 0 (its subscription, rebalance timeout and an empty owned list), then
heartbeats with its member epoch and, when it changed, its owned partitions; it leaves with
epoch -1 (static members: -2, keeping their place for the session timeout). The coordinator
assigns partitions itself (``uniform`` or ``range``, the request's ServerAssignor) and moves each
member towards its target one epoch at a time, revoking before assigning
(:mod:`shim.coordinators.group.consumer_coordinator`). v1 (KIP-1082): the client chooses its
member id, which may not be empty. A regex subscription (v1's SubscribedTopicRegex) is RE2 syntax,
matched against whole topic names by Google's RE2 as Kafka does with RE2/J (an invalid one:
INVALID_REGULAR_EXPRESSION).

Kafka 3.9 advertises v0 but answers UNSUPPORTED_VERSION while the consumer protocol is off, as it
is by default (group.coordinator.rebalance.protocols=classic); kafka-shim does the same under
``--kafka-version`` 3.9 and serves the protocol from 4.0, where ``group.version`` 1 is finalized.
READ on the group is required (GROUP_AUTHORIZATION_FAILED) and DESCRIBE on every subscribed topic
name (TOPIC_AUTHORIZATION_FAILED), as Kafka 4's KafkaApis checks. A share group's id is
GROUP_ID_NOT_FOUND ("... is not a consumer group."): group ids are one namespace.
"""

from ..cluster import GROUP
from ..errors import ErrorCode
from ..coordinators.group.consumer_coordinator import HeartbeatRequest
from ..node import now_ms
from ..protocol.kafka_releases import GROUP_VERSION
from ..security.acls import AclOperation as O
from ..security.acls import ResourceType as R
from ._groups import ms
from ._pace import Pacer
from ._share import is_share_group
from .registry import api


def error_response(ctx, request, code):
    return ctx.response(error_code=code, member_epoch=0, heartbeat_interval=0)


def consumer_protocol_enabled(ctx) -> bool:
    """Kafka 4: isConsumerGroupProtocolEnabled -- group.version 1 or more."""
    return ctx.node.release.finalized_features.get(GROUP_VERSION, 0) >= 1


@api(68, "ConsumerGroupHeartbeat", 0, 1)
async def handle(ctx, request):
    if not consumer_protocol_enabled(ctx):
        return error_response(ctx, request, ErrorCode.unsupported_version)
    names = request.subscribed_topic_names
    if names and ctx.node.authorizer is not None:  # paced: 2 MiB of distinct names took 1.3 CPU s of one turn
        pace = Pacer()
        distinct = {name: None async for name in pace.each(names)}
        if len(await ctx.authorized_paced(O.DESCRIBE, R.TOPIC, distinct, pace)) < len(distinct):
            # Kafka: clients may not learn of topics they cannot DESCRIBE
            return error_response(ctx, request, ErrorCode.topic_authorization_failed)
    if not ctx.coordinates(GROUP, request.group_id):  # shim.cluster: another broker coordinates it
        return error_response(ctx, request, ErrorCode.not_coordinator)
    if is_share_group(ctx, request.group_id):  # Kafka: GroupMetadataManager.getOrMaybeCreateConsumerGroup
        return ctx.response(error_code=ErrorCode.group_id_not_found, member_epoch=0, heartbeat_interval=0,
                            error_message=f"Group {request.group_id} is not a consumer group.")
    owned = None
    if request.topic_partitions is not None:
        owned = {}
        for t in request.topic_partitions:
            owned[t.topic_id] = owned.get(t.topic_id, frozenset()) | frozenset(t.partitions)
    r = ctx.node.groups.consumer.heartbeat(HeartbeatRequest(
        request.group_id, request.member_id, request.member_epoch, request.instance_id, request.rack_id,
        ms(request.rebalance_timeout), request.subscribed_topic_names,
        getattr(request, "subscribed_topic_regex", None), request.server_assignor, owned,
        ctx.header.client_id or "", ctx.client_host, ctx.version), now_ms())
    assignment = None
    if r.assignment is not None:
        assignment = ctx.make("Assignment", topic_partitions=tuple(
            ctx.make("TopicPartitions", topic_id=t, partitions=tuple(sorted(ps)))
            for t, ps in sorted(r.assignment.items(), key=lambda kv: kv[0].bytes)))
    return ctx.response(error_code=r.error, error_message=r.message, member_id=r.member_id,
                        member_epoch=r.member_epoch, heartbeat_interval=r.heartbeat_interval_ms,
                        assignment=assignment)
