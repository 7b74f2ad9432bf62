"""DeleteGroups (42), v0-2: deletes empty groups with their committed offsets (tombstones in
__consumer_offsets). GROUP_ID_NOT_FOUND for unknown groups, NON_EMPTY_GROUP while members remain."""

from ..cluster import GROUP
from ..errors import ErrorCode
from ..node import now_ms
from ..security.acls import AclOperation as O
from ..security.acls import ResourceType as R
from .registry import api


@api(42, "DeleteGroups", 0, 2)
def handle(ctx, request):
    allowed = ctx.authorized(O.DELETE, R.GROUP, request.groups_names)  # Kafka: DELETE on each group
    mine = [g for g in request.groups_names if g in allowed and ctx.coordinates(GROUP, g)]  # shim.cluster
    results = ctx.node.groups.delete_groups(mine, now_ms()) if mine else {}
    results.update({g: ErrorCode.group_authorization_failed for g in request.groups_names if g not in allowed})
    results = {g: results.get(g, ErrorCode.not_coordinator) for g in request.groups_names}
    return ctx.response(results=tuple(ctx.make("DeletableGroupResult", group_id=g, error_code=c)
                                      for g, c in results.items()))
