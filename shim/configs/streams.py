"""The broker's streams group settings (Kafka 4.1: GroupCoordinatorConfig's ``group.streams.*``,
KIP-1071).

kafka-shim serves no streams groups (StreamsGroupHeartbeat and StreamsGroupDescribe are not
advertised, as Kafka 4.1 does not advertise them while ``group.coordinator.rebalance.protocols``
leaves ``streams`` out), but Kafka 4.1 defines the GROUP configs ``streams.*`` whatever protocols
are enabled: these settings are their defaults and bounds (:mod:`shim.configs.group`). Checked at
start-up as GroupCoordinatorConfig's constructor checks them; a broker configured otherwise does
not start.
"""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class StreamsSettings:
    session_timeout_ms: int = 45_000  # group.streams.session.timeout.ms
    min_session_timeout_ms: int = 45_000  # group.streams.min.session.timeout.ms
    max_session_timeout_ms: int = 60_000  # group.streams.max.session.timeout.ms
    heartbeat_interval_ms: int = 5_000  # group.streams.heartbeat.interval.ms
    min_heartbeat_interval_ms: int = 5_000  # group.streams.min.heartbeat.interval.ms
    max_heartbeat_interval_ms: int = 15_000  # group.streams.max.heartbeat.interval.ms
    num_standby_replicas: int = 0  # group.streams.num.standby.replicas
    max_standby_replicas: int = 2  # group.streams.max.standby.replicas

    def check(self) -> None:
        """Kafka: the streams part of GroupCoordinatorConfig's ``require`` checks, in its order."""
        p = _PROPERTIES
        rules = (
            (self.max_heartbeat_interval_ms >= self.min_heartbeat_interval_ms,
             f"{p['max_heartbeat_interval_ms']} must be greater than or equal to {p['min_heartbeat_interval_ms']}"),
            (self.heartbeat_interval_ms >= self.min_heartbeat_interval_ms,
             f"{p['heartbeat_interval_ms']} must be greater than or equal to {p['min_heartbeat_interval_ms']}"),
            (self.heartbeat_interval_ms <= self.max_heartbeat_interval_ms,
             f"{p['heartbeat_interval_ms']} must be less than or equal to {p['max_heartbeat_interval_ms']}"),
            (self.max_session_timeout_ms >= self.min_session_timeout_ms,
             f"{p['max_session_timeout_ms']} must be greater than or equal to {p['min_session_timeout_ms']}"),
            (self.session_timeout_ms >= self.min_session_timeout_ms,
             f"{p['session_timeout_ms']} must be greater than or equal to {p['min_session_timeout_ms']}"),
            (self.session_timeout_ms <= self.max_session_timeout_ms,
             f"{p['session_timeout_ms']} must be less than or equal to {p['max_session_timeout_ms']}"),
            (self.num_standby_replicas <= self.max_standby_replicas,
             f"{p['num_standby_replicas']} must be less than or equal to {p['max_standby_replicas']}"),
            (self.heartbeat_interval_ms < self.session_timeout_ms,
             f"{p['heartbeat_interval_ms']} must be less than {p['session_timeout_ms']}"),
        )
        for ok, message in rules:
            if not ok:
                raise ValueError(message)


_PROPERTIES = {f.name: "group.streams." + f.name.removesuffix("_ms").replace("_", ".") + (
    ".ms" if f.name.endswith("_ms") else "") for f in fields(StreamsSettings)}


def streams_settings(properties: dict[str, str]) -> StreamsSettings:
    """The ``group.streams.*`` broker properties (``--override``), Kafka's defaults for the rest."""
    values = {name: int(properties[prop]) for name, prop in _PROPERTIES.items() if prop in properties}
    settings = StreamsSettings(**values)
    settings.check()
    return settings
