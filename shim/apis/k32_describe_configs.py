"""DescribeConfigs (32), v0-4 (v0 under 3.x emulation only: Kafka 4.0 removed it, KIP-896).

TOPIC: every topic config Kafka 3.9 defines, the topic's overrides (TOPIC_CONFIG) over the broker's
values (dynamic broker, dynamic cluster default, static) over Kafka's defaults. BROKER with this
broker's id: every broker config Kafka defines plus any other property the broker was given, with
our values (listeners, log.dirs, ...); BROKER "" the dynamic cluster defaults. BROKER_LOGGER: the
broker's Python loggers under log4j level names. Sources, read-only, sensitive (value null),
synonyms (when asked) and documentation (when asked) as Kafka's ConfigHelper fills them
(shim.configs.describe). An empty key list means every key, as in Kafka.

GROUP: every group config (``consumer.*``, ``share.*``), GROUP_CONFIG where set for the group, else
the broker's value as DEFAULT_CONFIG, as Kafka's ConfigHelper.createGroupConfigEntry.

CLIENT_METRICS: the subscription's configs (shim.configs.client_metrics): up to Kafka 4.0 the keys
set (none for a subscription never made), from 4.1 every key with its default where unset; an
empty name is INVALID_REQUEST (Kafka: ConfigHelper.describeConfigs). Authorized as Kafka does,
DESCRIBE_CONFIGS on the cluster.

v0 has no IncludeSynonyms, no ConfigSource and no synonyms, and an IsDefault instead, which a
Kafka 3.9 broker answers false for every config, defaults included: its ConfigHelper sets only
ConfigSource, and IsDefault keeps the generated message's default (only the Java client's
DescribeConfigsResponse reads IsDefault back into a source). So does kafka-shim.
"""

from ..configs import describe, loggers
from ..configs.admin import BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP, TOPIC
from ..errors import ErrorCode, KafkaError
from ..protocol.messages import make
from ..security.acls import AclOperation as O
from ..storage.log_manager import invalid_topic_name
from ._authz import config_denied
from ._pace import Pacer
from .registry import api

# An answer with more config entries than this is encoded off the event loop (one topic with
# synonyms and documentation: about 14 KiB in 80 entries).
LARGE_ANSWER_CONFIGS = 2_000


@api(32, "DescribeConfigs", 0, 4)
async def handle(ctx, request):
    synonyms = bool(getattr(request, "include_synonyms", False))
    documentation = bool(getattr(request, "include_documentation", False))
    # A resource named again is answered again, as Kafka's ConfigHelper does, from the entity built
    # the first time: a 6 KiB request naming one topic 1,000 times cost 0.8 s of building.
    built: dict = {}
    results = []
    async for r in Pacer().each(request.resources):
        key = (r.resource_type, r.resource_name, None if r.configuration_keys is None else tuple(r.configuration_keys))
        if key not in built:
            built[key] = _resource(ctx, r, synonyms, documentation)
        results.append(built[key])
    ctx.large_answer = sum(len(r.configs) for r in results) > LARGE_ANSWER_CONFIGS
    return ctx.response(results=tuple(results))


def _entries(node, r, synonyms, documentation, node_id):
    keys = r.configuration_keys
    if r.resource_type == TOPIC:
        # Kafka's ConfigHelper validates the name (Topic.validate) before it looks the topic up
        if (invalid := invalid_topic_name(r.resource_name)) is not None:
            raise KafkaError(ErrorCode.invalid_topic_exception, invalid)
        info = node.logs.topic(r.resource_name)
        return describe.topic_entries(info.configs, node.broker_configs, keys, synonyms, documentation)
    if r.resource_type == BROKER:
        node.broker_configs.check_resource(r.resource_name, node_id)
        configs = node.broker_configs.for_node(node_id) if r.resource_name else node.broker_configs
        return describe.broker_entries(configs, r.resource_name, keys, synonyms, documentation)
    if r.resource_type == BROKER_LOGGER:
        if not r.resource_name:
            raise KafkaError(ErrorCode.invalid_request, "Broker id must not be empty")
        node.broker_configs.check_resource(r.resource_name, node_id)
        return describe.logger_entries(loggers.levels(), keys)
    if r.resource_type == GROUP:
        if not r.resource_name:
            raise KafkaError(ErrorCode.invalid_request, "Group name can't be empty.")
        return describe.group_entries(node.group_configs.describe(r.resource_name), keys, synonyms)
    if r.resource_type == CLIENT_METRICS:
        if not r.resource_name:
            raise KafkaError(ErrorCode.invalid_request, "Client metrics subscription name must not be empty")
        store = node.client_metrics_configs
        return describe.client_metrics_entries(store.own(r.resource_name), keys, synonyms, documentation,
                                               store.release)
    raise KafkaError(ErrorCode.invalid_request, f"Unsupported resource type: {r.resource_type}")


def _resource(ctx, r, synonyms, documentation):
    try:
        if (denied := config_denied(ctx, r.resource_type, r.resource_name, O.DESCRIBE_CONFIGS)) is not None:
            raise KafkaError(denied)
        entries = _entries(ctx.node, r, synonyms, documentation, ctx.node_id)
    except KafkaError as e:
        message = None if e.code == ErrorCode.unknown_topic_or_partition else e.message
        return ctx.make("DescribeConfigsResult", error_code=e.code, error_message=message,
                        resource_type=r.resource_type, resource_name=r.resource_name, configs=())
    synonym_cls = getattr(ctx.m, "DescribeConfigsSynonym", None)
    configs = tuple(
        ctx.make("DescribeConfigsResourceResult", name=e.name, value=e.value, read_only=e.read_only,
                 is_default=False,  # v0 (see the module docstring)
                 config_source=e.source, is_sensitive=e.sensitive, config_type=e.config_type,
                 documentation=e.documentation,
                 synonyms=tuple(make(synonym_cls, name=s.name, value=s.value, source=s.source) for s in e.synonyms)
                 if synonym_cls else ())
        for e in entries
    )
    return ctx.make("DescribeConfigsResult", error_code=ErrorCode.none, error_message=None,
                    resource_type=r.resource_type, resource_name=r.resource_name, configs=configs)
