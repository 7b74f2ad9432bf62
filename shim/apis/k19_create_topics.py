"""CreateTopics (19), v2-7.

num_partitions -1 takes the broker default; the replication factor must be -1 or 1 (one broker);
manual assignments must name this broker. Every topic config of Kafka 3.9 is accepted and validated
as Kafka does (wrong type or value, unknown name: INVALID_CONFIG with Kafka's message), except
cleanup.policy=compact (no log compaction) and remote.storage.enable=true (no tiered storage).
From v5 the result lists the topic's configs with their values and sources, as Kafka does.
"""

from ..configs import describe
from ..errors import ErrorCode, KafkaError
from .registry import api

CONFIGS_VERSION = 5


@api(19, "CreateTopics", 2, 7)
def handle(ctx, request):
    results = []
    seen = set()
    for t in request.topics:
        duplicate = t.name in seen
        seen.add(t.name)
        results.append(_create(ctx, t, request.validate_only, duplicate))
    return ctx.response(topics=tuple(results))


def _create(ctx, t, validate_only, duplicate):
    node = ctx.node
    try:
        if duplicate:
            raise KafkaError(ErrorCode.invalid_request, f"topic {t.name!r} appears twice in the request")
        if t.replication_factor not in (-1, 1) and not t.assignments:
            raise KafkaError(ErrorCode.invalid_replication_factor,
                             f"replication factor {t.replication_factor} is larger than the 1 available broker")
        partitions = t.num_partitions
        if t.assignments:
            if any(tuple(a.broker_ids) != (node.config.node_id,) for a in t.assignments):
                raise KafkaError(ErrorCode.invalid_replica_assignment, "assignments must name broker "
                                 f"{node.config.node_id} only")
            partitions = len(t.assignments)
        elif partitions == -1:
            partitions = node.config.num_partitions
        configs = {c.name: c.value for c in t.configs}
        info = node.logs.create_topic(t.name, partitions, configs, validate_only)
    except KafkaError as e:
        return ctx.make("CreatableTopicResult", name=t.name, topic_id=None, error_code=e.code, error_message=e.message,
                        num_partitions=-1, replication_factor=-1, configs=None)
    configs = tuple(
        ctx.make("CreatableTopicConfigs", name=e.name, value=e.value, read_only=e.read_only, config_source=e.source,
                 is_sensitive=e.sensitive)
        for e in describe.topic_entries(info.configs, node.broker_configs, None, False, False)
    ) if ctx.version >= CONFIGS_VERSION else ()
    return ctx.make("CreatableTopicResult", name=t.name, topic_id=info.topic_id, error_code=ErrorCode.none,
                    error_message=None, num_partitions=info.partitions, replication_factor=1, configs=configs)
