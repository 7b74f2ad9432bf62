"""GROUP config resources: each group's own settings over the broker's (Kafka: GroupConfig,
GroupConfigManager; KIP-848's ``consumer.*``, KIP-932's ``share.*`` and KIP-1071's ``streams.*``).

Set with IncrementalAlterConfigs (or AlterConfigs, which replaces the group's whole set) on a GROUP
resource; a group config overrides the broker's value for that group alone. Validation follows
GroupConfigManager.validate: the group's configs over the broker's values are parsed (type and
lower bound), then checked against the broker's ``group.consumer.min/max.*``,
``group.share.min/max.*`` and ``group.streams.min/max.*`` bounds and each session timeout against
its heartbeat interval; any failure is INVALID_CONFIG with Kafka's message. Kafka 4.1 defines,
validates, stores and describes the ``streams.*`` configs whether or not the streams rebalance
protocol is enabled (``group.coordinator.rebalance.protocols``); so does kafka-shim, which has no
streams groups for them to act on. The configs of every group live in
``group-configs.json`` beside the cluster metadata, replaced atomically (fsynced) on each change,
so they survive kill -9 as the other dynamic configs do.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

from ..errors import ErrorCode, KafkaError
from ..storage import fs
from .admin import apply_ops
from . import offset_reset
from .streams import StreamsSettings


class GroupKey(NamedTuple):
    kind: str  # "int" or "string"
    broker: str  # the attribute of the broker's settings holding the default ("consumer.x" / "share.x")
    at_least: int = 1
    choices: tuple[str, ...] = ()


# Kafka 4.1: GroupConfig's definitions.
GROUP_CONFIGS: dict[str, GroupKey] = {
    "consumer.session.timeout.ms": GroupKey("int", "consumer.session_timeout_ms"),
    "consumer.heartbeat.interval.ms": GroupKey("int", "consumer.heartbeat_interval_ms"),
    "share.session.timeout.ms": GroupKey("int", "share.session_timeout_ms"),
    "share.heartbeat.interval.ms": GroupKey("int", "share.heartbeat_interval_ms"),
    "share.record.lock.duration.ms": GroupKey("int", "share.record_lock_duration_ms", at_least=1000),
    "share.auto.offset.reset": GroupKey("reset", ""),  # shim.configs.offset_reset
    "share.isolation.level": GroupKey("string", "", choices=("read_committed", "read_uncommitted")),
    "streams.session.timeout.ms": GroupKey("int", "streams.session_timeout_ms"),
    "streams.heartbeat.interval.ms": GroupKey("int", "streams.heartbeat_interval_ms"),
    "streams.num.standby.replicas": GroupKey("int", "streams.num_standby_replicas", at_least=0),
}
_STRING_DEFAULTS = {"share.auto.offset.reset": "latest", "share.isolation.level": "read_uncommitted"}

# (group config, its broker bounds' attributes, the broker properties named in Kafka's messages)
_BOUNDS = (
    ("consumer.heartbeat.interval.ms", "consumer", "min_heartbeat_interval_ms", "max_heartbeat_interval_ms",
     "group.consumer.min.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms"),
    ("consumer.session.timeout.ms", "consumer", "min_session_timeout_ms", "max_session_timeout_ms",
     "group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms"),
    ("share.heartbeat.interval.ms", "share", "min_heartbeat_interval_ms", "max_heartbeat_interval_ms",
     "group.share.min.heartbeat.interval.ms", "group.share.max.heartbeat.interval.ms"),
    ("share.session.timeout.ms", "share", "min_session_timeout_ms", "max_session_timeout_ms",
     "group.share.min.session.timeout.ms", "group.share.max.session.timeout.ms"),
    ("share.record.lock.duration.ms", "share", "min_record_lock_duration_ms", "max_record_lock_duration_ms",
     "group.share.min.record.lock.duration.ms", "group.share.max.record.lock.duration.ms"),
    ("streams.heartbeat.interval.ms", "streams", "min_heartbeat_interval_ms", "max_heartbeat_interval_ms",
     "group.streams.min.heartbeat.interval.ms", "group.streams.max.heartbeat.interval.ms"),
    ("streams.session.timeout.ms", "streams", "min_session_timeout_ms", "max_session_timeout_ms",
     "group.streams.min.session.timeout.ms", "group.streams.max.session.timeout.ms"),
    ("streams.num.standby.replicas", "streams", None, "max_standby_replicas",
     None, "group.streams.max.standby.replicas"),
)


def _invalid(message: str) -> KafkaError:
    return KafkaError(ErrorCode.invalid_config, message)


def _parse(name: str, raw: str, release: str) -> int | str:
    """Kafka: ConfigDef.parseType (a STRING trimmed) and the key's validator, given the parsed value."""
    key = GROUP_CONFIGS[name]
    if key.kind == "reset":
        try:
            return offset_reset.validate(name, raw.strip(), release)
        except ValueError as e:
            raise _invalid(str(e)) from None
    if key.kind == "string":
        value = raw.strip()
        if value not in key.choices:
            raise _invalid(f"Invalid value {value} for configuration {name}: String must be one of: "
                           f"{', '.join(key.choices)}")
        return value
    try:
        number = int(raw.strip())
    except ValueError:
        raise _invalid(f"Invalid value {raw} for configuration {name}: Not a number of type INT") from None
    if not -2**31 <= number < 2**31:
        raise _invalid(f"Invalid value {raw} for configuration {name}: Not a number of type INT")
    if number < key.at_least:
        raise _invalid(f"Invalid value {number} for configuration {name}: Value must be at least {key.at_least}")
    return number


