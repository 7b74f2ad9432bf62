"""CreateTopics (19), v2-7.

num_partitions -1 takes the broker default; replication factor -1 is default.replication.factor
(1), and no more replicas than live brokers can be asked for (shim.cluster places them as Kafka
does); manual assignments must name known brokers, each once, and set each partition's replicas
(the first leads). Every topic config of Kafka 3.9 is accepted and validated
as Kafka does (wrong type or value, unknown name: INVALID_CONFIG with Kafka's message), except
remote.storage.enable=true (no tiered storage). cleanup.policy=compact topics are cleaned by
shim.storage.cleaner.
From v5 the result lists the topic's configs with their values and sources, as Kafka does.
With an authorizer each topic needs CREATE on the cluster or on the topic (TOPIC_AUTHORIZATION_FAILED,
"Authorization failed."), and its configs are shown only with DESCRIBE_CONFIGS on it (v5+:
TopicConfigErrorCode TOPIC_AUTHORIZATION_FAILED otherwise).
A request whose topics add up to more than 10,000 partitions is refused as a whole with
POLICY_VIOLATION, as Kafka's controller refuses it (one request cannot tie the broker up creating
partitions for minutes).
The partitions' directories and files are made off the event loop (other clients keep being served);
the answer comes once the topic exists and is durable, so Metadata and Produce that follow it see it.
"""

from ..configs import describe
from ..errors import ErrorCode, KafkaError
from ..security.acls import AclOperation as O
from ..security.acls import ResourceType as R
from ._assignment import check_manual_assignment
from .registry import api

CONFIGS_VERSION = 5
# Kafka: ReplicationControlManager.MAX_PARTITIONS_PER_BATCH
MAX_PARTITIONS_PER_REQUEST = 10_000


@api(19, "CreateTopics", 2, 7)
async def handle(ctx, request):
    if _total_partitions(request, ctx.node.config.num_partitions) > MAX_PARTITIONS_PER_REQUEST:
        return ctx.response(topics=tuple(
            ctx.make("CreatableTopicResult", name=t.name, topic_id=None, error_code=ErrorCode.policy_violation,
                     error_message="Excessively large number of partitions per request.", num_partitions=-1,
                     replication_factor=-1, configs=None)
            for t in request.topics))  # fmt: skip
    results = []
    seen = set()
    # Kafka: ControllerApis.createTopics -- CREATE on the cluster, or on each topic
    creatable = None if ctx.authorize_cluster(O.CREATE) else ctx.authorized(O.CREATE, R.TOPIC,
                                                                            [t.name for t in request.topics])
    for t in request.topics:
        if creatable is not None and t.name not in creatable:
            results.append(ctx.make("CreatableTopicResult", name=t.name, topic_id=None,
                                    error_code=ErrorCode.topic_authorization_failed, error_message="Authorization failed.",
                                    num_partitions=-1, replication_factor=-1, configs=None))
            continue
        duplicate = t.name in seen
        seen.add(t.name)
        results.append(await _create(ctx, t, request.validate_only, duplicate))
    return ctx.response(topics=tuple(results))


async def _create(ctx, t, validate_only, duplicate):
    node = ctx.node
    try:
        if duplicate:
            raise KafkaError(ErrorCode.invalid_request, f"topic {t.name!r} appears twice in the request")
        configs = {c.name: c.value for c in t.configs}
        node.logs.check_new_topic(t.name, configs)  # before the replicas, as Kafka's controller does
        rf = 1 if t.replication_factor == -1 else t.replication_factor
        alive = len(node.cluster.alive())
        if not t.assignments and rf <= 0:
            raise KafkaError(ErrorCode.invalid_replication_factor,
                             "Replication factor must be larger than 0, or -1 to use the default value.")
        if not t.assignments and rf > alive:
            raise KafkaError(ErrorCode.invalid_replication_factor,
                             f"Unable to replicate the partition {rf} time(s): The target replication factor of {rf} "
                             f"cannot be reached because only {alive} broker(s) are registered.")
        partitions = t.num_partitions
        if t.assignments:
            for a in t.assignments:
                check_manual_assignment(node.node_ids, a.broker_ids)
            partitions = len(t.assignments)
            rf = len(t.assignments[0].broker_ids)
        elif partitions == -1:
            partitions = node.config.num_partitions
        info = await node.logs.create_topic_async(t.name, partitions, configs, validate_only)
        if not validate_only:
            node.cluster.set_replication_factor(t.name, rf)
            for a in t.assignments:
                node.cluster.assign(t.name, a.partition_index, tuple(a.broker_ids))
    except KafkaError as e:
        return ctx.make("CreatableTopicResult", name=t.name, topic_id=None, error_code=e.code, error_message=e.message,
                        num_partitions=-1, replication_factor=-1, configs=None)
    if not ctx.authorize(O.DESCRIBE_CONFIGS, R.TOPIC, t.name):  # created, but its configs are not shown
        return ctx.make("CreatableTopicResult", name=t.name, topic_id=info.topic_id, error_code=ErrorCode.none,
                        error_message=None, num_partitions=info.partitions, replication_factor=1, configs=(),
                        topic_config_error_code=ErrorCode.topic_authorization_failed)
    configs = tuple(
        ctx.make("CreatableTopicConfigs", name=e.name, value=e.value, read_only=e.read_only, config_source=e.source,
                 is_sensitive=e.sensitive)
        for e in describe.topic_entries(info.configs, node.broker_configs, None, False, False)
    ) if ctx.version >= CONFIGS_VERSION else ()
    return ctx.make("CreatableTopicResult", name=t.name, topic_id=info.topic_id, error_code=ErrorCode.none,
                    error_message=None, num_partitions=info.partitions, replication_factor=rf, configs=configs)


def _total_partitions(request, default: int) -> int:
    """Kafka: ReplicationControlManager.validateTotalNumberOfPartitions (an upper bound)."""
    total = 0
    for t in request.topics:
        if t.assignments:
            total += len(t.assignments)
        elif t.num_partitions == -1:
            total += default
        elif t.num_partitions > 0:
            total += t.num_partitions
    return total
