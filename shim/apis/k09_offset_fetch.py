"""OffsetFetch (9), v1-9.

v1-7 ask for one group, v8+ for several (Groups[]). No topic list (v2+: null) means every
partition with a committed offset. Without a committed offset a partition answers offset -1,
leader epoch -1, metadata "", no error. RequireStable (v7+, KIP-447): a partition with a pending
transactional offset commit answers UNSTABLE_OFFSET_COMMIT, which clients retry until the
transaction ends. Group-level errors have no field before v2; the only ones possible here
(INVALID_GROUP_ID) cannot occur, since OffsetFetch accepts any group id, "" included. v9's
member id and epoch (KIP-848) are checked against a consumer group's member (UNKNOWN_MEMBER_ID,
STALE_MEMBER_EPOCH for the group); classic groups do not check them, nor do requests without a
member id and with epoch -1 (the admin client).
"""

from ..errors import ErrorCode
from .registry import api

GROUPS_VERSION = 8


@api(9, "OffsetFetch", 1, 9)
def handle(ctx, request):
    stable = getattr(request, "require_stable", False)
    if ctx.version < GROUPS_VERSION:
        topics = _fetch(ctx, request.group_id, request.topics, stable, "OffsetFetchResponseTopic",
                        "OffsetFetchResponsePartition")
        return ctx.response(topics=topics, error_code=ErrorCode.none)
    return ctx.response(groups=tuple(_group(ctx, g, stable) for g in request.groups))


def _group(ctx, g, stable):
    error = ctx.node.groups.validate_offset_fetch(g.group_id, getattr(g, "member_id", None),
                                                  getattr(g, "member_epoch", -1))
    if error != ErrorCode.none:
        return ctx.make("OffsetFetchResponseGroup", group_id=g.group_id, error_code=error, topics=())
    return ctx.make("OffsetFetchResponseGroup", group_id=g.group_id, error_code=ErrorCode.none,
                    topics=_fetch(ctx, g.group_id, g.topics, stable, "OffsetFetchResponseTopics",
                                  "OffsetFetchResponsePartitions"))


def _fetch(ctx, group_id, topics, stable, topic_entity, partition_entity):
    wanted = None if topics is None else [(t.name, p) for t in topics for p in t.partition_indexes]
    by_topic: dict[str, list] = {}
    for (topic, partition), committed, code in ctx.node.groups.fetch_offsets(group_id, stable, wanted):
        by_topic.setdefault(topic, []).append(ctx.make(
            partition_entity, partition_index=partition, error_code=code,
            committed_offset=committed.offset if committed else -1,
            committed_leader_epoch=committed.leader_epoch if committed else -1,
            metadata=committed.metadata if committed else "",
        ))
    return tuple(ctx.make(topic_entity, name=t, partitions=tuple(ps)) for t, ps in by_topic.items())