class GroupConfigs:
    """Every group's own configs; ``consumer``, ``share`` and ``streams`` are the broker's settings
    (defaults, bounds)."""

    def __init__(self, path: Path | None, share, consumer, streams: StreamsSettings | None = None,
                 release: str = "4.1") -> None:
        self.path = path
        self.release = release  # the emulated Kafka release: which share.auto.offset.reset values are valid
        self.settings = {"share": share, "consumer": consumer, "streams": streams or StreamsSettings()}
        self.groups: dict[str, dict[str, str]] = {}
        if path is not None and path.exists():
            self.groups = json.loads(path.read_text())

    def default(self, name: str) -> str:
        key = GROUP_CONFIGS[name]
        if key.kind in ("string", "reset"):
            return _STRING_DEFAULTS[name]
        owner, field = key.broker.split(".", 1)
        return str(getattr(self.settings[owner], field))

    def get(self, group_id: str, name: str, default: str | None = None) -> str:
        return self.groups.get(group_id, {}).get(name, self.default(name) if default is None else default)

    def int(self, group_id: str, name: str, default: int | None = None) -> int:
        return int(self.get(group_id, name, None if default is None else str(default)))

    def validate(self, configs: dict[str, str]) -> dict[str, str]:
        """Kafka: GroupConfigManager.validate -- the group's configs over the broker's values."""
        for name in configs:
            if name not in GROUP_CONFIGS:
                raise _invalid(f"Unknown group config name: {name}")
        values = {name: _parse(name, configs[name] if name in configs else self.default(name), self.release)
                  for name in GROUP_CONFIGS}
        for name, owner, low_field, high_field, low_prop, high_prop in _BOUNDS:
            settings = self.settings[owner]
            if low_field is not None and values[name] < getattr(settings, low_field):
                raise _invalid(f"{name} must be greater than or equal to {low_prop}")
            if values[name] > getattr(settings, high_field):
                raise _invalid(f"{name} must be less than or equal to {high_prop}")
        for kind in ("consumer", "share", "streams"):
            if values[f"{kind}.session.timeout.ms"] <= values[f"{kind}.heartbeat.interval.ms"]:
                raise _invalid(f"{kind}.session.timeout.ms must be greater than {kind}.heartbeat.interval.ms")
        return {name: str(values[name]) for name in configs}

    def alter(self, group_id: str, ops, validate_only: bool, incremental: bool = True) -> None:
        """IncrementalAlterConfigs (SET, DELETE; no config is a list) or AlterConfigs (the ops,
        all SET, become the group's whole set) on GROUP ``group_id``."""
        if not group_id:
            raise KafkaError(ErrorCode.invalid_request, "Group name can't be empty.")
        configs = apply_ops(self.own(group_id) if incremental else {}, ops, {}, lambda _name: None)
        configs = self.validate(configs)
        if validate_only:
            return
        groups = {g: c for g, c in self.groups.items() if g != group_id}
        if configs:
            groups[group_id] = configs
        if self.path is not None:
            fs.atomic_write(self.path, json.dumps(groups, sort_keys=True).encode())
        self.groups = groups

    def own(self, group_id: str) -> dict[str, str]:
        return dict(self.groups.get(group_id, {}))

    def describe(self, group_id: str) -> list[tuple[str, str, bool]]:
        """(name, value, set for this group) of every group config."""
        own = self.groups.get(group_id, {})
        return [(name, own.get(name, self.default(name)), name in own) for name in sorted(GROUP_CONFIGS)]
