"""Transaction version 2 (KIP-890 part 2) in the coordinator, driven directly with a fake clock
(Kafka 4.x: TransactionCoordinator.endTransaction, TransactionMetadata.prepareAbortOrCommit and
prepareComplete): an epoch bump per EndTxn, retries recognised by the bumped-from epoch, the
producer id rotation at epoch exhaustion, fencing, and what is persisted."""

from __future__ import annotations

import pytest

from kafka_codecs import ControlRecordType, decode_batch, parse_header, read_end_txn_marker
from shim.coordinators.partitioning import partition_for
from shim.coordinators.txn import TXN_TOPIC
from shim.coordinators.txn.state import EPOCH_EXHAUSTED, TxnMetadata, TxnState
from shim.coordinators.txn.txn_log import UnreadableRecord, decode_key, decode_value, encode_value
from shim.errors import ErrorCode, KafkaError
from shim.storage.producer_state import Origin

from txn_helpers import T0, TOPIC, Producer

S = TxnState
TP0, TP1 = (TOPIC, 0), (TOPIC, 1)
COMMIT, ABORT = True, False


@pytest.fixture
def node(nodes):
    n = nodes(kafka_version="4.0")
    n.logs.create_topic(TOPIC, 2)
    return n


@pytest.fixture
def coord(node):
    return node.txn


def err(fn, *args, **kwargs) -> ErrorCode:
    with pytest.raises(KafkaError) as info:
        fn(*args, **kwargs)
    return info.value.code


def end(coord, pid, epoch, commit, now=T0, txn_id="tx"):
    return coord.end_txn(txn_id, pid, epoch, commit, now, transaction_version=2)


def begin(coord, pid=None, epoch=None, partitions=(TP0,), now=T0):
    if pid is None:
        pid, epoch = coord.init_producer_id("tx", 60_000, -1, -1, now)
    coord.add_partitions("tx", pid, epoch, set(partitions), now, transaction_version=2)
    return pid, epoch


def produce(node, tp, pid, epoch, seq=0):
    plog = node.logs.get(*tp)
    raw = bytearray(Producer(pid, epoch, {tp[1]: seq}).batch(tp[1], b"v"))
    return plog.append(raw, parse_header(raw), T0, origin=Origin.CLIENT).base_offset


def markers(node, tp=TP0):
    out = []
    for raw in node.logs.get(*tp).iter_batches():
        h = parse_header(raw)
        if h.is_control:
            out.append((h.producer_id, h.producer_epoch, read_end_txn_marker(raw)[0]))
    return out


def persisted(node, txn_id="tx"):
    plog = node.logs.get(TXN_TOPIC, partition_for(txn_id, node.config.transaction_state_num_partitions))
    return [decode_value(txn_id, r.value) for raw in plog.iter_batches() for r in decode_batch(raw)[1]
            if decode_key(r.key) == txn_id]


def test_commit_bumps_the_epoch_and_the_markers_carry_it(node, coord):
    pid, epoch = begin(coord, partitions=(TP0, TP1))
    produce(node, TP0, pid, epoch)
    assert end(coord, pid, epoch, COMMIT) == (pid, epoch + 1)
    assert markers(node, TP0) == markers(node, TP1) == [(pid, epoch + 1, ControlRecordType.COMMIT)]
    m = coord.txns["tx"]
    assert (m.state, m.producer_epoch, m.last_producer_epoch) == (S.COMPLETE_COMMIT, epoch + 1, epoch)
    prepare, complete = persisted(node)[-2:]
    assert (prepare.state, prepare.producer_epoch, prepare.client_transaction_version) == (S.PREPARE_COMMIT, epoch + 1, 2)
    assert (complete.state, complete.partitions) == (S.COMPLETE_COMMIT, set())


def test_each_transaction_gets_its_own_epoch(node, coord):
    pid, epoch = begin(coord)
    _, epoch1 = end(coord, pid, epoch, COMMIT)
    begin(coord, pid, epoch1)
    produce(node, TP0, pid, epoch1)
    assert end(coord, pid, epoch1, ABORT) == (pid, epoch + 2)
    assert [e for _, e, _ in markers(node)] == [epoch + 1, epoch + 2]


