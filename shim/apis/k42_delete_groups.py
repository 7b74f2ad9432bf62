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
from .registry import api


@api(42, "DeleteGroups", 0, 2)
def handle(ctx, request):
    allowed = ctx.authorized(O.DELETE, R.GROUP, request.groups_names)  # Kafka: DELETE on each group
    mine = [g for g in request.groups_names if g in allowed and ctx.coordinates(GROUP, g)]  # shim.cluster
    results = _delete_share_groups(ctx, [g for g in mine if g in ctx.node.share.groups])
    rest = [g for g in mine if g not in results]
    results.update(ctx.node.groups.delete_groups(rest, now_ms()) if rest else {})
    results.update({g: ErrorCode.group_authorization_failed for g in request.groups_names if g not in allowed})
    results = {g: results.get(g, ErrorCode.not_coordinator) for g in request.groups_names}
    return ctx.response(results=tuple(ctx.make("DeletableGroupResult", group_id=g, error_code=c)
                                      for g, c in results.items()))


def _delete_share_groups(ctx, group_ids) -> dict[str, ErrorCode]:
    results = {}
    for group_id in group_ids:
        try:
            ctx.node.share.delete_group(group_id)
            results[group_id] = ErrorCode.none
        except KafkaError as e:
            results[group_id] = e.code
    return results
