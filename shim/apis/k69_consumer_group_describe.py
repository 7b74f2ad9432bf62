"""ConsumerGroupDescribe (69), v0-1: consumer groups (KIP-848) as Kafka 4 describes them.

Per group: state (Empty, Assigning, Reconciling, Stable), group epoch, assignment epoch, the
server assignor in use, and per member its epoch, subscription (names and regex), current and
target assignment (topic id, name, partitions) and, from v1, its type (0: a classic-protocol member
of a group being migrated, 1: consumer protocol). A
group that does not exist or is a classic or share group answers GROUP_ID_NOT_FOUND with Kafka's message.
Served from 4.0; under 3.9 emulation every group answers UNSUPPORTED_VERSION, as Kafka 3.9 does
while the consumer protocol is off (its default). A group the principal may not DESCRIBE gets
GROUP_AUTHORIZATION_FAILED.
"""

from ..cluster import GROUP
from ..errors import ErrorCode, KafkaError
from ..security.acls import AclOperation as O
from ..security.acls import ResourceType as R
from ._loading import LOADING, loading
from ._operations import NOT_REQUESTED
from ._pace import Pacer
from ._repeats import Repeats
from ._share import is_share_group
from .k68_consumer_group_heartbeat import consumer_protocol_enabled
from .registry import api

CLASSIC_MEMBER_TYPE, CONSUMER_MEMBER_TYPE = 0, 1  # Kafka: MemberType


@api(69, "ConsumerGroupDescribe", 0, 1)
async def handle(ctx, request):
    # paced: 2 MiB of one group's id took 0.14 CPU s in one turn of the loop
    names = {info.topic_id: name for name, info in ctx.node.logs.topics.items()}
    repeats = Repeats("ConsumerGroupDescribe")  # a group named again: answered again, from one build
    return ctx.response(groups=tuple([repeats.entry(g, lambda: _describe(ctx, g, request.include_authorized_operations,
                                                                          names))
                                      async for g in Pacer().each(request.group_ids)]))


def _describe(ctx, group_id, want_ops, names):
    refused = None
    if not consumer_protocol_enabled(ctx):
        refused = ErrorCode.unsupported_version
    elif not ctx.authorize(O.DESCRIBE, R.GROUP, group_id):
        refused = ErrorCode.group_authorization_failed
    elif not ctx.coordinates(GROUP, group_id):  # shim.cluster: another broker coordinates it
        refused = ErrorCode.not_coordinator
    elif loading(ctx):  # after the group's own checks (shim.apis._loading)
        refused = LOADING
    if refused is not None:
        return ctx.make("DescribedGroup", error_code=refused, group_id=group_id, group_state="", group_epoch=0,
                        assignment_epoch=0, assignor_name="", members=())
    operations = ctx.authorized_operations(R.GROUP, group_id) if want_ops else NOT_REQUESTED
    try:
        if is_share_group(ctx, group_id):  # Kafka: GroupMetadataManager.consumerGroup
            raise KafkaError(ErrorCode.group_id_not_found, f"Group {group_id} is not a consumer group.")
        d = ctx.node.groups.consumer.describe(group_id)
    except KafkaError as e:
        return ctx.make("DescribedGroup", error_code=e.code, error_message=e.message, group_id=group_id,
                        group_state="", group_epoch=0, assignment_epoch=0, assignor_name="", members=())
    members = tuple(
        ctx.make("Member", member_id=m.member_id, instance_id=m.instance_id, rack_id=m.rack_id,
                 member_epoch=m.member_epoch, client_id=m.client_id, client_host=m.client_host,
                 subscribed_topic_names=m.subscribed_topic_names, subscribed_topic_regex=m.subscribed_topic_regex,
                 assignment=_assignment(ctx, m.assigned, names), target_assignment=_assignment(ctx, target, names),
                 member_type=CLASSIC_MEMBER_TYPE if m.uses_classic_protocol else CONSUMER_MEMBER_TYPE)
        for m, target in d.members)
    return ctx.make("DescribedGroup", error_code=ErrorCode.none, group_id=group_id, group_state=d.state,
                    group_epoch=d.group_epoch, assignment_epoch=d.assignment_epoch, assignor_name=d.assignor,
                    members=members, authorized_operations=operations)


def _assignment(ctx, assignment, names):
    return ctx.make("Assignment", topic_partitions=tuple(
        ctx.make("TopicPartitions", topic_id=t, topic_name=names[t], partitions=tuple(sorted(ps)))
        for t, ps in sorted(assignment.items(), key=lambda kv: kv[0].bytes) if t in names))
