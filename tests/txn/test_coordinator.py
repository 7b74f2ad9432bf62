"""The transaction coordinator driven directly with a fake clock (Kafka: TransactionCoordinator,
TransactionMetadata): InitProducerId, AddPartitions/AddOffsets, EndTxn, fencing, epochs,
timeouts, and what each step persists in __transaction_state and writes to the partitions."""

from __future__ import annotations

import pytest

from kafka_codecs import ControlRecordType, decode_batch, parse_header, read_end_txn_marker
from shim.storage.producer_state import Origin
from shim.coordinators.partitioning import partition_for
from shim.coordinators.txn import TXN_TOPIC
from shim.coordinators.txn.state import TxnState
from shim.coordinators.txn.txn_log import decode_key, decode_value
from shim.errors import ErrorCode, KafkaError

from txn_helpers import T0, TOPIC, Producer

S = TxnState
TP0, TP1 = (TOPIC, 0), (TOPIC, 1)


def err(fn, *args) -> ErrorCode:
    with pytest.raises(KafkaError) as info:
        fn(*args)
    return info.value.code


def persisted(node, txn_id):
    """Every record of ``txn_id`` in __transaction_state, decoded, in log order."""
    if TXN_TOPIC not in node.logs.topics:
        return []
    plog = node.logs.get(TXN_TOPIC, partition_for(txn_id, node.config.transaction_state_num_partitions))
    out = []
    for raw in plog.iter_batches():
        for r in decode_batch(raw)[1]:
            if decode_key(r.key) == txn_id:
                out.append(decode_value(txn_id, r.value))
    return out


def control_batches(node, tp=TP0):
    """(offset, producer id, epoch, COMMIT/ABORT, coordinator epoch) of every marker in a partition."""
    out = []
    for raw in node.logs.get(*tp).iter_batches():
        h = parse_header(raw)
        if h.is_control:
            kind, coordinator_epoch = read_end_txn_marker(raw)
            out.append((h.base_offset, h.producer_id, h.producer_epoch, kind, coordinator_epoch))
    return out


def produce_txn(node, tp, pid, epoch, n=1):
    """Append a transactional batch as the produce path would after verification."""
    plog = node.logs.get(*tp)
    producer = Producer(pid, epoch, {tp[1]: plog.producer_state.producers[pid].last_seq + 1}
                        if pid in plog.producer_state.producers and plog.producer_state.producers[pid].batches else {})
    raw = bytearray(producer.batch(tp[1], *[b"x%d" % i for i in range(n)]))
    return plog.append(raw, parse_header(raw), T0, origin=Origin.CLIENT).base_offset


@pytest.fixture
def coord(txn_node):
    return txn_node.txn


def begin(coord, txn_id="tx", partitions=(TP0,), now=T0, timeout_ms=60_000):
    pid, epoch = coord.init_producer_id(txn_id, timeout_ms, -1, -1, now)
    coord.add_partitions(txn_id, pid, epoch, set(partitions), now)
    return pid, epoch


# -- InitProducerId -------------------------------------------------------------------------


def test_first_init_gives_a_new_producer_id_with_epoch_0_and_persists_empty(txn_node, coord):
    pid, epoch = coord.init_producer_id("tx", 60_000, -1, -1, T0)
    assert epoch == 0
    (rec,) = persisted(txn_node, "tx")
    assert (rec.producer_id, rec.producer_epoch, rec.state, rec.timeout_ms) == (pid, 0, S.EMPTY, 60_000)
    assert rec.partitions == set() and rec.txn_start_ms == -1


def test_each_init_without_expectation_bumps_the_epoch_and_keeps_the_producer_id(coord):
    pid, _ = coord.init_producer_id("tx", 60_000, -1, -1, T0)
    assert coord.init_producer_id("tx", 60_000, -1, -1, T0 + 1) == (pid, 1)
    assert coord.init_producer_id("tx", 30_000, -1, -1, T0 + 2) == (pid, 2)
    assert coord.txns["tx"].timeout_ms == 30_000  # the latest timeout is kept
    other, _ = coord.init_producer_id("other", 60_000, -1, -1, T0)
    assert other != pid


def test_init_with_an_empty_transactional_id_is_invalid_request(coord):
    assert err(coord.init_producer_id, "", 60_000, -1, -1, T0) == ErrorCode.invalid_request
    assert "" not in coord.txns


