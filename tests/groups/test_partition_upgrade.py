"""Data directories written when groups and transactional ids were placed by the masked hash
(``hashCode & 0x7fffffff``) instead of Kafka's ``Utils.abs(hashCode)``: after the upgrade a key's
records in its legacy partition are replayed before those of its Kafka partition, new writes go to
the Kafka partition and win, and deletions reach the legacy partition so compaction cannot bring
legacy records back."""

from __future__ import annotations

from contextlib import contextmanager

import pytest

from kafka_codecs import decode_batch
from shim.coordinators.group import GroupState
from shim.coordinators.group import records as rec
from shim.coordinators.group import store as group_store
from shim.coordinators.partitioning import legacy_partition_for, partition_for
from shim.coordinators.txn import OFFSETS_TOPIC
from shim.coordinators.txn import coordinator as txn_coordinator
from shim.coordinators.txn.state import TxnState

from group_helpers import T0, TOPIC, E, fetched, form_group, offsets
from test_consumer_groups import Client, converge
from test_group_compaction import compact_all

N = 4  # the nodes fixture's offsets.topic.num.partitions and transaction.state.num.partitions
GROUP = "legacy-group"   # hashCode 0xf438437b: Kafka partition 1, legacy 3
TXN = "legacy-txn-2"     # hashCode 0xf4f2228b: Kafka partition 1, legacy 3
DONE_TXN = "legacy-txn-6"
TP0, TP1 = (TOPIC, 0), (TOPIC, 1)
DAY = 86_400_000


@pytest.fixture(autouse=True)
def _placements_differ():
    # The legacy partition is replayed after the Kafka one in partition order: only the upgrade's
    # replay order keeps the newer records on top.
    for key in (GROUP, TXN, DONE_TXN):
        assert (partition_for(key, N), legacy_partition_for(key, N)) == (1, 3)


@contextmanager
def legacy_placement(monkeypatch):
    """Write as the earlier code did: the masked placement, no tombstones in another partition."""
    with monkeypatch.context() as m:
        m.setattr(txn_coordinator, "partition_for", legacy_partition_for)
        m.setattr(group_store, "legacy_partition", lambda key, n: None)
        yield


def restart(nodes, node):
    nodes.crash(node)
    return nodes()


def keys_in(node, partition):
    """Group ids with a live (non-tombstone) latest record in the offsets partition."""
    latest = {}
    for raw in node.logs.get(OFFSETS_TOPIC, partition).iter_batches():
        h, records = decode_batch(raw)
        for r in [] if h.is_control else records:
            latest[r.key] = r.value
    return {rec.read_key(k).group_id for k, v in latest.items() if v is not None}


def test_group_state_and_offsets_survive_and_newer_commits_and_deletion_win(nodes, node, monkeypatch):
    with legacy_placement(monkeypatch):
        (member,), gen = form_group(node.groups, 1, group=GROUP)
        node.groups.commit_offsets(GROUP, member, None, gen, offsets((0, 5), (1, 6)), T0)
    assert keys_in(node, 3) == {GROUP} and keys_in(node, 1) == set()
    node = restart(nodes, node)
    g = node.groups.groups[GROUP]
    assert (g.state, g.generation_id, list(g.members)) == (GroupState.STABLE, gen, [member])
    assert fetched(node.groups, GROUP) == {TP0: 5, TP1: 6}
    assert node.groups.commit_offsets(GROUP, member, None, gen, offsets((0, 9)), T0) == {TP0: E.none}
    assert keys_in(node, 1) == {GROUP}
    node = restart(nodes, node)
    assert fetched(node.groups, GROUP) == {TP0: 9, TP1: 6}
    assert node.groups.groups[GROUP].state is GroupState.STABLE
    node.groups.leave_group(GROUP, [(member, None)], T0 + 1)
    assert node.groups.delete_groups([GROUP], T0 + 2) == {GROUP: E.none}
    assert keys_in(node, 3) == set() and keys_in(node, 1) == set()  # tombstones in both partitions
    node = restart(nodes, node)
    assert GROUP not in node.groups.groups and fetched(node.groups, GROUP) == {}


