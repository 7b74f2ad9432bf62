"""A coordinator API's answer waits for the fsync of the coordinator appends it may reflect.

Under --fsync always the group, share and transaction coordinators' appends are written on the
loop and fsynced by the group commit's job on the flusher's thread (shim.storage.group_commit), as
a Produce's are. An answer of a coordinator API built while such an append is not yet known to be
on disk (its own write, or state another request's write changed) is sent only once a job that
started after it is done: nothing a client is told, written or read, is lost by a power cut. Kafka
answers a coordinator write from its append's callback, after the flush of flush.messages=1 (3.9:
GroupMetadataManager.storeOffsets, TransactionStateManager.appendTransactionToLog; 4.x:
CoordinatorRuntime once the high watermark passed the write, its reads served at the last
committed offset), so neither a write nor a read is answered before the disk has it there.

A job that fails answers NOT_COORDINATOR, Kafka's mapping of a coordinator append's
KAFKA_STORAGE_ERROR (CoordinatorOperationExceptionHelper.handleOperationException,
appendTransactionToLog, GroupMetadataManager); the data directory is then offline and the
coordinators resigned (shim.apis.context.RequestContext.coordinates). A handler that yields after
its write (a paced walk of the request, a wait for a rebalance or for records) may see the job that
has its write fail meanwhile; the failure settles every coordinator append (GroupCommit.fail), so
the dispatcher asks GroupCommit.lost_since instead: an append not yet on disk when the request
started, or made since, that the failure lost answers NOT_COORDINATOR too. ShareFetch and
ShareAcknowledge settle their acknowledgements' writes themselves (shim.apis._share.Acknowledgements:
rolled back, COORDINATOR_NOT_AVAILABLE per partition) and are then never NOT_COORDINATOR.
"""

from __future__ import annotations

import inspect

from ..control.mirror import error_response
from ..errors import ErrorCode

COORDINATOR_APIS = frozenset({
    8, 9, 11, 12, 13, 14, 15, 16, 42, 47, 68, 69,  # groups and their offsets
    76, 77, 78, 79, 83, 84, 85, 86, 87, 90, 91, 92,  # share groups and share state
    22, 24, 25, 26, 28, 65, 66,  # transactions
})


async def synced(ctx, request, module, commit, result):
    """``result`` once a group-commit job that starts now is done, else NOT_COORDINATOR; at once
    NOT_COORDINATOR when a job failed while the handler yielded (a paced walk, a wait), leaving off
    disk an append not synced at ``ctx.coordinator_seen``, the request's start: the failure settled
    every append (GroupCommit.fail), so none is waited for, but the answer may report one of them."""
    if not commit.lost_since(ctx.coordinator_seen):
        try:
            await commit.barrier()
            return result
        except OSError:
            pass
    if hasattr(module, "error_response"):
        answer = module.error_response(ctx, request, ErrorCode.not_coordinator)
        return await answer if inspect.isawaitable(answer) else answer  # OffsetFetch's is a coroutine
    return error_response(ctx.header.api_key, ctx.version, request, ErrorCode.not_coordinator)
