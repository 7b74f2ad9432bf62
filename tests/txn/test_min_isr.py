"""The transaction coordinator's writes honour ``__transaction_state``'s min.insync.replicas in a
simulated cluster (Kafka: TransactionStateManager.transactionTopicConfigs gives the topic
``transaction.state.log.min.isr``; appendTransactionToLog writes with acks=all and answers a
NOT_ENOUGH_REPLICAS append COORDINATOR_NOT_AVAILABLE)."""

from __future__ import annotations

import pytest

from shim.coordinators.partitioning import partition_for
from shim.coordinators.txn import TXN_TOPIC
from shim.coordinators.txn.state import TxnState
from shim.errors import ErrorCode, KafkaError

from txn_helpers import T0, TOPIC

S = TxnState
TXN = "failure-to-fence"


def err(fn, *args) -> ErrorCode:
    with pytest.raises(KafkaError) as info:
        fn(*args)
    return info.value.code


def three_brokers(nodes, **overrides):
    node = nodes(brokers=3, **overrides)
    node.logs.create_topic(TOPIC, 2)
    return node


def below_min_isr(node, txn_id=TXN) -> None:
    """Take down two of the three replicas of ``txn_id``'s __transaction_state partition."""
    node.logs.ensure_topic(TXN_TOPIC, node.config.transaction_state_num_partitions)
    p = partition_for(txn_id, node.config.transaction_state_num_partitions)
    replicas = node.cluster.state(TXN_TOPIC, p).replicas
    for n in replicas[:2]:
        node.cluster.node_down(n, T0)
    assert len(node.cluster.state(TXN_TOPIC, p).isr) == 1


def restore(node) -> None:
    for n in sorted(node.cluster.down):
        node.cluster.node_up(n, T0)


def txn_min_isr(node) -> str:
    return node.logs.topics[TXN_TOPIC].configs.get("min.insync.replicas")


def test_the_transaction_topic_gets_transaction_state_log_min_isr(nodes, tmp_path):
    node = three_brokers(nodes)
    node.logs.ensure_topic(TXN_TOPIC, node.config.transaction_state_num_partitions)
    assert txn_min_isr(node) == "2"  # Kafka's default, with the three replicas the topic has
    assert node.logs.get(TXN_TOPIC, 0).config.min_insync_replicas == 2


def test_one_broker_lowers_the_default_with_the_replication_factor(nodes):
    node = nodes()
    node.logs.ensure_topic(TXN_TOPIC, node.config.transaction_state_num_partitions)
    assert txn_min_isr(node) == "1"


def test_an_explicit_transaction_state_log_min_isr_is_the_topics(nodes):
    node = nodes(brokers=3, extra={"transaction.state.log.min.isr": "3"})
    node.logs.ensure_topic(TXN_TOPIC, node.config.transaction_state_num_partitions)
    assert txn_min_isr(node) == "3"


def test_init_producer_id_below_min_isr_is_coordinator_not_available_and_bumps_nothing(nodes):
    """TransactionsTest.testFailureToFenceEpoch's coordinator: the failed InitProducerIds leave the
    epoch as it was, so the next producer bumps it by one."""
    node = three_brokers(nodes)
    txn = node.txn
    pid, epoch = txn.init_producer_id(TXN, 60_000, -1, -1, T0)
    txn.add_partitions(TXN, pid, epoch, {(TOPIC, 0)}, T0)
    txn.end_txn(TXN, pid, epoch, True, T0)
    below_min_isr(node)
    for _ in range(3):
        assert err(txn.init_producer_id, TXN, 60_000, -1, -1, T0) == ErrorCode.coordinator_not_available
    assert (txn.txns[TXN].producer_epoch, txn.txns[TXN].state) == (epoch, S.COMPLETE_COMMIT)
    restore(node)
    assert txn.init_producer_id(TXN, 60_000, -1, -1, T0) == (pid, epoch + 1)


def test_a_failed_fence_keeps_its_epoch_in_memory_and_does_not_bump_again(nodes):
    """Kafka: endTransaction's hasFailedEpochFence. The fenced producer stays fenced; once the ISR is
    back, the abort uses the epoch already bumped and the new producer gets one more."""
    node = three_brokers(nodes)
    txn = node.txn
    pid, epoch = txn.init_producer_id(TXN, 60_000, -1, -1, T0)
    txn.add_partitions(TXN, pid, epoch, {(TOPIC, 0)}, T0)
    below_min_isr(node)
    for _ in range(2):
        assert err(txn.init_producer_id, TXN, 60_000, -1, -1, T0) == ErrorCode.coordinator_not_available
    m = txn.txns[TXN]
    assert (m.state, m.producer_epoch) == (S.ONGOING, epoch + 1)
    assert err(txn.end_txn, TXN, pid, epoch, True, T0) == ErrorCode.producer_fenced
    restore(node)
    assert err(txn.init_producer_id, TXN, 60_000, -1, -1, T0) == ErrorCode.concurrent_transactions
    assert (txn.txns[TXN].state, txn.txns[TXN].producer_epoch) == (S.COMPLETE_ABORT, epoch + 1)
    assert txn.init_producer_id(TXN, 60_000, -1, -1, T0) == (pid, epoch + 2)