def test_a_retry_is_recognised_by_the_epoch_it_bumped_from(node, coord):
    pid, epoch = begin(coord)
    answer = end(coord, pid, epoch, COMMIT)
    records = len(persisted(node))
    assert end(coord, pid, epoch, COMMIT, T0 + 5) == answer  # the answer was lost: same answer again
    assert len(persisted(node)) == records and len(markers(node)) == 1  # nothing written twice
    # The retry of a commit cannot become an abort; the current epoch ends the next transaction.
    assert err(end, coord, pid, epoch, ABORT) == ErrorCode.invalid_txn_state
    assert err(end, coord, pid, epoch + 1, COMMIT) == ErrorCode.invalid_txn_state  # nothing added
    assert err(end, coord, pid, epoch - 1, COMMIT) == ErrorCode.producer_fenced


def test_an_abort_with_nothing_added_is_allowed_and_bumps(node, coord):
    pid, epoch = coord.init_producer_id("tx", 60_000, -1, -1, T0)
    assert err(end, coord, pid, epoch, COMMIT) == ErrorCode.invalid_txn_state
    assert end(coord, pid, epoch, ABORT, T0 + 7) == (pid, epoch + 1)
    m = coord.txns["tx"]
    assert (m.state, m.txn_start_ms) == (S.COMPLETE_ABORT, T0 + 7)
    # Again from CompleteAbort with the current epoch: another empty abort, another bump.
    assert end(coord, pid, epoch + 1, ABORT) == (pid, epoch + 2)
    assert markers(node) == []


def test_the_finished_epoch_is_fenced_everywhere(node, coord):
    pid, epoch = begin(coord)
    produce(node, TP0, pid, epoch)
    end(coord, pid, epoch, COMMIT)
    # A late write of the committed transaction (a zombie) meets the marker's epoch in the log.
    assert err(produce, node, TP0, pid, epoch, 1) == ErrorCode.invalid_producer_epoch
    assert err(coord.add_partitions, "tx", pid, epoch, {TP1}, T0, transaction_version=2) == ErrorCode.producer_fenced
    # The producer's next transaction starts at sequence 0 of the new epoch.
    begin(coord, pid, epoch + 1)
    assert produce(node, TP0, pid, epoch + 1) == 2


def test_epoch_exhaustion_moves_to_a_new_producer_id_at_epoch_0(node, coord):
    pid, _ = coord.init_producer_id("tx", 60_000, -1, -1, T0)
    coord.txns["tx"].producer_epoch = EPOCH_EXHAUSTED  # as if 32766 transactions had been committed
    begin(coord, pid, EPOCH_EXHAUSTED)
    new_pid, new_epoch = end(coord, pid, EPOCH_EXHAUSTED, COMMIT)
    assert new_pid != pid and new_epoch == 0
    # The markers close the old producer's transaction with the internal last epoch.
    assert markers(node) == [(pid, EPOCH_EXHAUSTED + 1, ControlRecordType.COMMIT)]
    prepare = persisted(node)[-2]
    assert (prepare.producer_id, prepare.next_producer_id) == (pid, new_pid)
    m = coord.txns["tx"]
    assert (m.producer_id, m.producer_epoch, m.last_producer_id, m.next_producer_id) == (new_pid, 0, pid, -1)
    # A retry with the old identity is recognised and gets the same answer.
    assert end(coord, pid, EPOCH_EXHAUSTED, COMMIT) == (new_pid, 0)
    assert err(end, coord, pid + 1000, 3, COMMIT) == ErrorCode.invalid_producer_id_mapping


def test_a_timed_out_transaction_is_aborted_with_a_bumped_epoch_the_producer_can_recover_from(node, coord):
    pid, epoch = begin(coord)
    produce(node, TP0, pid, epoch)
    assert coord.abort_timed_out(T0 + 60_001) == ["tx"]
    assert markers(node) == [(pid, epoch + 1, ControlRecordType.ABORT)]
    m = coord.txns["tx"]
    assert (m.state, m.producer_epoch, m.last_producer_epoch) == (S.COMPLETE_ABORT, epoch + 1, epoch)
    # Kafka 4.x: the abort the producer then sends is taken as a retry of that abort.
    assert end(coord, pid, epoch, ABORT) == (pid, epoch + 1)


