"""ReadShareGroupState (84), v0: a share partition's durable state (KIP-932).

Per partition its state epoch, start offset and state batches (first and last offset, delivery
state 0 AVAILABLE / 2 ACKNOWLEDGED / 4 ARCHIVED, delivery count) as kept in
``__share_group_state``; a partition without state answers start offset -1 and state epoch 0
(Kafka: ShareCoordinatorShard.readStateAndMaybeUpdateLeaderEpoch). A leader epoch older than the
recorded one is FENCED_LEADER_EPOCH; a newer one is recorded with a ShareUpdate. Checks common to
83-87: :mod:`shim.apis._share_state`.
"""

from ..coordinators.share.store import Change
from ._share_state import answer, check_epochs
from .registry import api

UNINITIALIZED_START_OFFSET, DEFAULT_STATE_EPOCH = -1, 0


@api(84, "ReadShareGroupState", 0, 0)
def handle(ctx, request):
    store = ctx.node.share.store

    def read(key, _topic, p):
        snap = store.get(key)
        check_epochs(snap, p.leader_epoch)
        if snap is None:
            return {"state_epoch": DEFAULT_STATE_EPOCH, "start_offset": UNINITIALIZED_START_OFFSET, "state_batches": ()}
        if p.leader_epoch != -1 and p.leader_epoch > snap.leader_epoch:
            store.write_batches([Change(key, -1, (), leader_epoch=p.leader_epoch)])
        return {"state_epoch": snap.state_epoch, "start_offset": snap.start_offset, "state_batches": tuple(
            ctx.make("StateBatch", first_offset=b.first_offset, last_offset=b.last_offset,
                     delivery_state=b.delivery_state, delivery_count=b.delivery_count) for b in snap.batches)}

    return answer(ctx, request, "ReadStateResult", read, state_epoch=0, start_offset=-1, state_batches=())
