"""What the group and transaction APIs answer while the coordinators load (shim.coordinators.loader).

Kafka answers COORDINATOR_LOAD_IN_PROGRESS for a group or transactional id whose partition is still
loading, and only for what KafkaApis hands the coordinator: the checks it makes itself come first.
The request-wide ones are the dispatcher's (shim.apis._authz.REQUEST, then :func:`refusal`); the
checks of the request itself too (an empty group id is INVALID_GROUP_ID, an empty transactional id
INVALID_REQUEST, a transaction timeout out of range INVALID_TRANSACTION_TIMEOUT: those requests go
to their handlers, which touch no state to refuse them). The APIs of ``IN_HANDLER`` check each
group, topic or transactional id they name before asking the coordinator, and their handlers ask
:func:`loading` where they would ask it, so those answer the entity's own error
(GROUP_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED, UNKNOWN_TOPIC_OR_PARTITION,
TRANSACTIONAL_ID_AUTHORIZATION_FAILED, NOT_COORDINATOR) and the rest the load error:

- OffsetCommit and TxnOffsetCommit: the denied and unknown topics' partitions their errors, the
  rest the load error (TxnOffsetCommit below v2 COORDINATOR_NOT_AVAILABLE, as KafkaApis maps it for
  0.11-2.0 producers); an OffsetCommit v0 is UNSUPPORTED_VERSION as ever (no coordinator is asked).
- OffsetFetch v8+, DescribeGroups, DeleteGroups, ConsumerGroupDescribe and ShareGroupDescribe: the
  denied groups GROUP_AUTHORIZATION_FAILED; OffsetFetch v1-7 the load error on the request (v2+) or
  each partition (v0-1, OffsetFetchResponse for versions without a top-level error); v0 is
  UNSUPPORTED_VERSION as ever, since it never reaches the group coordinator.
- DescribeTransactions: the denied ids TRANSACTIONAL_ID_AUTHORIZATION_FAILED, an empty one
  INVALID_REQUEST.
- DescribeShareGroupOffsets: the denied groups GROUP_AUTHORIZATION_FAILED. AlterShareGroupOffsets
  and DeleteShareGroupOffsets: a denied group GROUP_AUTHORIZATION_FAILED; a request whose topics
  are all denied (or unknown) their errors; else the load error on the request, as any error of
  their coordinator.
- AddPartitionsToTxn: below v4 any denied topic fails the transaction (TOPIC_AUTHORIZATION_FAILED,
  the rest OPERATION_NOT_ATTEMPTED) and any unknown partition too; v4+ keeps NONE at the top, the
  error on each transaction's partitions.

OffsetDelete needs no handler of its own: the coordinator's top-level error replaces the partitions
KafkaApis refused (OffsetDeleteResponse.Builder.merge). Of the APIs the dispatcher answers:

- Heartbeat answers NONE ("the group is still loading, so respond just blindly": 3.9's
  GroupCoordinator.handleHeartbeat, 4.x's GroupCoordinatorService.heartbeat).
- SyncGroup answers REBALANCE_IN_PROGRESS under 3.x (GroupCoordinator.handleSyncGroup: older clients
  do not expect the load error, and the rebalance's state is lost anyway), the load error under 4.x.
- ListGroups and ListTransactions answer the error with no groups or transactions (3.9's
  handleListGroups lists the partitions already loaded; here none are until all are).
- The consumer- and share-group APIs of a broker without their feature answer UNSUPPORTED_VERSION,
  a malformed ShareGroupHeartbeat INVALID_REQUEST, as ever.

FindCoordinator answers as ever. A transactional Produce whose partition the coordinator would
verify answers NOT_ENOUGH_REPLICAS instead (shim.apis.k00_produce).
"""

from __future__ import annotations

import inspect

from ..control.mirror import error_response
from ..errors import ErrorCode

