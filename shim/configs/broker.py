"""The broker's configs in Kafka's layers (DynamicBrokerConfig): Kafka's defaults, the static
properties the broker started with, the dynamic cluster default (resource name "") and the dynamic
config of this broker (resource name = its id); a later layer wins.

Dynamic configs are kept in ``__cluster_metadata/broker-configs.json``, replaced atomically
(shim.storage.fs.atomic_write).
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Mapping

from ..errors import ErrorCode, KafkaError
from ..storage import fs
from .catalogue import BROKER_CONFIGS, ConfigError, ConfigKey, broker_configs, dynamic

FILE_NAME = "broker-configs.json"
MIN_ISR = "min.insync.replicas"
# Dynamic in Kafka, but not something kafka-shim can change while it runs.
# SslConfigs.RECONFIGURABLE_CONFIGS, in the order Scala's mutable.HashSet iterates them: the message names
# the unprefixed ones as DynamicBrokerConfig.validateConfigs prints them (asScala.filter builds a HashSet).
LISTENER_ONLY = ("ssl.keystore.type", "ssl.keystore.certificate.chain", "ssl.truststore.location",
                 "ssl.keystore.password", "ssl.key.password", "ssl.keystore.location", "ssl.keystore.key",
                 "ssl.truststore.password", "ssl.truststore.certificates", "ssl.truststore.type")
_LISTENER_CONFIG = re.compile(r"listener\.name\.[^.]*\.(.*)")  # DynamicBrokerConfig.ListenerConfigRegex
_CLUSTER_LEVEL_LISTENER_CONFIGS = {"max.connections", "max.connection.creation.rate", "num.network.threads"}
NOT_LIVE = {"listeners": "kafka-shim cannot change its listeners while it runs",
            "advertised.listeners": "kafka-shim cannot change its advertised listeners while it runs"}


class BrokerConfigs:
    def __init__(self, meta_dir: Path, node_id: int, static: Mapping[str, str], release: str = "3.9") -> None:
        self.path = meta_dir / FILE_NAME
        self.node_id = node_id
        self.release = release  # the emulated Kafka release: which configs are dynamic
        self.static = dict(static)
        self.node_static: dict[int, dict[str, str]] = {}  # other brokers of a simulated cluster: their own values
        self.per_broker: dict[str, str] = {}
        self.cluster_default: dict[str, str] = {}
        if self.path.exists():
            data = json.loads(self.path.read_text())
            self.per_broker = data.get("broker", {})
            self.cluster_default = data.get("default", {})

    def for_node(self, node_id: int) -> "BrokerConfigs":
        """The configs as broker ``node_id`` of a simulated cluster shows them (shim.cluster): its
        own node.id, broker.id and listeners over the shared layers (read-only)."""
        own = self.node_static.get(node_id)
        if not own:
            return self
        view = copy.copy(self)
        view.static = {**self.static, **own}
        return view

    def merged(self) -> dict[str, str]:
        """Every property set in some layer, with the value of the highest layer."""
        return {**self.static, **self.cluster_default, **self.per_broker}

    def layer(self, resource_name: str) -> dict[str, str]:
        return self.per_broker if resource_name else self.cluster_default

    def check_resource(self, resource_name: str, node_id: int | None = None) -> None:
        """``node_id``: the broker the request came to (a simulated cluster's, shim.cluster), else this one."""
        node_id = self.node_id if node_id is None else node_id
        if resource_name:  # ConfigAdminManager.validateResourceNameIsCurrentNodeId
            try:
                broker_id = int(resource_name)
            except ValueError:
                raise KafkaError(ErrorCode.invalid_request, f"Node id must be an integer, but it is: {resource_name}") from None
            if broker_id != node_id:
                raise KafkaError(ErrorCode.invalid_request,
                                 f"Unexpected broker id, expected {node_id}, but received {resource_name}")

    def validate(self, resource_name: str, props: Mapping[str, str], node_id: int | None = None) -> dict[str, str]:
        """The new layer ``props`` checked as DynamicBrokerConfig.validate does (INVALID_REQUEST with its
        message, KAFKA-13609), values rendered as Kafka stores them."""
        self.check_resource(resource_name, node_id)
        known = broker_configs(self.release)
        # DynamicBrokerConfig.nonDynamicConfigs: KafkaConfig's names less the dynamic ones; a name the release
        # does not define (one it removed, e.g. zookeeper.connect from 4.0) is kept as given
        read_only = sorted(n for n in props if n in known and not dynamic(n, self.release))
        if read_only:
            raise KafkaError(ErrorCode.invalid_request, f"Cannot update these configs dynamically: {_set(read_only)}")
        unprefixed = [n for n in LISTENER_ONLY if n in props]  # only listener.name.<l>.ssl.keystore.location etc.
        if unprefixed:
            raise KafkaError(ErrorCode.invalid_request, "These security configs can be dynamically updated only "
                             f"per-listener using the listener prefix: HashSet({', '.join(unprefixed)})")
        out = {}
        catalogue = broker_configs(self.release)
        for name, raw in props.items():
            key = catalogue.get(name)
            if key is None:
                out[name] = raw  # Kafka keeps unknown names (e.g. listener overrides) as given
                continue
            try:
                out[name] = raw if key.sensitive else key.canonical(raw)
            except ConfigError as e:
                raise KafkaError(ErrorCode.invalid_request, str(e)) from None
        per_broker_only = sorted(n for n in out if not resource_name and _per_broker(n, catalogue))
        if per_broker_only:
            raise KafkaError(ErrorCode.invalid_request, "Cannot update these configs at default cluster level, "
                             f"broker id must be specified: {_set(per_broker_only)}")
        changed = sorted(n for n in NOT_LIVE if out.get(n) != self.layer(resource_name).get(n))
        if changed:
            raise KafkaError(ErrorCode.invalid_request, NOT_LIVE[changed[0]])
        return out

    def replace(self, resource_name: str, props: Mapping[str, str]) -> None:
        """Persist, then apply, a validated layer."""
        layers = {"broker": self.per_broker, "default": self.cluster_default}
        layers["broker" if resource_name else "default"] = dict(props)
        self._write(layers["broker"], layers["default"])

    def _write(self, per_broker: dict[str, str], cluster_default: dict[str, str]) -> None:
        layers = {"broker": per_broker, "default": cluster_default}
        fs.atomic_write(self.path, json.dumps(layers, indent=1, sort_keys=True).encode())
        self.per_broker, self.cluster_default = per_broker, cluster_default

    # -- KIP-966: eligible leader replicas ----------------------------------------------------

    def elr_safety(self) -> bool:
        """What Kafka's controller writes before it enables ELR (ConfigurationControlManager.
        maybeGenerateElrSafetyRecords): a cluster-level min.insync.replicas of the static value
        (Kafka's default 1) unless one exists, and no broker-level one. True if anything changed."""
        per_broker, cluster_default = dict(self.per_broker), dict(self.cluster_default)
        cluster_default.setdefault(MIN_ISR, self.static.get(MIN_ISR, BROKER_CONFIGS[MIN_ISR].default))
        per_broker.pop(MIN_ISR, None)
        if (per_broker, cluster_default) == (self.per_broker, self.cluster_default):
            return False
        self._write(per_broker, cluster_default)
        return True

    def check_elr_change(self, resource_name: str, new_layer: Mapping[str, str], explicit: set[str]) -> None:
        """While ELR is enabled a broker-level min.insync.replicas cannot be set or removed and the
        cluster-level one cannot be removed (ConfigurationControlManager.isDisallowedBrokerMinIsrTransition,
        isDisallowedClusterMinIsrTransition); ``explicit``: the names the request itself alters."""
        old = self.layer(resource_name)
        touched = MIN_ISR in explicit or (MIN_ISR in old and MIN_ISR not in new_layer)
        if resource_name and touched:
            raise KafkaError(ErrorCode.invalid_config,
                             f"Broker-level {MIN_ISR} cannot be altered while ELR is enabled.")
        if not resource_name and touched and MIN_ISR not in new_layer:
            raise KafkaError(ErrorCode.invalid_config,
                             f"Cluster-level {MIN_ISR} cannot be removed while ELR is enabled.")


def _per_broker(name: str, catalogue: Mapping[str, ConfigKey]) -> bool:
    """DynamicBrokerConfig.perBrokerConfigs: a per-broker config, or any listener override but
    the cluster-level listener configs (listener.name.<l>.ssl.keystore.location among them)."""
    listener = _LISTENER_CONFIG.fullmatch(name)
    if listener:
        return listener.group(1) not in _CLUSTER_LEVEL_LISTENER_CONFIGS
    key = catalogue.get(name)
    return key is not None and key.update_mode == "per-broker"


def _set(names: list[str]) -> str:
    return "Set(" + ", ".join(names) + ")"  # as Scala prints a Set
