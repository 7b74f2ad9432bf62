"""ReadShareGroupState (84), v0: a share partition's durable state (KIP-932).

Per partition its state epoch, start offset and state batches (first and last offset, delivery
state 0 AVAILABLE / 2 ACKNOWLEDGED / 4 ARCHIVED, delivery count) as kept in
``__share_group_state`` (Kafka: ShareCoordinatorShard.readStateAndMaybeUpdateLeaderEpoch). A
partition never initialized (InitializeShareGroupState) is INVALID_REQUEST, as from Kafka 4.1.0
(KAFKA-19338; 4.0 answered start offset -1, and serves no share coordinator APIs to clients). A
leader epoch older than the highest recorded is FENCED_LEADER_EPOCH, -1 included; a different one
is recorded with a ShareUpdate. Errors answer start offset and state epoch 0, Kafka's defaults.
Checks common to 83-87: :mod:`shim.apis._share_state`.
"""

from ..coordinators.share.store import Change
from ._share_state import READ_UNINITIALIZED, answer, check_epochs, initialized
from .registry import api


@api(84, "ReadShareGroupState", 0, 0)
async def handle(ctx, request):
    store = ctx.node.share.store

    def checks(key, p):
        initialized(store, key, READ_UNINITIALIZED)
        check_epochs(store, key, leader_epoch=p.leader_epoch, unset_passes=False)

    def read(key, _topic, p):
        snap = store.get(key)
        if p.leader_epoch != -1 and p.leader_epoch != store.fences(key)[0]:
            store.write_batches([Change(key, -1, (), leader_epoch=p.leader_epoch)])
        return {"state_epoch": snap.state_epoch, "start_offset": snap.start_offset, "state_batches": tuple(
            ctx.make("StateBatch", first_offset=b.first_offset, last_offset=b.last_offset,
                     delivery_state=b.delivery_state, delivery_count=b.delivery_count) for b in snap.batches)}

    return await answer(ctx, request, "ReadStateResult", read, checks, state_epoch=0, start_offset=0, state_batches=())