@pytest.mark.parametrize("timeout_ms", [0, -1, 900_001])
def test_init_with_a_timeout_outside_the_range_is_invalid_transaction_timeout(coord, timeout_ms):
    assert err(coord.init_producer_id, "tx", timeout_ms, -1, -1, T0) == ErrorCode.invalid_transaction_timeout


def test_init_accepts_the_maximum_timeout(coord):
    assert coord.init_producer_id("tx", 900_000, -1, -1, T0)[1] == 0


def test_kip360_bump_with_the_current_epoch_then_a_retry_with_the_previous_one(coord):
    pid, _ = coord.init_producer_id("tx", 60_000, -1, -1, T0)
    assert coord.init_producer_id("tx", 60_000, pid, 0, T0) == (pid, 1)
    assert coord.txns["tx"].last_producer_epoch == 0
    # The response was lost; the client retries with the epoch it had: same answer, no second bump.
    assert coord.init_producer_id("tx", 60_000, pid, 0, T0) == (pid, 1)
    assert coord.txns["tx"].producer_epoch == 1
    # A bump from the current epoch works again.
    assert coord.init_producer_id("tx", 60_000, pid, 1, T0) == (pid, 2)


def test_kip360_bump_with_a_stale_epoch_or_another_producer_id_is_fenced(coord):
    pid, _ = coord.init_producer_id("tx", 60_000, -1, -1, T0)
    coord.init_producer_id("tx", 60_000, pid, 0, T0)  # epoch 1, last 0
    coord.init_producer_id("tx", 60_000, pid, 1, T0)  # epoch 2, last 1
    assert err(coord.init_producer_id, "tx", 60_000, pid, 0, T0) == ErrorCode.producer_fenced
    assert err(coord.init_producer_id, "tx", 60_000, pid + 100, 2, T0) == ErrorCode.producer_fenced
    assert coord.txns["tx"].producer_epoch == 2


def test_a_new_instance_resets_the_previous_epoch_so_the_old_one_cannot_bump(coord):
    """A plain InitProducerId (new instance) sets lastProducerEpoch to -1: the old instance's
    KIP-360 bump with its epoch is fenced."""
    pid, _ = coord.init_producer_id("tx", 60_000, -1, -1, T0)
    coord.init_producer_id("tx", 60_000, pid, 0, T0)  # old instance bumps to 1
    coord.init_producer_id("tx", 60_000, -1, -1, T0)  # new instance: epoch 2, last -1
    assert err(coord.init_producer_id, "tx", 60_000, pid, 1, T0) == ErrorCode.producer_fenced


def test_init_while_ongoing_aborts_with_a_bumped_epoch_and_the_retry_gets_epoch_plus_2(txn_node, coord):
    pid, epoch = begin(coord, partitions=(TP0, TP1))
    first = produce_txn(txn_node, TP0, pid, epoch, 2)
    assert err(coord.init_producer_id, "tx", 60_000, -1, -1, T0 + 10) == ErrorCode.concurrent_transactions
    m = coord.txns["tx"]
    assert (m.state, m.producer_epoch) == (S.COMPLETE_ABORT, epoch + 1)
    # ABORT markers with the fencing epoch in both partitions, then the data is aborted.
    assert control_batches(txn_node, TP0) == [(first + 2, pid, epoch + 1, ControlRecordType.ABORT, 0)]
    assert control_batches(txn_node, TP1) == [(0, pid, epoch + 1, ControlRecordType.ABORT, 0)]
    plog = txn_node.logs.get(*TP0)
    assert [(a.producer_id, a.first_offset, a.last_offset) for a in plog.aborted] == [(pid, first, first + 2)]
    assert plog.last_stable_offset == plog.high_watermark == first + 3
    # PrepareAbort (with the bumped epoch) then CompleteAbort were persisted; PrepareEpochFence never is.
    states = [(r.state, r.producer_epoch) for r in persisted(txn_node, "tx")]
    assert states[-2:] == [(S.PREPARE_ABORT, epoch + 1), (S.COMPLETE_ABORT, epoch + 1)]
    assert S.PREPARE_EPOCH_FENCE not in [s for s, _ in states]
    assert coord.init_producer_id("tx", 60_000, -1, -1, T0 + 20) == (pid, epoch + 2)


