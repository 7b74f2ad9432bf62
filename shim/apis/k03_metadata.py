"""Metadata (3), v0-13 (v13, Kafka 4.0's, adds a top-level error code for KIP-1102's
REBOOTSTRAP_REQUIRED, which a broker that knows its whole cluster never needs: always NONE).

Brokers, leaders, leader epochs, replicas and ISR come from the cluster's state table
(shim.cluster): every live broker is listed with its address on the request's listener; a
partition whose replicas are all down has leader -1 and LEADER_NOT_AVAILABLE, and its down replicas
are listed as offline (v5+). While the data directory is offline (a failed fsync,
shim.storage.group_commit) every partition is so, at the next leader epoch, every replica offline
(shim.cluster.OfflineState). The controller is the first live broker. Topic ids (v10+) are real, so clients use
Fetch by topic id. Unknown topics are created when the client allows it (v4+ flag; always before
v4) and the broker's auto_create_topics is on (an internal topic as its coordinator creates it: its
own partition count and configs); otherwise UNKNOWN_TOPIC_OR_PARTITION. A request whose unknown topics
add up to more than 10,000 partitions creates none and answers each LEADER_NOT_AVAILABLE (Kafka's
controller refuses the one CreateTopics its AutoTopicCreationManager sends); the topics one request
creates are written to topics.json once.
Authorized operations (v8+ topics, v8-10 cluster), when asked for: the authorizer's (every
operation of the resource type without one, as Kafka answers); never on unknown-topic-id entries.
With an authorizer, as KafkaApis.handleTopicMetadataRequest: a request for all topics leaves out
those the principal may not DESCRIBE; a topic named but not describable, or unknown and not
creatable (CREATE on the cluster or the topic), gets TOPIC_AUTHORIZATION_FAILED.
"""

import uuid

from ..cluster import OfflineState, offline_state
from ..errors import ErrorCode, KafkaError
from ..storage.log_manager import validate_topic_name
from ..security.acls import CLUSTER_NAME
from ..security.acls import AclOperation as O
from ..security.acls import ResourceType as R
from ._operations import NOT_REQUESTED
from ._pace import Pacer
from .k19_create_topics import MAX_PARTITIONS_PER_REQUEST
from .registry import api

ZERO_UUID = uuid.UUID(int=0)


@api(3, "Metadata", 0, 13)
async def handle(ctx, request):
    node = ctx.node
    wanted = request.topics
    all_topics = wanted is None or (ctx.version == 0 and not wanted)
    pace = Pacer()
    if all_topics:  # Kafka: topics the principal may not describe are left out
        names = sorted(ctx.authorized(O.DESCRIBE, R.TOPIC, node.logs.topics))
        by_id, asked_ids = {}, [None] * len(names)
    else:
        names, asked_ids, by_id = await _wanted(ctx, wanted, pace)
    allow_create = getattr(request, "allow_auto_topic_creation", True) and node.config.auto_create_topics
    want_ops = getattr(request, "include_topic_authorized_operations", False)
    refused = await _refused(ctx, [n for n in names if n is not None], allow_create, pace)
    create = _creatable(ctx, names, refused) if allow_create else set()
    if allow_create and create is None:  # the topics it creates are written down once, before the answer
        # the refused ones answered before, paced: 200,000 of them took 0.7-1 CPU s of that turn
        denied = {name: _unauthorized(ctx, name, by_id.get(name)) async for name in pace.each(refused)}
        with node.logs.one_save():
            topics = tuple(denied[name] if name in denied else _topic(ctx, name, allow_create, want_ops, create, asked)
                           for name, asked in zip(names, asked_ids))
    else:  # none to create (an internal topic is written down as it is): the loop is given up as it walks
        topics = tuple([_unauthorized(ctx, name, by_id.get(name)) if name in refused
                        else _topic(ctx, name, allow_create, want_ops, create, asked)
                        async for name, asked in pace.each(zip(names, asked_ids))])
    # v8-10 only: v11 dropped the cluster field (DescribeCluster has it)
    cluster_ops = NOT_REQUESTED
    if getattr(request, "include_cluster_authorized_operations", False):
        cluster_ops = ctx.authorized_operations(R.CLUSTER, CLUSTER_NAME) if ctx.authorize_cluster(O.DESCRIBE) else 0
    brokers = tuple(ctx.make("MetadataResponseBroker", node_id=n, host=host, port=port, rack=node.racks.get(n))
                    for n in node.cluster.alive() for host, port in (ctx.endpoint_of(n),))
    return ctx.response(
        brokers=brokers, cluster_id=node.config.cluster_id, controller_id=node.cluster.controller(), topics=topics,
        cluster_authorized_operations=cluster_ops, error_code=ErrorCode.none,  # v13 (4.0): KIP-1102's top level
    )


async def _wanted(ctx, wanted, pace) -> tuple[list, list, dict]:
    """(names, the ids asked, {name: id} of the topics asked by id), each topic once in the order
    first named. Paced: 700,000 names of a 2 MiB request took 0.22 CPU s of one turn."""
    asked: dict = {}  # Kafka: the topics named (or ids asked) as a set, each answered once
    by_id = {}
    async for t in pace.each(wanted):
        name, topic_id = _name_of(ctx, t), t.topic_id if _by_id(t) else None
        if name is not None and topic_id is not None:
            by_id[name] = topic_id
        asked[name, topic_id] = None  # Kafka answers an unknown id with that id and no name
    return [n for n, _ in asked], [i for _, i in asked], by_id


