"""EndTxn (26), v0-5: commit or abort; markers are written before the answer. Under --fsync always
the Prepare state, the markers and the Complete state are each fsynced by the group commit off
the loop, each step written once the one before is on disk.

Retries of a completed EndTxn succeed; a commit after an abort (or any EndTxn with no transaction)
is INVALID_TXN_STATE; a stale epoch is PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before v2).

v5 is transaction version 2 (KIP-890 part 2; Kafka 4.0+, so not served under 3.x emulation):
every EndTxn bumps the producer epoch, the markers carry the bumped epoch (fencing any write of
the finished transaction's epoch), and the answer carries the producer id and epoch the producer
goes on with -- a new producer id at epoch 0 when the epoch is exhausted. A retry is recognised by
the epoch it bumped from; an abort with no transaction open is allowed. As in Kafka the request
version, not the finalized feature, decides (TransactionVersion.transactionVersionForEndTxn).
"""

from ..errors import ErrorCode, KafkaError
from ..cluster import TRANSACTION
from ..node import now_ms
from ._txn_errors import for_version
from .registry import api

TRANSACTION_V2_VERSION = 5


@api(26, "EndTxn", 0, 5)
def handle(ctx, request):
    tv = 2 if ctx.version >= TRANSACTION_V2_VERSION else 0
    commit = ctx.node.logs.group_commit
    staged = commit is not None and commit.attach()  # fsync "always": each step's fsync off the loop
    try:
        if not ctx.coordinates(TRANSACTION, request.transactional_id):
            raise KafkaError(ErrorCode.not_coordinator)  # shim.cluster: another broker coordinates it
        pid, epoch = ctx.node.txn.end_txn(request.transactional_id, request.producer_id, request.producer_epoch,
                                          request.committed, now_ms(), transaction_version=tv, staged=staged)
    except KafkaError as e:
        return _error(ctx, e.code)
    if staged and request.transactional_id in ctx.node.txn.staged:
        return _steps(ctx, commit, request.transactional_id)
    return ctx.response(error_code=ErrorCode.none, producer_id=pid, producer_epoch=epoch)


async def _steps(ctx, commit, txn_id):
    """The markers once the Prepare state is on disk, the Complete state once they are, each
    fsynced by the group commit (shim.storage.group_commit) while the loop serves the others; the
    answer once the last is on disk. A failed fsync of the Prepare state answers NOT_COORDINATOR
    (Kafka's mapping of its KAFKA_STORAGE_ERROR); once it is on disk the outcome is decided and
    answered, and a later failure leaves the transaction prepared for a restart to complete."""
    txn, prepared = ctx.node.txn, False
    while True:
        try:
            await commit.barrier()
        except OSError:  # the directory is offline: nothing more is written
            txn.unstage(txn_id)
            if not prepared:
                return _error(ctx, ErrorCode.not_coordinator)
            break
        prepared = True
        if not txn.advance(txn_id, now_ms()):
            break
    # Kafka answers once the Prepare state is durable, the markers written after
    # (TransactionCoordinator.endTransaction): neither a later step's failure nor another
    # request's write waiting for a job changes the answer
    ctx.coordinator_seen = None
    pid, epoch = txn.identity(txn_id)
    return ctx.response(error_code=ErrorCode.none, producer_id=pid, producer_epoch=epoch)


def _error(ctx, code):
    return ctx.response(error_code=for_version(code, ctx.version), producer_id=-1, producer_epoch=-1)


def error_response(ctx, request, code):
    return ctx.response(error_code=code, producer_id=-1, producer_epoch=-1)
