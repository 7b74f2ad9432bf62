"""DeleteGroups (42), v0-2: deletes empty groups with their committed offsets (tombstones in
__consumer_offsets). GROUP_ID_NOT_FOUND for unknown groups, NON_EMPTY_GROUP while members remain.

Share groups (KIP-932) first, as Kafka's GroupCoordinatorService chains the deletion: an empty share
group goes with all its share state, one with members is NON_EMPTY_GROUP; an id no share group has
goes on to the classic and consumer groups. Not gated by share.version, as in Kafka 4.1."""

from ..cluster import GROUP
from ..errors import ErrorCode, KafkaError
from ..node import now_ms
from ..security.acls import AclOperation as O
from ..security.acls import ResourceType as R
from ._loading import LOADING, loading
from ._pace import Pacer
from .registry import api


CHUNK = 1000  # groups deleted between two yields to the loop (each group's deletion is Kafka's own write)


@api(42, "DeleteGroups", 0, 2)
async def handle(ctx, request):
    # Paced: 2 MiB of one group's name took 1.1 CPU s in one turn of the loop. Kafka answers each
    # group once (a keyed collection): the names are deduplicated first, in the request's order.
    pace = Pacer()
    names = list({g: None async for g in pace.each(request.groups_names)})
    allowed = await ctx.authorized_paced(O.DELETE, R.GROUP, names, pace)  # Kafka: DELETE on each group
    mine = [g async for g in pace.each(names) if g in allowed and ctx.coordinates(GROUP, g)]  # shim.cluster
    # the groups left after their own checks wait for a loading coordinator (shim.apis._loading)
    results = dict.fromkeys(mine, LOADING) if mine and loading(ctx) else \
        _delete_share_groups(ctx, [g for g in mine if g in ctx.node.share.groups])
    rest = [g async for g in pace.each(mine) if g not in results]
    for i in range(0, len(rest), CHUNK):
        results.update(ctx.node.groups.delete_groups(rest[i:i + CHUNK], now_ms()))
        await pace()
    return ctx.response(results=tuple([ctx.make("DeletableGroupResult", group_id=g, error_code=results.get(
        g, ErrorCode.not_coordinator) if g in allowed else ErrorCode.group_authorization_failed)
        async for g in pace.each(names)]))


def _delete_share_groups(ctx, group_ids) -> dict[str, ErrorCode]:
    results = {}
    for group_id in group_ids:
        try:
            ctx.node.share.delete_group(group_id)
            results[group_id] = ErrorCode.none
        except KafkaError as e:
            results[group_id] = e.code
    return results
