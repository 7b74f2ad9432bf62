"""OffsetCommit (8), v2-9.

Committed offsets are written to __consumer_offsets before the answer and survive restarts.
Partitions of unknown topics get UNKNOWN_TOPIC_OR_PARTITION. A consumer without group management
commits with generation -1 to an empty (or new) group; a member must name its current generation
(ILLEGAL_GENERATION), member id (UNKNOWN_MEMBER_ID) and, if static, instance id
(FENCED_INSTANCE_ID); during CompletingRebalance a member gets REBALANCE_IN_PROGRESS. Metadata
over 4096 bytes: OFFSET_METADATA_TOO_LARGE. The retention time of v2-4, unless -1, makes the
offsets expire at the commit time plus it instead of by ``offsets.retention.minutes`` (KIP-211,
shim.coordinators.group.expiration). v9's generation field also carries a KIP-848 member epoch, which classic
groups read as a generation; a consumer group's member must commit at its current member epoch
(STALE_MEMBER_EPOCH) with v9 or later (UNSUPPORTED_VERSION below), as Kafka 4 checks. A share
group's id is GROUP_ID_NOT_FOUND on every partition (Kafka: ShareGroup.validateOffsetCommit).
"""

from ..node import now_ms
from ._groups import commit_response, offsets_to_commit, paced_commit_response
from ._pace import Pacer
from .registry import api


@api(8, "OffsetCommit", 2, 9)
async def handle(ctx, request):
    now, pace = now_ms(), Pacer()
    offsets, unknown = await offsets_to_commit(ctx, request, now, pace)
    results = ctx.node.groups.commit_offsets(
        request.group_id, request.member_id, getattr(request, "group_instance_id", None),
        request.generation_id_or_member_epoch, offsets, now, version=ctx.version) if offsets else {}
    return await paced_commit_response(ctx, request, lambda tp: unknown.get(tp, results.get(tp)), "OffsetCommit", pace)


def error_response(ctx, request, code):
    """Kafka: OffsetCommitRequest.getErrorResponse -- the error on every partition."""
    return commit_response(ctx, request, lambda tp: code, "OffsetCommit")
