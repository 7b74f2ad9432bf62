"""Writing COMMIT/ABORT markers: one path for the coordinator and for WriteTxnMarkers requests."""

from __future__ import annotations

from typing import Callable, Iterable

from ...errors import ErrorCode, KafkaError
from ...storage.log_manager import LogManager

# (producer_id, topic, partition, commit) -> None; the group coordinator listens for
# markers in __consumer_offsets to materialise or discard transactional offsets.
MarkerListener = Callable[[int, str, int, bool], None]


def write_markers(
    logs: LogManager, listeners: list[MarkerListener], producer_id: int, producer_epoch: int,
    coordinator_epoch: int, commit: bool, partitions: Iterable[tuple[str, int]], now_ms: int,
    check_min_isr: Callable[[str, int, int], None] | None = None, durable: bool = True,
) -> dict[tuple[str, int], ErrorCode]:
    """Each partition's outcome. Markers are acks=all appends (Kafka: handleWriteTxnMarkersRequest):
    ``check_min_isr`` (the simulated cluster's) refuses one with NOT_ENOUGH_REPLICAS while the
    partition's ISR is below its min.insync.replicas. ``durable``: fsynced before this returns
    under fsync "always", else left to the group commit (the caller waits for it)."""
    results = {}
    for topic, partition in partitions:
        try:
            plog = logs.get(topic, partition)
            if check_min_isr is not None:
                check_min_isr(topic, partition, plog.config.min_insync_replicas)
            plog.append_marker(producer_id, producer_epoch, coordinator_epoch, commit, now_ms, durable)
        except KafkaError as e:
            results[(topic, partition)] = e.code
            continue
        results[(topic, partition)] = ErrorCode.none
        for listener in listeners:
            listener(producer_id, topic, partition, commit)
    return results