def test_init_while_ongoing_with_the_producers_own_identity_also_aborts_first(txn_node, coord):
    pid, epoch = begin(coord)
    assert err(coord.init_producer_id, "tx", 60_000, pid, epoch, T0) == ErrorCode.concurrent_transactions
    assert coord.txns["tx"].state is S.COMPLETE_ABORT
    # The fence reset the previous epoch: the producer's retry with its old epoch is fenced ...
    assert err(coord.init_producer_id, "tx", 60_000, pid, epoch, T0) == ErrorCode.producer_fenced
    # ... and a bump from the fencing epoch works.
    assert coord.init_producer_id("tx", 60_000, pid, epoch + 1, T0) == (pid, epoch + 2)


@pytest.mark.parametrize("prepare", [S.PREPARE_COMMIT, S.PREPARE_ABORT])
def test_init_while_preparing_is_concurrent_transactions(coord, prepare):
    begin(coord)
    coord._move(coord.txns["tx"], prepare, T0)
    assert err(coord.init_producer_id, "tx", 60_000, -1, -1, T0) == ErrorCode.concurrent_transactions
    assert coord.txns["tx"].state is prepare


def set_epoch(coord, txn_id, epoch, state=S.EMPTY):
    m = coord.txns[txn_id].copy()
    m.producer_epoch, m.state = epoch, state
    coord.txns[txn_id] = m


@pytest.mark.parametrize("state", [S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT])
def test_an_exhausted_epoch_rotates_to_a_new_producer_id_with_epoch_0(coord, state):
    pid, _ = coord.init_producer_id("tx", 60_000, -1, -1, T0)
    set_epoch(coord, "tx", 32765, state)
    assert coord.init_producer_id("tx", 60_000, -1, -1, T0) == (pid, 32766)  # the last usable epoch
    new_pid, epoch = coord.init_producer_id("tx", 60_000, -1, -1, T0)
    assert new_pid != pid and epoch == 0
    assert coord.txns["tx"].last_producer_id == pid


def test_an_exhausted_epoch_with_the_matching_expectation_rotates(coord):
    pid, _ = coord.init_producer_id("tx", 60_000, -1, -1, T0)
    set_epoch(coord, "tx", 32766)
    new_pid, epoch = coord.init_producer_id("tx", 60_000, pid, 32766, T0)
    assert new_pid != pid and epoch == 0


def test_fencing_an_ongoing_transaction_at_the_last_epoch_uses_32767_then_rotates(txn_node, coord):
    """Kafka: fencing may use Short.MaxValue; the client's retry then gets a new producer id."""
    pid, _ = begin(coord)
    set_epoch(coord, "tx", 32766, S.ONGOING)
    assert err(coord.init_producer_id, "tx", 60_000, -1, -1, T0) == ErrorCode.concurrent_transactions
    assert coord.txns["tx"].producer_epoch == 32767
    assert control_batches(txn_node, TP0)[-1][1:4] == (pid, 32767, ControlRecordType.ABORT)
    new_pid, epoch = coord.init_producer_id("tx", 60_000, -1, -1, T0)
    assert new_pid != pid and epoch == 0


def test_the_retry_of_a_rotation_gets_the_same_new_producer_id(coord):
    pid, _ = coord.init_producer_id("tx", 60_000, -1, -1, T0)
    set_epoch(coord, "tx", 32766)
    rotated = coord.init_producer_id("tx", 60_000, pid, 32766, T0)
    assert coord.init_producer_id("tx", 60_000, pid, 32766, T0) == rotated


def test_an_unknown_transactional_id_with_an_expected_identity_gets_a_fresh_producer_id(coord):
    pid, epoch = coord.init_producer_id("lost", 60_000, 999, 5, T0)
    assert epoch == 0 and pid != 999


# -- AddPartitionsToTxn / AddOffsetsToTxn ---------------------------------------------------


def test_add_partitions_starts_the_transaction_and_persists_ongoing(txn_node, coord):
    pid, epoch = coord.init_producer_id("tx", 60_000, -1, -1, T0)
    coord.add_partitions("tx", pid, epoch, {TP0}, T0 + 5)
    m = coord.txns["tx"]
    assert (m.state, m.partitions, m.txn_start_ms) == (S.ONGOING, {TP0}, T0 + 5)
    rec = persisted(txn_node, "tx")[-1]
    assert (rec.state, rec.partitions, rec.txn_start_ms) == (S.ONGOING, {TP0}, T0 + 5)


