"""Topic configs: a topic's overrides over the broker's values (Kafka: LogConfig.fromProps over
KafkaConfig.extractLogConfigMap), their validation (LogConfig.validate) and the LogConfig the
partition logs run with."""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from ..errors import ErrorCode, KafkaError
from ..storage.partition_log import LogConfig
from .catalogue import (BROKER_CONFIGS, LONG_MAX, ConfigError, broker_synonyms, release_defaults, topic_configs,
                        unit_ms)

# topic config -> LogConfig field: the configs a single broker honours.
LOG_CONFIG_FIELDS = {
    "segment.bytes": "segment_bytes",
    "index.interval.bytes": "index_interval_bytes",
    "max.message.bytes": "max_message_bytes",
    "retention.bytes": "retention_bytes",
    "retention.ms": "retention_ms",
    "message.timestamp.type": "log_append_time",
    "compression.type": "compression_type",
    "message.timestamp.before.max.ms": "timestamp_before_max_ms",
    "message.timestamp.after.max.ms": "timestamp_after_max_ms",
    "segment.ms": "segment_ms",
    "segment.jitter.ms": "segment_jitter_ms",
    "segment.index.bytes": "segment_index_bytes",
    "min.insync.replicas": "min_insync_replicas",
    "cleanup.policy": "cleanup_policy",
    "delete.retention.ms": "delete_retention_ms",
    "min.cleanable.dirty.ratio": "min_cleanable_dirty_ratio",
    "min.compaction.lag.ms": "min_compaction_lag_ms",
    "max.compaction.lag.ms": "max_compaction_lag_ms",
}

# Accepted by Kafka but not by kafka-shim, with the reason given back.
UNSUPPORTED = {
    ("remote.storage.enable", True): "tiered storage is not implemented by kafka-shim",
}


def validate_overrides(overrides: Mapping[str, str | None], release: str = "3.9") -> dict[str, str]:
    """The overrides with Kafka's checks (LogConfig.validateNames, then each value's type and
    validator, both as the emulated ``release`` has them), rendered as Kafka stores them;
    KafkaError(INVALID_CONFIG) otherwise."""
    catalogue = topic_configs(release)
    out = {}
    for name, raw in overrides.items():
        key = catalogue.get(name)
        if key is None:
            raise KafkaError(ErrorCode.invalid_config, f"Unknown topic config name: {name}")
        if raw is None:
            raise KafkaError(ErrorCode.invalid_config, f"Null value not supported for topic configs: {name}")
        try:
            value = key.parse(raw)
        except ConfigError as e:
            raise e.kafka() from None
        for (unsupported, bad), reason in UNSUPPORTED.items():
            if name == unsupported and (bad in value if isinstance(value, list) else value == bad):
                raise KafkaError(ErrorCode.invalid_config, reason)
        out[name] = key.canonical(raw)
    _check_combinations({**{n: catalogue[n].parse(v) for n, v in out.items()}})
    return out


def _check_combinations(values: dict[str, Any]) -> None:
    # Kafka: LogConfig.validateValues
    lo, hi = values.get("min.compaction.lag.ms", 0), values.get("max.compaction.lag.ms", (1 << 63) - 1)
    if lo > hi:
        raise KafkaError(ErrorCode.invalid_config, f"conflict topic config setting min.compaction.lag.ms ({lo}) > "
                         f"max.compaction.lag.ms ({hi})")


def broker_value(synonym: str, broker_props: Mapping[str, str]) -> tuple[Any, str] | None:
    """The value a broker property gives a topic config, through its synonyms (log.retention.ms over
    .minutes over .hours), in the topic config's unit, with the name that supplied it."""
    for name in broker_synonyms(synonym):
        raw = broker_props.get(name)
        if raw is not None and name in BROKER_CONFIGS:
            value = BROKER_CONFIGS[name].parse(raw)
            return (value * unit_ms(name) if isinstance(value, int) and not isinstance(value, bool) else value), name
    return None


def effective(overrides: Mapping[str, str], broker_props: Mapping[str, str], release: str = "3.9") -> dict[str, Any]:
    """Every topic config's typed value for a topic: its override, else the broker's, else Kafka's
    default (the emulated ``release``'s)."""
    broker_props = {**release_defaults(release), **broker_props}
    values = {}
    for name, key in topic_configs(release).items():
        if name in overrides:
            values[name] = key.parse(overrides[name])
            continue
        found = broker_value(key.synonym, broker_props) if key.synonym else None
        values[name] = found[0] if found else key.default_value
    return values


def log_config(base: LogConfig, values: Mapping[str, Any]) -> LogConfig:
    changes = {field: values[name] for name, field in LOG_CONFIG_FIELDS.items() if name in values}
    if values.get("internal.segment.bytes") is not None:  # Kafka 4.1: LogConfig.segmentSize()
        # Kafka takes any int; below a batch header's 14 bytes every append rolls there too
        changes["segment_bytes"] = max(values["internal.segment.bytes"], 14)
    if "compression.gzip.level" in values:
        changes["compression_levels"] = tuple(values[f"compression.{c}.level"] for c in ("gzip", "lz4", "zstd"))
    difference = values.get("message.timestamp.difference.max.ms", LONG_MAX)
    for field in ("timestamp_before_max_ms", "timestamp_after_max_ms"):
        # Kafka: LogConfig.getMessageTimestampBefore/AfterMaxMs -- the deprecated
        # message.timestamp.difference.max.ms applies while the new bound is left at its default
        if changes.get(field, LONG_MAX) == LONG_MAX and difference != LONG_MAX:
            changes[field] = difference
    if "cleanup_policy" in changes:
        changes["cleanup_policy"] = tuple(p.strip().lower() for p in changes["cleanup_policy"])
    if "log_append_time" in changes:
        changes["log_append_time"] = changes["log_append_time"] == "LogAppendTime"
    return dataclasses.replace(base, **changes)
