"""The transaction state table (Kafka: TransactionState.validPreviousStates, TransactionMetadata
transitions): every pair of states, valid and refused."""

from __future__ import annotations

import itertools

import pytest

from shim.coordinators.txn.state import VALID_PREVIOUS, IllegalTransition, TxnMetadata, TxnState

S = TxnState

# Kafka 4.1, transaction-coordinator/.../TransactionState.java (3.9's table plus the three
# PrepareAbort sources transaction version 2 added), written out independently of shim's table so
# that a change to either shows up here.
KAFKA_VALID_PREVIOUS = {
    S.EMPTY: {S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT},
    S.ONGOING: {S.ONGOING, S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT},
    S.PREPARE_COMMIT: {S.ONGOING},
    S.PREPARE_ABORT: {S.ONGOING, S.PREPARE_EPOCH_FENCE, S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT},
    S.COMPLETE_COMMIT: {S.PREPARE_COMMIT},
    S.COMPLETE_ABORT: {S.PREPARE_ABORT},
    S.DEAD: {S.EMPTY, S.COMPLETE_ABORT, S.COMPLETE_COMMIT},
    S.PREPARE_EPOCH_FENCE: {S.ONGOING},
}
VALID = [(old, new) for new, olds in KAFKA_VALID_PREVIOUS.items() for old in sorted(olds)]
REFUSED = [(old, new) for old, new in itertools.product(S, S) if (old, new) not in VALID]


def metadata(state: TxnState, *, start_ms=-1, partitions=()) -> TxnMetadata:
    return TxnMetadata("tx", 7, 3, 60_000, state, partitions=set(partitions), txn_start_ms=start_ms, last_update_ms=1)


def test_state_ids_and_names_are_kafkas():
    """The ids are persisted in __transaction_state and the names are what DescribeTransactions and
    ListTransactions report."""
    assert {s.name: int(s) for s in S} == {
        "EMPTY": 0, "ONGOING": 1, "PREPARE_COMMIT": 2, "PREPARE_ABORT": 3, "COMPLETE_COMMIT": 4,
        "COMPLETE_ABORT": 5, "DEAD": 6, "PREPARE_EPOCH_FENCE": 7,
    }
    assert [s.kafka_name for s in S] == [
        "Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead",
        "PrepareEpochFence",
    ]


@pytest.mark.parametrize(("old", "new"), VALID, ids=[f"{o.kafka_name}->{n.kafka_name}" for o, n in VALID])
def test_valid_transition(old, new):
    m = metadata(old, start_ms=500 if old is not S.EMPTY else -1, partitions=[("t", 0)])
    m.transition(new, 1000)
    assert m.state is new
    assert m.last_update_ms == 1000


@pytest.mark.parametrize(("old", "new"), REFUSED, ids=[f"{o.kafka_name}->{n.kafka_name}" for o, n in REFUSED])
def test_refused_transition(old, new):
    m = metadata(old, start_ms=500, partitions=[("t", 0)])
    before = m.copy()
    with pytest.raises(IllegalTransition):
        m.transition(new, 1000)
    assert m == before  # nothing changed


def test_the_table_is_kafkas():
    """Shim's table itself, compared with Kafka's written out above (the two tests before check each pair by
    behaviour; this one names the difference when a state's set changes)."""
    assert dict(VALID_PREVIOUS) == KAFKA_VALID_PREVIOUS


def test_entering_ongoing_sets_the_start_time_once():
    m = metadata(S.EMPTY)
    m.transition(S.ONGOING, 1000)
    assert m.txn_start_ms == 1000
    m.partitions.add(("t", 0))
    m.transition(S.ONGOING, 2000)  # a later AddPartitions keeps the start of the transaction
    assert m.txn_start_ms == 1000
    assert m.partitions == {("t", 0)}
    assert m.last_update_ms == 2000


@pytest.mark.parametrize("old", [S.COMPLETE_COMMIT, S.COMPLETE_ABORT])
def test_a_new_transaction_after_a_completed_one_restarts_the_clock(old):
    m = metadata(old, start_ms=100)
    m.transition(S.ONGOING, 5000)
    assert m.txn_start_ms == 5000


@pytest.mark.parametrize(("prepare", "complete"), [(S.PREPARE_COMMIT, S.COMPLETE_COMMIT),
                                                   (S.PREPARE_ABORT, S.COMPLETE_ABORT)])
def test_completion_clears_partitions_and_keeps_the_start_time(prepare, complete):
    """Kafka: prepareComplete clears topicPartitions and keeps txnStartTimestamp."""
    m = metadata(S.ONGOING, start_ms=100, partitions=[("t", 0), ("t", 1)])
    m.transition(prepare, 200)
    assert m.partitions == {("t", 0), ("t", 1)} and m.txn_start_ms == 100
    m.transition(complete, 300)
    assert m.partitions == set()
    assert m.txn_start_ms == 100


@pytest.mark.parametrize("old", [S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT])
def test_empty_has_no_partitions_and_no_start_time(old):
    """Kafka: prepareIncrementProducerEpoch/prepareProducerIdRotation go to Empty with no partitions, start -1."""
    m = metadata(old, start_ms=100, partitions=[("t", 0)])
    m.transition(S.EMPTY, 400)
    assert m.partitions == set() and m.txn_start_ms == -1


def test_epoch_exhaustion_threshold():
    """Kafka: isEpochExhausted(epoch) = epoch >= Short.MaxValue - 1."""
    m = metadata(S.EMPTY)
    m.producer_epoch = 32765
    assert not m.epoch_exhausted
    m.producer_epoch = 32766
    assert m.epoch_exhausted


def test_copy_is_independent():
    m = metadata(S.ONGOING, partitions=[("t", 0)])
    c = m.copy()
    c.partitions.add(("t", 1))
    c.transition(S.PREPARE_COMMIT, 5)
    assert m.partitions == {("t", 0)} and m.state is S.ONGOING
