"""ListGroups (16), v0-5: every group with its protocol type; v4 filters by state names
(case-insensitive, KIP-518); v5 filters by group type (KIP-848) and names each group's type.

Every group is a classic group, as with Kafka 3.9's classic group coordinator
(GroupCoordinator.handleListGroups): a type filter naming "classic" (any case) lists them all, one
without it lists none. Without DESCRIBE on the cluster only the groups the principal may DESCRIBE
are listed.
"""

from ..errors import ErrorCode
from ..security.acls import AclOperation as O
from ..security.acls import ResourceType as R
from .registry import api

CLASSIC = "classic"


@api(16, "ListGroups", 0, 5)
def handle(ctx, request):
    listed = ctx.node.groups.list_groups(getattr(request, "states_filter", None))
    if not ctx.authorize_cluster(O.DESCRIBE):  # Kafka: then only the groups it may DESCRIBE
        listed = [g for g in listed if ctx.authorize(O.DESCRIBE, R.GROUP, g[0])]
    types = {t.lower() for t in getattr(request, "types_filter", None) or ()}
    if types and CLASSIC not in types:
        listed = []
    groups = tuple(ctx.make("ListedGroup", group_id=g, protocol_type=t, group_state=s, group_type=CLASSIC)
                   for g, t, s in listed)
    return ctx.response(error_code=ErrorCode.none, groups=groups)
