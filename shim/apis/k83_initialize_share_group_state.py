"""InitializeShareGroupState (83), v0: give share partitions a fresh state (KIP-932).

Kafka's group coordinator sends it to the share coordinator when a share group's heartbeat first
sees a partition of a subscribed topic (start offset -1) or its offsets are altered; kafka-shim's
share coordinator writes the same snapshots directly (ShareStateStore.initialize), so this serves
other callers. Per partition a new ShareSnapshot of no state batches, the
given state epoch and start offset, snapshot epoch one past the last
(Kafka: ShareCoordinatorShard.initializeState); a state epoch older than the recorded one is
FENCED_STATE_EPOCH. Checks common to 83-87: :mod:`shim.apis._share_state`.
"""

from ..coordinators.share.store import Change
from ._share_state import answer, check_epochs
from .registry import api


@api(83, "InitializeShareGroupState", 0, 0)
def handle(ctx, request):
    store, share = ctx.node.share.store, ctx.node.share

    def initialize(key, topic, p):
        check_epochs(store.get(key), -1, p.state_epoch)
        store.write_batches([Change(key, p.start_offset, (), state_epoch=p.state_epoch, leader_epoch=-1,
                                    initialize=True)])
        share.state_replaced(key[0], topic, key[2])
        return {}

    return answer(ctx, request, "InitializeStateResult", initialize)