def test_compaction_does_not_bring_back_a_deleted_groups_legacy_records(nodes, monkeypatch):
    tiny = {"offsets.topic.segment.bytes": "100"}  # a segment per batch: everything is cleanable
    node = nodes(extra=tiny)
    node.logs.create_topic(TOPIC, 2)
    with legacy_placement(monkeypatch):
        node.groups.commit_offsets(GROUP, "", None, -1, offsets((0, 5)), T0)
    node = restart(nodes, node)
    node.groups.commit_offsets(GROUP, "", None, -1, offsets((1, 7)), T0)
    assert node.groups.delete_groups([GROUP], T0) == {GROUP: E.none}

    def churn(i):  # other groups keep both partitions dirty enough to clean again
        for other in ("grp-1", "grp-3"):
            assert partition_for(other, N) == legacy_partition_for(other, N) == int(other[-1])
            node.groups.commit_offsets(other, "", None, -1, offsets((0, i)), T0)

    for i in range(30):
        churn(i)
    compact_all(node, T0)  # tombstones are kept for delete.retention.ms
    for i in range(30):
        churn(100 + i)
    compact_all(node, T0 + 2 * DAY)  # ... and then removed
    for p in (1, 3):
        for raw in node.logs.get(OFFSETS_TOPIC, p).iter_batches():
            h, records = decode_batch(raw)
            assert h.is_control or all(rec.read_key(r.key).group_id != GROUP for r in records)
    node.close()
    nodes.open.remove(node)
    node = nodes(extra=tiny)
    assert GROUP not in node.groups.groups and fetched(node.groups, GROUP) == {}


def test_transactions_survive_and_complete_after_the_upgrade(nodes, node, monkeypatch):
    with legacy_placement(monkeypatch):
        done_pid, done_epoch = node.txn.init_producer_id(DONE_TXN, 60_000, -1, -1, T0)
        node.txn.add_partitions(DONE_TXN, done_pid, done_epoch, {TP0}, T0)
        node.txn.end_txn(DONE_TXN, done_pid, done_epoch, True, T0)
        pid, epoch = node.txn.init_producer_id(TXN, 60_000, -1, -1, T0)
        node.txn.add_offsets(TXN, pid, epoch, GROUP, T0)
        assert node.groups.commit_txn_offsets(GROUP, TXN, pid, epoch, "", None, -1, offsets((0, 42)), T0) == {
            TP0: E.none}
    node = restart(nodes, node)
    ongoing = node.txn.txns[TXN]
    assert (ongoing.state, ongoing.producer_id, ongoing.partitions) == (TxnState.ONGOING, pid, {(OFFSETS_TOPIC, 3)})
    assert node.txn.txns[DONE_TXN].state is TxnState.COMPLETE_COMMIT
    assert fetched(node.groups, GROUP, [TP0], stable=True) == {TP0: E.unstable_offset_commit}
    # the transaction goes on after the upgrade: its next offsets go to the group's Kafka partition
    node.txn.add_offsets(TXN, pid, epoch, GROUP, T0)  # as a producer does before each TxnOffsetCommit
    assert node.groups.commit_txn_offsets(GROUP, TXN, pid, epoch, "", None, -1, offsets((1, 43)), T0) == {
        TP1: E.none}
    assert node.txn.txns[TXN].partitions == {(OFFSETS_TOPIC, 3), (OFFSETS_TOPIC, 1)}
    node.txn.end_txn(TXN, pid, epoch, True, T0 + 1)
    assert fetched(node.groups, GROUP, [TP0, TP1], stable=True) == {TP0: 42, TP1: 43}
    node = restart(nodes, node)
    assert node.txn.txns[TXN].state is TxnState.COMPLETE_COMMIT
    assert fetched(node.groups, GROUP, [TP0, TP1], stable=True) == {TP0: 42, TP1: 43}
    # a new epoch is written to the Kafka partition and wins over the legacy state
    assert node.txn.init_producer_id(TXN, 60_000, pid, epoch, T0 + 2) == (pid, epoch + 1)
    node = restart(nodes, node)
    assert node.txn.txns[TXN].producer_epoch == epoch + 1


def test_an_ongoing_legacy_transaction_aborted_after_the_upgrade_discards_its_offsets(nodes, node, monkeypatch):
    with legacy_placement(monkeypatch):
        node.groups.commit_offsets(GROUP, "", None, -1, offsets((0, 1)), T0)
        pid, epoch = node.txn.init_producer_id(TXN, 60_000, -1, -1, T0)
        node.txn.add_offsets(TXN, pid, epoch, GROUP, T0)
        node.groups.commit_txn_offsets(GROUP, TXN, pid, epoch, "", None, -1, offsets((0, 42)), T0)
    node = restart(nodes, node)
    node.txn.end_txn(TXN, pid, epoch, False, T0 + 1)
    assert fetched(node.groups, GROUP, [TP0], stable=True) == {TP0: 1}
    node = restart(nodes, node)
    assert fetched(node.groups, GROUP, [TP0], stable=True) == {TP0: 1}


