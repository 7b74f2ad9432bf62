"""DescribeConfigs entries as Kafka builds them (ConfigHelper.createTopicConfigEntry,
createBrokerConfigEntry, configSynonyms): value, source, read-only, sensitive, synonyms, type and
documentation; plain tuples, the API layer turns them into the response of its version."""

from __future__ import annotations

import functools
from enum import IntEnum
from typing import Any, Iterable, Mapping, NamedTuple

from .broker import BrokerConfigs
from .client_metrics import CLIENT_METRICS_CONFIGS, parse_list
from .catalogue import (INTERNAL_BROKER_CONFIGS, INTERNAL_TOPIC_CONFIGS, ConfigType, broker_configs, broker_synonyms,
                        dynamic, to_string, topic_configs)
from .topic import broker_value, effective


class ConfigSource(IntEnum):
    """DescribeConfigsResponse.ConfigSource."""
    UNKNOWN = 0
    TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6
    CLIENT_METRICS_CONFIG = 7
    GROUP_CONFIG = 8


class Synonym(NamedTuple):
    name: str
    value: str | None
    source: int


class Entry(NamedTuple):
    name: str
    value: str | None
    source: int
    read_only: bool
    sensitive: bool
    synonyms: tuple[Synonym, ...]
    config_type: int
    documentation: str | None


@functools.cache
def _release_defaults(release: str) -> dict[str, str]:
    return {k: v.default for k, v in broker_configs(release).items() if v.default is not None}


def _defaults(configs: BrokerConfigs) -> dict[str, str]:
    """Kafka: DynamicBrokerConfig.staticDefaultConfigs -- the emulated release's defaults that are not null."""
    return _release_defaults(configs.release)


def _wanted(names: Iterable[str], keys) -> list[str]:
    return [n for n in names if not keys or n in keys]