def test_transaction_version_1_clients_keep_their_epoch(node, coord):
    """EndTxn below v5 on a 4.x broker: no bump (TransactionVersion.transactionVersionForEndTxn)."""
    pid, epoch = coord.init_producer_id("tx", 60_000, -1, -1, T0)
    coord.add_partitions("tx", pid, epoch, {TP0}, T0)
    assert coord.end_txn("tx", pid, epoch, COMMIT, T0) == (pid, epoch)
    assert markers(node) == [(pid, epoch, ControlRecordType.COMMIT)]


def test_a_prepared_transaction_completes_after_a_restart_with_its_new_identity(nodes, node, coord):
    pid, _ = coord.init_producer_id("tx", 60_000, -1, -1, T0)
    coord.txns["tx"].producer_epoch = EPOCH_EXHAUSTED
    begin(coord, pid, EPOCH_EXHAUSTED)
    coord._prepare_v2(coord.txns["tx"], COMMIT, T0)  # the broker stops before the markers
    nodes.crash(node)
    again = nodes(kafka_version="4.0")
    m = again.txn.txns["tx"]
    assert m.state is S.COMPLETE_COMMIT and m.producer_epoch == 0 and m.last_producer_id == pid
    assert markers(again) == [(pid, EPOCH_EXHAUSTED + 1, ControlRecordType.COMMIT)]


def test_state_values_v1_round_trip_their_tagged_fields():
    m = TxnMetadata("x", 9, 4, 30_000, S.PREPARE_ABORT, partitions={TP0, ("u", 3)}, txn_start_ms=T0 - 5,
                    last_update_ms=T0, last_producer_id=5, next_producer_id=77, client_transaction_version=2)
    assert decode_value("x", encode_value(m, 1)) == m
    assert encode_value(m, 1)[:2] == b"\x00\x01" and encode_value(m, 0)[:2] == b"\x00\x00"
    assert decode_value("x", encode_value(m, 0)).client_transaction_version == 0  # v0 cannot carry it
    empty = TxnMetadata("y", 9, 4, 30_000, S.EMPTY, last_update_ms=T0)
    assert decode_value("y", encode_value(empty, 1)) == empty


def test_a_truncated_state_value_v1_is_unreadable_not_a_crash():
    """Loading skips an UnreadableRecord with a warning; a value cut short inside one of its
    varints must be one too (not an IndexError that stops the coordinator's load)."""
    m = TxnMetadata("x", 9, 4, 30_000, S.ONGOING, partitions={TP0, ("u", 3)}, txn_start_ms=T0,
                    last_update_ms=T0, last_producer_id=5, next_producer_id=77, client_transaction_version=2)
    value = encode_value(m, 1)
    for end in range(2, len(value)):
        with pytest.raises(UnreadableRecord):
            decode_value("x", value[:end])


@pytest.mark.parametrize("release,after", [("3.9", ErrorCode.producer_fenced), ("4.0", None)])
def test_a_version_1_client_timed_out_under_4_x_can_bump_again(nodes, release, after):
    """Kafka 4.x aborts a timed-out transaction with the finalized transaction version, whatever
    the client's: under 4.x the KIP-360 bump from the fenced epoch succeeds, under 3.9 it is fenced."""
    node = nodes(kafka_version=release)
    node.logs.create_topic(TOPIC, 1)
    coord = node.txn
    pid, epoch = coord.init_producer_id("tx", 60_000, -1, -1, T0)
    coord.add_partitions("tx", pid, epoch, {TP0}, T0)  # AddPartitionsToTxn v3: a version 1 client
    produce(node, TP0, pid, epoch)
    coord.abort_timed_out(T0 + 60_001)
    assert markers(node) == [(pid, epoch + 1, ControlRecordType.ABORT)]
    if after is None:
        assert coord.init_producer_id("tx", 60_000, pid, epoch, T0 + 60_002) == (pid, epoch + 1)
    else:
        assert err(coord.init_producer_id, "tx", 60_000, pid, epoch, T0 + 60_002) == after
