"""DeleteShareGroupState (86), v0: forget share partitions' state (KIP-932).

Per partition a tombstone of its ShareSnapshot key in ``__share_group_state``; a partition without
state succeeds with nothing written (Kafka: ShareCoordinatorShard.deleteState). What the broker
held of the partition goes with it: the group starts it afresh (``share.auto.offset.reset``).
Checks common to 83-87: :mod:`shim.apis._share_state`.
"""

from ._share_state import answer
from .registry import api


@api(86, "DeleteShareGroupState", 0, 0)
async def handle(ctx, request):
    store, share = ctx.node.share.store, ctx.node.share

    def delete(key, topic, _p):
        store.delete([key])
        share.state_replaced(key[0], topic, key[2])
        return {}

    return await answer(ctx, request, "DeleteStateResult", delete)
