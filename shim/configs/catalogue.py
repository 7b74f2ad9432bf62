"""Every topic and broker config Apache Kafka 3.9 defines, with Kafka's types, defaults and validators, and
what 4.0 and 4.1 changed (``topic_configs(release)``, ``broker_configs(release)``).

The table is ``kafka39.json``, generated from Kafka's own config reference (see ``generate.py``); the later
releases are deltas taken from their references (the broker configs they add: ``kafka4x.json``);
this module gives it Kafka's semantics: ``ConfigDef.parseType`` for each type, the validators the
reference names (``Range``, ``ValidString``, ``ValidList``, ``NonEmptyString`` ...), with the
messages of Kafka's ``ConfigException`` ("Invalid value X for configuration Y: Z"), and
``ConfigDef.convertToString`` for the values DescribeConfigs returns.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, replace
from enum import IntEnum
from pathlib import Path
from typing import Any, Callable

from ..errors import ErrorCode, KafkaError

LONG_MAX = (1 << 63) - 1
_INT_BOUNDS = {"short": 16, "int": 32, "long": 64}


class ConfigType(IntEnum):
    """DescribeConfigsResponse.ConfigType."""
    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


class ConfigError(ValueError):
    """Kafka's ConfigException: the message names the config, the value and the reason."""

    def __init__(self, name: str, value: Any, reason: str | None = None) -> None:
        super().__init__(f"Invalid value {value} for configuration {name}" + (f": {reason}" if reason else ""))

    def kafka(self) -> KafkaError:
        return KafkaError(ErrorCode.invalid_config, str(self))


@dataclass(frozen=True, slots=True)
class ConfigKey:
    name: str
    type: str  # boolean, string, int, short, long, double, list, class, password
    default: str | None  # as ConfigDef.convertToString renders it; None for a null default
    valid: str  # the "Valid Values" of Kafka's reference
    doc: str
    importance: str
    update_mode: str = "read-only"  # brokers: read-only, per-broker, cluster-wide (DynamicBrokerConfig)
    synonym: str | None = None  # topics: the broker property that supplies the default

    @property
    def config_type(self) -> ConfigType:
        return ConfigType[self.type.upper()]

    @property
    def sensitive(self) -> bool:
        return self.type == "password"  # KafkaConfig.maybeSensitive

    def parse(self, raw: str | None) -> Any:
        """The typed value of ``raw`` (ConfigDef.parseType), validated; ConfigError otherwise."""
        value = None if raw is None else _parse_type(self.name, raw, self.type)
        check = _validator(self.valid, self.type)
        if check is not None:
            check(self.name, value)
        return value

    def canonical(self, raw: str | None) -> str | None:
        """``raw`` parsed, validated and rendered back as Kafka renders the value."""
        return to_string(self.parse(raw), self.type)

    def render(self, raw: str) -> str | None:
        """``raw`` as Kafka renders a value it holds (no validation: defaults need not pass it)."""
        try:
            return to_string(_parse_type(self.name, raw, self.type), self.type)
        except ConfigError:
            return raw

    @property
    def default_value(self) -> Any:
        return None if self.default is None else _parse_type(self.name, self.default, self.type)


def _parse_type(name: str, raw: str, type_: str) -> Any:
    if type_ == "password":
        return raw
    text = raw.strip()
    if type_ in _INT_BOUNDS:
        bits = _INT_BOUNDS[type_]
        if not re.fullmatch(r"[+-]?\d+", text) or not -(1 << bits - 1) <= int(text) < 1 << bits - 1:
            raise ConfigError(name, raw, f"Not a number of type {type_.upper()}")
        return int(text)
    if type_ == "double":
        try:
            return float(text)
        except ValueError:
            raise ConfigError(name, raw, "Not a number of type DOUBLE") from None
    if type_ == "boolean":
        if text.lower() not in ("true", "false"):
            raise ConfigError(name, raw, "Expected value to be either true or false")
        return text.lower() == "true"
    if type_ == "list":
        return [] if not text else re.split(r"\s*,\s*", text)
    return text


