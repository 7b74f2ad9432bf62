"""What the group and transaction APIs answer while the coordinators load (shim.coordinators.loader).

Kafka answers COORDINATOR_LOAD_IN_PROGRESS for a group or transactional id whose partition is still
loading, after the checks of the request itself (an empty group id is INVALID_GROUP_ID, an empty
transactional id INVALID_REQUEST, a transaction timeout out of range INVALID_TRANSACTION_TIMEOUT:
those requests go to their handlers, which touch no state to refuse them), and in the shape of the
API's error answer (the code on every partition, group or transaction the request names):

- Heartbeat answers NONE ("the group is still loading, so respond just blindly": 3.9's
  GroupCoordinator.handleHeartbeat, 4.x's GroupCoordinatorService.heartbeat).
- SyncGroup answers REBALANCE_IN_PROGRESS under 3.x (GroupCoordinator.handleSyncGroup: older clients
  do not expect the load error, and the rebalance's state is lost anyway), the load error under 4.x.
- ListGroups and ListTransactions answer the error with no groups or transactions (3.9's
  handleListGroups lists the partitions already loaded; here none are until all are).
- AddPartitionsToTxn v4+ keeps NONE at the top, the error on each transaction's partitions.
- DescribeTransactions answers an empty transactional id INVALID_REQUEST, the others the error.
- OffsetFetch below v2 carries it on each partition (OffsetFetchResponse for versions without a
  top-level error); v0 is answered UNSUPPORTED_VERSION as ever, since it never reaches the group
  coordinator (shim.apis.k09_offset_fetch).
- The consumer- and share-group APIs of a broker without their feature answer UNSUPPORTED_VERSION,
  a malformed ShareGroupHeartbeat INVALID_REQUEST, as ever.

FindCoordinator answers as ever. A transactional Produce whose partition the coordinator would
verify answers NOT_ENOUGH_REPLICAS instead (shim.apis.k00_produce).
"""

from __future__ import annotations

import dataclasses
import inspect

from ..control.mirror import error_response
from ..errors import ErrorCode

LOADING = ErrorCode.coordinator_load_in_progress
GROUP_APIS = frozenset({8, 9, 11, 12, 13, 14, 15, 16, 28, 42, 47, 68, 69, 76, 77, 90, 91, 92})
TXN_APIS = frozenset({22, 24, 25, 26, 65, 66})
LOADED_APIS = GROUP_APIS | TXN_APIS
# INVALID_GROUP_ID for "" before the load is asked (3.9's isValidGroupId, 4.x's isGroupIdNotEmpty)
_GROUP_ID_CHECKED = frozenset({11, 12, 13, 14, 28, 47})
_TXN_ID_CHECKED = frozenset({25, 26})  # INVALID_REQUEST for ""
_FEATURE_GATED = frozenset({68, 69, 76, 77, 90, 91, 92})
ADD_PARTITIONS_BATCHED = 4
SYNC_GROUP, HEARTBEAT, INIT_PRODUCER_ID, ADD_PARTITIONS, DESCRIBE_TRANSACTIONS = 14, 12, 22, 24, 65
OFFSET_FETCH = 9


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
    if key == OFFSET_FETCH and ctx.version == 0:  # ZooKeeper's: refused before any coordinator
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

    if ctx.header.api_key in (68, 69):
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
    if key == ADD_PARTITIONS and version >= ADD_PARTITIONS_BATCHED:
        return error_response(key, version, request, code, quiet_top=True)
    if key == DESCRIBE_TRANSACTIONS:  # Kafka: an empty id is INVALID_REQUEST before the state is asked
        answer = error_response(key, version, request, code)
        return dataclasses.replace(answer, transaction_states=tuple(
            s if s.transactional_id else dataclasses.replace(s, error_code=ErrorCode.invalid_request)
            for s in answer.transaction_states))
    if hasattr(module, "error_response"):  # the API's own (Kafka: AbstractRequest.getErrorResponse)
        answer = module.error_response(ctx, request, code)
        return await answer if inspect.isawaitable(answer) else answer
    return error_response(key, version, request, code)
