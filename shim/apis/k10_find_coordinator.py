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

Until then, an authorized key whose internal topic (``__consumer_offsets``, ``__transaction_state``,
``__share_group_state``) does not exist yet has it created, with the partition count and configs of
Kafka's internal topics (``offsets.topic.num.partitions``, ``transaction.state.log.num.partitions``,
``share.coordinator.state.topic.num.partitions``; compacted), and is answered
COORDINATOR_NOT_AVAILABLE, as Kafka 3.9 and 4.x answer while AutoTopicCreationManager creates it;
clients retry and find the coordinator. kafka-shim answers once the topic exists.
"""

import base64
import binascii
import logging
import uuid

from ..coordinators.share.store import share_partition_key
from ..errors import ErrorCode, KafkaError
from ..security.acls import AclOperation as O
from ..security.acls import ResourceType as R
from ._share import share_groups_enabled
from ._pace import Pacer
from .registry import api

log = logging.getLogger(__name__)

GROUP, TRANSACTION, SHARE = 0, 1, 2
BATCHED_VERSION = 4
SHARE_VERSION = 6


@api(10, "FindCoordinator", 0, 6)
async def handle(ctx, request):
    key_type = getattr(request, "key_type", GROUP)
    keys = [request.key] if ctx.version < BATCHED_VERSION else request.coordinator_keys
    pace = Pacer()  # a megabyte of v4 names 100,000 keys: seconds of the loop unpaced
    # Side by side, not as (code, key) pairs or a dict per key: a 2 MiB request names a million
    # keys, and freeing a million small objects when the handler returned held the loop 0.04 s
    codes, names, any_valid = [], [], False
    async for key in pace.each(keys):
        code, name = _check(ctx, key_type, key)
        codes.append(code)
        names.append(name)
        any_valid = any_valid or code == ErrorCode.none
    created = any_valid and await _create_topic(ctx, key_type)
    if ctx.version < BATCHED_VERSION:
        return ctx.response(error_message=None, **_coordinator(ctx, key_type, names[0], codes[0], created))
    return ctx.response(coordinators=tuple([  # each key as the request wrote it
        ctx.make("Coordinator", key=key, error_message=None, **_coordinator(ctx, key_type, name, code, created))
        async for key, name, code in pace.each(zip(keys, names, codes))]))


async def _create_topic(ctx, key_type) -> bool:
    """Create the internal topic the key type's coordinator keeps its state in, if it does not
    exist yet (Kafka: KafkaApis.getCoordinator -> AutoTopicCreationManager.createTopics, with its
    own partition count and configs); True if it was missing, and the answer is then
    COORDINATOR_NOT_AVAILABLE, as Kafka answers while the topic is created, for the client to retry."""
    cluster = ctx.node.cluster
    topic, _ = cluster.coordinator_partition(key_type, "")
    if topic in ctx.node.logs.topics:
        return False
    try:
        await ctx.node.logs.create_internal_topic(topic, cluster.internal_partitions(topic))
    except KafkaError as e:  # Kafka logs a failed creation; the answer stays COORDINATOR_NOT_AVAILABLE
        log.warning("could not create %s: %s", topic, e)
    return True


def _check(ctx, key_type, key) -> tuple[int, str]:
    """Kafka: KafkaApis.getCoordinator -- DESCRIBE on the group or transactional id comes first."""
    if key_type == GROUP and not ctx.authorize(O.DESCRIBE, R.GROUP, key):
        return ErrorCode.group_authorization_failed, key
    if key_type == TRANSACTION and not ctx.authorize(O.DESCRIBE, R.TRANSACTIONAL_ID, key):
        return ErrorCode.transactional_id_authorization_failed, key
    if key_type in (GROUP, TRANSACTION):
        return ErrorCode.none, key
    if key_type == SHARE and ctx.version >= SHARE_VERSION:
        return _share_key(ctx, key)
    return ErrorCode.invalid_request, key


def _coordinator(ctx, key_type, key, code, created) -> dict:
    if code == ErrorCode.none and created:
        code = ErrorCode.coordinator_not_available
    # the internal partitions of an offline data directory have no leader (shim.cluster.OfflineState)
    node_id = ctx.node.cluster.coordinator(key_type, key) if code == ErrorCode.none and not ctx.node.logs.offline else -1
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
