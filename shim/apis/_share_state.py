"""What the share coordinator's APIs (Initialize/Read/Write/Delete/ReadSummary ShareGroupState,
83-87) have in common (Kafka: KafkaApis' handlers and ShareCoordinatorService).

Without CLUSTER_ACTION on the cluster every partition is CLUSTER_AUTHORIZATION_FAILED. A request
with no topics, a topic with no partitions, or an empty group id gets an empty answer. While share
groups are off (share.version 0) every partition is COORDINATOR_NOT_AVAILABLE. Per partition, in
ShareCoordinatorShard's order: a null topic id or a negative partition is INVALID_REQUEST, a key
another broker coordinates NOT_COORDINATOR, an unknown topic or partition UNKNOWN_TOPIC_OR_PARTITION.
"""

from __future__ import annotations

import uuid

from ..cluster import SHARE
from ..coordinators.share.store import share_partition_key
from ..errors import ErrorCode, KafkaError
from ..security.acls import AclOperation as O
from ._share import share_groups_enabled

NULL_TOPIC_ID = "Topic id must not be null."
NEGATIVE_PARTITION = "Partition id must not be negative."


def answer(ctx, request, result_entity: str, per_partition, **error_fields):
    """The response: ``per_partition(key, topic name, partition data) -> fields`` for each
    partition that passes the checks; ``error_fields`` fill a partition answered with an error."""
    if not request.topics or any(not t.partitions for t in request.topics) or not request.group_id:
        return ctx.response(results=())
    whole = None
    if not ctx.authorize_cluster(O.CLUSTER_ACTION):
        whole = (ErrorCode.cluster_authorization_failed, None)
    elif not share_groups_enabled(ctx):
        whole = (ErrorCode.coordinator_not_available, "Share coordinator is not available.")
    results = []
    for t in request.topics:
        parts = []
        for p in t.partitions:
            problem = whole or _problem(ctx, request.group_id, t.topic_id, p.partition)
            if problem is None:
                key = (request.group_id, t.topic_id, p.partition)
                try:
                    fields = {"error_code": ErrorCode.none, "error_message": None,
                              **per_partition(key, ctx.node.logs.topic_by_id(t.topic_id).name, p)}
                except KafkaError as e:
                    problem = (e.code, e.message)
            if problem is not None:
                fields = {"error_code": problem[0], "error_message": problem[1], **error_fields}
            parts.append(ctx.make("PartitionResult", partition=p.partition, **fields))
        results.append(ctx.make(result_entity, topic_id=t.topic_id, partitions=tuple(parts)))
    return ctx.response(results=tuple(results))


def _problem(ctx, group_id: str, topic_id, partition: int):
    if topic_id is None or topic_id == uuid.UUID(int=0):
        return ErrorCode.invalid_request, NULL_TOPIC_ID
    if partition < 0:
        return ErrorCode.invalid_request, NEGATIVE_PARTITION
    if not ctx.coordinates(SHARE, share_partition_key(group_id, topic_id, partition)):
        return ErrorCode.not_coordinator, None
    info = ctx.node.logs.topic_by_id(topic_id)
    if info is None or partition >= info.partitions:
        return ErrorCode.unknown_topic_or_partition, None
    return None


def check_epochs(snapshot, leader_epoch: int, state_epoch: int | None = None) -> None:
    """Kafka: ShareCoordinatorShard.maybeGetWriteStateError -- epochs older than the recorded ones."""
    if snapshot is None:
        return
    if leader_epoch != -1 and snapshot.leader_epoch > leader_epoch:
        raise KafkaError(ErrorCode.fenced_leader_epoch, None)
    if state_epoch is not None and snapshot.state_epoch > state_epoch:
        raise KafkaError(ErrorCode.fenced_state_epoch, None)
