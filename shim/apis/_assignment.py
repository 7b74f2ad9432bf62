"""Manual replica assignments on a one-broker cluster, checked as Kafka's controller checks them
(ReplicationControlManager.validateManualPartitionAssignment): the only broker, once."""

from ..errors import ErrorCode, KafkaError


def check_manual_assignment(nodes, replicas) -> None:
    """Kafka: ReplicationControlManager.validateManualPartitionAssignment, over the brokers ``nodes``."""
    if not replicas:
        raise KafkaError(ErrorCode.invalid_replica_assignment,
                         "The manual partition assignment includes an empty replica list.")
    other = next((b for b in sorted(replicas) if b not in nodes), None)
    if other is not None:
        raise KafkaError(ErrorCode.invalid_replica_assignment,
                         f"The manual partition assignment includes broker {other}, but no such broker is registered.")
    twice = next((b for b in replicas if list(replicas).count(b) > 1), None)
    if twice is not None:
        raise KafkaError(ErrorCode.invalid_replica_assignment,
                         f"The manual partition assignment includes the broker {twice} more than once.")
