"""CLIENT_METRICS config resources: KIP-714's named subscriptions (``metrics``, ``interval.ms``,
``match``), stored as Kafka's controller stores them whether or not a telemetry receiver is configured.

Set with IncrementalAlterConfigs (SET, DELETE; APPEND/SUBTRACT are INVALID_CONFIG, the controller's
schema knows no list type for them) or AlterConfigs (the resource's whole set). Validation follows
ClientMetricsConfigs.validate, run by the controller (ControllerConfigurationValidator) on the
resource's whole resulting set: an empty name and an unknown key are INVALID_REQUEST, then every
value is parsed (Kafka 4.0+: ConfigDef.parse, a bad ``interval.ms`` is INVALID_CONFIG "Not a number of
type INT"; Kafka 3.9 parsed it with Integer.parseInt, so a bad one was UNKNOWN_SERVER_ERROR), an
``interval.ms`` outside 100..3600000 is INVALID_REQUEST, and each ``match`` pattern must be
``selector=regex`` with one of the six selectors and a regex that compiles, else INVALID_CONFIG
"Illegal client matching pattern: ..". Deleting a subscription's last key removes it.

Described as Kafka's ConfigHelper does: up to Kafka 4.0 only the keys set, CLIENT_METRICS_CONFIG,
without a type; from 4.1 (KAFKA-17516) all three keys, the unset ones with their defaults as
DEFAULT_CONFIG, typed, with the one CLIENT_METRICS_CONFIG synonym where set.

Every subscription lives in ``client-metrics-configs.json`` beside the cluster metadata, replaced
atomically (fsynced) on each change, so they survive kill -9 as the other dynamic configs do.
The regexes are checked with Python's ``re`` in place of java.util.regex: the two agree on the common
syntax; a construct only one of them knows is judged by Python's. They are matched against clients
with RE2 (linear time) instead: a backtracking matcher let one subscription such as
``client_id=(a|a)*$`` and a 25-byte client id hold the event loop for minutes (Kafka's Java matcher
ties up one request thread the same way). A pattern RE2 cannot run (a backreference, a lookaround)
matches no client.
"""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path
from typing import NamedTuple

import re2

from .. import regexes
from ..errors import ErrorCode, KafkaError
from ..storage import fs
from .admin import apply_ops
from .catalogue import ConfigType


class MetricsKey(NamedTuple):
    type: ConfigType
    default: str
    doc: str


# Kafka: ClientMetricsConfigs.CONFIG, in its definition order (ConfigDef.parse walks them so), with
# the documentation of the releases that describe it (4.1+, KAFKA-17516)
CLIENT_METRICS_CONFIGS: dict[str, MetricsKey] = {
    "metrics": MetricsKey(ConfigType.LIST, "", "Telemetry metric name prefix list"),
    "interval.ms": MetricsKey(ConfigType.INT, "300000", "Metrics push interval in milliseconds"),
    "match": MetricsKey(ConfigType.LIST, "", "Client match criteria"),
}
MATCH_SELECTORS = frozenset({"client_instance_id", "client_id", "client_software_name", "client_software_version",
                             "client_source_address", "client_source_port"})
MIN_INTERVAL_MS, MAX_INTERVAL_MS = 100, 3_600_000


def _java_split(text: str, sep: str) -> list[str]:
    """String.split(regex) with no limit: trailing empty strings are dropped."""
    parts = re.split(sep, text)
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()
    return parts


def parse_list(raw: str) -> list[str]:
    """Kafka: ConfigDef.parseType for LIST."""
    trimmed = raw.strip()
    return [] if not trimmed else re.split(r"\s*,\s*", trimmed)


def _parse_int(name: str, raw: str, release: str) -> int:
    text = raw if release < "4.0" else raw.strip()  # Integer.parseInt, or ConfigDef's trimmed parse
    if re.fullmatch(r"[+-]?[0-9]+", text) and -2**31 <= int(text) < 2**31:
        return int(text)
    if release < "4.0":  # the NumberFormatException reached the controller unmapped
        raise KafkaError(ErrorCode.unknown_server_error, None)
    raise KafkaError(ErrorCode.invalid_config, f"Invalid value {raw} for configuration {name}: Not a number of type INT")


def _check_pattern(pattern: str) -> None:
    """Kafka: ClientMetricsConfigs.parseMatchingPatterns."""
    pair = _java_split(pattern, "=")
    illegal = KafkaError(ErrorCode.invalid_config, f"Illegal client matching pattern: {pattern}")
    if len(pair) != 2 or pair[0].strip() not in MATCH_SELECTORS:
        raise illegal
    try:
        re.compile(pair[1].strip())
    except (re.error, OverflowError, RecursionError):
        # a repetition past 2^32 (java.util.regex: "Illegal repetition range") or groups nested past
        # what Python's parser recurses into: refused, not an internal error
        raise illegal from None