def test_a_consumer_group_survives_and_a_member_leaving_after_the_upgrade_stays_gone(nodes, node, monkeypatch):
    with legacy_placement(monkeypatch):
        a, b = Client(node.groups, "a", group=GROUP), Client(node.groups, "b", group=GROUP)
        converge([a, b])
        node.groups.commit_offsets(GROUP, "a", None, a.epoch, offsets((1, 7)), T0)
        before = node.groups.consumer.groups[GROUP]
        snapshot = (before.group_epoch, {m: x.current() for m, x in before.members.items()}, dict(before.target))
    node = restart(nodes, node)
    after = node.groups.consumer.groups[GROUP]
    assert (after.group_epoch, {m: x.current() for m, x in after.members.items()}, after.target) == snapshot
    assert fetched(node.groups, GROUP) == {TP1: 7}
    a.gc = b.gc = node.groups
    assert a.beat(epoch=-1).error == E.none  # leaves: tombstones of its records in the Kafka partition
    converge([b])
    epoch = node.groups.consumer.groups[GROUP].group_epoch
    node = restart(nodes, node)
    group = node.groups.consumer.groups[GROUP]
    assert (list(group.members), group.group_epoch) == (["b"], epoch)
    b.gc = node.groups
    assert b.beat(epoch=-1).error == E.none
    assert node.groups.delete_groups([GROUP], T0) == {GROUP: E.none}
    node = restart(nodes, node)
    assert GROUP not in node.groups.consumer.groups and GROUP not in node.groups.groups
    assert fetched(node.groups, GROUP) == {}


def test_a_directory_without_legacy_records_is_replayed_once_at_start_up(nodes, node, monkeypatch):
    """Start-up replays each offsets batch once when no record sits in its legacy partition (the
    LEGACY phase would replay nothing); the group and its offsets come back all the same."""
    (member,), gen = form_group(node.groups, 1, group=GROUP)
    node.groups.commit_offsets(GROUP, member, None, gen, offsets((0, 5), (1, 6)), T0)
    batches = sum(len(list(node.logs.get(OFFSETS_TOPIC, p).iter_batches())) for p in range(N))
    decoded = []
    monkeypatch.setattr(group_store, "decode_batch", lambda raw: decoded.append(raw) or decode_batch(raw))
    node = restart(nodes, node)
    assert batches > 0 and len(decoded) == batches
    assert fetched(node.groups, GROUP) == {TP0: 5, TP1: 6}
    assert node.groups.groups[GROUP].generation_id == gen


def test_a_directory_with_legacy_records_is_replayed_in_both_phases(nodes, node, monkeypatch):
    with legacy_placement(monkeypatch):
        (member,), gen = form_group(node.groups, 1, group=GROUP)
        node.groups.commit_offsets(GROUP, member, None, gen, offsets((0, 5), (1, 6)), T0)
    node = restart(nodes, node)
    node.groups.commit_offsets(GROUP, member, None, gen, offsets((0, 7),), T0)
    assert keys_in(node, 3) == {GROUP} and keys_in(node, 1) == {GROUP}
    node = restart(nodes, node)
    # TP1 only in the legacy partition; TP0's newer commit in the Kafka partition wins
    assert fetched(node.groups, GROUP) == {TP0: 7, TP1: 6}


def test_a_transactional_ids_placement_is_computed_once_per_partition_at_start_up(nodes, node, monkeypatch):
    """Each of a transactional id's many records in __transaction_state is replayed in its phase,
    the id hashed once (String.hashCode in Python cost 5 us a record)."""
    from shim.coordinators.txn import state_manager

    pid, epoch = node.txn.init_producer_id(TXN, 60_000, -1, -1, T0)
    for i in range(3):
        node.txn.add_partitions(TXN, pid, epoch, {TP0}, T0 + i)
        node.txn.end_txn(TXN, pid, epoch, i % 2 == 0, T0 + i)
    calls = []
    real = state_manager.replay_phase
    monkeypatch.setattr(state_manager, "replay_phase", lambda *a: calls.append(a) or real(*a))
    node = restart(nodes, node)
    assert calls == [(TXN, 1, N)]
    assert node.txn.txns[TXN].state is TxnState.COMPLETE_COMMIT
