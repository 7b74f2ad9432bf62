"""Manual replica assignments on a one-broker cluster, checked as Kafka's controller checks them
(ReplicationControlManager.validateManualPartitionAssignment): the only broker, once."""

from ..errors import ErrorCode, KafkaError


def check_manual_assignment(me: int, replicas) -> None:
    ordered = sorted(replicas)
    if not ordered:
        raise KafkaError(ErrorCode.invalid_replica_assignment,
                         "The manual partition assignment includes an empty replica list.")
    other = next((b for b in ordered if b != me), None)
    if other is not None:
        raise KafkaError(ErrorCode.invalid_replica_assignment,
                         f"The manual partition assignment includes broker {other}, but no such broker is registered.")
    if len(ordered) > 1:
        raise KafkaError(ErrorCode.invalid_replica_assignment,
                         f"The manual partition assignment includes the broker {me} more than once.")
