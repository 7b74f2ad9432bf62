"""OffsetDelete (47), v0 (KIP-496): deletes committed offsets of a group.

Any partition of an empty group; in an active consumer group only partitions of topics no member
subscribes to (GROUP_SUBSCRIBED_TO_TOPIC otherwise, per partition); an active group of another
protocol type: NON_EMPTY_GROUP. Unknown group: GROUP_ID_NOT_FOUND; unknown topic or partition:
UNKNOWN_TOPIC_OR_PARTITION. A group left empty without offsets is deleted.
"""

from ..cluster import GROUP
from ..errors import ErrorCode
from ..node import now_ms
from ._groups import by_topic, split_unknown
from ._authz import denied_topics
from .registry import api


@api(47, "OffsetDelete", 0, 0)
def handle(ctx, request):
    if not ctx.coordinates(GROUP, request.group_id):  # shim.cluster: another broker coordinates it
        return ctx.response(error_code=ErrorCode.not_coordinator, topics=())
    denied = denied_topics(ctx, [t.name for t in request.topics])
    known, unknown = split_unknown(ctx, [t for t in request.topics if t.name not in denied])
    unknown.update({(t.name, p.partition_index): ErrorCode.topic_authorization_failed
                    for t in request.topics if t.name in denied for p in t.partitions})
    top, results = ctx.node.groups.delete_offsets(request.group_id, known, now_ms())
    if top != ErrorCode.none:
        return ctx.response(error_code=top, topics=())
    ordered = {(t.name, p.partition_index): None for t in request.topics for p in t.partitions}
    codes = {tp: unknown.get(tp, results.get(tp)) for tp in ordered}
    return ctx.response(error_code=ErrorCode.none,
                        topics=by_topic(ctx, codes, "OffsetDeleteResponseTopic", "OffsetDeleteResponsePartition"))


def error_response(ctx, request, code):
    return ctx.response(error_code=code, topics=())
