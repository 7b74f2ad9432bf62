"""DescribeConfigs (32), v1-4: topic configs (overrides and defaults) and broker configs.

Read-only view: AlterConfigs is not served. Unknown resource types get INVALID_REQUEST.
"""


from ..errors import ErrorCode, KafkaError
from ..storage.log_manager import TOPIC_CONFIGS
from .registry import api

TOPIC, BROKER = 2, 4
DYNAMIC_TOPIC_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 1, 4, 5


def _topic_defaults(node) -> dict[str, str]:
    c = node.log_config
    values = {key: getattr(c, attr) for key, (attr, _) in TOPIC_CONFIGS.items()}
    values["message.timestamp.type"] = "LogAppendTime" if c.log_append_time else "CreateTime"
    values.update({"cleanup.policy": "delete", "compression.type": "producer", "min.insync.replicas": 1})
    return {k: str(v) for k, v in values.items()}


def _broker_configs(node) -> dict[str, str]:
    c = node.config
    return {
        "broker.id": str(c.node_id), "auto.create.topics.enable": str(c.auto_create_topics).lower(),
        "num.partitions": str(c.num_partitions), "message.max.bytes": str(c.max_message_bytes),
        "socket.request.max.bytes": str(c.max_request_bytes), "log.segment.bytes": str(c.segment_bytes),
        "log.retention.ms": str(c.retention_ms), "log.retention.bytes": str(c.retention_bytes),
        "transaction.max.timeout.ms": str(c.transaction_max_timeout_ms),
        "offsets.topic.num.partitions": str(c.offsets_topic_num_partitions),
        "transaction.state.log.num.partitions": str(c.transaction_state_num_partitions),
    }


@api(32, "DescribeConfigs", 1, 4)
def handle(ctx, request):
    return ctx.response(results=tuple(_resource(ctx, r) for r in request.resources))


def _resource(ctx, r):
    try:
        if r.resource_type == TOPIC:
            info = ctx.node.logs.topic(r.resource_name)
            entries = {k: (v, DEFAULT_CONFIG) for k, v in _topic_defaults(ctx.node).items()}
            entries.update({k: (v, DYNAMIC_TOPIC_CONFIG) for k, v in info.configs.items()})
        elif r.resource_type == BROKER:
            entries = {k: (v, STATIC_BROKER_CONFIG) for k, v in _broker_configs(ctx.node).items()}
        else:
            raise KafkaError(ErrorCode.invalid_request, f"resource type {r.resource_type} is not supported")
    except KafkaError as e:
        return ctx.make("DescribeConfigsResult", error_code=e.code, error_message=e.message,
                        resource_type=r.resource_type, resource_name=r.resource_name, configs=())
    keys = r.configuration_keys
    configs = tuple(
        ctx.make("DescribeConfigsResourceResult", name=k, value=v, read_only=r.resource_type == BROKER,
                 config_source=src, is_sensitive=False, synonyms=(), config_type=0, documentation=None)
        for k, (v, src) in sorted(entries.items()) if keys is None or k in keys
    )
    return ctx.make("DescribeConfigsResult", error_code=ErrorCode.none, error_message=None,
                    resource_type=r.resource_type, resource_name=r.resource_name, configs=configs)
