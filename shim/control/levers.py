"""Control operations on the coordinators: markers held and released, clocks advanced, fencing."""

from __future__ import annotations

from ..coordinators.group import deadlines as group_deadlines
from ..node import now_ms
from .args import Arg
from .ops import op


@op("hold_markers", "from now on, transaction markers wait after EndTxn is answered until released "
    "(the transaction stays prepared: the LSO stays, read_committed consumers stop at it)")
def _hold_markers(control):
    control.node.txn.markers_held = True
    return {"held": sorted(control.node.txn.held), "holding": True}


@op("release_markers", "write the held markers (of one transactional id, or all) and stop holding",
    Arg("transactional_id", "str", "only this transactional id's markers"),
    Arg("hold", "bool", "keep holding the markers of later transactions", default=False))
def _release_markers(control, transactional_id, hold):
    txn = control.node.txn
    txn.markers_held = False
    try:
        released = txn.release_markers(now_ms(), transactional_id)
    finally:
        txn.markers_held = hold
    return {"released": released, "held": sorted(txn.held), "holding": hold}


@op("advance_clock", "advance the transaction and/or group clock: what would time out within ms "
    "times out now (transactions aborted, transactional ids past transactional.id.expiration.ms expired, "
    "sessions expired, committed offsets past offsets.retention.minutes "
    "expired and their emptied groups deleted, share acquisition locks expired, share "
    "partitions left initializing due for their retry), without waiting",
    Arg("ms", "int", "milliseconds to advance by", required=True, minimum=0),
    Arg("clock", "choice", "which clock", default="all", choices=("all", "transactions", "groups")),
    Arg("group_id", "str", "only this group's deadlines"))
def _advance_clock(control, ms, clock, group_id):
    node, now = control.node, now_ms()
    aborted = node.txn.abort_timed_out(now, ms) if clock in ("all", "transactions") else []
    txn_ids = node.txn.advance_expiration(now, ms) if clock in ("all", "transactions") else []
    expired = group_deadlines.advance(node.groups, now, ms, group_id) if clock in ("all", "groups") else []
    share = node.share.advance(now, ms, group_id) if clock in ("all", "groups") else {}
    # after the sessions: a group its members left by timing out is Empty from now
    offsets = node.groups.expiration.advance(now, ms, group_id)._asdict() if clock in ("all", "groups") else {}
    return {"aborted_transactions": aborted, "expired_transactional_ids": txn_ids, "expired_members": expired,
            **offsets, **share}


@op("fence", "bump a transactional id's epoch as a new producer would: the old producer is fenced "
    "(PRODUCER_FENCED, INVALID_PRODUCER_EPOCH on older versions) and an open transaction aborted",
    Arg("transactional_id", "str", "the transactional id", required=True))
def _fence(control, transactional_id):
    producer_id, epoch = control.node.txn.fence(transactional_id, now_ms())
    return {"transactional_id": transactional_id, "producer_id": producer_id, "producer_epoch": epoch}
