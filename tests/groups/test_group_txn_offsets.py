"""Transactional offset commits (TxnOffsetCommit, KIP-98/KIP-447) on the coordinator: verification
against the producer's transaction, member checks, pending offsets and RequireStable, and their
fate at the COMMIT/ABORT marker, live and after a restart."""

from __future__ import annotations

import pytest

from kafka_codecs import decode_batch
from shim.coordinators.txn import OFFSETS_TOPIC
from shim.coordinators.txn.markers import write_markers
from shim.errors import KafkaError

from group_helpers import T0, TOPIC, E, fetched, form_group, offsets

TP0 = (TOPIC, 0)


def begin(node, group="g", txn_id="tx", now=T0):
    """A producer with an ongoing transaction that includes the group's offsets partition."""
    pid, epoch = node.txn.init_producer_id(txn_id, 60_000, -1, -1, now)
    node.txn.add_offsets(txn_id, pid, epoch, group, now)
    return pid, epoch


def txn_commit(node, pid, epoch, pairs, *, group="g", txn_id="tx", member="", instance=None, generation=-1, now=T0):
    return node.groups.commit_txn_offsets(group, txn_id, pid, epoch, member, instance, generation,
                                          offsets(*pairs), now)


def test_pending_offsets_are_unstable_until_the_commit_marker(node, gc):
    gc.commit_offsets("g", "", None, -1, offsets((0, 3)), T0)
    pid, epoch = begin(node)
    assert txn_commit(node, pid, epoch, [(0, 10)]) == {TP0: E.none}
    # RequireStable answers UNSTABLE_OFFSET_COMMIT; without it the old committed offset shows.
    assert fetched(gc, "g", [TP0], stable=True) == {TP0: E.unstable_offset_commit}
    assert fetched(gc, "g", [TP0], stable=False) == {TP0: 3}
    node.txn.end_txn("tx", pid, epoch, True, T0 + 1)
    assert fetched(gc, "g", [TP0], stable=True) == {TP0: 10}


def test_aborted_offsets_are_discarded(node, gc):
    gc.commit_offsets("g", "", None, -1, offsets((0, 3)), T0)
    pid, epoch = begin(node)
    txn_commit(node, pid, epoch, [(0, 10), (1, 20)])
    node.txn.end_txn("tx", pid, epoch, False, T0 + 1)
    assert fetched(gc, "g", [TP0, (TOPIC, 1)], stable=True) == {TP0: 3, (TOPIC, 1): -1}


def test_a_plain_commit_written_after_the_transactional_one_wins(node, gc):
    pid, epoch = begin(node)
    txn_commit(node, pid, epoch, [(0, 10), (1, 10)])
    gc.commit_offsets("g", "", None, -1, offsets((0, 50)), T0)
    node.txn.end_txn("tx", pid, epoch, True, T0 + 1)
    assert fetched(gc, "g", [TP0, (TOPIC, 1)]) == {TP0: 50, (TOPIC, 1): 10}


def test_several_commits_in_one_transaction_keep_the_last_each_in_its_own_batch(node, gc):
    """Each is a COORDINATOR append with base sequence 0, as Kafka writes them: none is taken for
    a duplicate of the one before."""
    pid, epoch = begin(node)
    for offset in (1, 2, 3):
        assert txn_commit(node, pid, epoch, [(0, offset)]) == {TP0: E.none}
    plog = node.logs.get(*node.txn.offsets_partition("g"))
    assert [(h.base_offset, h.base_sequence) for h, _ in map(decode_batch, plog.iter_batches())] == [
        (0, 0), (1, 0), (2, 0)]
    node.txn.end_txn("tx", pid, epoch, True, T0 + 1)
    assert fetched(gc, "g", [TP0]) == {TP0: 3}


def test_offsets_are_written_as_transactional_records_of_the_producer(node, gc):
    pid, epoch = begin(node)
    txn_commit(node, pid, epoch, [(0, 10)])
    plog = node.logs.get(*node.txn.offsets_partition("g"))
    (raw,) = list(plog.iter_batches())
    h, records = decode_batch(raw)
    assert (h.producer_id, h.producer_epoch, h.is_transactional, len(records)) == (pid, epoch, True, 1)
    assert pid in plog.producer_state.ongoing_txns


