"""TxnOffsetCommit (28), v0-5 (sent to the group coordinator by a transactional producer).

The offsets are written to the group's __consumer_offsets partition as a transactional batch of
the producer and stay pending until the producer's transaction ends: the COMMIT marker makes them
the group's committed offsets, ABORT drops them (see shim.coordinators.group.offsets). The
partition must already be in the producer's ongoing transaction (AddOffsetsToTxn), verified with
the transaction coordinator as Kafka 3.9 does (KIP-890 part 1), with the leader's mapping for
v0-3: not in the transaction -> INVALID_TXN_STATE, stale epoch -> INVALID_PRODUCER_EPOCH,
producer id not of that transactional id -> INVALID_PRODUCER_ID_MAPPING. v3 (KIP-447) carries
the consumer's generation, member id and instance id, checked as OffsetCommit checks them when
given (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID). v4 (KIP-890 part 1) answers a
partition not in the transaction with TRANSACTION_ABORTABLE; v5 (transaction version 2, Kafka 4.0+)
adds the offsets partition to the transaction itself, the implicit AddOffsetsToTxn. A share group's
id is GROUP_ID_NOT_FOUND on every partition (Kafka: ShareGroup.validateOffsetCommit).

The checks run in the emulated release's order: 3.9's GroupCoordinator adds an unknown group
before verifying the transaction (a refused commit leaves an empty group, in memory, until the
offsets retention check removes it); 4.x's verifies first, answers an unknown group named with a
generation ILLEGAL_GENERATION, and leaves no group behind a refused commit.
"""

from ..node import now_ms
from ._groups import commit_response, offsets_to_commit, paced_commit_response
from ._pace import Pacer
from .registry import api


@api(28, "TxnOffsetCommit", 0, 5)
async def handle(ctx, request):
    now, pace = now_ms(), Pacer()
    offsets, unknown = await offsets_to_commit(ctx, request, now, pace)
    results = ctx.node.groups.commit_txn_offsets(
        request.group_id, request.transactional_id, request.producer_id, request.producer_epoch,
        getattr(request, "member_id", ""), getattr(request, "group_instance_id", None),
        getattr(request, "generation_id", -1), offsets, now, version=ctx.version,
        new_coordinator=ctx.node.release.new_group_coordinator) if offsets else {}
    return await paced_commit_response(ctx, request, lambda tp: unknown.get(tp, results.get(tp)), "TxnOffsetCommit", pace)


def error_response(ctx, request, code):
    """Kafka: TxnOffsetCommitRequest.getErrorResponse -- the error on every partition."""
    return commit_response(ctx, request, lambda tp: code, "TxnOffsetCommit")