async def _refused(ctx, names, allow_create, pace) -> set:
    """Kafka: topics named but not describable, and unknown ones it may not create, get
    TOPIC_AUTHORIZATION_FAILED (auto-creation needs CREATE on the cluster or on the topic). Paced:
    the ACLs asked about 200,000 names of a 2 MiB request took 0.95 CPU s of one turn."""
    if ctx.node.authorizer is None:
        return set()
    refused = set(names) - await ctx.authorized_paced(O.DESCRIBE, R.TOPIC, names, pace)
    missing = [n async for n in pace.each(names) if n not in refused and n not in ctx.node.logs.topics]
    if allow_create and missing and not ctx.authorize_cluster(O.CREATE):
        refused |= set(missing) - await ctx.authorized_paced(O.CREATE, R.TOPIC, missing, pace)
    return refused


def _unauthorized(ctx, name, topic_id=None):
    """Kafka names no topic it refuses; one asked for by id keeps its id (ids are not secret)."""
    return ctx.make("MetadataResponseTopic", error_code=ErrorCode.topic_authorization_failed,
                    name=name if topic_id is None else None, topic_id=topic_id or ZERO_UUID, is_internal=False,
                    partitions=(), topic_authorized_operations=NOT_REQUESTED)


def _by_id(t) -> bool:
    """Kafka (KIP-516): a topic with a non-zero id is looked up by its id, whatever its name says
    (Java's kafka-clients 4 asks by id with the name left "")."""
    topic_id = getattr(t, "topic_id", None)
    return topic_id is not None and topic_id != ZERO_UUID


def _name_of(ctx, t) -> str | None:
    if _by_id(t):
        info = ctx.node.logs.topic_by_id(t.topic_id)
        return info.name if info else None
    return t.name


def _creatable(ctx, names, refused) -> set | None:
    """The unknown topics this request may auto-create: all of them (None), or none (an empty set)
    when they add up to more partitions than Kafka's controller takes in one request; Kafka's
    AutoTopicCreationManager sends them in one CreateTopics, the controller refuses it whole, and
    the Metadata answer says LEADER_NOT_AVAILABLE for each (a creation it asked for)."""
    logs, cluster = ctx.node.logs, ctx.node.cluster
    new = {n for n in names if n is not None and n not in refused and n not in logs.topics
           and cluster.internal_partitions(n) is None}
    return None if len(new) * ctx.node.config.num_partitions <= MAX_PARTITIONS_PER_REQUEST else set()


def _topic(ctx, name, allow_create, want_ops, create=None, asked_id=None):
    logs = ctx.node.logs
    operations = NOT_REQUESTED
    if want_ops and name is not None:
        operations = ctx.authorized_operations(R.TOPIC, name)
    try:
        if name is None:  # Kafka's unknown-topic-id entries never get authorized operations
            operations = NOT_REQUESTED
            raise KafkaError(ErrorCode.unknown_topic_id)
        if name not in logs.topics:
            validate_topic_name(name)
            if not allow_create:
                raise KafkaError(ErrorCode.unknown_topic_or_partition)
            internal = ctx.node.cluster.internal_partitions(name)
            if internal is None and create is not None and name not in create:
                raise KafkaError(ErrorCode.leader_not_available)
            if internal is None:
                logs.create_topic(name, ctx.node.config.num_partitions)
            else:  # Kafka: AutoTopicCreationManager gives an internal topic its own partitions and configs
                logs.ensure_topic(name, internal)
    except KafkaError as e:
        return ctx.make("MetadataResponseTopic", error_code=e.code, name=name,
                        topic_id=asked_id if name is None and asked_id is not None else ZERO_UUID,
                        is_internal=False, partitions=(), topic_authorized_operations=operations)
    info = logs.topics[name]
    return ctx.make("MetadataResponseTopic", error_code=ErrorCode.none, name=name, topic_id=info.topic_id,
                    is_internal=info.internal, partitions=_partitions(ctx, info), topic_authorized_operations=operations)


_SHARED: dict = {}  # (response module, topic id, partitions, the shared row's fields) -> partition entities
_SHARED_MAX = 4096


def _partitions(ctx, info):
    """A topic's partition entities. While every partition shares one row (one broker, leadership
    never moved) they depend only on the version, the topic and that row: built once and reused,
    as kio's entities are immutable (a Metadata answer over 10,000 partitions is mostly these)."""
    cluster = ctx.node.cluster
    if ctx.node.logs.offline:
        return tuple(_partition(ctx, p, offline_state(cluster.state(info.name, p)), ()) for p in range(info.partitions))
    shared = cluster.uniform_state()
    if shared is None or cluster.down:
        return tuple(_partition(ctx, p, cluster.state(info.name, p), cluster.down) for p in range(info.partitions))
    key = (ctx.m, info.topic_id, info.partitions, shared.leader, shared.leader_epoch, shared.replicas, shared.isr)
    built = _SHARED.get(key)
    if built is None:
        if len(_SHARED) >= _SHARED_MAX:
            _SHARED.clear()
        built = _SHARED[key] = tuple(_partition(ctx, p, shared, ()) for p in range(info.partitions))
    return built


def _partition(ctx, index, s, down):
    code = ErrorCode.none if s.leader >= 0 else ErrorCode.leader_not_available
    offline = s.replicas if isinstance(s, OfflineState) else tuple(r for r in s.replicas if r in down)
    return ctx.make("MetadataResponsePartition", error_code=code, partition_index=index, leader_id=s.leader,
                    leader_epoch=s.leader_epoch, replica_nodes=s.replicas, isr_nodes=s.isr, offline_replicas=offline)