def test_timed_out_transactions_are_aborted_once_the_isr_is_back(nodes):
    node = three_brokers(nodes)
    txn = node.txn
    pid, epoch = txn.init_producer_id(TXN, 1_000, -1, -1, T0)
    txn.add_partitions(TXN, pid, epoch, {(TOPIC, 0)}, T0)
    below_min_isr(node)
    assert txn.abort_timed_out(T0 + 5_000) == []  # refused, logged, tried again at the next check
    assert txn.txns[TXN].state is S.ONGOING
    restore(node)
    assert txn.abort_timed_out(T0 + 10_000) == [TXN]
    assert (txn.txns[TXN].state, txn.txns[TXN].producer_epoch) == (S.COMPLETE_ABORT, epoch + 1)


def test_a_completion_refused_after_the_markers_is_retried_by_tick(nodes):
    """Markers held (the control plane's hold_markers), the ISR drops, the markers are released: the
    Complete state's write is refused and retried until it lands, as Kafka's marker channel does."""
    node = three_brokers(nodes)
    txn = node.txn
    pid, epoch = txn.init_producer_id(TXN, 60_000, -1, -1, T0)
    txn.add_partitions(TXN, pid, epoch, {(TOPIC, 0)}, T0)
    txn.markers_held = True
    txn.end_txn(TXN, pid, epoch, True, T0)
    txn.markers_held = False
    below_min_isr(node)
    assert txn.release_markers(T0, TXN) == [TXN]
    assert txn.txns[TXN].state is S.PREPARE_COMMIT
    txn.tick(T0 + 60_000)
    assert txn.txns[TXN].state is S.PREPARE_COMMIT
    restore(node)
    txn.tick(T0 + 120_000)
    assert txn.txns[TXN].state is S.COMPLETE_COMMIT


def test_expired_ids_stay_while_their_partition_is_under_min_isr(nodes):
    """Kafka: removeExpiredTransactionalIds writes the tombstones with acks=all; refused, the ids stay."""
    node = three_brokers(nodes)
    txn = node.txn
    txn.id_expiration_ms = 1_000
    pid, epoch = txn.init_producer_id(TXN, 60_000, -1, -1, T0)
    below_min_isr(node)
    assert txn.remove_expired_transactional_ids(T0 + 5_000) == []
    assert txn.txns[TXN].producer_id == pid
    restore(node)
    assert txn.remove_expired_transactional_ids(T0 + 10_000) == [TXN]


def test_the_internal_topics_take_their_replication_factors(nodes):
    """transaction.state.log.replication.factor and offsets.topic.replication.factor, capped at the
    brokers; the unset min ISR follows the transaction topic's replicas down (2 replicas: 2)."""
    node = nodes(brokers=3, extra={"transaction.state.log.replication.factor": "2",
                                   "offsets.topic.replication.factor": "5"})
    node.logs.ensure_topic(TXN_TOPIC, 3)
    node.logs.ensure_topic("__consumer_offsets", 3)
    assert {len(node.cluster.state(TXN_TOPIC, p).replicas) for p in range(3)} == {2}
    assert {len(node.cluster.state("__consumer_offsets", p).replicas) for p in range(3)} == {3}
    assert txn_min_isr(node) == "2"


async def test_write_txn_markers_below_min_isr_is_not_enough_replicas(nodes):
    """Kafka's WriteTxnMarkers appends with acks=all: a partition whose ISR is below its
    min.insync.replicas answers NOT_ENOUGH_REPLICAS and gets no marker."""
    from txn_helpers import write_marker

    node = three_brokers(nodes, extra={"min.insync.replicas": "2", "transaction.state.log.min.isr": "1"})
    node.cluster.set_replication_factor(TOPIC, 3)
    state = node.cluster.state(TOPIC, 0)
    for n in [r for r in state.replicas if r != state.leader]:
        node.cluster.node_down(n, T0)
    assert node.cluster.state(TOPIC, 0).isr == (state.leader,)
    pid, epoch = node.txn.init_producer_id(TXN, 60_000, -1, -1, T0)
    assert await write_marker(node, pid, epoch, False, [(TOPIC, 0)]) == {(TOPIC, 0): ErrorCode.not_enough_replicas}
    assert node.logs.get(TOPIC, 0).log_end_offset == 0
    restore(node)
    assert await write_marker(node, pid, epoch, False, [(TOPIC, 0)]) == {(TOPIC, 0): ErrorCode.none}
    assert node.logs.get(TOPIC, 0).log_end_offset == 1
