"""IncrementalAlterConfigs (44), v0-1: SET, DELETE, APPEND, SUBTRACT on a resource's configs.

TOPIC and BROKER as AlterConfigs (33) but changing only the named configs; APPEND/SUBTRACT only for
LIST configs (INVALID_CONFIG "Can't APPEND to key .. because its type is not LIST."). BROKER_LOGGER
with this broker's id sets (SET) or resets (DELETE) the level of a broker's Python logger, by
log4j's names (FATAL, ERROR, WARN, INFO, DEBUG, TRACE), live and not persisted, as Kafka.
validate_only checks without changing anything.
"""

from ..configs.admin import Op, alter, duplicate_resources
from ..errors import ErrorCode, KafkaError
from ..security.acls import AclOperation as O
from ._authz import config_denied
from .registry import api


@api(44, "IncrementalAlterConfigs", 0, 1)
def handle(ctx, request):
    twice = duplicate_resources(request.resources)
    return ctx.response(responses=tuple(_resource(ctx, r, request.validate_only, twice) for r in request.resources))


def _resource(ctx, r, validate_only, twice):
    try:
        if (r.resource_type, r.resource_name) in twice:
            raise KafkaError(ErrorCode.invalid_request, "Each resource must appear at most once.")
        if (denied := config_denied(ctx, r.resource_type, r.resource_name, O.ALTER_CONFIGS)) is not None:
            raise KafkaError(denied)
        ops = [Op(c.name, c.config_operation, c.value) for c in r.configs]
        alter(ctx.node, r.resource_type, r.resource_name, ops, validate_only, incremental=True, node_id=ctx.node_id)
    except KafkaError as e:
        return ctx.make("AlterConfigsResourceResponse", error_code=e.code, error_message=e.message,
                        resource_type=r.resource_type, resource_name=r.resource_name)
    return ctx.make("AlterConfigsResourceResponse", error_code=ErrorCode.none, error_message=None,
                    resource_type=r.resource_type, resource_name=r.resource_name)
