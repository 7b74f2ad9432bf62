"""The broker's consumer group settings (Kafka: GroupCoordinatorConfig's ``group.consumer.*``,
and ``group.max.size`` for the classic groups a consumer group may turn into).

Checked at start-up as Kafka's GroupCoordinatorConfig constructor checks them: the heartbeat
interval and the session timeout within their ``min``/``max`` bounds, and the interval below the
timeout; a broker configured otherwise does not start. The bounds also limit the GROUP configs
``consumer.session.timeout.ms`` and ``consumer.heartbeat.interval.ms`` (:mod:`shim.configs.group`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from .consumer_assignors import ASSIGNORS, DEFAULT_ASSIGNORS

log = logging.getLogger(__name__)
INT_MAX = 2**31 - 1


@dataclass(frozen=True)
class ConsumerGroupConfig:
    session_timeout_ms: int = 45_000  # group.consumer.session.timeout.ms
    heartbeat_interval_ms: int = 5_000  # group.consumer.heartbeat.interval.ms
    max_size: int = INT_MAX  # group.consumer.max.size
    assignors: tuple[str, ...] = DEFAULT_ASSIGNORS  # group.consumer.assignors, the first the default
    migration_policy: str = "bidirectional"  # group.consumer.migration.policy
    min_session_timeout_ms: int = 45_000  # group.consumer.min.session.timeout.ms
    max_session_timeout_ms: int = 60_000  # group.consumer.max.session.timeout.ms
    min_heartbeat_interval_ms: int = 5_000  # group.consumer.min.heartbeat.interval.ms
    max_heartbeat_interval_ms: int = 15_000  # group.consumer.max.heartbeat.interval.ms
    classic_max_size: int = INT_MAX  # group.max.size

    def check(self) -> None:
        """Kafka: the ``require`` checks of GroupCoordinatorConfig (ValueError with its messages)."""
        hb, session = "group.consumer.heartbeat.interval.ms", "group.consumer.session.timeout.ms"
        rules = (
            (self.max_heartbeat_interval_ms >= self.min_heartbeat_interval_ms,
             "group.consumer.max.heartbeat.interval.ms must be greater than or equal to "
             "group.consumer.min.heartbeat.interval.ms"),
            (self.heartbeat_interval_ms >= self.min_heartbeat_interval_ms,
             f"{hb} must be greater than or equal to group.consumer.min.heartbeat.interval.ms"),
            (self.heartbeat_interval_ms <= self.max_heartbeat_interval_ms,
             f"{hb} must be less than or equal to group.consumer.max.heartbeat.interval.ms"),
            (self.max_session_timeout_ms >= self.min_session_timeout_ms,
             "group.consumer.max.session.timeout.ms must be greater than or equal to "
             "group.consumer.min.session.timeout.ms"),
            (self.session_timeout_ms >= self.min_session_timeout_ms,
             f"{session} must be greater than or equal to group.consumer.min.session.timeout.ms"),
            (self.session_timeout_ms <= self.max_session_timeout_ms,
             f"{session} must be less than or equal to group.consumer.max.session.timeout.ms"),
            (self.heartbeat_interval_ms < self.session_timeout_ms, f"{hb} must be less than {session}"),
        )
        for ok, message in rules:
            if not ok:
                raise ValueError(message)


def _int(properties: dict[str, str], name: str, default: int) -> int:
    return int(properties.get(name, default))


def consumer_group_config(session_timeout_ms: int, heartbeat_interval_ms: int,
                          properties: dict[str, str]) -> ConsumerGroupConfig:
    """The settings from the broker's properties: the bounds, ``group.consumer.max.size``,
    ``group.consumer.assignors`` (Kafka's class names or the assignors' names, the first the
    default; others are ignored with a warning), ``group.consumer.migration.policy`` and
    ``group.max.size``. ValueError when they do not hold together."""
    assignors = []
    for entry in properties.get("group.consumer.assignors", "").split(","):
        name = entry.strip().rsplit(".", 1)[-1].lower().removesuffix("assignor")
        if name in ASSIGNORS and name not in assignors:
            assignors.append(name)
        elif entry.strip():
            log.warning("group.consumer.assignors: %s is not a server assignor kafka-shim has", entry.strip())
    config = ConsumerGroupConfig(
        session_timeout_ms=session_timeout_ms, heartbeat_interval_ms=heartbeat_interval_ms,
        max_size=_int(properties, "group.consumer.max.size", INT_MAX),
        assignors=tuple(assignors) or DEFAULT_ASSIGNORS,
        migration_policy=properties.get("group.consumer.migration.policy", "bidirectional").strip().lower(),
        min_session_timeout_ms=_int(properties, "group.consumer.min.session.timeout.ms", 45_000),
        max_session_timeout_ms=_int(properties, "group.consumer.max.session.timeout.ms", 60_000),
        min_heartbeat_interval_ms=_int(properties, "group.consumer.min.heartbeat.interval.ms", 5_000),
        max_heartbeat_interval_ms=_int(properties, "group.consumer.max.heartbeat.interval.ms", 15_000),
        classic_max_size=_int(properties, "group.max.size", INT_MAX))
    config.check()
    return config
