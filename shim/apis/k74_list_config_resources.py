"""ListConfigResources (74), v0-1: ListClientMetricsResources (KIP-714) until Kafka 4.1 renamed it
and, with v1, let it list every kind of config resource (KIP-1142).

v0 lists the CLIENT_METRICS resources (every subscription with a config set: Kafka's
ClientMetricsManager keeps one whether or not a telemetry receiver is configured), and v1 with no
ResourceTypes or with CLIENT_METRICS too. v1 also lists, per type asked for: every GROUP with a
group config set, a BROKER_LOGGER and a BROKER resource for this broker, and every topic, internal
ones included (Kafka: MetadataCache.getAllTopics). A type v1 does not know is UNSUPPORTED_VERSION for the whole request. With an authorizer it needs DESCRIBE_CONFIGS on the cluster.
"""

from ..errors import ErrorCode
from .registry import api

TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP = 2, 4, 8, 16, 32  # Kafka: ConfigResource.Type
SUPPORTED_V1 = (TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP)


@api(74, "ListConfigResources", 0, 1)
def handle(ctx, request):
    wanted = tuple(getattr(request, "resource_types", ())) or (SUPPORTED_V1 if ctx.version >= 1 else (CLIENT_METRICS,))
    if any(t not in SUPPORTED_V1 for t in wanted):
        return ctx.response(error_code=ErrorCode.unsupported_version, config_resources=())
    node_id = str(ctx.node.config.node_id)
    resources = []
    # in Kafka's order: groups, client metrics, broker loggers, brokers, topics
    if GROUP in wanted:
        resources.extend((name, GROUP) for name in sorted(ctx.node.group_configs.groups))
    if CLIENT_METRICS in wanted:
        resources.extend((name, CLIENT_METRICS) for name in ctx.node.client_metrics_configs.names())
    if BROKER_LOGGER in wanted:
        resources.append((node_id, BROKER_LOGGER))
    if BROKER in wanted:
        resources.append((node_id, BROKER))
    if TOPIC in wanted:
        resources.extend((name, TOPIC) for name in sorted(ctx.node.logs.topics))
    return ctx.response(error_code=ErrorCode.none, config_resources=tuple(
        ctx.make("ConfigResource", resource_name=name, resource_type=kind) for name, kind in resources))


def error_response(ctx, request, code):
    return ctx.response(error_code=code, config_resources=())