def to_string(value: Any, type_: str) -> str | None:
    """ConfigDef.convertToString."""
    if value is None:
        return None
    if type_ == "list":
        return ",".join(value)
    if type_ == "boolean":
        return "true" if value else "false"
    if type_ == "double":
        return repr(float(value))
    return str(value)


_RANGE = re.compile(r"^\[(-?[\d.]+),\.\.\.(?:,(-?[\d.]+))?\]$")
_ONE_OF = re.compile(r"^(\(case insensitive\) )?\[([^\[\]]*)\]$")


def _validator(valid: str, type_: str) -> Callable[[str, Any], None] | None:
    m = _RANGE.match(valid)
    if m:
        return _range(m.group(1), m.group(2))
    if valid == "[1,...,9] or -1":  # GzipCompression.LevelValidator
        return _gzip_level
    if valid == "non-empty string":
        return _non_empty_string
    if valid == "non-empty list":
        return _non_empty_list
    if valid.startswith("[partitionId]:[brokerId]"):
        return _throttled_replicas
    m = _ONE_OF.match(valid)
    if m and "," in m.group(2):
        return _one_of([s.strip() for s in m.group(2).split(",")], type_ == "list", bool(m.group(1)))
    return None


def _range(low: str, high: str | None) -> Callable[[str, Any], None]:
    lo, hi = float(low), None if high is None else float(high)

    def check(name: str, value: Any) -> None:
        if value is None:
            raise ConfigError(name, value, "Value must be non-null")
        if value < lo:
            raise ConfigError(name, value, f"Value must be at least {low}")
        if hi is not None and value > hi:
            raise ConfigError(name, value, f"Value must be no more than {high}")
    return check


def _gzip_level(name: str, value: Any) -> None:
    if value is None or not (1 <= value <= 9 or value == -1):
        raise ConfigError(name, value, "Value must be between 1 and 9 or equal to -1")


def _non_empty_string(name: str, value: Any) -> None:
    if value is not None and not value.strip():
        raise ConfigError(name, value, "String must be non-empty")


def _non_empty_list(name: str, value: Any) -> None:
    if value is not None and not value:
        raise ConfigError(name, value, "Empty list not allowed")


def _throttled_replicas(name: str, value: Any) -> None:
    # ThrottledReplicaListValidator
    if value == ["*"] or all(re.fullmatch(r"\d+:\d+", v) for v in value or []):
        return
    raise ConfigError(name, ",".join(value), f"{name} must be the literal '*' or a list of replicas in the "
                      "following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...")


def _one_of(allowed: list[str], is_list: bool, case_insensitive: bool) -> Callable[[str, Any], None]:
    folded = {a.lower() for a in allowed} if case_insensitive else set(allowed)
    reason = ("String must be one of (case insensitive): " if case_insensitive else "String must be one of: ")
    reason += ", ".join(allowed)

    def check(name: str, value: Any) -> None:
        for v in (value or []) if is_list else [value]:
            if v is None or (v.lower() if case_insensitive else v) not in folded:
                raise ConfigError(name, v, reason)
    return check


def _load() -> tuple[dict[str, ConfigKey], dict[str, ConfigKey]]:
    data = json.loads((Path(__file__).with_name("kafka39.json")).read_text())
    topic = {e["name"]: ConfigKey(**e) for e in data["topic"]}
    broker = {e["name"]: ConfigKey(**e) for e in data["broker"]}
    return topic, broker


TOPIC_CONFIGS, BROKER_CONFIGS = _load()

# Broker configs Kafka defines as internal (ConfigDef.defineInternal), so its reference leaves them out:
# accepted and validated like the others, but DescribeConfigs lists one only where it is set
# (ConfigHelper.allConfigs: the originals plus the non-internal values). The producer-id expiration
# check runs at this interval (TransactionLogConfig; LogManager's PeriodicProducerExpirationCheck).
INTERNAL_BROKER_CONFIGS = {k.name: k for k in (
    ConfigKey("producer.id.expiration.check.interval.ms", "int", "600000", "[1,...]",
              "The interval at which to remove producer IDs that have expired due to "
              "<code>producer.id.expiration.ms</code> passing.", "low"),
)}
BROKER_CONFIGS.update(INTERNAL_BROKER_CONFIGS)