def _config_synonyms(configs: BrokerConfigs, name: str, sensitive: bool) -> list[Synonym]:
    """Kafka: ConfigHelper.configSynonyms -- by layer, then by synonym; the list starts at ``name``."""
    layers = ((configs.per_broker, ConfigSource.DYNAMIC_BROKER_CONFIG),
              (configs.cluster_default, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
              (configs.static, ConfigSource.STATIC_BROKER_CONFIG), (_defaults(configs), ConfigSource.DEFAULT_CONFIG))
    found = [Synonym(s, None if sensitive else layer[s], int(source))
             for layer, source in layers for s in broker_synonyms(name) if s in layer]
    while found and found[0].name != name:  # dropWhile: e.g. log.retention.hours when describing .ms
        found.pop(0)
    return found


def topic_entries(overrides: Mapping[str, str], configs: BrokerConfigs, keys, synonyms: bool,
                  documentation: bool) -> list[Entry]:
    values = effective(overrides, configs.merged(), configs.release)
    entries = []
    catalogue = topic_configs(configs.release)
    listed = [n for n in sorted(catalogue) if n not in INTERNAL_TOPIC_CONFIGS or n in overrides]
    for name in _wanted(listed, keys):
        key = catalogue[name]
        value = None if key.sensitive else to_string(values[name], key.type)
        found = _config_synonyms(configs, key.synonym, key.sensitive) if key.synonym else []
        if name in overrides:
            found.insert(0, Synonym(name, value, int(ConfigSource.TOPIC_CONFIG)))
        source = found[0].source if found else int(ConfigSource.DEFAULT_CONFIG)
        entries.append(Entry(name, value, source, False, key.sensitive, tuple(found) if synonyms else (),
                             int(key.config_type), key.doc if documentation else None))
    return entries


def created_entries(overrides: Mapping[str, str], configs: BrokerConfigs) -> list[Entry]:
    """The configs CreateTopics answers for a new topic. In KRaft they come from the controller
    (KafkaConfigSchema.resolveEffectiveTopicConfig), not from ConfigHelper: the topic's own value,
    else the first of its broker synonyms (ServerTopicConfigSynonyms, in the topic config's unit)
    set for this broker, then cluster-wide, then statically, else the topic config's default; so a
    static log.roll.hours gives segment.ms its value as STATIC_BROKER_CONFIG where DescribeConfigs
    drops it (ConfigHelper.configSynonyms keeps only the synonyms from log.roll.ms on). Never
    read-only; no synonyms or documentation."""
    defaults = effective(overrides, {}, configs.release)
    layers = ((configs.per_broker, ConfigSource.DYNAMIC_BROKER_CONFIG),
              (configs.cluster_default, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
              (configs.static, ConfigSource.STATIC_BROKER_CONFIG))
    catalogue = topic_configs(configs.release)
    entries = []
    for name in sorted(catalogue):
        if name in INTERNAL_TOPIC_CONFIGS and name not in overrides:
            continue
        key = catalogue[name]
        value, source = defaults[name], ConfigSource.TOPIC_CONFIG if name in overrides else ConfigSource.DEFAULT_CONFIG
        if name not in overrides and key.synonym:
            found = next(((v[0], src) for layer, src in layers if (v := broker_value(key.synonym, layer))), None)
            if found is not None:
                value, source = found
        entries.append(Entry(name, None if key.sensitive else to_string(value, key.type), int(source), False,
                             key.sensitive, (), int(key.config_type), None))
    return entries


def broker_entries(configs: BrokerConfigs, resource_name: str, keys, synonyms: bool,
                   documentation: bool) -> list[Entry]:
    per_broker = bool(resource_name)
    if per_broker:  # Kafka: allConfigs(config) -- every non-internal config plus whatever was set
        merged = configs.merged()
        defaults = _defaults(configs)
        values: dict[str, Any] = {n: merged.get(n, defaults.get(n)) for n in broker_configs(configs.release)
                                  if n not in INTERNAL_BROKER_CONFIGS}
        values.update(merged)
    else:
        values = dict(configs.cluster_default)
    return [_broker_entry(configs, name, values[name], per_broker, synonyms, documentation)
            for name in _wanted(sorted(values), keys)]


# The broker's replication quotas (Kafka: DynamicConfig.Broker, QuotaConfigs.brokerQuotaConfigs): not
# KafkaConfig keys, yet KafkaConfig.configType knows their type, so they are described with their value.
BROKER_QUOTA_TYPES = {"leader.replication.throttled.rate": ConfigType.LONG,
                      "follower.replication.throttled.rate": ConfigType.LONG,
                      "replica.alter.log.dirs.io.max.bytes.per.second": ConfigType.LONG}


def _broker_entry(configs: BrokerConfigs, name: str, raw: str | None, per_broker: bool, synonyms: bool,
                  documentation: bool) -> Entry:
    key = broker_configs(configs.release).get(name)
    if key is None and name in BROKER_QUOTA_TYPES:
        found = [s for s in _config_synonyms(configs, name, False)
                 if per_broker or s.source == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG]
        # not in DynamicBrokerConfig.AllDynamicConfigs, so read-only as Kafka describes it; no KafkaConfig doc
        return Entry(name, raw, found[0].source if found else int(ConfigSource.DEFAULT_CONFIG), True, False,
                     tuple(found) if synonyms else (), int(BROKER_QUOTA_TYPES[name]), None)
    sensitive = key is None or key.sensitive  # KafkaConfig.maybeSensitive: an unknown type may hide a secret
    value = None if sensitive or raw is None else (raw if key.type == "string" else key.render(raw))
    found = [s for s in _config_synonyms(configs, name, sensitive)
             if per_broker or s.source == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG]
    source = found[0].source if found else int(ConfigSource.DEFAULT_CONFIG)
    return Entry(name, value, source, not dynamic(name, configs.release), sensitive, tuple(found) if synonyms else (),
                 int(key.config_type) if key else int(ConfigType.UNKNOWN),
                 key.doc if documentation and key else None)


def logger_entries(levels: Mapping[str, str], keys) -> list[Entry]:
    return [Entry(name, levels[name], int(ConfigSource.DYNAMIC_BROKER_LOGGER_CONFIG), False, False, (),
                  int(ConfigType.UNKNOWN), None) for name in _wanted(sorted(levels), keys)]


def group_entries(described, keys, synonyms: bool = False) -> list[Entry]:
    """A GROUP resource: its consumer, share and streams group configs, GROUP_CONFIG (also the one synonym)
    where set for the group, else the broker's value as DEFAULT_CONFIG (Kafka:
    ConfigHelper.createGroupConfigEntry; no broker config bears these names, so nothing else)."""
    types = {"share.auto.offset.reset": ConfigType.STRING, "share.isolation.level": ConfigType.STRING}
    entries = []
    for name, value, own in sorted(described):
        if keys and name not in keys:
            continue
        source = int(ConfigSource.GROUP_CONFIG if own else ConfigSource.DEFAULT_CONFIG)
        found = (Synonym(name, value, source),) if own and synonyms else ()
        entries.append(Entry(name, value, source, False, False, found, int(types.get(name, ConfigType.INT)), None))
    return entries


def client_metrics_entries(own: Mapping[str, str], keys, synonyms: bool, documentation: bool,
                           release: str) -> list[Entry]:
    """A CLIENT_METRICS subscription (Kafka: ConfigHelper). Before Kafka 4.1 only the keys it sets,
    as stored, untyped; from 4.1 (KAFKA-17516) every key, parsed and rendered (a list joined by
    commas), CLIENT_METRICS_CONFIG (also the one synonym) where set, else its default as DEFAULT_CONFIG."""
    if release < "4.1":
        return [Entry(name, own[name], int(ConfigSource.CLIENT_METRICS_CONFIG), False, False, (),
                      int(ConfigType.UNKNOWN), None) for name in _wanted(sorted(own), keys)]
    entries = []
    for name in _wanted(sorted(CLIENT_METRICS_CONFIGS), keys):
        key = CLIENT_METRICS_CONFIGS[name]
        raw = own.get(name, key.default)
        value = ",".join(parse_list(raw)) if key.type == ConfigType.LIST else str(int(raw.strip()))
        source = int(ConfigSource.CLIENT_METRICS_CONFIG if name in own else ConfigSource.DEFAULT_CONFIG)
        found = (Synonym(name, value, source),) if name in own and synonyms else ()
        entries.append(Entry(name, value, source, False, False, found, int(key.type),
                             key.doc if documentation else None))
    return entries
