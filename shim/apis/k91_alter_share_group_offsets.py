"""AlterShareGroupOffsets (91), v0: set an empty share group's start offsets (KIP-932), as Kafka 4.1
does (KafkaApis.handleAlterShareGroupOffsetsRequest, GroupCoordinatorShard.alterShareGroupOffsets).

In this order: UNSUPPORTED_VERSION until share.version 1 is finalized; READ on the group
(GROUP_AUTHORIZATION_FAILED); per topic, READ on it (TOPIC_AUTHORIZATION_FAILED) and its existence
(UNKNOWN_TOPIC_OR_PARTITION), answered for each of its partitions. Then the group, each error as
the top-level error with nothing else: an empty id is INVALID_GROUP_ID; with no topic left the
answer is the topics' errors alone; another broker's group is NOT_COORDINATOR, an id no share group
has GROUP_ID_NOT_FOUND and a group with members NON_EMPTY_GROUP. Otherwise each partition the topic
has starts afresh at the offset given, nothing in flight (UNKNOWN_TOPIC_OR_PARTITION for a partition
it does not have): the group's next ShareFetch acquires from there. Kafka writes the offset as given
without checking it against the log; a negative one leaves the partition to share.auto.offset.reset.

Kafka 4.1.x's KafkaApis drops the group's top-level error and answers NONE with no results for the
group's topics (KAFKA-19440, fixed in 4.2, whose Admin client reports the error); kafka-shim answers
the error, as the response schema and every client expect.
"""

from ..cluster import GROUP
from ..errors import ErrorCode as E
from ..errors import KafkaError
from ..security.acls import AclOperation as O
from ..security.acls import ResourceType as R
from ._authz import denied_topics_paced
from ._loading import LOADING, loading
from ._pace import Pacer
from ._share import share_groups_enabled
from ._share_offsets import id_of, message, partition_exists
from .registry import api


@api(91, "AlterShareGroupOffsets", 0, 0)
async def handle(ctx, request):
    # paced: a 2 MiB request's 48,000 topics refused by the ACLs took 1.1 CPU s of one turn to answer
    if not share_groups_enabled(ctx):
        return error_response(ctx, request, E.unsupported_version)
    if not ctx.authorize(O.READ, R.GROUP, request.group_id):
        return error_response(ctx, request, E.group_authorization_failed)
    pace = Pacer()
    failed, wanted = await _split(ctx, request.topics, pace)
    results = [await _topic(ctx, t.topic_name, ((p.partition_index, code) for p in t.partitions), pace)
               async for t, code in pace.each(failed)]
    if not request.group_id:  # Kafka: GroupCoordinatorService checks the id before the topics
        return error_response(ctx, request, E.invalid_group_id)
    if not wanted:
        return _answer(ctx, results)
    code = _group_error(ctx, request.group_id)
    if code is None:
        # paced by partition too: one topic may be named with 160,000 partitions
        exists, offsets = [], {}  # whether each partition of each wanted topic exists; the offsets to write
        async for t, p in pace.each((t, p) for t, _ in wanted for p in t.partitions):
            exists.append(partition_exists(ctx, t.topic_name, p.partition_index))
            if exists[-1]:
                offsets[(t.topic_name, p.partition_index)] = p.start_offset
        try:
            ctx.node.share.alter_start_offsets(request.group_id, offsets)
        except KafkaError as e:
            code = e.code
    if code is not None:
        return error_response(ctx, request, code)
    there = iter(exists)
    return _answer(ctx, results + [await _topic(ctx, t.topic_name, (
        (p.partition_index, E.none if next(there) else E.unknown_topic_or_partition) for p in t.partitions), pace)
        async for t, _ in pace.each(wanted)])


async def _split(ctx, topics, pace):
    """(failed, wanted): the topics refused READ or unknown, each with its error, and the others."""
    refused = await denied_topics_paced(ctx, [t.topic_name for t in topics], pace)
    failed, wanted = [], []
    async for t in pace.each(topics):
        code = E.topic_authorization_failed if t.topic_name in refused else (
            E.unknown_topic_or_partition if t.topic_name not in ctx.node.logs.topics else None)
        (wanted if code is None else failed).append((t, code))
    return failed, wanted


def _group_error(ctx, group_id) -> E | None:
    if not ctx.coordinates(GROUP, group_id):
        return E.not_coordinator
    if loading(ctx):  # after the request's own checks (shim.apis._loading)
        return LOADING
    return None


async def _topic(ctx, topic, partitions, pace):
    return ctx.make("AlterShareGroupOffsetsResponseTopic", topic_name=topic, topic_id=id_of(ctx, topic),
                    partitions=tuple([ctx.make("AlterShareGroupOffsetsResponsePartition", partition_index=p,
                                               error_code=code, error_message=message(code))
                                      async for p, code in pace.each(partitions)]))


def _answer(ctx, topics):
    return ctx.response(error_code=E.none, error_message=None, responses=tuple(topics))


def error_response(ctx, request, code):
    """Kafka: AlterShareGroupOffsetsRequest.getErrorResponse -- the top-level error alone."""
    return ctx.response(error_code=code, error_message=message(code), responses=())