def validate(name: str, configs: dict[str, str], release: str) -> None:
    """Kafka: ClientMetricsConfigs.validate on the subscription's whole resulting set."""
    if not name:
        raise KafkaError(ErrorCode.invalid_request, "Subscription name can't be empty")
    for key in sorted(configs):
        if key not in CLIENT_METRICS_CONFIGS:
            raise KafkaError(ErrorCode.invalid_request, f"Unknown client metrics configuration: {key}")
    if "interval.ms" in configs:
        interval = _parse_int("interval.ms", configs["interval.ms"], release)
        if not MIN_INTERVAL_MS <= interval <= MAX_INTERVAL_MS:
            raise KafkaError(ErrorCode.invalid_request, f"Invalid value {interval} for interval.ms, interval must "
                                                        "be between 100 and 3600000 (1 hour)")
    if "match" in configs:
        raw = configs["match"]
        # Kafka 3.9 split the raw value on commas; 4.0 parses it as a LIST (trimmed, "" is no pattern)
        for pattern in (_java_split(raw, ",") if release < "4.0" else parse_list(raw)):
            _check_pattern(pattern)


class ClientMetricsConfigs:
    """Every CLIENT_METRICS subscription's configs, as the emulated ``release`` validates them."""

    def __init__(self, path: Path | None, release: str) -> None:
        self.path = path
        self.release = release
        self.subscriptions: dict[str, dict[str, str]] = {}
        self.version = 0  # Kafka: ClientMetricsManager.subscriptionUpdateVersion, up on each change
        if path is not None and path.exists():
            self.subscriptions = json.loads(path.read_text())

    def names(self) -> list[str]:
        return sorted(self.subscriptions)

    def own(self, name: str) -> dict[str, str]:
        return dict(self.subscriptions.get(name, {}))

    def alter(self, name: str, ops, validate_only: bool, incremental: bool = True) -> None:
        """IncrementalAlterConfigs (SET, DELETE) or AlterConfigs (the ops, all SET, become the
        subscription's whole set) on CLIENT_METRICS ``name``."""
        configs = apply_ops(self.own(name) if incremental else {}, ops, {}, lambda _name: None)
        validate(name, configs, self.release)
        if validate_only:
            return
        subscriptions = {n: c for n, c in self.subscriptions.items() if n != name}
        if configs:  # a subscription whose last key is deleted is gone (ClientMetricsManager.updateSubscription)
            subscriptions[name] = configs
        if self.path is not None:
            fs.atomic_write(self.path, json.dumps(subscriptions, sort_keys=True).encode())
        if subscriptions != self.subscriptions:
            self.version += 1
        self.subscriptions = subscriptions

    def matching(self, attributes: dict[str, str | None]) -> tuple[tuple[str, ...], int]:
        """(the metrics, the push interval) of every subscription a client with these attributes
        matches (Kafka: ClientMetricsManager.createClientInstance): the metrics as Java's HashSet
        iterates them, only ``*`` if one subscription asks for all, the shortest interval (at most the
        default); a subscription without ``match`` matches every client."""
        interval, metrics, everything = int(CLIENT_METRICS_CONFIGS["interval.ms"].default), [], False
        for name in sorted(self.subscriptions):
            configs = self.subscriptions[name]
            if not _matches(parse_list(configs.get("match", "")), attributes):
                continue
            wanted = parse_list(configs.get("metrics", ""))
            everything = everything or "*" in wanted
            metrics.extend(m for m in wanted if m not in metrics)
            interval = min(interval, int(configs.get("interval.ms", interval)))
        return java_hash_set_order(["*"] if everything else metrics), interval


def _matches(patterns: list[str], attributes: dict[str, str | None]) -> bool:
    """Kafka: ClientMetricsInstanceMetadata.isMatch -- every selector's regex matches the whole attribute."""
    for pattern in patterns:
        selector, _, regex = pattern.partition("=")
        value = attributes.get(selector.strip())
        pattern = _matcher(regex.strip())
        if value is None or pattern is None or pattern.fullmatch(value) is None:
            return False
    return True


_RE2_OPTIONS = regexes.options()  # as a subscription regex's


def _compile(regex: str):
    """The compiled ``match`` regex, or None where RE2 cannot run it in linear time."""
    try:
        return regexes.compile(regex, _RE2_OPTIONS)
    except re2.error:
        return None


_matcher = regexes.RegexCache(_compile)  # within a byte budget (shim.regexes)


def _java_string_hash(text: str) -> int:
    h = 0
    for unit in struct.unpack(f"<{len(text.encode('utf-16-le')) // 2}H", text.encode("utf-16-le")):
        h = (31 * h + unit) & 0xFFFFFFFF
    return h


def java_hash_set_order(items: list[str]) -> tuple[str, ...]:
    """The order a java.util.HashSet built by adding ``items`` (distinct) iterates them: by bucket of
    the spread String.hashCode in the table it has grown to, then by insertion."""
    capacity = 16
    while len(items) > capacity * 3 // 4:
        capacity *= 2
    def bucket(text: str) -> int:
        h = _java_string_hash(text)
        return (h ^ (h >> 16)) & (capacity - 1)
    return tuple(sorted(items, key=lambda t: (bucket(t), items.index(t))))