# Kafka: DynamicBrokerConfig.brokerConfigSynonyms -- the broker names that feed one value, most
# specific first (log.retention.ms over .minutes over .hours).
_SYNONYM_GROUPS = (
    ("log.roll.ms", "log.roll.hours"),
    ("log.roll.jitter.ms", "log.roll.jitter.hours"),
    ("log.retention.ms", "log.retention.minutes", "log.retention.hours"),
    ("log.flush.interval.ms", "log.flush.scheduler.interval.ms"),
)
_UNIT_MS = {"log.roll.hours": 3_600_000, "log.roll.jitter.hours": 3_600_000, "log.retention.minutes": 60_000,
            "log.retention.hours": 3_600_000}


def broker_synonyms(name: str) -> tuple[str, ...]:
    return next((g for g in _SYNONYM_GROUPS if name in g), (name,))


def unit_ms(name: str) -> int:
    """How many ms one unit of ``name`` is (log.retention.hours -> 3600000); 1 otherwise."""
    return _UNIT_MS.get(name, 1)


# The deltas of later releases, from Kafka's own config references (apache/kafka-site 40/ and 41/generated/
# kafka_config.html, topic_config.html): release -> what that release changed against the one before it.

# Broker configs a later release added: release -> keys (``kafka4x.json``, with their documentation). 4.0 brings
# the share coordinator's (KIP-932), group.consumer.migration.policy, remote.list.offsets.request.timeout.ms and
# the add.partitions.to.txn.retry.backoff pair; 4.1 the group.streams.* (KIP-1071), group.share.assignors and
# max.share.sessions, the OAuth assertion configs (KIP-1139) and transaction.two.phase.commit.enable (KIP-939).
# Kafka 4.1 also defines internal ones (defineInternal): group.share.initialize.retry.interval.ms
# (GroupCoordinatorConfig, KAFKA-19457) and share.coordinator.cold.partition.snapshot.interval.ms
# (ShareCoordinatorConfig): read-only, and described only where set, as ConfigHelper.allConfigs lists the
# originals and the non-internal values.
def _load_added() -> dict[str, tuple[ConfigKey, ...]]:
    data = json.loads((Path(__file__).with_name("kafka4x.json")).read_text())
    return {release: tuple(ConfigKey(**e) for e in entries) for release, entries in data["broker"].items()}


BROKER_ADDED_FROM = _load_added()
_INTERNAL_4_1 = (ConfigKey("group.share.initialize.retry.interval.ms", "int", "30000", "[1,...]",
                           "Time elapsed before retrying initialize share group state request. If below "
                           "offsets.commit.timeout.ms, then value of offsets.commit.timeout.ms is used.", "low"),
                 ConfigKey("share.coordinator.cold.partition.snapshot.interval.ms", "int", "300000", "[1,...]",
                           "The duration in milliseconds that the share coordinator will wait between force "
                           "snapshotting share partitions which are not being updated.", "low"))
BROKER_ADDED_FROM["4.1"] += _INTERNAL_4_1
INTERNAL_BROKER_CONFIGS = {**INTERNAL_BROKER_CONFIGS, **{k.name: k for k in _INTERNAL_4_1}}

