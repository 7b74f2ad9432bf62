"""FindCoordinator (10), v0-6: the coordinator of a group or transactional id is the leader of the
partition of __consumer_offsets or __transaction_state its key hashes to (shim.cluster), wherever
the request came; with that partition's replicas all down, COORDINATOR_NOT_AVAILABLE.

v0-3 carry one key; v4+ a batch of keys. Key type 1 (transaction) needs v1+. Key type 2 (the share
coordinator, v6) takes a share-partition key ``group:topicId:partition`` and needs CLUSTER_ACTION
(CLUSTER_AUTHORIZATION_FAILED); while share groups are off (share.version 0, and always before 4.1)
it is COORDINATOR_NOT_AVAILABLE, as Kafka answers with no share coordinator; with them on, the
leader of the ``__share_group_state`` partition the key hashes to (Java's String.hashCode of
``group:topicId:partition``, the topic id in Kafka's base64 form, as ShareCoordinatorService.partitionFor),
which keeps that share partition's state (shim.coordinators.share.store); a malformed key is
INVALID_REQUEST. Below v6 type 2 is INVALID_REQUEST, like any other unknown type. v5 only
allows TRANSACTION_ABORTABLE, which this API never returns. With an authorizer a group key needs
DESCRIBE on the group (GROUP_AUTHORIZATION_FAILED), a transaction key DESCRIBE on the transactional
id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
"""

import base64
import binascii
import uuid

from ..coordinators.share.store import share_partition_key
from ..errors import ErrorCode
from ..security.acls import AclOperation as O
from ..security.acls import ResourceType as R
from ._share import share_groups_enabled
from .registry import api

GROUP, TRANSACTION, SHARE = 0, 1, 2
BATCHED_VERSION = 4
SHARE_VERSION = 6


@api(10, "FindCoordinator", 0, 6)
def handle(ctx, request):
    key_type = getattr(request, "key_type", GROUP)
    if ctx.version < BATCHED_VERSION:
        return ctx.response(error_message=None, **_coordinator(ctx, key_type, request.key))
    coordinators = tuple(
        ctx.make("Coordinator", key=key, error_message=None, **_coordinator(ctx, key_type, key))
        for key in request.coordinator_keys
    )
    return ctx.response(coordinators=coordinators)


def _coordinator(ctx, key_type, key) -> dict:
    """Kafka: KafkaApis.getCoordinator -- DESCRIBE on the group or transactional id comes first."""
    if key_type == GROUP and not ctx.authorize(O.DESCRIBE, R.GROUP, key):
        code = ErrorCode.group_authorization_failed
    elif key_type == TRANSACTION and not ctx.authorize(O.DESCRIBE, R.TRANSACTIONAL_ID, key):
        code = ErrorCode.transactional_id_authorization_failed
    elif key_type in (GROUP, TRANSACTION):
        code = ErrorCode.none
    elif key_type == SHARE and ctx.version >= SHARE_VERSION:
        code, key = _share_key(ctx, key)
    else:
        code = ErrorCode.invalid_request
    node_id = ctx.node.cluster.coordinator(key_type, key) if code == ErrorCode.none else -1
    if node_id < 0:
        code = code if code != ErrorCode.none else ErrorCode.coordinator_not_available
        return dict(error_code=code, node_id=-1, host="", port=-1)
    host, port = ctx.endpoint_of(node_id)
    return dict(error_code=code, node_id=node_id, host=host, port=port)


def _share_key(ctx, key):
    """(error code, the key as Kafka's SharePartitionKey.toString writes it) of a share-partition
    key (Kafka: SharePartitionKey.validate)."""
    if not ctx.authorize_cluster(O.CLUSTER_ACTION):
        return ErrorCode.cluster_authorization_failed, key
    if not share_groups_enabled(ctx):
        return ErrorCode.coordinator_not_available, key
    parts = key.rsplit(":", 2)
    try:
        if len(parts) != 3 or not parts[0]:
            raise ValueError(key)
        if len(parts[1]) > 24:  # Kafka: Uuid.fromString takes the base64url form only
            raise ValueError(key)
        topic_id = uuid.UUID(bytes=base64.b64decode(parts[1] + "==", altchars=b"-_", validate=True))
        partition = int(parts[2])
    except (ValueError, binascii.Error):
        return ErrorCode.invalid_request, key
    return ErrorCode.none, share_partition_key(parts[0], topic_id, partition)
