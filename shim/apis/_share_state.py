"""What the share coordinator's APIs (Initialize/Read/Write/Delete/ReadSummary ShareGroupState,
83-87) have in common (Kafka: KafkaApis' handlers and ShareCoordinatorService).

Without CLUSTER_ACTION on the cluster every partition is CLUSTER_AUTHORIZATION_FAILED. A request
with no topics, a topic with no partitions, or an empty group id gets an empty answer. While share
groups are off (share.version 0) every partition is COORDINATOR_NOT_AVAILABLE. Per partition, in
ShareCoordinatorService's and then ShareCoordinatorShard's order: a key another broker coordinates
is NOT_COORDINATOR (whatever its topic id and partition), a null topic id or a negative partition
INVALID_REQUEST, then the API's own checks of the recorded state (Kafka
4.1, KAFKA-19338: Read and Write of a partition never initialized are INVALID_REQUEST; older epochs
are fenced), then an unknown topic or partition is UNKNOWN_TOPIC_OR_PARTITION. Errors carry Kafka's
messages: its Errors' own where the shard gives no other (KafkaApis' toGlobalErrorResponse,
ShareCoordinatorShard.get*ErrorCoordinatorResult).
"""

from __future__ import annotations

import uuid

from ..cluster import SHARE
from ..coordinators.share.store import share_partition_key
from ..errors import ErrorCode, KafkaError
from ..security.acls import AclOperation as O
from ._pace import Pacer
from ._share import share_groups_enabled

ZERO_UUID = uuid.UUID(int=0)

# Kafka 4.1: ShareCoordinatorShard's messages
NULL_TOPIC_ID = "The topic id cannot be null."
NEGATIVE_PARTITION = "The partition id cannot be a negative number."
WRITE_UNINITIALIZED = "Write operation on uninitialized share partition not allowed."
READ_UNINITIALIZED = "Read operation on uninitialized share partition not allowed."
# Kafka: Errors' messages, answered where the shard or KafkaApis gives the error alone
MESSAGES = {
    ErrorCode.cluster_authorization_failed: "Cluster authorization failed.",
    ErrorCode.unknown_topic_or_partition: "This server does not host this topic-partition.",
    ErrorCode.fenced_leader_epoch: "The leader epoch in the request is older than the epoch on the broker.",
    ErrorCode.fenced_state_epoch: "The share coordinator rejected the request because the share-group state "
                                  "epoch did not match.",
}


async def answer(ctx, request, result_entity: str, per_partition, precheck=None, **error_fields):
    """The response: ``per_partition(key, topic name, partition data) -> fields`` for each
    partition that passes the checks, ``precheck(key, partition data)`` (raising KafkaError) among
    them before the topic is looked up; ``error_fields`` fill a partition answered with an error.
    Paced (shim.apis._pace): 2 MiB of partitions took 1.6-2.5 CPU s in one turn of the loop. Kafka's
    share coordinator takes each key as its own operation (ShareCoordinatorService), so others'
    requests may run between two partitions' reads or writes here too."""
    if not request.topics or any(not t.partitions for t in request.topics) or not request.group_id:
        return ctx.response(results=())
    whole = None
    if not ctx.authorize_cluster(O.CLUSTER_ACTION):
        whole = (ErrorCode.cluster_authorization_failed, MESSAGES[ErrorCode.cluster_authorization_failed])
    elif not share_groups_enabled(ctx):
        whole = (ErrorCode.coordinator_not_available, "Share coordinator is not available.")
    pace = Pacer()
    results = [ctx.make(result_entity, topic_id=t.topic_id, partitions=tuple([
        ctx.make("PartitionResult", partition=p.partition,
                 **_partition(ctx, request.group_id, t.topic_id, p, whole, per_partition, precheck, error_fields))
        async for p in pace.each(t.partitions)])) async for t in pace.each(request.topics)]
    return ctx.response(results=tuple(results))


def _partition(ctx, group_id, topic_id, p, whole, per_partition, precheck, error_fields) -> dict:
    problem = whole or _problem(ctx, group_id, topic_id, p.partition)
    if problem is None:
        key = (group_id, topic_id, p.partition)
        try:
            if precheck is not None:
                precheck(key, p)
            return {"error_code": ErrorCode.none, "error_message": None,
                    **per_partition(key, _topic(ctx, topic_id, p.partition), p)}
        except KafkaError as e:
            problem = (e.code, e.message if e.message is not None else MESSAGES.get(e.code))
    return {"error_code": problem[0], "error_message": problem[1], **error_fields}


def _problem(ctx, group_id: str, topic_id, partition: int):
    """Kafka: ShareCoordinatorService routes each key to its ``__share_group_state`` partition first
    (the runtime answers NOT_COORDINATOR for one this broker does not lead), and only the shard
    that owns it checks the topic id and partition; so a bad key another broker coordinates is
    NOT_COORDINATOR. The wire's zero topic id (kio reads it as None) hashes as Kafka's ZERO_UUID."""
    routed = topic_id if topic_id is not None else ZERO_UUID
    if not ctx.coordinates(SHARE, share_partition_key(group_id, routed, partition)):
        return ErrorCode.not_coordinator, None
    if routed == ZERO_UUID:
        return ErrorCode.invalid_request, NULL_TOPIC_ID
    if partition < 0:
        return ErrorCode.invalid_request, NEGATIVE_PARTITION
    return None


def _topic(ctx, topic_id, partition: int) -> str:
    info = ctx.node.logs.topic_by_id(topic_id)
    if info is None or partition >= info.partitions:
        raise KafkaError(ErrorCode.unknown_topic_or_partition)
    return info.name


def initialized(store, key, message: str) -> None:
    """Kafka 4.1 (KAFKA-19338): Read and Write need the state InitializeShareGroupState gives."""
    if store.get(key) is None:
        raise KafkaError(ErrorCode.invalid_request, message)


def check_epochs(store, key, leader_epoch: int | None = None, state_epoch: int | None = None, *,
                 unset_passes: bool = True) -> None:
    """Kafka: ShareCoordinatorShard.maybeGet*StateError -- an epoch older than the highest the key's
    records carried (:meth:`ShareStateStore.fences`) is fenced; None: not checked. Write and
    Initialize let -1 (not set) pass; Read does not (``unset_passes=False``)."""
    fences = store.fences(key)
    if fences is None:
        return
    for given, fence, code in ((leader_epoch, fences[0], ErrorCode.fenced_leader_epoch),
                               (state_epoch, fences[1], ErrorCode.fenced_state_epoch)):
        if given is not None and not (unset_passes and given == -1) and fence > given:
            raise KafkaError(code)