# Configs a later release removed: release -> names. Kafka 4.0 dropped the message format settings (KIP-724,
# with down-conversion: KIP-896), message.timestamp.difference.max.ms (KIP-937), offsets.commit.required.acks
# (KIP-1041), delegation.token.master.key, and with ZooKeeper (KIP-833) every zookeeper.* config, the migration,
# the broker id generation, the control plane listener, controlled shutdown retries, the password encoder,
# inter.broker.protocol.version (metadata.version instead) and eligible.leader.replicas.enable (the
# eligible.leader.replicas.version feature instead), with auto.include.jmx.reporter (KIP-830: metric.reporters
# names JmxReporter). 4.1 dropped group.share.max.groups. Topics refuse them as unknown names; brokers keep them
# as any unknown property (and warn); DescribeConfigs no longer lists them.
REMOVED_FROM = {
    "4.0": frozenset({
        "message.format.version", "message.downconversion.enable", "message.timestamp.difference.max.ms",
        "log.message.format.version", "log.message.downconversion.enable", "log.message.timestamp.difference.max.ms",
        "offsets.commit.required.acks", "delegation.token.master.key", "auto.include.jmx.reporter",
        "broker.id.generation.enable", "reserved.broker.max.id", "control.plane.listener.name",
        "controlled.shutdown.max.retries", "controlled.shutdown.retry.backoff.ms", "inter.broker.protocol.version",
        "eligible.leader.replicas.enable", "leader.imbalance.per.broker.percentage",
        *(n for n in BROKER_CONFIGS if n.startswith(("zookeeper.", "password.encoder."))),
    }),
    "4.1": frozenset({"group.share.max.groups"}),
}

# Config defaults a later release changed: release -> {name: default}; None: no default any more (a required
# config, ConfigDef.NO_DEFAULT_VALUE: KRaft's node.id and process.roles). KIP-1030 (Kafka 4.0): records stamped
# more than an hour ahead of the broker are refused, log recovery runs two threads per directory, four group
# coordinator threads; KIP-848 went GA in 4.0, its consumer protocol enabled by default (GroupCoordinatorConfig);
# KIP-830: JmxReporter is named by metric.reporters; TLSv1.3 by default now that Java 11 is the least.
DEFAULTS_FROM = {
    "4.0": {"node.id": None, "process.roles": None, "log.message.timestamp.after.max.ms": "3600000",
            "message.timestamp.after.max.ms": "3600000",  # the topic's, as its broker synonym's
            "num.recovery.threads.per.data.dir": "2", "group.coordinator.threads": "4",
            "group.coordinator.rebalance.protocols": "classic,consumer", "group.coordinator.append.linger.ms": "5",
            "group.consumer.assignors": "uniform,range", "metric.reporters": "org.apache.kafka.common.metrics.JmxReporter",
            "ssl.enabled.protocols": "TLSv1.2,TLSv1.3", "ssl.protocol": "TLSv1.3",
            "remote.log.manager.thread.pool.size": "2", "remote.log.manager.copier.thread.pool.size": "10",
            "remote.log.manager.expiration.thread.pool.size": "10"},
    "4.1": {"group.coordinator.rebalance.protocols": "classic,consumer,streams",
            "group.share.partition.max.record.locks": "2000", "share.coordinator.append.linger.ms": "5"},
}

# Validators a later release changed: release -> {name: valid values}. KIP-1030: segments of at least 1 MiB
# (LogConfig: atLeast(1024 * 1024)), in Kafka 4.0 for the broker's log.segment.bytes only (KAFKA-16368), in 4.1
# for the topic's segment.bytes too (KAFKA-19080); 4.1 also bounds the KRaft timeouts and metadata segments.
VALID_FROM = {
    "4.0": {"log.segment.bytes": "[1048576,...]", "node.id": "[0,...]",
            "group.coordinator.rebalance.protocols": "[consumer, classic]", "group.share.max.size": "[1,...,1000]",
            "group.share.record.lock.duration.ms": "[1000,...,3600000]",
            "remote.log.manager.copier.thread.pool.size": "[1,...]",
            "remote.log.manager.expiration.thread.pool.size": "[1,...]"},
    "4.1": {"segment.bytes": "[1048576,...]", "metadata.log.segment.bytes": "[8388608,...]",
            "group.coordinator.rebalance.protocols": "[consumer, classic, share, streams]",
            **dict.fromkeys(("controller.quorum.election.backoff.max.ms", "controller.quorum.election.timeout.ms",
                             "controller.quorum.fetch.timeout.ms", "controller.quorum.append.linger.ms",
                             "controller.quorum.request.timeout.ms", "controller.quorum.retry.backoff.ms"),
                            "[0,...]")},
}

