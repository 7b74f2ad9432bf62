"""DescribeClientQuotas (48), v0-1.

Every stored entity the filter matches, with all its values, as Kafka's brokers answer from their
metadata image (ClientQuotasImage.describe): components match an entity type exactly (a name), its
default entity, or any entity that has the type; ``strict`` also requires the entity to have no
other type. A bad filter is an error with a null entry list: INVALID_REQUEST (empty or repeated
type, a match string where none belongs, ip combined with user or client-id), UNSUPPORTED_VERSION
for an unknown entity type.
"""

from ..errors import ErrorCode, KafkaError
from .registry import api


@api(48, "DescribeClientQuotas", 0, 1)
def handle(ctx, request):
    components = [(c.entity_type, c.match_type, c.match) for c in request.components]
    try:
        found = ctx.node.quotas.describe(components, request.strict)
    except KafkaError as e:
        return ctx.response(error_code=e.code, error_message=e.message, entries=None)
    entries = tuple(
        ctx.make("EntryData",
                 entity=tuple(ctx.make("EntityData", entity_type=t, entity_name=n) for t, n in sorted(entity)),
                 values=tuple(ctx.make("ValueData", key=k, value=v) for k, v in sorted(values.items())))
        for entity, values in found)
    return ctx.response(error_code=ErrorCode.none, error_message=None, entries=entries)


def error_response(ctx, request, code):
    return ctx.response(error_code=code, error_message=None, entries=None)
