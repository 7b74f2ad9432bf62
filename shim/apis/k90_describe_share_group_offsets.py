"""DescribeShareGroupOffsets (90), v0: each share partition's start offset (KIP-932), as Kafka 4.1
answers it (KafkaApis, GroupCoordinatorService.describeShareGroupOffsets/-AllOffsets).

Per group, in this order: UNSUPPORTED_VERSION until share.version 1 is finalized; DESCRIBE on the
group (GROUP_AUTHORIZATION_FAILED); NOT_COORDINATOR on a broker that does not coordinate it.
Topics null: every partition the group has initialized (ShareGroupStatePartitionMetadata), the
topics the principal may not DESCRIBE left out. Topics empty: no topics. Named topics: a topic the principal may not
DESCRIBE answers -1 with TOPIC_AUTHORIZATION_FAILED per partition (zero topic id); a topic that does
not exist, a partition it does not have and a partition without share state answer start offset -1
with no error, as Kafka treats absent data; so does a partition fetched but not yet acknowledged,
whose state Kafka's share partition has not written yet. A group that does not exist (or is not a share group) is
no error in Kafka 4.1 either: it simply has no share state. The leader epoch shown is the one the
state was last written with (0 while it is as initialized), as ReadShareGroupStateSummary answers.
"""

from ..cluster import GROUP
from ..errors import ErrorCode as E
from ..security.acls import AclOperation as O
from ..security.acls import ResourceType as R
from ._loading import LOADING, loading
from ._pace import Pacer
from ._share import share_groups_enabled
from ._share_offsets import (DEFAULT_LEADER_EPOCH, UNINITIALIZED_START_OFFSET, ZERO_UUID, id_of, message,
                             partition_exists)
from .registry import api


@api(90, "DescribeShareGroupOffsets", 0, 0)
async def handle(ctx, request):
    # paced: 2 MiB of groups took 3.4 CPU s in one turn of the loop
    pace = Pacer()
    return ctx.response(groups=tuple([await _group(ctx, g, pace) async for g in pace.each(request.groups)]))


async def _group(ctx, g, pace):
    code = _group_error(ctx, g.group_id)
    if code is not None:
        return ctx.make("DescribeShareGroupOffsetsResponseGroup", group_id=g.group_id, topics=(), error_code=code,
                        error_message=message(code))
    epochs = ctx.node.share.leader_epochs(g.group_id)
    if g.topics is None:
        topics = _initialized(ctx, ctx.node.share.initialized_offsets(g.group_id), epochs)
    else:
        topics = await _named(ctx, g.topics, ctx.node.share.start_offsets(g.group_id), epochs, pace)
    return ctx.make("DescribeShareGroupOffsetsResponseGroup", group_id=g.group_id, topics=topics,
                    error_code=E.none, error_message=None)


def _group_error(ctx, group_id) -> E | None:
    if not share_groups_enabled(ctx):
        return E.unsupported_version
    if not ctx.authorize(O.DESCRIBE, R.GROUP, group_id):
        return E.group_authorization_failed
    if not ctx.coordinates(GROUP, group_id):
        return E.not_coordinator
    if loading(ctx):  # after the group's own checks (shim.apis._loading)
        return LOADING
    return None


def _initialized(ctx, offsets, epochs):
    """Every partition with share state, of the topics that exist and the principal may DESCRIBE."""
    by_topic: dict[str, list[int]] = {}
    for topic, partition in sorted(offsets):
        if partition_exists(ctx, topic, partition):
            by_topic.setdefault(topic, []).append(partition)
    allowed = ctx.authorized(O.DESCRIBE, R.TOPIC, by_topic)
    return tuple(_topic(ctx, t, ps, offsets, epochs) for t, ps in by_topic.items() if t in allowed)


async def _named(ctx, topics, offsets, epochs, pace):
    allowed = await ctx.authorized_paced(O.DESCRIBE, R.TOPIC, [t.topic_name for t in topics], pace)
    unknown, known, refused, existing = [], [], [], ctx.node.logs.topics
    async for t in pace.each(topics):  # split paced: three walks of 140,000 names took 0.15 CPU s of one turn
        (refused if t.topic_name not in allowed else known if t.topic_name in existing else unknown).append(t)
    out = [_absent(ctx, t.topic_name, t.partitions, E.none) async for t in pace.each(unknown)]
    out += [_topic(ctx, t.topic_name, t.partitions, offsets, epochs) async for t in pace.each(known)]
    out += [_absent(ctx, t.topic_name, t.partitions, E.topic_authorization_failed) async for t in pace.each(refused)]
    return tuple(out)


def _topic(ctx, topic, partitions, offsets, epochs):
    return ctx.make("DescribeShareGroupOffsetsResponseTopic", topic_name=topic, topic_id=id_of(ctx, topic),
                    partitions=tuple(_partition(ctx, topic, p, offsets, epochs) for p in partitions))


def _partition(ctx, topic, partition, offsets, epochs):
    start = offsets.get((topic, partition))
    if start is None or not partition_exists(ctx, topic, partition):
        return _no_offset(ctx, partition, E.none)
    return ctx.make("DescribeShareGroupOffsetsResponsePartition", partition_index=partition, start_offset=start,
                    leader_epoch=epochs.get((topic, partition), DEFAULT_LEADER_EPOCH), error_code=E.none,
                    error_message=None)


def _absent(ctx, topic, partitions, code):
    return ctx.make("DescribeShareGroupOffsetsResponseTopic", topic_name=topic, topic_id=ZERO_UUID,
                    partitions=tuple(_no_offset(ctx, p, code) for p in partitions))


def _no_offset(ctx, partition, code):
    return ctx.make("DescribeShareGroupOffsetsResponsePartition", partition_index=partition,
                    start_offset=UNINITIALIZED_START_OFFSET, leader_epoch=DEFAULT_LEADER_EPOCH, error_code=code,
                    error_message=message(code))
