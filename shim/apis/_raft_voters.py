"""What AddRaftVoter (80) and RemoveRaftVoter (81) share: the checks KafkaRaftClient makes before
either handler runs, and Kafka's way of printing a voter (ReplicaKey, Uuid, Optional)."""

from __future__ import annotations

import base64
import uuid

from ..errors import ErrorCode, KafkaError
from ..protocol.kafka_releases import KRAFT_VERSION

ZERO_UUID = uuid.UUID(int=0)  # Kafka: ReplicaKey.NO_DIRECTORY_ID (Uuid.ZERO_UUID)


def java_uuid(value: uuid.UUID) -> str:
    """Kafka: Uuid.toString, URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(value.bytes).decode().rstrip("=")


def replica_key(voter_id: int, directory_id: uuid.UUID | None) -> str:
    """Kafka: ReplicaKey.toString."""
    shown = "Optional.empty" if directory_id in (None, ZERO_UUID) else f"Optional[{java_uuid(directory_id)}]"
    return f"ReplicaKey(id={voter_id}, directoryId={shown})"


def voter_keys(ctx) -> str:
    """The voter set's keys as Java prints the set: this node alone."""
    return f"[{replica_key(ctx.node.config.node_id, ctx.node.quorum.directory_id)}]"


def check_request(ctx, request, what: str) -> None:
    """Kafka: KafkaRaftClient.handleAddVoterRequest/handleRemoveVoterRequest, before the handler."""
    cluster_id = ctx.node.config.cluster_id
    if request.cluster_id is not None and request.cluster_id != cluster_id:
        raise KafkaError(ErrorCode.inconsistent_cluster_id,
                         f'The given id "{request.cluster_id}" doesn\'t match the cluster id "{cluster_id}"')
    if request.voter_id < 0 or request.voter_directory_id in (None, ZERO_UUID):
        raise KafkaError(ErrorCode.invalid_request, f"{what.capitalize()} voter request didn't include a valid voter")


def check_reconfiguration(ctx, what: str) -> None:
    """Kafka: AddVoterHandler/RemoveVoterHandler -- voter changes need kraft.version 1."""
    level = ctx.node.quorum.level(KRAFT_VERSION)
    if level < 1:
        raise KafkaError(ErrorCode.unsupported_version, f"Cluster doesn't support {what} voter because the "
                                                        f"{KRAFT_VERSION} feature is {level}")


def answer(ctx, error: KafkaError):
    return ctx.response(error_code=error.code, error_message=error.message)
