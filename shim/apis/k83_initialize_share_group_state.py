"""InitializeShareGroupState (83), v0: give share partitions a fresh state (KIP-932).

Kafka's group coordinator sends it to the share coordinator when a share group's heartbeat first
sees a partition of a subscribed topic (start offset -1) or its offsets are altered; kafka-shim's
share coordinator writes the same snapshots directly (ShareStateStore.initialize), so this serves
other callers. Per partition, over whatever state there was, a new ShareSnapshot of no state
batches, the state epoch and start offset as given (-1 included), leader epoch 0 and snapshot
epoch one past the last (Kafka 4.1: ShareCoordinatorShard.initializeState, ShareGroupOffset.fromRequest).
A state epoch older than the highest recorded is FENCED_STATE_EPOCH (-1 is never fenced); the
leader epoch requests are fenced by stays the highest recorded, not the 0 written. Checks common
to 83-87: :mod:`shim.apis._share_state`.
"""

from ..coordinators.share.store import Change
from ._share_state import answer, check_epochs
from .registry import api

UNINITIALIZED_EPOCH = 0  # Kafka: ShareGroupOffset.UNINITIALIZED_EPOCH, the leader epoch written


@api(83, "InitializeShareGroupState", 0, 0)
async def handle(ctx, request):
    store, share = ctx.node.share.store, ctx.node.share

    def fenced(key, p):
        check_epochs(store, key, state_epoch=p.state_epoch)

    def initialize(key, topic, p):
        store.write_batches([Change(key, p.start_offset, (), state_epoch=p.state_epoch,
                                    leader_epoch=UNINITIALIZED_EPOCH, initialize=True)])
        share.state_replaced(key[0], topic, key[2])
        return {}

    return await answer(ctx, request, "InitializeStateResult", initialize, fenced)
