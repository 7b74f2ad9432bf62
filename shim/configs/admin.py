"""AlterConfigs and IncrementalAlterConfigs on one resource (Kafka: ConfigAdminManager on the broker,
ConfigurationControlManager on the controller): compute the resource's new configs, validate them,
persist them, then apply them live."""

from __future__ import annotations

from typing import NamedTuple

from ..errors import ErrorCode, KafkaError
from ..storage.log_manager import invalid_topic_name
from . import loggers
from .catalogue import broker_configs, topic_configs
from .topic import validate_overrides

TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP = 2, 4, 8, 16, 32
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
_OP_NAMES = {SET: "SET", DELETE: "DELETE", APPEND: "APPEND", SUBTRACT: "SUBTRACT"}


class Op(NamedTuple):
    name: str
    op: int
    value: str | None


def alter(node, resource_type: int, resource_name: str, ops: list[Op], validate_only: bool,
          incremental: bool, node_id: int | None = None) -> None:
    """Raises KafkaError with Kafka's code and message; returns when applied (or only validated).
    ``node_id``: the broker the request came to (shim.cluster), else the node's own."""
    node_id = node.config.node_id if node_id is None else node_id
    if len({o.name for o in ops}) != len(ops):
        raise KafkaError(ErrorCode.invalid_request, "Error due to duplicate config keys")
    nulls = [o.name for o in ops if o.value is None and o.op != DELETE]
    if nulls:
        raise KafkaError(ErrorCode.invalid_request, "Null value not supported for : " + ", ".join(nulls))
    if resource_type == BROKER_LOGGER and incremental:
        _alter_loggers(node, resource_name, ops, validate_only, node_id)
    elif resource_type == BROKER:
        _alter_broker(node, resource_name, ops, validate_only, incremental, node_id)
    elif resource_type == TOPIC:
        _check_topic_name(resource_name)
        catalogue = topic_configs(node.broker_configs.release)
        if resource_name not in node.logs.topics:
            # Kafka's controller validates the new configs before it checks that the topic exists
            # (ConfigurationControlManager.validateAlterConfig: the validator, then existenceChecker)
            configs = apply_ops({}, ops, catalogue, lambda n: node.topic_effective({}).get(n))
            node.logs.resolve(validate_overrides(configs, node.broker_configs.release))
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"The topic '{resource_name}' does not exist.")
        info = node.logs.topic(resource_name)
        # names the emulated release removed (stored under an earlier one) no longer count
        kept = {n: v for n, v in info.configs.items() if n in catalogue} if incremental else {}
        configs = apply_ops(kept, ops, catalogue,
                             lambda n: node.topic_effective(info.configs).get(n))
        node.logs.set_topic_configs(resource_name, configs, validate_only)
    elif resource_type == GROUP:  # Kafka: GroupConfigManager (KIP-848, KIP-932); AlterConfigs replaces all
        node.group_configs.alter(resource_name, ops, validate_only, incremental)
    elif resource_type == CLIENT_METRICS:  # Kafka: ClientMetricsConfigs.validate, at the controller
        node.client_metrics_configs.alter(resource_name, ops, validate_only, incremental)
    else:
        raise KafkaError(ErrorCode.invalid_request, f"Unknown resource type {resource_type}")


def _check_topic_name(name: str) -> None:
    """Kafka: ControllerConfigurationValidator.validateTopicName, before the topic is looked up."""
    if not name:
        raise KafkaError(ErrorCode.invalid_request, "Default topic resources are not allowed.")
    if (invalid := invalid_topic_name(name)) is not None:
        raise KafkaError(ErrorCode.invalid_topic_exception, invalid)


def _alter_broker(node, resource_name: str, ops: list[Op], validate_only: bool, incremental: bool,
                  node_id: int) -> None:
    store = node.broker_configs
    store.check_resource(resource_name, node_id)
    current = store.layer(resource_name)
    catalogue = broker_configs(store.release)
    props = apply_ops(dict(current) if incremental else {}, ops, catalogue,
                       lambda n: store.merged().get(n, catalogue[n].default if n in catalogue else None))
    props = store.validate(resource_name, props, node_id)
    if node.elr_enabled:  # KIP-966: the controller's checks come after the broker's own validation
        store.check_elr_change(resource_name, props, {o.name for o in ops} if incremental else set(props))
    layers = {"per_broker": store.per_broker, "cluster_default": store.cluster_default}
    layers["per_broker" if resource_name else "cluster_default"] = props
    try:  # the whole resulting config must hold together before anything is persisted
        node.config_with(**layers)
    except ValueError as e:
        raise KafkaError(ErrorCode.invalid_request, str(e)) from None
    if not validate_only:
        store.replace(resource_name, props)
        node.broker_configs_changed()


def _alter_loggers(node, resource_name: str, ops: list[Op], validate_only: bool, node_id: int) -> None:
    try:  # RuntimeLoggerManager.validateResourceNameIsNodeId
        broker_id = int(resource_name)
    except ValueError:
        raise KafkaError(ErrorCode.invalid_request, f"Node id must be an integer, but it is: {resource_name}") from None
    if broker_id != node_id:
        raise KafkaError(ErrorCode.invalid_request,
                         f"Unexpected node id. Expected {node_id}, but received {broker_id}")
    changes = [(o.name, o.op, o.value) for o in ops]
    loggers.validate(changes)
    if not validate_only:
        loggers.apply(changes)


def apply_ops(configs: dict[str, str], ops: list[Op], catalogue, current) -> dict[str, str]:
    """Kafka: ConfigurationControlManager.incrementalAlterConfigResource (SET/DELETE/APPEND/SUBTRACT)."""
    for o in ops:
        if o.op == SET:
            configs[o.name] = o.value
        elif o.op == DELETE:
            configs.pop(o.name, None)
        elif o.op in (APPEND, SUBTRACT):
            key = catalogue.get(o.name)
            if key is None or key.type != "list":
                raise KafkaError(ErrorCode.invalid_config,
                                 f"Can't {_OP_NAMES[o.op]} to key {o.name} because its type is not LIST.")
            old = configs.get(o.name)
            if old is None:
                value = current(o.name)
                old = ",".join(value) if isinstance(value, list) else value
            parts = [p for p in (old or "").split(",") if p]
            for v in o.value.split(","):
                if o.op == APPEND and v not in parts:
                    parts.append(v)
                elif o.op == SUBTRACT and v in parts:
                    parts.remove(v)
            configs[o.name] = ",".join(parts)
        else:
            raise KafkaError(ErrorCode.invalid_request, f"Unknown operations type {o.op}")
    return configs
