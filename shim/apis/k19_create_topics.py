"""CreateTopics (19), v0-7 (v0-1 under 3.x emulation only: Kafka 4.0 removed them, KIP-896; v0
has no ValidateOnly, so it creates, and no ErrorMessage; below v2 no ThrottleTimeMs).

num_partitions -1 takes the broker default; replication factor -1 is default.replication.factor
(1), and no more replicas than live brokers can be asked for (shim.cluster places them as Kafka
does); manual assignments must name known brokers, each once, and set each partition's replicas
(the first leads). Every topic config of Kafka 3.9 is accepted and validated
as Kafka does (wrong type or value, unknown name: INVALID_CONFIG with Kafka's message), except
remote.storage.enable=true (no tiered storage). cleanup.policy=compact topics are cleaned by
shim.storage.cleaner.
From v5 the result lists the topic's configs with their values and sources, as Kafka does.
A name given more than once is not created and is answered once, after the others,
INVALID_REQUEST "Duplicate topic name." (Kafka: ControllerApis.createTopics).
With an authorizer each topic needs CREATE on the cluster or on the topic (TOPIC_AUTHORIZATION_FAILED,
"Authorization failed."), and its configs are shown only with DESCRIBE_CONFIGS on it (v5+:
TopicConfigErrorCode TOPIC_AUTHORIZATION_FAILED otherwise).
A request whose topics add up to more than 10,000 partitions is refused as a whole with
POLICY_VIOLATION, as Kafka's controller refuses it (one request cannot tie the broker up creating
partitions for minutes).
The topics are checked a slice of the loop at a time, then every partition of every topic that
passed is made in one go off the event loop (other clients keep being served) and the topics become
visible, and durable, together, as Kafka's controller writes one request's topics as one atomic
batch; the answer comes once they exist and are durable, so Metadata and Produce that follow see them.
"""

import collections

from ..configs import describe
from ..errors import ErrorCode, KafkaError
from ..security.acls import AclOperation as O
from ..security.acls import ResourceType as R
from ._assignment import check_manual_assignment
from ._pace import Pacer
from .registry import api

CONFIGS_VERSION = 5
# Kafka: ReplicationControlManager.MAX_PARTITIONS_PER_BATCH
MAX_PARTITIONS_PER_REQUEST = 10_000
LARGE_ANSWER_TOPICS = 100  # more topics' results (v5+: each with its ~40 configs) are encoded on a worker thread


@api(19, "CreateTopics", 0, 7)
async def handle(ctx, request):
    pace = Pacer()
    # Kafka: ControllerApis.createTopics -- a name given more than once is left out of the request,
    # answered once after the others
    counts = collections.Counter(t.name for t in request.topics)
    duplicates = [name for name, n in counts.items() if n > 1]
    topics = [t for t in request.topics if counts[t.name] == 1] if duplicates else request.topics
    if _total_partitions(topics, ctx.node.config.num_partitions) > MAX_PARTITIONS_PER_REQUEST:
        # the controller's failure: CreateTopicsRequest.getErrorResponse, every topic of the request
        # paced: 2 MiB of topics answered so took 0.2 CPU s in one turn of the loop
        return ctx.response(topics=tuple([
            ctx.make("CreatableTopicResult", name=t.name, topic_id=None, error_code=ErrorCode.policy_violation,
                     error_message="Excessively large number of partitions per request.", num_partitions=-1,
                     replication_factor=-1, configs=None)
            async for t in pace.each(request.topics)]))  # fmt: skip
    # Kafka: ControllerApis.createTopics -- CREATE on the cluster, or on each topic
    creatable = None if ctx.authorize_cluster(O.CREATE) else ctx.authorized(O.CREATE, R.TOPIC,
                                                                            [t.name for t in topics])
    plans = []
    async for t in pace.each(topics):
        if creatable is not None and t.name not in creatable:
            plans.append(KafkaError(ErrorCode.topic_authorization_failed, "Authorization failed."))
        else:
            plans.append(_plan(ctx.node, t))
    wanted = [(t.name, p[0], p[1]) for t, p in zip(topics, plans) if not isinstance(p, KafkaError)]
    validate_only = getattr(request, "validate_only", False)  # v1+
    made = iter(await ctx.node.logs.create_topics_async(wanted, validate_only, pace))
    results, listed = [], {}  # listed: the config listing of each set of overrides met
    async for t, plan in pace.each(zip(topics, plans)):
        outcome = plan if isinstance(plan, KafkaError) else next(made)
        if isinstance(outcome, KafkaError):
            results.append(ctx.make("CreatableTopicResult", name=t.name, topic_id=None, error_code=outcome.code,
                                    error_message=outcome.message, num_partitions=-1, replication_factor=-1,
                                    configs=None))
        else:
            results.append(_created(ctx, t, outcome, plan[2], validate_only, listed))
    results += [ctx.make("CreatableTopicResult", name=name, topic_id=None, error_code=ErrorCode.invalid_request,
                         error_message="Duplicate topic name.", num_partitions=-1, replication_factor=-1, configs=None)
                for name in duplicates]
    ctx.large_answer = len(results) > LARGE_ANSWER_TOPICS
    return ctx.response(topics=tuple(results))


def _plan(node, t):
    """(partitions, configs, replication factor) of a topic to create, or why it is refused: the
    checks Kafka's controller makes before it creates the topic, in its order."""
    try:
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
    except KafkaError as e:
        return e
    return partitions, configs, rf


def _created(ctx, t, info, rf, validate_only, listed):
    node = ctx.node
    if not validate_only:
        node.cluster.set_replication_factor(t.name, rf)
        for a in t.assignments:
            node.cluster.assign(t.name, a.partition_index, tuple(a.broker_ids))
    if not ctx.authorize(O.DESCRIBE_CONFIGS, R.TOPIC, t.name):  # created, but its configs are not shown
        return ctx.make("CreatableTopicResult", name=t.name, topic_id=info.topic_id, error_code=ErrorCode.none,
                        error_message=None, num_partitions=info.partitions, replication_factor=1, configs=(),
                        topic_config_error_code=ErrorCode.topic_authorization_failed)
    configs = _listing(ctx, info.configs, listed) if ctx.version >= CONFIGS_VERSION else ()
    return ctx.make("CreatableTopicResult", name=t.name, topic_id=info.topic_id, error_code=ErrorCode.none,
                    error_message=None, num_partitions=info.partitions, replication_factor=rf, configs=configs)


def _listing(ctx, overrides: dict[str, str], listed: dict) -> tuple:
    """A new topic's configs with their values and sources, once per set of overrides in a request
    (kio's objects are immutable: topics with the same overrides share them)."""
    key = tuple(sorted(overrides.items()))
    if key not in listed:
        listed[key] = tuple(
            ctx.make("CreatableTopicConfigs", name=e.name, value=e.value, read_only=e.read_only,
                     config_source=e.source, is_sensitive=e.sensitive)
            for e in describe.created_entries(overrides, ctx.node.broker_configs))
    return listed[key]


def _total_partitions(topics, default: int) -> int:
    """Kafka: ReplicationControlManager.validateTotalNumberOfPartitions (an upper bound)."""
    total = 0
    for t in topics:
        if t.assignments:
            total += len(t.assignments)
        elif t.num_partitions == -1:
            total += default
        elif t.num_partitions > 0:
            total += t.num_partitions
    return total
