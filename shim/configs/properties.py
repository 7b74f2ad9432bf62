"""Broker settings by Kafka's property names (server.properties, ``--override``) and back.

``BrokerConfig`` keeps one typed field per setting the shim acts on; each maps to the Kafka
property that sets it. Every other Kafka broker property is accepted, validated as Kafka does,
kept in ``BrokerConfig.extra`` and described as a static broker config; the topic-level ones
among them (``compression.type``, ``log.message.timestamp.type``, ``log.roll.ms`` ...) become the
defaults of topics that do not override them.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any, Callable, NamedTuple

from ..config import BrokerConfig
from .catalogue import BROKER_CONFIGS, ConfigError, broker_configs, broker_synonyms, to_string, unit_ms

log = logging.getLogger(__name__)


class FieldProperty(NamedTuple):
    prop: str
    field: str
    to_field: Callable[[Any], Any]
    from_field: Callable[[BrokerConfig], str | None]


OAUTHBEARER = ("jwks.endpoint.url", "expected.audience", "expected.issuer", "sub.claim.name", "scope.claim.name",
               "clock.skew.seconds")


def _same(name: str) -> FieldProperty:
    field = {"auto.create.topics.enable": "auto_create_topics", "num.partitions": "num_partitions",
             "socket.request.max.bytes": "max_request_bytes", "message.max.bytes": "max_message_bytes",
             "log.segment.bytes": "segment_bytes", "log.index.interval.bytes": "index_interval_bytes",
             "log.retention.bytes": "retention_bytes", "log.retention.check.interval.ms": "retention_check_interval_ms",
             "transaction.max.timeout.ms": "transaction_max_timeout_ms",
             "transaction.abort.timed.out.transaction.cleanup.interval.ms": "transaction_abort_check_interval_ms",
             "transactional.id.expiration.ms": "transactional_id_expiration_ms",
             "transaction.remove.expired.transaction.cleanup.interval.ms": "transaction_remove_expired_check_interval_ms",
             "producer.id.expiration.ms": "producer_id_expiration_ms",
             "producer.id.expiration.check.interval.ms": "producer_id_expiration_check_interval_ms",
             "offsets.retention.minutes": "offsets_retention_minutes",
             "offsets.retention.check.interval.ms": "offsets_retention_check_interval_ms",
             "group.initial.rebalance.delay.ms": "group_initial_rebalance_delay_ms",
             "group.min.session.timeout.ms": "group_min_session_timeout_ms",
             "group.max.session.timeout.ms": "group_max_session_timeout_ms",
             "group.consumer.session.timeout.ms": "group_consumer_session_timeout_ms",
             "group.consumer.heartbeat.interval.ms": "group_consumer_heartbeat_interval_ms",
             "offsets.topic.num.partitions": "offsets_topic_num_partitions",
             "max.connections": "max_connections", "max.connections.per.ip": "max_connections_per_ip",
             "max.connections.per.ip.overrides": "max_connections_per_ip_overrides",
             "connections.max.idle.ms": "connections_max_idle_ms",
             "transaction.state.log.num.partitions": "transaction_state_num_partitions",
             "listener.security.protocol.map": "listener_security_protocol_map",
             "ssl.keystore.location": "ssl_keystore_location", "ssl.keystore.type": "ssl_keystore_type",
             "ssl.keystore.key": "ssl_keystore_key", "ssl.keystore.certificate.chain": "ssl_keystore_certificate_chain",
             "ssl.key.password": "ssl_key_password", "ssl.truststore.location": "ssl_truststore_location",
             "ssl.truststore.type": "ssl_truststore_type", "ssl.truststore.certificates": "ssl_truststore_certificates",
             "ssl.client.auth": "ssl_client_auth", "ssl.keystore.password": "ssl_keystore_password",
             "ssl.truststore.password": "ssl_truststore_password",
             "ssl.principal.mapping.rules": "ssl_principal_mapping_rules",
             "sasl.enabled.mechanisms": "sasl_enabled_mechanisms",
             "connections.max.reauth.ms": "connections_max_reauth_ms",
             "replica.lag.time.max.ms": "replica_lag_time_max_ms",
             "authorizer.class.name": "authorizer_class_name",
             **{f"sasl.oauthbearer.{p}": "sasl_oauthbearer_" + p.replace(".", "_") for p in OAUTHBEARER}}[name]
    type_ = BROKER_CONFIGS[name].type
    if field in ("ssl_keystore_type", "ssl_truststore_type"):  # empty: not set, Kafka's default (JKS) or PEM
        return FieldProperty(name, field, lambda v: v, lambda c: getattr(c, field) or None)
    if type_ == "list":  # list fields keep Kafka's text, both ways
        return FieldProperty(name, field, lambda v: ",".join(v), lambda c: getattr(c, field))
    return FieldProperty(name, field, lambda v: v, lambda c: to_string(getattr(c, field), type_))


FIELD_PROPERTIES: tuple[FieldProperty, ...] = (
    FieldProperty("listeners", "listeners", str, lambda c: c.listeners or f"PLAINTEXT://{c.listen}"),
    FieldProperty("advertised.listeners", "advertised_listeners", str, lambda c: c.advertised_listeners or (
        c.advertised_host and f"PLAINTEXT://{c.advertised_host}:{c.host_port()[1]}")),
    FieldProperty("log.dirs", "data_dir", lambda v: Path(v.split(",")[0]), lambda c: str(c.data_dir)),
    FieldProperty("log.dir", "data_dir", Path, lambda c: None),
    FieldProperty("node.id", "node_id", int, lambda c: str(c.node_id)),
    FieldProperty("broker.id", "node_id", int, lambda c: str(c.node_id)),
    FieldProperty("log.retention.ms", "retention_ms", int, lambda c: str(c.retention_ms)),
    FieldProperty("log.flush.interval.messages", "fsync", lambda v: "always" if v == 1 else "never",
                  lambda c: "1" if c.fsync == "always" else None),
    *(_same(n) for n in (
        "auto.create.topics.enable", "num.partitions", "socket.request.max.bytes", "message.max.bytes",
        "log.segment.bytes", "log.index.interval.bytes", "log.retention.bytes", "log.retention.check.interval.ms",
        "transaction.max.timeout.ms", "transaction.abort.timed.out.transaction.cleanup.interval.ms",
        "transactional.id.expiration.ms", "transaction.remove.expired.transaction.cleanup.interval.ms",
        "producer.id.expiration.ms", "producer.id.expiration.check.interval.ms",
        "offsets.retention.minutes", "offsets.retention.check.interval.ms",
        "group.initial.rebalance.delay.ms", "group.min.session.timeout.ms", "group.max.session.timeout.ms",
        "group.consumer.session.timeout.ms", "group.consumer.heartbeat.interval.ms",
        "offsets.topic.num.partitions", "transaction.state.log.num.partitions", "max.connections",
        "max.connections.per.ip", "max.connections.per.ip.overrides", "connections.max.idle.ms",
        "listener.security.protocol.map", "ssl.keystore.location", "ssl.keystore.type", "ssl.keystore.key",
        "ssl.keystore.certificate.chain", "ssl.key.password", "ssl.truststore.location", "ssl.truststore.type",
        "ssl.truststore.certificates", "ssl.client.auth", "ssl.keystore.password", "ssl.truststore.password",
        "ssl.principal.mapping.rules", "sasl.enabled.mechanisms", "connections.max.reauth.ms",
        "replica.lag.time.max.ms", "authorizer.class.name", *(f"sasl.oauthbearer.{p}" for p in OAUTHBEARER))),
)
# Settings of the authorizer rather than of KafkaConfig (Kafka hands every property to the
# authorizer's configure): not in KafkaConfig's catalogue, read into their fields all the same.
AUTHORIZER_PROPERTIES: dict[str, tuple[str, Callable[[str], Any]]] = {
    "super.users": ("super_users", str.strip),
    "allow.everyone.if.no.acl.found": ("allow_everyone_if_no_acl_found", lambda v: v.strip().lower() == "true"),
}
_BY_PROP = {fp.prop: fp for fp in FIELD_PROPERTIES}
ALWAYS_SHOWN = ("listeners", "log.dirs", "node.id", "broker.id")  # set by every kafka-shim


def canonical_properties(props: dict[str, str], release: str = "3.9") -> dict[str, str]:
    """Kafka's validation of each property the emulated ``release`` defines (ValueError with Kafka's
    message otherwise); any other is kept as given, with the warning Kafka logs for it
    (AbstractConfig.logUnused)."""
    catalogue = broker_configs(release)
    out = {}
    for name, raw in props.items():
        key = catalogue.get(name)
        if key is None and name in AUTHORIZER_PROPERTIES:
            out[name] = raw
            continue
        if key is None:
            log.warning("the configuration '%s' was supplied but is not a known config", name)
            out[name] = raw
            continue
        try:
            out[name] = raw if key.type == "password" else key.canonical(raw)
        except ConfigError as e:
            raise ValueError(str(e)) from None
    return out


def fields_from_properties(props: dict[str, str]) -> dict[str, Any]:
    """BrokerConfig field values set by these (canonical) properties."""
    fields: dict[str, Any] = {}
    for name, raw in props.items():
        if name in AUTHORIZER_PROPERTIES:
            field, parse = AUTHORIZER_PROPERTIES[name]
            fields[field] = parse(raw)
        fp = _BY_PROP.get(name)
        if fp is not None and name != "log.retention.ms":
            fields[fp.field] = fp.to_field(BROKER_CONFIGS[name].parse(raw))
    if "listeners" in fields:  # `listen` names the first listener, as --listen names the one PLAINTEXT listener
        address = fields["listeners"].split(",")[0].strip().partition("://")[2]
        if address.rpartition(":")[2].isdigit():  # else BrokerConfig refuses the listeners with their own message
            fields["listen"] = address
    for name in reversed(broker_synonyms("log.retention.ms")):  # the most specific wins
        if name in props:
            fields["retention_ms"] = BROKER_CONFIGS[name].parse(props[name]) * unit_ms(name)
    return fields


def config_from_properties(props: dict[str, str], base: BrokerConfig | None = None,
                           release: str | None = None) -> BrokerConfig:
    """``release``: the Kafka release whose configs the properties are checked against (``base``'s)."""
    props = canonical_properties(props, release or (base or BrokerConfig()).kafka_version)
    fields = fields_from_properties(props)
    base = base or BrokerConfig()
    return base.replace(**fields, extra={**base.extra, **props})


def unapplied_properties(config: BrokerConfig) -> list[str]:
    """Properties in ``config.extra`` that name a BrokerConfig field holding another value: given
    as ``BrokerConfig(extra={...})`` they would silently do nothing (config_from_properties sets
    the fields from them; a BrokerConfig built by hand must set the fields itself)."""
    wrong = []
    for name, raw in config.extra.items():
        fp = _BY_PROP.get(name)
        if fp is None or name not in BROKER_CONFIGS or name == "log.dir":
            continue
        try:
            value = fields_from_properties({name: BROKER_CONFIGS[name].canonical(raw)})
        except (ConfigError, ValueError):
            continue  # refused with Kafka's message where the broker reads it
        field_value = value.get(fp.field)
        if fp.field in value and getattr(config, fp.field) != field_value:
            wrong.append(f"{name}={raw!r} (set the field {fp.field}={field_value!r}, or use config_from_properties)")
    return wrong


def static_properties(config: BrokerConfig) -> dict[str, str]:
    """The broker's static settings by Kafka's names: what was given by name, and each field that
    differs from Kafka's default (kafka-shim's own defaults, e.g. log.segment.bytes, count as set)."""
    given = dict(config.extra)
    out: dict[str, str] = {}
    for fp in FIELD_PROPERTIES:
        value = fp.from_field(config)
        if value is None or any(s in given for s in broker_synonyms(fp.prop)):
            continue
        if fp.prop == "log.retention.ms" and value == str(168 * 3_600_000):
            continue
        if fp.prop in ALWAYS_SHOWN or value != BROKER_CONFIGS[fp.prop].default:
            out[fp.prop] = value
    out.update(given)
    return out


def read_properties_file(path: Path) -> dict[str, str]:
    """A Java .properties file: ``key=value`` or ``key: value``, # and ! comments, \\ continuations."""
    props: dict[str, str] = {}
    pending = ""
    for line in Path(path).read_text().splitlines():
        line = pending + line.strip()
        pending = ""
        if line.endswith("\\"):
            pending = line[:-1]
            continue
        if not line or line[0] in "#!":
            continue
        m = re.match(r"^([^=:\s]+)\s*[=:\s]\s*(.*)$", line)
        if m is None:
            raise ValueError(f"{path}: cannot read the line {line!r}")
        props[m.group(1)] = m.group(2)
    return props


def parse_override(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise ValueError(f"--override takes name=value, not {text!r}")
    return name.strip(), value
