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
coordinators resigned (shim.apis.context.RequestContext.coordinates).
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
    """``result`` once a group-commit job that starts now is done, else NOT_COORDINATOR."""
    try:
        await commit.barrier()
    except OSError:
        if hasattr(module, "error_response"):
            answer = module.error_response(ctx, request, ErrorCode.not_coordinator)
            return await answer if inspect.isawaitable(answer) else answer  # OffsetFetch's is a coroutine
        return error_response(ctx.header.api_key, ctx.version, request, ErrorCode.not_coordinator)
    return result