LOADING = ErrorCode.coordinator_load_in_progress
GROUP_APIS = frozenset({8, 9, 11, 12, 13, 14, 15, 16, 28, 42, 47, 68, 69, 76, 77, 90, 91, 92})
TXN_APIS = frozenset({22, 24, 25, 26, 65, 66})
# OffsetCommit, OffsetFetch, DescribeGroups, AddPartitionsToTxn, TxnOffsetCommit, DeleteGroups,
# DescribeTransactions, ConsumerGroupDescribe, ShareGroupDescribe and the share-group offset APIs:
# their handlers ask ``loading``
IN_HANDLER = frozenset({8, 9, 15, 24, 28, 42, 65, 69, 77, 90, 91, 92})
LOADED_APIS = (GROUP_APIS | TXN_APIS) - IN_HANDLER  # the dispatcher's
# INVALID_GROUP_ID for "" before the load is asked (3.9's isValidGroupId, 4.x's isGroupIdNotEmpty)
_GROUP_ID_CHECKED = frozenset({11, 12, 13, 14, 47})
_TXN_ID_CHECKED = frozenset({25, 26})  # INVALID_REQUEST for ""
_FEATURE_GATED = frozenset({68, 76})
SYNC_GROUP, HEARTBEAT, INIT_PRODUCER_ID, TXN_OFFSET_COMMIT = 14, 12, 22, 28
TXN_OFFSET_COMMIT_LOAD_ERROR = 2  # Kafka: KAFKA-7296, older producers crash on the load error


def loading(ctx) -> bool:
    """Whether the coordinators are still loading: an ``IN_HANDLER`` API's handler asks it where
    KafkaApis hands the coordinator what is left after its own checks, and answers LOADING for that
    (the request counted once in ``refused``)."""
    if ctx.node.loading.done:
        return False
    if not ctx.load_refused:
        ctx.load_refused = True
        ctx.node.loading.refused[ctx.header.api_key] += 1
    return True


def offsets_code(ctx, request) -> ErrorCode | None:
    """The code of an (Txn)OffsetCommit's partitions the coordinator would take, None once loaded;
    None too for a TxnOffsetCommit of an empty group id (INVALID_GROUP_ID before the load is asked,
    GroupCoordinatorService.commitTransactionalOffsets)."""
    txn = ctx.header.api_key == TXN_OFFSET_COMMIT  # Kafka takes an OffsetCommit of the empty group id
    if txn and not request.group_id or not loading(ctx):
        return None
    return ErrorCode.coordinator_not_available if txn and ctx.version < TXN_OFFSET_COMMIT_LOAD_ERROR else LOADING


def _code(ctx, request) -> ErrorCode | None:
    """The code the request is answered with while loading, None when its handler answers it."""
    key = ctx.header.api_key
    if key in _FEATURE_GATED and not _feature_enabled(ctx, request):
        return None
    if key in _GROUP_ID_CHECKED and not request.group_id:
        return None
    if key in _TXN_ID_CHECKED and not request.transactional_id:
        return None
    if key == INIT_PRODUCER_ID and not _init_producer_id_loads(ctx, request):
        return None
    if key == HEARTBEAT:
        return ErrorCode.none
    if key == SYNC_GROUP and ctx.node.config.kafka_version < "4.0":
        return ErrorCode.rebalance_in_progress
    return LOADING


def _feature_enabled(ctx, request) -> bool:
    """KIP-848 and KIP-932 APIs refuse a broker without their feature (UNSUPPORTED_VERSION), and a
    malformed ShareGroupHeartbeat (INVALID_REQUEST), before the coordinator is asked."""
    from ._share import share_groups_enabled
    from .k68_consumer_group_heartbeat import consumer_protocol_enabled
    from .k76_share_group_heartbeat import _invalid

    if ctx.header.api_key == 68:
        return consumer_protocol_enabled(ctx)
    return share_groups_enabled(ctx) and not (ctx.header.api_key == 76 and _invalid(request))


def _init_producer_id_loads(ctx, request) -> bool:
    """Kafka: TransactionCoordinator.handleInitProducerId asks for the transaction's state only
    with a transactional id, non-empty, and a timeout it accepts."""
    if not request.transactional_id:
        return False
    timeout_ms = request.transaction_timeout.total_seconds() * 1000
    return 0 < timeout_ms <= ctx.node.config.transaction_max_timeout_ms


async def refusal(ctx, request, module):
    """The answer to a request the coordinators cannot take while they load, else None."""
    code = _code(ctx, request)
    if code is None:
        return None
    ctx.node.loading.refused[ctx.header.api_key] += 1
    key, version = ctx.header.api_key, ctx.version
    if hasattr(module, "error_response"):  # the API's own (Kafka: AbstractRequest.getErrorResponse)
        answer = module.error_response(ctx, request, code)
        return await answer if inspect.isawaitable(answer) else answer
    return error_response(key, version, request, code)
