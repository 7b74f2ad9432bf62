"""WriteShareGroupState (85), v0: record a share partition's changed state batches (KIP-932).

Per partition a ShareUpdate of the given start offset (-1: unchanged) and state batches, laid over
the recorded state, or a new ShareSnapshot (the batches merged over the recorded ones) when the
state epoch is higher than the recorded one (a ShareUpdate has no state epoch; KAFKA-19337) or
when ``share.coordinator.snapshot.update.records.per.snapshot`` updates followed the last one
(Kafka: ShareCoordinatorShard.writeState, generateShareStateRecord). A partition never
initialized (InitializeShareGroupState) is INVALID_REQUEST, as from Kafka 4.1.0 (KAFKA-19338); a
leader or state epoch older than the highest recorded is FENCED_LEADER_EPOCH / FENCED_STATE_EPOCH
(-1 is never fenced). kafka-shim's broker writes its own share partitions'
state directly; a write from outside replaces what the broker holds of that partition (its
records come back as written). A batch whose last offset is before its first, or an AVAILABLE
batch of more than 65536 offsets, or a write leaving more than that many offsets in flight, is
INVALID_REQUEST (the broker keeps a record per in-flight offset). Checks common to 83-87:
:mod:`shim.apis._share_state`.
"""

from ..coordinators.share.records import StateBatch, combine
from ..coordinators.share.store import Change
from ..errors import ErrorCode, KafkaError
from ._share_state import WRITE_UNINITIALIZED, answer, check_epochs, initialized
from .registry import api

MAX_IN_FLIGHT_SPAN = 1 << 16
TERMINAL = (2, 4)


@api(85, "WriteShareGroupState", 0, 0)
async def handle(ctx, request):
    store, share = ctx.node.share.store, ctx.node.share

    def checks(key, p):
        initialized(store, key, WRITE_UNINITIALIZED)
        check_epochs(store, key, p.leader_epoch, p.state_epoch)

    def write(key, topic, p):
        batches = tuple(StateBatch(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count)
                        for b in p.state_batches)
        for b in batches:
            span = b.last_offset - b.first_offset + 1
            if span < 1 or (b.delivery_state not in TERMINAL and span > MAX_IN_FLIGHT_SPAN):
                raise KafkaError(ErrorCode.invalid_request, f"state batch {b.first_offset}-{b.last_offset}")
        if _in_flight(store.get(key), p.start_offset, batches) > MAX_IN_FLIGHT_SPAN:
            raise KafkaError(ErrorCode.invalid_request, f"more than {MAX_IN_FLIGHT_SPAN} offsets in flight")
        store.write_batches([Change(key, p.start_offset, batches, state_epoch=p.state_epoch,
                                    leader_epoch=p.leader_epoch)])
        share.state_replaced(key[0], topic, key[2])
        return {}

    return await answer(ctx, request, "WriteStateResult", write, checks)


def _in_flight(old, start_offset: int, batches) -> int:
    """Offsets not yet done once ``batches`` are laid over the recorded state: the broker holds a
    record for each. Bounding each batch alone let 20 batches of 65,536 make 1.3 million records
    (2 s of the loop, 170 MiB), and a thousand of them, 20 KiB of request, would take 8 GiB."""
    start = start_offset if start_offset != -1 or old is None else old.start_offset
    combined = combine(old.batches if old is not None else (), batches, start)
    return sum(b.last_offset - b.first_offset + 1 for b in combined if b.delivery_state not in TERMINAL)
