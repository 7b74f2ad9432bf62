"""OffsetFetch (9), v0-9 (v0 under 3.x emulation only: Kafka 4.0 removed it, KIP-896).

v1-7 ask for one group, v8+ for several (Groups[]). No topic list (v2+: null) means every
partition with a committed offset. Without a committed offset a partition answers offset -1,
leader epoch -1, metadata "", no error. RequireStable (v7+, KIP-447): a partition with a pending
transactional offset commit answers UNSTABLE_OFFSET_COMMIT, which clients retry until the
transaction ends. Group-level errors have no field before v2; the only ones possible here
(INVALID_GROUP_ID) cannot occur, since OffsetFetch accepts any group id, "" included. v9's
member id and epoch (KIP-848) are checked against a consumer group's member (UNKNOWN_MEMBER_ID,
STALE_MEMBER_EPOCH for the group); classic groups do not check them, nor do requests without a
member id and with epoch -1 (the admin client).

v0 read the offsets from ZooKeeper: a KRaft Kafka 3.9 broker checks DESCRIBE on the group, then
throws from requireZkOrThrow (KafkaApis.handleOffsetFetchRequestFromZookeeper) and answers
UNSUPPORTED_VERSION on every partition named, offset -1 (OffsetFetchRequest.getErrorResponse),
without asking the group coordinator.
"""

from ..cluster import GROUP
from ..errors import ErrorCode
from ..security.acls import AclOperation as O
from ..security.acls import ResourceType as R
from ._authz import denied_topics_paced
from ._loading import LOADING, loading
from ._pace import Pacer
from .registry import api

GROUPS_VERSION = 8
FETCH_SLICE = 1000  # partitions looked up between two chances for the loop to run others


@api(9, "OffsetFetch", 0, 9)
async def handle(ctx, request):
    if ctx.version == 0:  # Kafka: ZooKeeper only
        return await error_response(ctx, request, ErrorCode.unsupported_version)
    stable = getattr(request, "require_stable", False)
    if ctx.version < GROUPS_VERSION:
        if not ctx.coordinates(GROUP, request.group_id):  # shim.cluster: another broker coordinates it
            return ctx.response(topics=(), error_code=ErrorCode.not_coordinator)
        if loading(ctx):  # the whole group's error (KafkaApis.fetchOffsetsForGroup)
            return await error_response(ctx, request, LOADING)
        topics = await _fetch(ctx, request.group_id, request.topics, stable, "OffsetFetchResponseTopic",
                              "OffsetFetchResponsePartition")
        return ctx.response(topics=topics, error_code=ErrorCode.none)
    # paced over the groups too: each group's own slices start a fresh Pacer, so 2 MiB of small
    # groups took 3.4 CPU s in one turn of the loop
    return ctx.response(groups=tuple([await _group(ctx, g, stable) async for g in Pacer().each(request.groups)]))


async def _group(ctx, g, stable):
    if not ctx.authorize(O.DESCRIBE, R.GROUP, g.group_id):
        return ctx.make("OffsetFetchResponseGroup", group_id=g.group_id,
                        error_code=ErrorCode.group_authorization_failed, topics=())
    if not ctx.coordinates(GROUP, g.group_id):  # shim.cluster: another broker coordinates it
        return ctx.make("OffsetFetchResponseGroup", group_id=g.group_id, error_code=ErrorCode.not_coordinator,
                        topics=())
    if loading(ctx):  # after the group's own checks (shim.apis._loading)
        return ctx.make("OffsetFetchResponseGroup", group_id=g.group_id, error_code=LOADING, topics=())
    error = ctx.node.groups.validate_offset_fetch(g.group_id, getattr(g, "member_id", None),
                                                  getattr(g, "member_epoch", -1))
    if error != ErrorCode.none:
        return ctx.make("OffsetFetchResponseGroup", group_id=g.group_id, error_code=error, topics=())
    return ctx.make("OffsetFetchResponseGroup", group_id=g.group_id, error_code=ErrorCode.none,
                    topics=await _fetch(ctx, g.group_id, g.topics, stable, "OffsetFetchResponseTopics",
                                        "OffsetFetchResponsePartitions"))


async def error_response(ctx, request, code):
    """Kafka: OffsetFetchRequest.getErrorResponse -- v8+ on each group, v2-7 on the request, v0-1 on
    every partition."""
    if ctx.version >= GROUPS_VERSION:  # paced: 2 MiB of groups took 0.9 CPU s in one turn of the loop
        return ctx.response(groups=tuple([ctx.make("OffsetFetchResponseGroup", group_id=g.group_id, error_code=code,
                                                   topics=()) async for g in Pacer().each(request.groups)]))
    if ctx.version >= 2:
        return ctx.response(topics=(), error_code=code)
    wanted = [(t.name, p) for t in request.topics or () for p in t.partition_indexes]
    return ctx.response(topics=await _answer(ctx, [(tp, None, code) for tp in wanted], "OffsetFetchResponseTopic",
                                             "OffsetFetchResponsePartition"), error_code=code)


async def _fetch(ctx, group_id, topics, stable, topic_entity, partition_entity):
    # paced throughout: 140,000 distinct topics of a 2 MiB request, the ACLs asked about each, took
    # 0.64 CPU s of one turn (0.35 s without an authorizer)
    pace = Pacer()
    wanted = None if topics is None else [(t.name, p) async for t in pace.each(topics) for p in t.partition_indexes]
    if wanted is None:
        results = list(ctx.node.groups.fetch_offsets(group_id, stable, None))
    else:  # a slice at a time, the loop given up between them (see _pace)
        results = []
        for start in range(0, len(wanted), FETCH_SLICE):
            await pace()
            results += ctx.node.groups.fetch_offsets(group_id, stable, wanted[start:start + FETCH_SLICE])
    denied = await denied_topics_paced(ctx, {tp[0] for tp, _, _ in results}, pace)
    if denied:
        results = [r async for r in pace.each(results) if r[0][0] not in denied]
    if wanted is not None and denied:  # Kafka: topics named but not describable fail; left out of an all-topics fetch
        results += [(tp, None, ErrorCode.topic_authorization_failed) async for tp in pace.each(wanted)
                    if tp[0] in denied]
    return await _answer(ctx, results, topic_entity, partition_entity)


async def _answer(ctx, results, topic_entity, partition_entity):
    by_topic: dict[str, list] = {}
    pace = Pacer()
    async for (topic, partition), committed, code in pace.each(results):
        by_topic.setdefault(topic, []).append(ctx.make(
            partition_entity, partition_index=partition, error_code=code,
            committed_offset=committed.offset if committed else -1,
            committed_leader_epoch=committed.leader_epoch if committed else -1,
            metadata=committed.metadata if committed else "",
        ))
    return tuple([ctx.make(topic_entity, name=t, partitions=tuple(ps)) async for t, ps in pace.each(by_topic.items())])
