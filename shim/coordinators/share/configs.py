"""Share groups' broker settings (``group.share.*``; Kafka: ShareGroupConfig and GroupCoordinatorConfig).

Each group's own settings (GROUP configs, ``share.*`` and ``consumer.*``) are
:class:`shim.configs.group.GroupConfigs`, one store and one validation for every group type.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...configs.group import GroupConfigs

__all__ = ["GroupConfigs", "ShareSettings", "cold_snapshot_interval_ms", "share_settings"]


@dataclass(frozen=True)
class ShareSettings:
    session_timeout_ms: int = 45000  # group.share.session.timeout.ms
    min_session_timeout_ms: int = 45000
    max_session_timeout_ms: int = 60000
    heartbeat_interval_ms: int = 5000  # group.share.heartbeat.interval.ms
    min_heartbeat_interval_ms: int = 5000
    max_heartbeat_interval_ms: int = 15000
    record_lock_duration_ms: int = 30000  # group.share.record.lock.duration.ms
    min_record_lock_duration_ms: int = 15000
    max_record_lock_duration_ms: int = 60000
    delivery_count_limit: int = 5  # group.share.delivery.count.limit
    max_record_locks: int = 2000  # group.share.partition.max.record.locks
    max_share_sessions: int = 2000  # group.share.max.share.sessions
    initialize_retry_interval_ms: int = 30000  # group.share.initialize.retry.interval.ms (Kafka 4.1, internal)
    offsets_commit_timeout_ms: int = 5000  # offsets.commit.timeout.ms

    @property
    def retry_interval_ms(self) -> int:
        """How long a share partition stays initializing before a heartbeat initializes it again
        (Kafka: GroupCoordinatorConfig.shareGroupInitializeRetryIntervalMs, never below
        offsets.commit.timeout.ms)."""
        return max(self.initialize_retry_interval_ms, self.offsets_commit_timeout_ms)

    def check(self) -> None:
        """Kafka: the ``require`` checks of ShareGroupConfig and of GroupCoordinatorConfig's share
        settings, which keep a broker from starting (ValueError with Kafka's messages)."""
        for name, low, high in (("session_timeout_ms", "min_session_timeout_ms", "max_session_timeout_ms"),
                                ("heartbeat_interval_ms", "min_heartbeat_interval_ms", "max_heartbeat_interval_ms"),
                                ("record_lock_duration_ms", "min_record_lock_duration_ms",
                                 "max_record_lock_duration_ms")):
            value, least, most = getattr(self, name), getattr(self, low), getattr(self, high)
            if most < least:
                raise ValueError(f"{_PROPERTIES[high]} must be greater than or equals to {_PROPERTIES[low]}")
            if value < least:
                raise ValueError(f"{_PROPERTIES[name]} must be greater than or equals to {_PROPERTIES[low]}")
            if value > most:
                raise ValueError(f"{_PROPERTIES[name]} must be less than or equals to {_PROPERTIES[high]}")
        if self.initialize_retry_interval_ms < 1:  # ConfigDef atLeast(1)
            raise ValueError(f"Invalid value {self.initialize_retry_interval_ms} for configuration "
                             "group.share.initialize.retry.interval.ms: Value must be at least 1")
        if self.heartbeat_interval_ms >= self.session_timeout_ms:
            raise ValueError("group.share.heartbeat.interval.ms must be less than group.share.session.timeout.ms")


_PROPERTIES = {
    "session_timeout_ms": "group.share.session.timeout.ms",
    "min_session_timeout_ms": "group.share.min.session.timeout.ms",
    "max_session_timeout_ms": "group.share.max.session.timeout.ms",
    "heartbeat_interval_ms": "group.share.heartbeat.interval.ms",
    "min_heartbeat_interval_ms": "group.share.min.heartbeat.interval.ms",
    "max_heartbeat_interval_ms": "group.share.max.heartbeat.interval.ms",
    "record_lock_duration_ms": "group.share.record.lock.duration.ms",
    "min_record_lock_duration_ms": "group.share.min.record.lock.duration.ms",
    "max_record_lock_duration_ms": "group.share.max.record.lock.duration.ms",
    "delivery_count_limit": "group.share.delivery.count.limit",
    "max_record_locks": "group.share.partition.max.record.locks",
    "max_share_sessions": "group.share.max.share.sessions",
    "initialize_retry_interval_ms": "group.share.initialize.retry.interval.ms",
    "offsets_commit_timeout_ms": "offsets.commit.timeout.ms",
}


def share_settings(properties: dict[str, str]) -> ShareSettings:
    """The ``group.share.*`` broker properties (``--override``), Kafka's defaults for the rest."""
    values = {}
    for name, prop in _PROPERTIES.items():
        if prop in properties:
            values[name] = int(properties[prop])
    settings = ShareSettings(**values)
    settings.check()
    return settings


COLD_SNAPSHOT_INTERVAL = "share.coordinator.cold.partition.snapshot.interval.ms"


def cold_snapshot_interval_ms(properties: dict[str, str]) -> int:
    """Kafka 4.1's internal ``share.coordinator.cold.partition.snapshot.interval.ms`` (5 minutes, at
    least 1: a broker refuses to start with less)."""
    value = int(properties.get(COLD_SNAPSHOT_INTERVAL, 300_000))
    if value < 1:
        raise ValueError(f"Invalid value {value} for configuration {COLD_SNAPSHOT_INTERVAL}: Value must be at least 1")
    return value
