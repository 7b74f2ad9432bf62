"""OffsetCommit (8), v0-9 (v0-1 under 3.x emulation only: Kafka 4.0 removed them, KIP-896).

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

v1 (kafka-python pinned to api_version (0, 8, 2) sends it) commits as v2 does, each partition's
CommitTimestamp, unless -1, standing for the commit time (Kafka 3.9: GroupCoordinatorAdapter).
v0 asked Kafka to store the offsets in ZooKeeper, which a KRaft broker has not: once its topics
are checked, a request with any partition left is answered UNSUPPORTED_VERSION on every partition
(KafkaApis.commitOffsetsToZookeeper's requireZkOrThrow, answered by getErrorResponse).
"""

from ..errors import ErrorCode
from ..node import now_ms
from ._authz import denied_topics_paced
from ._groups import commit_response, offsets_to_commit, paced_commit_response, requested_offsets
from ._pace import Pacer
from .registry import api


ZOOKEEPER_VERSION = 0  # Kafka: "For version 0, always store offsets in ZK."


@api(8, "OffsetCommit", 0, 9)
async def handle(ctx, request):
    now, pace = now_ms(), Pacer()
    if ctx.version == ZOOKEEPER_VERSION:
        return await _version_0(ctx, request, now, pace)
    offsets, unknown = await offsets_to_commit(ctx, request, now, pace)
    results = ctx.node.groups.commit_offsets(
        request.group_id, request.member_id, getattr(request, "group_instance_id", None),
        request.generation_id_or_member_epoch, offsets, now, version=ctx.version) if offsets else {}
    return await paced_commit_response(ctx, request, lambda tp: unknown.get(tp, results.get(tp)), "OffsetCommit", pace)


async def _version_0(ctx, request, now: int, pace):
    """KafkaApis' topic checks, then UNSUPPORTED_VERSION for the whole request if a partition is left."""
    denied = await denied_topics_paced(ctx, [t.name for t in request.topics], pace)
    offsets, unknown = await requested_offsets(ctx, [t for t in request.topics if t.name not in denied], now, pace)
    if offsets:
        return error_response(ctx, request, ErrorCode.unsupported_version)
    unknown.update({(t.name, p.partition_index): ErrorCode.topic_authorization_failed
                    for t in request.topics if t.name in denied for p in t.partitions})
    return await paced_commit_response(ctx, request, unknown.get, "OffsetCommit", pace)


def error_response(ctx, request, code):
    """Kafka: OffsetCommitRequest.getErrorResponse -- the error on every partition."""
    return commit_response(ctx, request, lambda tp: code, "OffsetCommit")
