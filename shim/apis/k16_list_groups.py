"""ListGroups (16), v0-4: every group with its protocol type; v4 filters by state names
(case-insensitive, KIP-518). Not served: v5's group type filter (KIP-848)."""

from ..errors import ErrorCode
from .registry import api


@api(16, "ListGroups", 0, 4)
def handle(ctx, request):
    listed = ctx.node.groups.list_groups(getattr(request, "states_filter", None))
    groups = tuple(ctx.make("ListedGroup", group_id=g, protocol_type=t, group_state=s) for g, t, s in listed)
    return ctx.response(error_code=ErrorCode.none, groups=groups)