# Update modes a later release changed (DynamicBrokerConfig): release -> {name: mode}. KRaft brokers cannot change
# the addresses they registered with, so 4.0 took advertised.listeners out of DynamicListenerConfig's
# reconfigurable configs (KAFKA-18405); 4.0's remote log manager resizes its thread pools at runtime.
UPDATE_MODES_FROM = {"4.0": {"advertised.listeners": "read-only", "remote.log.reader.threads": "cluster-wide",
                             "remote.log.manager.copier.thread.pool.size": "cluster-wide",
                             "remote.log.manager.expiration.thread.pool.size": "cluster-wide"}}

# Types and importances a later release changed: release -> {name: {field: value}}.
KEYS_FROM = {"4.0": {"group.share.max.size": {"type": "int"}, "group.coordinator.threads": {"importance": "high"}}}


# Topic configs a later release added: release -> keys. Kafka 4.1 (KAFKA-19080) defines the internal
# internal.segment.bytes, an INT without default or validator that replaces segment.bytes when set, so that
# tests keep small segments under the 1 MiB minimum; DescribeConfigs lists it only where it is set.
ADDED_FROM = {"4.1": (ConfigKey("internal.segment.bytes", "int", None, "",
                                "Segment size in bytes that replaces segment.bytes when set; for tests only.",
                                "medium"),)}
INTERNAL_TOPIC_CONFIGS = frozenset({"internal.segment.bytes"})


def _since(deltas: dict[str, dict], release: str) -> dict:
    """The changes of every release up to ``release``, a later one winning."""
    out: dict = {}
    for since, changes in sorted(deltas.items()):
        if release >= since:
            out.update(changes)
    return out


@functools.cache
def _release_catalogue(kind: str, release: str) -> dict[str, ConfigKey]:
    base = dict(TOPIC_CONFIGS if kind == "topic" else BROKER_CONFIGS)
    for since, keys in sorted((ADDED_FROM if kind == "topic" else BROKER_ADDED_FROM).items()):
        if release >= since:
            base.update((k.name, k) for k in keys)
    removed = set().union(*(names for since, names in REMOVED_FROM.items() if release >= since))
    changes: dict[str, dict[str, Any]] = {}
    for field, deltas in (("valid", VALID_FROM), ("default", DEFAULTS_FROM), ("update_mode", UPDATE_MODES_FROM)):
        for name, value in _since(deltas, release).items():
            changes.setdefault(name, {})[field] = value
    for name, fields in _since(KEYS_FROM, release).items():
        changes.setdefault(name, {}).update(fields)
    if kind == "topic":  # topics have no update modes; the types and importances named are brokers'
        changes = {n: {f: v for f, v in c.items() if f in ("valid", "default")} for n, c in changes.items()}
    return {n: replace(k, **changes[n]) if n in changes else k for n, k in base.items() if n not in removed}


def topic_configs(release: str = "3.9") -> dict[str, ConfigKey]:
    """The topic configs the emulated ``release`` defines, with its validators."""
    return _release_catalogue("topic", release)


def broker_configs(release: str = "3.9") -> dict[str, ConfigKey]:
    """The broker configs the emulated ``release`` defines (its internal ones among them), with its types,
    defaults, validators and update modes."""
    return _release_catalogue("broker", release)


@functools.cache
def release_defaults(release: str = "3.9") -> dict[str, str | None]:
    """The broker config defaults of the emulated ``release`` that differ from 3.9's (or that 3.9 lacks);
    None where the release has none (a required config)."""
    catalogue = broker_configs(release)
    return {n: k.default for n, k in catalogue.items()
            if n not in BROKER_CONFIGS or BROKER_CONFIGS[n].default != k.default}


def dynamic(name: str, release: str = "3.9") -> bool:
    """Whether a broker config can be changed at runtime (DynamicBrokerConfig.ALL_DYNAMIC_CONFIGS)
    under the emulated ``release``."""
    key = broker_configs(release).get(name)
    return key is not None and key.update_mode != "read-only"
