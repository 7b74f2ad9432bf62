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
) -> dict[tuple[str, int], ErrorCode]:
    results = {}
    for topic, partition in partitions:
        try:
            logs.get(topic, partition).append_marker(producer_id, producer_epoch, coordinator_epoch, commit, now_ms)
        except KafkaError as e:
            results[(topic, partition)] = e.code
            continue
        results[(topic, partition)] = ErrorCode.none
        for listener in listeners:
            listener(producer_id, topic, partition, commit)
    return results
