"""ListGroups (16), v0-5: every group with its protocol type; v4 filters by state names
(case-insensitive, KIP-518); v5 filters by group type (KIP-848) and names each group's type.

Classic groups are of type "classic"; consumer groups (KIP-848) of type "consumer", protocol type
"consumer", in the states Empty, Assigning, Reconciling or Stable, as Kafka 4 lists them; share
groups (KIP-932) of type and protocol type "share", Empty or Stable. Without
DESCRIBE on the cluster only the groups the principal may DESCRIBE are listed.
"""

from ..cluster import GROUP
from ..coordinators.group.describe import state_key, type_key
from ..errors import ErrorCode
from ..security.acls import AclOperation as O
from ..security.acls import ResourceType as R
from ._pace import Pacer
from .registry import api


@api(16, "ListGroups", 0, 5)
async def handle(ctx, request):
    pace = Pacer()  # a 2 MiB filter names a state a million times: 0.1-0.2 s of the loop unpaced
    states = {state_key(s) async for s in pace.each(getattr(request, "states_filter", None) or ())}
    types = {type_key(t) async for t in pace.each(getattr(request, "types_filter", None) or ())}
    listed = ctx.node.groups.list_groups(states, types) + _share_groups(ctx, states, types)
    listed = [g for g in listed if ctx.coordinates(GROUP, g[0])]  # each broker lists the groups it coordinates
    if not ctx.authorize_cluster(O.DESCRIBE):  # Kafka: then only the groups it may DESCRIBE
        listed = [g for g in listed if ctx.authorize(O.DESCRIBE, R.GROUP, g[0])]
    groups = tuple(ctx.make("ListedGroup", group_id=g, protocol_type=t, group_state=s, group_type=kind)
                   for g, t, s, kind in listed)
    return ctx.response(error_code=ErrorCode.none, groups=groups)


def _share_groups(ctx, states, types) -> list[tuple[str, str, str, str]]:
    """Kafka: ShareGroup.PROTOCOL_TYPE and GroupType.SHARE, filtered as the other types are."""
    if types and "share" not in types:
        return []
    return [(g.group_id, "share", g.state, "share") for g in ctx.node.share.groups.values()
            if not states or state_key(g.state) in states]