def test_add_partitions_again_extends_without_moving_the_start(txn_node, coord):
    pid, epoch = begin(coord, now=T0)
    n = len(persisted(txn_node, "tx"))
    coord.add_partitions("tx", pid, epoch, {TP0}, T0 + 10)  # already included: nothing written
    assert len(persisted(txn_node, "tx")) == n
    coord.add_partitions("tx", pid, epoch, {TP1}, T0 + 20)
    assert coord.txns["tx"].partitions == {TP0, TP1}
    assert coord.txns["tx"].txn_start_ms == T0
    assert persisted(txn_node, "tx")[-1].partitions == {TP0, TP1}


def test_add_partitions_errors(coord):
    pid, epoch = coord.init_producer_id("tx", 60_000, -1, -1, T0)
    assert err(coord.add_partitions, "", pid, epoch, {TP0}, T0) == ErrorCode.invalid_request
    assert err(coord.add_partitions, "nope", pid, epoch, {TP0}, T0) == ErrorCode.invalid_producer_id_mapping
    assert err(coord.add_partitions, "tx", pid + 1, epoch, {TP0}, T0) == ErrorCode.invalid_producer_id_mapping
    assert err(coord.add_partitions, "tx", pid, epoch + 1, {TP0}, T0) == ErrorCode.producer_fenced
    coord.init_producer_id("tx", 60_000, -1, -1, T0)  # another instance
    assert err(coord.add_partitions, "tx", pid, epoch, {TP0}, T0) == ErrorCode.producer_fenced
    assert coord.txns["tx"].state is S.EMPTY


@pytest.mark.parametrize("prepare", [S.PREPARE_COMMIT, S.PREPARE_ABORT])
def test_add_partitions_while_preparing_is_concurrent_transactions(coord, prepare):
    pid, epoch = begin(coord)
    coord._move(coord.txns["tx"], prepare, T0)
    assert err(coord.add_partitions, "tx", pid, epoch, {TP1}, T0) == ErrorCode.concurrent_transactions


@pytest.mark.parametrize("completed", [True, False])
def test_add_partitions_after_a_completed_transaction_starts_a_new_one(coord, completed):
    pid, epoch = begin(coord, now=T0)
    coord.end_txn("tx", pid, epoch, completed, T0 + 1)
    coord.add_partitions("tx", pid, epoch, {TP1}, T0 + 50)
    m = coord.txns["tx"]
    assert (m.state, m.partitions, m.txn_start_ms) == (S.ONGOING, {TP1}, T0 + 50)


def test_add_offsets_adds_the_groups_offsets_partition(txn_node, coord):
    pid, epoch = coord.init_producer_id("tx", 60_000, -1, -1, T0)
    coord.add_offsets("tx", pid, epoch, "my-group", T0)
    expected = ("__consumer_offsets", partition_for("my-group", txn_node.config.offsets_topic_num_partitions))
    assert coord.txns["tx"].partitions == {expected}
    # Kafka: Utils.abs("my-group".hashCode()) % offsets.topic.num.partitions; hashCode 0x8e5d271e is
    # negative (-1906497762), which Utils.abs negates
    assert expected == ("__consumer_offsets", (2**32 - 0x8E5D271E) % 50) == ("__consumer_offsets", 12)
    assert err(coord.add_offsets, "tx", pid, epoch + 1, "my-group", T0) == ErrorCode.producer_fenced
    assert err(coord.add_offsets, "tx", pid + 1, epoch, "my-group", T0) == ErrorCode.invalid_producer_id_mapping


# -- EndTxn ---------------------------------------------------------------------------------


@pytest.mark.parametrize("commit", [True, False])
def test_end_txn_writes_markers_to_every_partition_then_completes(txn_node, coord, commit):
    pid, epoch = begin(coord, partitions=(TP0, TP1))
    first = produce_txn(txn_node, TP0, pid, epoch)
    assert txn_node.logs.get(*TP0).last_stable_offset == first
    coord.end_txn("tx", pid, epoch, commit, T0 + 1)
    kind = ControlRecordType.COMMIT if commit else ControlRecordType.ABORT
    assert control_batches(txn_node, TP0) == [(first + 1, pid, epoch, kind, 0)]
    assert control_batches(txn_node, TP1) == [(0, pid, epoch, kind, 0)]  # a partition without data gets one too
    m = coord.txns["tx"]
    assert (m.state, m.partitions) == (S.COMPLETE_COMMIT if commit else S.COMPLETE_ABORT, set())
    assert [r.state for r in persisted(txn_node, "tx")][-2:] == (
        [S.PREPARE_COMMIT, S.COMPLETE_COMMIT] if commit else [S.PREPARE_ABORT, S.COMPLETE_ABORT])
    plog = txn_node.logs.get(*TP0)
    assert plog.last_stable_offset == plog.high_watermark == first + 2
    assert [a.first_offset for a in plog.aborted] == ([] if commit else [first])
    assert txn_node.logs.get(*TP1).aborted == []  # no data there: no aborted transaction


