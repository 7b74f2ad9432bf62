"""Share groups' settings: the broker's (``group.share.*``) and each group's own (GROUP configs).

Kafka: ShareGroupConfig (broker) and GroupConfig (per group, set with IncrementalAlterConfigs on a
GROUP resource, KIP-932/KIP-848). A group config overrides the broker's value for that group alone;
its bounds are the broker's min/max settings, as GroupConfig.validate checks. The per-group configs
are kept in ``group-configs.json`` beside the cluster metadata, written atomically.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ...errors import ErrorCode, KafkaError
from ...storage import fs

SET, DELETE = 0, 1


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
}


def share_settings(properties: dict[str, str]) -> ShareSettings:
    """The ``group.share.*`` broker properties (``--override``), Kafka's defaults for the rest."""
    values = {}
    for name, prop in _PROPERTIES.items():
        if prop in properties:
            values[name] = int(properties[prop])
    return ShareSettings(**values)


def _choice(*allowed):
    def check(value: str, _settings) -> str | None:
        return None if value in allowed else f"must be one of {', '.join(allowed)}"
    return check


def _within(low_field: str, high_field: str):
    def check(value: str, settings) -> str | None:
        low, high = getattr(settings, low_field), getattr(settings, high_field)
        try:
            number = int(value)
        except ValueError:
            return "must be an integer"
        return None if low <= number <= high else f"must be between {low} and {high}"
    return check


# Kafka: GroupConfig -- the share group configs and how each is checked.
GROUP_CONFIGS = {
    "share.auto.offset.reset": _choice("latest", "earliest"),
    "share.isolation.level": _choice("read_uncommitted", "read_committed"),
    "share.session.timeout.ms": _within("min_session_timeout_ms", "max_session_timeout_ms"),
    "share.heartbeat.interval.ms": _within("min_heartbeat_interval_ms", "max_heartbeat_interval_ms"),
    "share.record.lock.duration.ms": _within("min_record_lock_duration_ms", "max_record_lock_duration_ms"),
}
DEFAULTS = {"share.auto.offset.reset": "latest", "share.isolation.level": "read_uncommitted"}
_FROM_SETTINGS = {"share.session.timeout.ms": "session_timeout_ms",
                  "share.heartbeat.interval.ms": "heartbeat_interval_ms",
                  "share.record.lock.duration.ms": "record_lock_duration_ms"}


class GroupConfigs:
    def __init__(self, path: Path | None, settings: ShareSettings) -> None:
        self.path = path
        self.settings = settings
        self.groups: dict[str, dict[str, str]] = {}
        if path is not None and path.exists():
            self.groups = json.loads(path.read_text())

    def get(self, group_id: str, name: str, default: str) -> str:
        return self.groups.get(group_id, {}).get(name, default)

    def int(self, group_id: str, name: str, default: int) -> int:
        return int(self.get(group_id, name, str(default)))

    def default(self, name: str) -> str:
        if name in _FROM_SETTINGS:
            return str(getattr(self.settings, _FROM_SETTINGS[name]))
        return DEFAULTS[name]

    def alter(self, group_id: str, ops, validate_only: bool) -> None:
        """IncrementalAlterConfigs on GROUP ``group_id``: SET and DELETE (the configs are no lists)."""
        if not group_id:
            raise KafkaError(ErrorCode.invalid_request, "Group name can't be empty.")
        configs = dict(self.groups.get(group_id, {}))
        for op in ops:
            check = GROUP_CONFIGS.get(op.name)
            if check is None:
                raise KafkaError(ErrorCode.invalid_config, f"Unknown group config name: {op.name}")
            if op.op == DELETE:
                configs.pop(op.name, None)
            elif op.op == SET:
                if (problem := check(op.value, self.settings)) is not None:
                    raise KafkaError(ErrorCode.invalid_config, f"Invalid value {op.value} for configuration "
                                                              f"{op.name}: {problem}")
                configs[op.name] = op.value
            else:
                raise KafkaError(ErrorCode.invalid_config, f"Can't APPEND or SUBTRACT to key {op.name} because "
                                                          f"its type is not LIST.")
        if validate_only:
            return
        groups = {**self.groups, group_id: configs} if configs else {
            g: c for g, c in self.groups.items() if g != group_id}
        if self.path is not None:
            fs.atomic_write(self.path, json.dumps(groups, sort_keys=True).encode())
        self.groups = groups

    def describe(self, group_id: str) -> list[tuple[str, str, bool]]:
        """(name, value, set for this group) of every share group config."""
        own = self.groups.get(group_id, {})
        return [(name, own.get(name, self.default(name)), name in own) for name in sorted(GROUP_CONFIGS)]
