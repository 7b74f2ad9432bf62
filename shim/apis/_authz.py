"""What each API requires of the authorizer, in one table (Kafka: the authorize calls of KafkaApis,
AclApis and AuthHelper).

``REQUEST`` lists the checks that decide a whole request: the dispatcher runs them in order before
the handler and, at the first one refused, answers with the API module's ``error_response(ctx,
request, code)`` (Kafka's ``getErrorResponse``). ``TOPICS`` names the operation an API needs on each
topic it touches; those handlers answer TOPIC_AUTHORIZATION_FAILED per topic, through
:func:`denied_topics`. Checks whose answer is per resource of another kind (a group of DeleteGroups,
a coordinator key of FindCoordinator v4+, a config resource) are made by the handlers with
``ctx.authorize`` and are listed in their docstrings. Without an authorizer every check passes.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

from kafka_codecs.batch import ATTRIBUTES_OFFSET, MAGIC, TRANSACTIONAL_FLAG

from ..errors import ErrorCode as E
from ..security.acls import CLUSTER_NAME
from ..security.acls import AclOperation as O
from ..security.acls import ResourceType as R


class Check(NamedTuple):
    operation: O
    resource_type: R
    name: Callable  # (ctx, request) -> resource name; None: the check does not apply to this request
    error: E


def _cluster(operation: O) -> Check:
    return Check(operation, R.CLUSTER, lambda ctx, r: CLUSTER_NAME, E.cluster_authorization_failed)


def _group(operation: O) -> Check:
    return Check(operation, R.GROUP, lambda ctx, r: r.group_id, E.group_authorization_failed)


def _txn(operation: O) -> Check:
    return Check(operation, R.TRANSACTIONAL_ID, lambda ctx, r: getattr(r, "transactional_id", None),
                 E.transactional_id_authorization_failed)


REFUSED = object()  # a Check's name for a request refused whatever the ACLs say
MAGIC_OFFSET = 16  # after BaseOffset, BatchLength and PartitionLeaderEpoch


def _produce_transactional_id(ctx, r):
    """Kafka: only a request with transactional records (RequestUtils.hasTransactionalRecords, the
    first batch of each partition) is checked, and then it must carry a transactional id."""
    for t in r.topic_data:
        for p in t.partition_data:
            records = p.records
            if records and len(records) > ATTRIBUTES_OFFSET + 1 and records[MAGIC_OFFSET] == MAGIC \
                    and records[ATTRIBUTES_OFFSET + 1] & TRANSACTIONAL_FLAG:
                return getattr(r, "transactional_id", None) or REFUSED
    return None


def _single_group_fetch(ctx, r):
    return r.group_id if ctx.version < 8 else None  # v8+: per group, in the handler


ADD_PARTITIONS_CLIENT = Check(O.WRITE, R.TRANSACTIONAL_ID,  # v0-3: the client's form
                              lambda ctx, r: r.v3_and_below_transactional_id if ctx.version < 4 else None,
                              E.transactional_id_authorization_failed)
ADD_PARTITIONS_BROKER = Check(O.CLUSTER_ACTION, R.CLUSTER,  # v4+: between brokers
                              lambda ctx, r: CLUSTER_NAME if ctx.version >= 4 else None, E.cluster_authorization_failed)


REQUEST: dict[int, tuple[Check, ...]] = {
    0: (Check(O.WRITE, R.TRANSACTIONAL_ID, _produce_transactional_id, E.transactional_id_authorization_failed),),
    8: (_group(O.READ),),  # OffsetCommit
    9: (Check(O.DESCRIBE, R.GROUP, _single_group_fetch, E.group_authorization_failed),),  # OffsetFetch v0-7
    11: (_group(O.READ),), 12: (_group(O.READ),), 13: (_group(O.READ),), 14: (_group(O.READ),),
    22: (_txn(O.WRITE),),  # InitProducerId; without a transactional id see idempotent_denied
    24: (ADD_PARTITIONS_CLIENT, ADD_PARTITIONS_BROKER),  # AddPartitionsToTxn
    25: (_txn(O.WRITE), _group(O.READ)),  # AddOffsetsToTxn
    26: (_txn(O.WRITE),),  # EndTxn
    28: (_txn(O.WRITE), _group(O.READ)),  # TxnOffsetCommit
    29: (_cluster(O.DESCRIBE),), 30: (_cluster(O.ALTER),), 31: (_cluster(O.ALTER),),  # the ACL APIs
    34: (_cluster(O.ALTER),),  # AlterReplicaLogDirs
    35: (_cluster(O.DESCRIBE),),  # DescribeLogDirs
    43: (_cluster(O.ALTER),),  # ElectLeaders
    45: (_cluster(O.ALTER),), 46: (_cluster(O.DESCRIBE),),  # partition reassignments
    47: (_group(O.DELETE),),  # OffsetDelete
    48: (_cluster(O.DESCRIBE_CONFIGS),), 49: (_cluster(O.ALTER_CONFIGS),),  # client quotas
    50: (_cluster(O.DESCRIBE),), 51: (_cluster(O.ALTER),),  # SCRAM credentials
    # checked by the controller a 3.9 broker forwards them to (ControllerApis)
    55: (_cluster(O.DESCRIBE),), 57: (_cluster(O.ALTER),), 64: (_cluster(O.ALTER),),
    80: (_cluster(O.ALTER),), 81: (_cluster(O.ALTER),),
    74: (_cluster(O.DESCRIBE_CONFIGS),),  # ListConfigResources (KafkaApis)
    68: (_group(O.READ),),  # ConsumerGroupHeartbeat
}

# API key -> the operation needed on every topic it reads or writes
TOPICS: dict[int, O] = {
    0: O.WRITE, 1: O.READ, 2: O.DESCRIBE, 8: O.READ, 9: O.DESCRIBE, 21: O.DELETE, 23: O.DESCRIBE,
    24: O.WRITE, 28: O.READ, 37: O.ALTER, 47: O.READ, 61: O.READ,
    90: O.DESCRIBE, 91: O.READ, 92: O.READ,  # the share-group offset APIs (their group checks: the handlers)
}


def denied(ctx, request) -> E | None:
    """The error of the first request-level check refused, or None."""
    if ctx.node.authorizer is None:
        return None
    for check in REQUEST.get(ctx.header.api_key, ()):
        name = check.name(ctx, request)
        if name is REFUSED or name is not None and not ctx.authorize(check.operation, check.resource_type, name):
            return check.error
    if ctx.header.api_key == 22 and request.transactional_id is None and idempotent_denied(ctx):
        return E.cluster_authorization_failed
    return None


def idempotent_denied(ctx) -> bool:
    """Kafka 3.x: an idempotent producer needs IDEMPOTENT_WRITE on the cluster or WRITE on some topic
    (KIP-679)."""
    authorizer = ctx.node.authorizer
    return not (ctx.authorize_cluster(O.IDEMPOTENT_WRITE)
                or authorizer.authorize_by_resource_type(ctx.principal, ctx.host, O.WRITE, R.TOPIC))


def denied_topics(ctx, names) -> set[str]:
    """The topics among ``names`` this API may not touch (its ``TOPICS`` operation refused)."""
    if ctx.node.authorizer is None:
        return set()
    names = set(names)
    return names - ctx.authorized(TOPICS[ctx.header.api_key], R.TOPIC, names)


async def denied_topics_paced(ctx, names, pace) -> set[str]:
    """:func:`denied_topics`, the authorizer asked once per name awaiting ``pace``."""
    if ctx.node.authorizer is None:
        return set()
    names = set(names)
    return names - await ctx.authorized_paced(TOPICS[ctx.header.api_key], R.TOPIC, names, pace)


# config resource type -> (resource type authorized, its name, error): Kafka's ConfigHelper and
# KafkaApis.handle(Incremental)AlterConfigsRequest; BROKER and BROKER_LOGGER are the cluster's
_CONFIG_RESOURCES = {
    2: (R.TOPIC, None, E.topic_authorization_failed),
    4: (R.CLUSTER, CLUSTER_NAME, E.cluster_authorization_failed),
    8: (R.CLUSTER, CLUSTER_NAME, E.cluster_authorization_failed),
    16: (R.CLUSTER, CLUSTER_NAME, E.cluster_authorization_failed),  # CLIENT_METRICS (Kafka: ConfigHelper, AuthHelper)
    32: (R.GROUP, None, E.group_authorization_failed),
}


def config_denied(ctx, resource_type: int, resource_name: str, operation: O) -> E | None:
    """The error of a DescribeConfigs (DESCRIBE_CONFIGS) or AlterConfigs (ALTER_CONFIGS) resource
    the principal may not use, or None."""
    found = _CONFIG_RESOURCES.get(resource_type)
    if found is None:
        return None
    rtype, name, error = found
    return None if ctx.authorize(operation, rtype, name or resource_name) else error
