"""ListGroups (16), v0-5: every group with its protocol type; v4 filters by state names
(case-insensitive, KIP-518); v5 filters by group type (KIP-848) and names each group's type.

Classic groups are of type "classic"; consumer groups (KIP-848) of type "consumer", protocol type
"consumer", in the states Empty, Assigning, Reconciling or Stable, as Kafka 4 lists them. Without
DESCRIBE on the cluster only the groups the principal may DESCRIBE are listed.
"""

from ..cluster import GROUP
from ..errors import ErrorCode
from ..security.acls import AclOperation as O
from ..security.acls import ResourceType as R
from .registry import api


@api(16, "ListGroups", 0, 5)
def handle(ctx, request):
    listed = ctx.node.groups.list_groups(getattr(request, "states_filter", None),
                                         getattr(request, "types_filter", None))
    listed = [g for g in listed if ctx.coordinates(GROUP, g[0])]  # each broker lists the groups it coordinates
    if not ctx.authorize_cluster(O.DESCRIBE):  # Kafka: then only the groups it may DESCRIBE
        listed = [g for g in listed if ctx.authorize(O.DESCRIBE, R.GROUP, g[0])]
    groups = tuple(ctx.make("ListedGroup", group_id=g, protocol_type=t, group_state=s, group_type=kind)
                   for g, t, s, kind in listed)
    return ctx.response(error_code=ErrorCode.none, groups=groups)
