"""ReadShareGroupStateSummary (87), v0: a share partition's start offset and epochs (KIP-932).

Per partition its state epoch, leader epoch and start offset; a partition without state answers
start offset -1 and epochs 0 (Kafka: ShareCoordinatorShard.readStateSummary, which the group
coordinator uses to describe share-group offsets); an error answers start offset 0 and epochs 0,
Kafka's defaults. Checks common to 83-87:
:mod:`shim.apis._share_state`.
"""

from ._share_state import answer
from .registry import api

UNINITIALIZED_START_OFFSET, DEFAULT_EPOCH = -1, 0


@api(87, "ReadShareGroupStateSummary", 0, 0)
async def handle(ctx, request):
    store = ctx.node.share.store

    def summary(key, _topic, _p):
        snap = store.get(key)
        if snap is None:
            return {"state_epoch": DEFAULT_EPOCH, "leader_epoch": DEFAULT_EPOCH,
                    "start_offset": UNINITIALIZED_START_OFFSET}
        return {"state_epoch": snap.state_epoch, "leader_epoch": snap.leader_epoch, "start_offset": snap.start_offset}

    return await answer(ctx, request, "ReadStateSummaryResult", summary, state_epoch=0, leader_epoch=0, start_offset=0)