@pytest.mark.parametrize("commit", [True, False])
def test_end_txn_in_empty_is_invalid_txn_state(coord, commit):
    pid, epoch = coord.init_producer_id("tx", 60_000, -1, -1, T0)
    assert err(coord.end_txn, "tx", pid, epoch, commit, T0) == ErrorCode.invalid_txn_state


@pytest.mark.parametrize("commit", [True, False])
def test_end_txn_retry_of_the_same_outcome_succeeds_without_new_markers(txn_node, coord, commit):
    pid, epoch = begin(coord)
    coord.end_txn("tx", pid, epoch, commit, T0)
    n_markers, n_records = len(control_batches(txn_node)), len(persisted(txn_node, "tx"))
    coord.end_txn("tx", pid, epoch, commit, T0 + 1)
    assert len(control_batches(txn_node)) == n_markers
    assert len(persisted(txn_node, "tx")) == n_records


@pytest.mark.parametrize("commit", [True, False])
def test_end_txn_with_the_other_outcome_after_completion_is_invalid_txn_state(coord, commit):
    pid, epoch = begin(coord)
    coord.end_txn("tx", pid, epoch, commit, T0)
    assert err(coord.end_txn, "tx", pid, epoch, not commit, T0) == ErrorCode.invalid_txn_state


@pytest.mark.parametrize(("prepare", "commit", "code"), [
    (S.PREPARE_COMMIT, True, ErrorCode.concurrent_transactions),
    (S.PREPARE_COMMIT, False, ErrorCode.invalid_txn_state),
    (S.PREPARE_ABORT, False, ErrorCode.concurrent_transactions),
    (S.PREPARE_ABORT, True, ErrorCode.invalid_txn_state),
])
def test_end_txn_while_preparing(coord, prepare, commit, code):
    pid, epoch = begin(coord)
    coord._move(coord.txns["tx"], prepare, T0)
    assert err(coord.end_txn, "tx", pid, epoch, commit, T0) == code


def test_end_txn_identity_errors(coord):
    pid, epoch = begin(coord)
    assert err(coord.end_txn, "", pid, epoch, True, T0) == ErrorCode.invalid_request
    assert err(coord.end_txn, "nope", pid, epoch, True, T0) == ErrorCode.invalid_producer_id_mapping
    assert err(coord.end_txn, "tx", pid + 1, epoch, True, T0) == ErrorCode.invalid_producer_id_mapping
    assert err(coord.end_txn, "tx", pid, epoch + 1, True, T0) == ErrorCode.producer_fenced
    assert err(coord.end_txn, "tx", pid, epoch - 1, True, T0) == ErrorCode.producer_fenced
    assert coord.txns["tx"].state is S.ONGOING


# -- timeouts -------------------------------------------------------------------------------


def test_a_transaction_past_its_timeout_is_aborted_with_a_bumped_epoch(txn_node, coord):
    pid, epoch = begin(coord, now=T0, timeout_ms=1000)
    first = produce_txn(txn_node, TP0, pid, epoch)
    plog = txn_node.logs.get(*TP0)
    assert coord.abort_timed_out(T0 + 1000) == []  # Kafka: txnStartTimestamp + timeout < now
    assert plog.last_stable_offset == first
    assert coord.abort_timed_out(T0 + 1001) == ["tx"]
    m = coord.txns["tx"]
    assert (m.state, m.producer_epoch, m.last_producer_epoch) == (S.COMPLETE_ABORT, epoch + 1, -1)
    assert control_batches(txn_node, TP0) == [(first + 1, pid, epoch + 1, ControlRecordType.ABORT, 0)]
    assert plog.last_stable_offset == plog.high_watermark == first + 2
    assert coord.abort_timed_out(T0 + 5000) == []


