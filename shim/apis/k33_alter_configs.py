"""AlterConfigs (33), v0-2: replace a resource's whole set of configs (the legacy, non-incremental API).

TOPIC: the topic's overrides become exactly the given ones, validated as at CreateTopics
(INVALID_CONFIG with Kafka's message), persisted with the topic, applied live to its partitions.
BROKER with this broker's id, or "" for the cluster default: the dynamic broker configs of that
level, checked as DynamicBrokerConfig.validate (read-only config -> INVALID_REQUEST "Cannot update
these configs dynamically: Set(..)", per-broker config at the cluster level -> INVALID_REQUEST),
persisted atomically and applied live. GROUP: the group's configs become exactly the given ones,
validated as IncrementalAlterConfigs validates them (shim.configs.group). validate_only checks without changing anything. A resource
named twice gets INVALID_REQUEST for both; BROKER_LOGGER is not served by this API (INVALID_REQUEST),
as in Kafka.
"""

from ..configs.admin import SET, Op, alter, duplicate_resources
from ..errors import ErrorCode, KafkaError
from ..security.acls import AclOperation as O
from ._authz import config_denied
from .registry import api


@api(33, "AlterConfigs", 0, 2)
def handle(ctx, request):
    twice = duplicate_resources(request.resources)
    return ctx.response(responses=tuple(_resource(ctx, r, request.validate_only, twice) for r in request.resources))


def _resource(ctx, r, validate_only, twice):
    try:
        if (r.resource_type, r.resource_name) in twice:
            raise KafkaError(ErrorCode.invalid_request, "Each resource must appear at most once.")
        if (denied := config_denied(ctx, r.resource_type, r.resource_name, O.ALTER_CONFIGS)) is not None:
            raise KafkaError(denied)
        alter(ctx.node, r.resource_type, r.resource_name, [Op(c.name, SET, c.value) for c in r.configs],
              validate_only, incremental=False, node_id=ctx.node_id)
    except KafkaError as e:
        return ctx.make("AlterConfigsResourceResponse", error_code=e.code, error_message=e.message,
                        resource_type=r.resource_type, resource_name=r.resource_name)
    return ctx.make("AlterConfigsResourceResponse", error_code=ErrorCode.none, error_message=None,
                    resource_type=r.resource_type, resource_name=r.resource_name)