def test_a_partition_not_added_to_the_transaction_is_invalid_txn_state(node, gc):
    pid, epoch = node.txn.init_producer_id("tx", 60_000, -1, -1, T0)
    assert txn_commit(node, pid, epoch, [(0, 1)]) == {TP0: E.invalid_txn_state}
    assert fetched(gc, "g", [TP0], stable=True) == {TP0: -1}


def test_the_offsets_partition_of_another_group_does_not_count(node, gc):
    groups = ["g"] + [f"g{i}" for i in range(20)]
    other = next(g for g in groups if node.txn.offsets_partition(g) != node.txn.offsets_partition("g"))
    pid, epoch = begin(node, group=other)
    assert txn_commit(node, pid, epoch, [(0, 1)]) == {TP0: E.invalid_txn_state}


def test_a_stale_producer_epoch_is_invalid_producer_epoch(node, gc):
    pid, epoch = begin(node)
    assert txn_commit(node, pid, epoch - 1 if epoch else epoch + 5, [(0, 1)]) == {TP0: E.invalid_producer_epoch}


def test_a_fenced_producer_cannot_commit_offsets_in_its_old_transaction(node, gc):
    pid, epoch = begin(node)
    txn_commit(node, pid, epoch, [(0, 1)])
    # Another instance of the producer fences this one: its transaction is aborted (the new
    # instance is told CONCURRENT_TRANSACTIONS and retries).
    with pytest.raises(KafkaError):
        node.txn.init_producer_id("tx", 60_000, -1, -1, T0 + 1)
    assert fetched(gc, "g", [TP0], stable=True) == {TP0: -1}  # the abort marker dropped them
    assert txn_commit(node, pid, epoch, [(0, 2)]) == {TP0: E.invalid_producer_epoch}


def test_a_producer_id_of_another_transactional_id_is_invalid_producer_id_mapping(node, gc):
    pid, epoch = begin(node)
    assert txn_commit(node, pid + 1000, epoch, [(0, 1)]) == {TP0: E.invalid_producer_id_mapping}
    assert txn_commit(node, pid, epoch, [(0, 1)], txn_id="unknown") == {TP0: E.invalid_producer_id_mapping}


def test_an_empty_group_id_is_invalid(node, gc):
    pid, epoch = begin(node, group="")
    assert txn_commit(node, pid, epoch, [(0, 1)], group="") == {TP0: E.invalid_group_id}


def test_kip_447_member_checks(node, gc):
    (leader, follower), gen = form_group(gc, 2)
    pid, epoch = begin(node)
    at = dict(now=T0 + 6_000)
    assert txn_commit(node, pid, epoch, [(0, 1)], member=follower, generation=gen + 1, **at) == {
        TP0: E.illegal_generation}
    assert txn_commit(node, pid, epoch, [(0, 1)], member="ghost", generation=gen, **at) == {TP0: E.unknown_member_id}
    assert txn_commit(node, pid, epoch, [(0, 1)], member=follower, instance="i", generation=gen, **at) == {
        TP0: E.unknown_member_id}
    assert txn_commit(node, pid, epoch, [(0, 1)], member=follower, generation=gen, **at) == {TP0: E.none}
    # Old producers send no member information: allowed even though the group has members.
    assert txn_commit(node, pid, epoch, [(0, 2)], **at) == {TP0: E.none}


def test_a_stale_static_member_is_fenced_on_txn_offset_commit(node, gc):
    from group_helpers import join, sync

    r = join(gc, instance_id="i").result
    sync(gc, r.member_id, r.generation_id, {r.member_id: b""})
    join(gc, instance_id="i", now=T0 + 1)
    pid, epoch = begin(node)
    assert txn_commit(node, pid, epoch, [(0, 1)], member=r.member_id, instance="i", generation=r.generation_id) == {
        TP0: E.fenced_instance_id}


