"""AlterClientQuotas (49), v0-1.

Sets or removes quota values of user, client-id and ip entities (a null name is the type's default
entity), durably before answering; validate_only checks without changing anything. Validation is
Kafka's controller's (ClientQuotaControlManager): ``producer_byte_rate``, ``consumer_byte_rate``
(integral), ``request_percentage`` and ``controller_mutation_rate`` for user/client-id entities,
``connection_creation_rate`` (integral) for ip entities, every value above 0; anything else is
INVALID_REQUEST for that entity. The answer has one entry per entity named.

Enforced: the two byte rates (see shim.coordinators.quota_enforcement). Accepted and described
but not enforced: request_percentage, controller_mutation_rate and connection_creation_rate.
An ip entity must be an address literal: Kafka also accepts a host name it can resolve.
"""

from ..coordinators.client_quotas import entity_of
from ..errors import ErrorCode
from ._pace import Pacer
from .registry import api


@api(49, "AlterClientQuotas", 0, 1)
async def handle(ctx, request):
    # Paced: 45,000 distinct entities (2 MiB) took 0.35-0.74 CPU s in one turn of the loop. Every
    # entity is still validated before any is applied, and all are written at once.
    pace = Pacer()
    alterations = [
        (entity_of((e.entity_type, e.entity_name) for e in entry.entity),
         [(op.key, None if op.remove else op.value) for op in entry.ops])
        async for entry in pace.each(request.entries)]
    results = await ctx.node.quotas.alter(alterations, request.validate_only, pace)
    entries = tuple([
        ctx.make("EntryData", error_code=ErrorCode.none if err is None else err.code,
                 error_message=None if err is None else err.message,
                 entity=tuple(ctx.make("EntityData", entity_type=t, entity_name=n) for t, n in sorted(entity)))
        async for entity, err in pace.each(results.items())])
    return ctx.response(entries=entries)


def error_response(ctx, request, code):
    """Kafka: AlterClientQuotasRequest.getErrorResponse -- the error on every entry."""
    return ctx.response(entries=tuple(
        ctx.make("EntryData", error_code=code, error_message=None, entity=tuple(
            ctx.make("EntityData", entity_type=e.entity_type, entity_name=e.entity_name) for e in entry.entity))
        for entry in request.entries))
