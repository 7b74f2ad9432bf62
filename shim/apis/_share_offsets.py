"""What the share-group offset APIs (90-92) have in common: Kafka's default error messages and topic
ids (the zero UUID for a topic that does not exist)."""

import uuid

from ..errors import ErrorCode as E
from ._share import topic_id

ZERO_UUID = uuid.UUID(int=0)  # Kafka: Uuid.ZERO_UUID
UNINITIALIZED_START_OFFSET = -1  # Kafka: PartitionFactory.UNINITIALIZED_START_OFFSET
DEFAULT_LEADER_EPOCH = 0  # Kafka: PartitionFactory.DEFAULT_LEADER_EPOCH

# Kafka: Errors' messages, which these APIs answer with where the coordinator says no more
MESSAGES = {
    E.unknown_topic_or_partition: "This server does not host this topic-partition.",
    E.topic_authorization_failed: "Topic authorization failed.",
    E.group_authorization_failed: "Group authorization failed.",
    E.unsupported_version: "The version of API is not supported.",
    E.non_empty_group: "The group is not empty.",
    E.group_id_not_found: "The group id does not exist.",
    E.invalid_group_id: "The group id is invalid.",
    E.not_coordinator: "This is not the correct coordinator.",
}


def message(code: E) -> str | None:
    return MESSAGES.get(code) if code != E.none else None


def id_of(ctx, topic: str) -> uuid.UUID:
    return topic_id(ctx, topic) or ZERO_UUID


def partition_exists(ctx, topic: str, partition: int) -> bool:
    info = ctx.node.logs.topics.get(topic)
    return info is not None and 0 <= partition < info.partitions