def test_the_timed_out_producer_is_fenced_everywhere(txn_node, coord):
    pid, epoch = begin(coord, timeout_ms=1000)
    produce_txn(txn_node, TP0, pid, epoch)
    coord.abort_timed_out(T0 + 2000)
    assert err(coord.add_partitions, "tx", pid, epoch, {TP1}, T0) == ErrorCode.producer_fenced
    assert err(coord.end_txn, "tx", pid, epoch, True, T0) == ErrorCode.producer_fenced
    assert err(coord.end_txn, "tx", pid, epoch, False, T0) == ErrorCode.producer_fenced
    assert err(coord.init_producer_id, "tx", 60_000, pid, epoch, T0) == ErrorCode.producer_fenced
    assert err(coord.verify_partition, "tx", pid, epoch, *TP1) == ErrorCode.producer_fenced
    raw = bytearray(Producer(pid, epoch, {0: 1}).batch(0))
    plog = txn_node.logs.get(*TP0)
    assert err(lambda: plog.append(raw, parse_header(raw), T0, origin=Origin.CLIENT)) == ErrorCode.invalid_producer_epoch


def test_only_ongoing_transactions_time_out(coord):
    coord.init_producer_id("empty", 1000, -1, -1, T0)
    pid, epoch = begin(coord, "done", timeout_ms=1000)
    coord.end_txn("done", pid, epoch, True, T0)
    begin(coord, "young", now=T0 + 5000, timeout_ms=1000)
    begin(coord, "old", now=T0, timeout_ms=1000)
    assert coord.abort_timed_out(T0 + 5500) == ["old"]
    assert {k: m.state for k, m in coord.txns.items()} == {
        "empty": S.EMPTY, "done": S.COMPLETE_COMMIT, "young": S.ONGOING, "old": S.COMPLETE_ABORT}


def test_tick_checks_at_the_configured_interval(txn_node, coord):
    begin(coord, now=T0, timeout_ms=1000)
    interval = txn_node.config.transaction_abort_check_interval_ms
    assert coord.tick(T0) == T0 + interval
    assert coord.tick(T0 + 1500) == T0 + interval  # not due: nothing checked
    assert coord.txns["tx"].state is S.ONGOING
    assert coord.tick(T0 + interval) == 2 * interval + T0
    assert coord.txns["tx"].state is S.COMPLETE_ABORT


# -- produce-time verification (KIP-890 part 1) ---------------------------------------------


def test_verify_partition_answers_as_kafkas_handle_verify_partitions_in_transaction(coord):
    """The coordinator's answers; the Produce handler maps them (tests/txn/test_txn_apis.py)."""
    pid, epoch = begin(coord)
    coord.verify_partition("tx", pid, epoch, *TP0)  # added: fine
    assert err(coord.verify_partition, "tx", pid, epoch, *TP1) == ErrorCode.transaction_abortable
    assert err(coord.verify_partition, "tx", pid, epoch - 1, *TP0) == ErrorCode.producer_fenced
    assert err(coord.verify_partition, "tx", pid, epoch + 1, *TP0) == ErrorCode.producer_fenced
    assert err(coord.verify_partition, "tx", pid + 1, epoch, *TP0) == ErrorCode.invalid_producer_id_mapping
    assert err(coord.verify_partition, "nope", pid, epoch, *TP0) == ErrorCode.invalid_producer_id_mapping
    coord._move(coord.txns["tx"], S.PREPARE_COMMIT, T0)
    assert err(coord.verify_partition, "tx", pid, epoch, *TP0) == ErrorCode.concurrent_transactions
    coord._complete(coord.txns["tx"], True, T0)
    assert err(coord.verify_partition, "tx", pid, epoch, *TP0) == ErrorCode.transaction_abortable


# -- persistence ----------------------------------------------------------------------------


def test_a_restarted_coordinator_has_the_same_transactions(nodes, txn_node):
    coord = txn_node.txn
    pid, epoch = begin(coord, "open", partitions=(TP0, TP1), now=T0, timeout_ms=7000)
    p2, e2 = begin(coord, "done")
    coord.end_txn("done", p2, e2, False, T0 + 3)
    coord.init_producer_id("fresh", 5000, -1, -1, T0)
    nodes.close(txn_node)
    again = nodes().txn
    got = {k: (m.producer_id, m.producer_epoch, m.state, m.partitions, m.timeout_ms, m.txn_start_ms)
           for k, m in again.txns.items()}
    assert got == {
        "open": (pid, epoch, S.ONGOING, {TP0, TP1}, 7000, T0),
        "done": (p2, e2, S.COMPLETE_ABORT, set(), 60_000, T0),
        "fresh": (coord.txns["fresh"].producer_id, 0, S.EMPTY, set(), 5000, -1),
    }
    # New producer ids never repeat one handed out before the restart.
    assert again.init_producer_id("new", 5000, -1, -1, T0)[0] not in {pid, p2, coord.txns["fresh"].producer_id}