def test_markers_written_through_write_txn_markers_settle_pending_offsets(node, gc):
    pid, epoch = begin(node)
    txn_commit(node, pid, epoch, [(0, 7)])
    topic, partition = node.txn.offsets_partition("g")
    # Admin.abortTransaction / WriteTxnMarkers goes through the same marker path.
    write_markers(node.logs, node.txn.marker_listeners, pid, epoch, 0, True, [(topic, partition)], T0)
    assert fetched(gc, "g", [TP0], stable=True) == {TP0: 7}


def test_a_marker_in_another_offsets_partition_leaves_pending_offsets_alone(node, gc):
    pid, epoch = begin(node)
    txn_commit(node, pid, epoch, [(0, 7)])
    _, partition = node.txn.offsets_partition("g")
    gc.on_marker(pid, OFFSETS_TOPIC, (partition + 1) % 4, True)
    gc.on_marker(pid, TOPIC, partition, True)
    assert fetched(gc, "g", [TP0], stable=True) == {TP0: E.unstable_offset_commit}


def test_a_timed_out_transaction_aborts_its_offsets(node, gc):
    pid, epoch = begin(node)
    txn_commit(node, pid, epoch, [(0, 7)])
    node.txn.abort_timed_out(T0 + 60_001)
    assert fetched(gc, "g", [TP0], stable=True) == {TP0: -1}


# -- after a restart ----------------------------------------------------------------------


def restart(nodes, node, clean):
    if clean:
        nodes.close(node)
    else:
        nodes.crash(node)
    return nodes()


def test_pending_offsets_of_an_open_transaction_are_pending_after_a_crash_and_commit_later(nodes, node, gc):
    gc.commit_offsets("g", "", None, -1, offsets((0, 3)), T0)
    pid, epoch = begin(node)
    txn_commit(node, pid, epoch, [(0, 10)])
    node = restart(nodes, node, clean=False)
    assert fetched(node.groups, "g", [TP0], stable=True) == {TP0: E.unstable_offset_commit}
    assert fetched(node.groups, "g", [TP0]) == {TP0: 3}
    node.txn.end_txn("tx", pid, epoch, True, T0 + 1)
    assert fetched(node.groups, "g", [TP0], stable=True) == {TP0: 10}


def test_replay_applies_the_markers_it_finds(nodes, node, gc):
    pid, epoch = begin(node)
    txn_commit(node, pid, epoch, [(0, 10), (1, 10)])
    node.txn.end_txn("tx", pid, epoch, True, T0 + 1)
    pid2, epoch2 = begin(node, txn_id="tx2", now=T0 + 2)
    txn_commit(node, pid2, epoch2, [(0, 99)], txn_id="tx2", now=T0 + 2)
    node.txn.end_txn("tx2", pid2, epoch2, False, T0 + 3)
    gc.commit_offsets("g", "", None, -1, offsets((1, 50)), T0 + 4)
    for clean in (True, False):
        node = restart(nodes, node, clean)
        assert fetched(node.groups, "g", [TP0, (TOPIC, 1)], stable=True) == {TP0: 10, (TOPIC, 1): 50}


def test_a_transaction_aborted_by_its_timeout_after_a_restart_drops_the_offsets(nodes, node, gc):
    pid, epoch = begin(node)
    txn_commit(node, pid, epoch, [(0, 10)])
    node = restart(nodes, node, clean=True)
    node.txn.abort_timed_out(T0 + 60_001)
    assert fetched(node.groups, "g", [TP0], stable=True) == {TP0: -1}


def test_a_prepared_commit_completed_at_start_up_materialises_the_offsets(nodes, node, gc):
    """The broker died between PrepareCommit and the markers: start-up writes the markers before
    the group coordinator loads, and the replay sees them."""
    from shim.coordinators.txn.state import TxnState

    pid, epoch = begin(node)
    txn_commit(node, pid, epoch, [(0, 10)])
    m = node.txn.txns["tx"]
    node.txn._move(m, TxnState.PREPARE_COMMIT, T0 + 1)  # persisted, markers not yet written
    node = restart(nodes, node, clean=False)
    assert node.txn.txns["tx"].state is TxnState.COMPLETE_COMMIT
    assert fetched(node.groups, "g", [TP0], stable=True) == {TP0: 10}
