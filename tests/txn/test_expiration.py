"""Transactional id expiration (Kafka: TransactionStateManager.removeExpiredTransactionalIds,
transactional.id.expiration.ms) and producer id expiration (ProducerStateManager.removeExpiredProducers,
producer.id.expiration.ms, KIP-854), driven through a node with a fake clock."""

from __future__ import annotations

import errno

import pytest

from kafka_codecs import decode_batch, parse_header
from shim.coordinators.partitioning import partition_for
from shim.coordinators.txn import TXN_TOPIC
from shim.coordinators.txn.state_manager import tombstone_chunks
from shim.coordinators.txn.state import TxnState
from shim.coordinators.txn.txn_log import decode_key
from shim.errors import ErrorCode, KafkaError
from shim.node import TICK_RETRY_MS
from shim.storage.producer_state import Origin

from txn_helpers import (
    DESCRIBE_PRODUCERS, LIST_TRANSACTIONS, T0, TOPIC, Producer, add_partitions, call, wall_ms,
)
from shim.protocol.messages import request_module

S = TxnState
TP0 = (TOPIC, 0)
DAY, WEEK = 86_400_000, 7 * 86_400_000


def records_of(node, txn_id):
    """The values (None for a tombstone) of every record of ``txn_id`` in __transaction_state."""
    plog = node.logs.get(TXN_TOPIC, partition_for(txn_id, node.config.transaction_state_num_partitions))
    return [r.value for raw in plog.iter_batches() for r in decode_batch(raw)[1] if decode_key(r.key) == txn_id]


def committed(node, txn_id, now):
    """``txn_id`` through a committed transaction over TP0 at ``now``; its producer id and epoch."""
    pid, epoch = node.txn.init_producer_id(txn_id, 60_000, -1, -1, now)
    node.txn.add_partitions(txn_id, pid, epoch, {TP0}, now)
    node.txn.end_txn(txn_id, pid, epoch, True, now)
    return pid, epoch


async def describe_transaction(node, txn_id):
    from test_txn_apis import describe_raw  # kafka-python's decoder: kio refuses Kafka's -1 start times

    return (await describe_raw(node, txn_id))[txn_id].error_code


async def listed(node):
    r = await call(node, LIST_TRANSACTIONS, 0, state_filters=(), producer_id_filters=())
    return {s.transactional_id for s in r.transaction_states}


async def active_producers(node, partition=0):
    m = request_module(DESCRIBE_PRODUCERS, 0)
    r = await call(node, DESCRIBE_PRODUCERS, 0, topics=(m.TopicRequest(name=TOPIC, partition_indexes=(partition,)),))
    return {p.producer_id: p for p in r.topics[0].partitions[0].active_producers}


# -- transactional ids ------------------------------------------------------------------------

async def test_an_idle_transactional_id_expires_with_a_tombstone(txn_node):
    node = txn_node
    node.txn.load(T0)  # the fake clock's start
    pid, epoch = committed(node, "done", T0)
    node.txn.tick(T0)  # the first check is one interval after the start
    assert "done" in node.txn.txns
    assert await describe_transaction(node, "done") == ErrorCode.none
    node.txn.tick(T0 + WEEK)
    assert "done" not in node.txn.txns
    assert records_of(node, "done")[-1] is None  # the tombstone
    assert await describe_transaction(node, "done") == ErrorCode.transactional_id_not_found
    assert "done" not in await listed(node)
    with pytest.raises(KafkaError) as info:  # the old producer's next transaction
        node.txn.add_partitions("done", pid, epoch, {TP0}, T0 + WEEK)
    assert info.value.code == ErrorCode.invalid_producer_id_mapping
    # over the wire, too (AddPartitionsToTxn v3, as kafka-clients 3.9 sends it)
    assert await add_partitions(node, "done", pid, epoch, [TP0]) == {TP0: ErrorCode.invalid_producer_id_mapping}


async def test_expiration_is_the_state_age_at_the_check_interval(nodes):
    node = nodes(transactional_id_expiration_ms=10_000, transaction_remove_expired_check_interval_ms=500,
                 transaction_abort_check_interval_ms=60_000)
    node.logs.create_topic(TOPIC, 2)
    node.txn.load(T0)
    committed(node, "young", T0 + 2_000)
    committed(node, "old", T0)
    node.txn.tick(T0)  # the timeout check's first round; the expiration check waits one interval
    assert node.txn.next_deadline() == T0 + 500
    node.txn.tick(T0 + 9_999)  # checked: nothing is 10 s old yet
    assert {"young", "old"} <= set(node.txn.txns)
    assert node.txn.next_deadline() == T0 + 10_499
    node.txn.tick(T0 + 10_000)  # "old" could go, but the next check is not due
    assert "old" in node.txn.txns
    node.txn.tick(T0 + 10_499)
    assert "old" not in node.txn.txns and "young" in node.txn.txns
    # the age is inclusive: txnLastUpdateTimestamp <= now - transactional.id.expiration.ms
    assert node.txn.remove_expired_transactional_ids(T0 + 11_999) == []
    assert node.txn.remove_expired_transactional_ids(T0 + 12_000) == ["young"]


async def test_only_empty_and_completed_transactions_expire(txn_node):
    node = txn_node
    pid, epoch = node.txn.init_producer_id("open", 60_000, -1, -1, T0)
    node.txn.add_partitions("open", pid, epoch, {TP0}, T0)
    node.txn.init_producer_id("empty", 60_000, -1, -1, T0)
    committed(node, "c", T0)
    pid2, epoch2 = node.txn.init_producer_id("a", 60_000, -1, -1, T0)
    node.txn.add_partitions("a", pid2, epoch2, {TP0}, T0)
    node.txn.end_txn("a", pid2, epoch2, False, T0)
    node.txn.abort_check_interval_ms = WEEK * 2  # keep the timeout check out of the way
    node.txn._next_check = T0 + WEEK * 2
    expired = node.txn.remove_expired_transactional_ids(T0 + WEEK)
    assert sorted(expired) == ["a", "c", "empty"]
    assert node.txn.txns["open"].state is S.ONGOING


async def test_an_expired_id_stays_gone_after_restart_and_starts_afresh(nodes):
    node = nodes()
    node.logs.create_topic(TOPIC, 2)
    pid, _ = committed(node, "gone", T0)
    committed(node, "kept", T0 + WEEK)
    node.txn.remove_expired_transactional_ids(T0 + WEEK)
    nodes.crash(node)  # as kill -9: the tombstone is in the log, nothing else was written
    node = nodes()
    assert "gone" not in node.txn.txns and "kept" in node.txn.txns
    new_pid, epoch = node.txn.init_producer_id("gone", 60_000, -1, -1, T0 + WEEK)
    assert (new_pid != pid, epoch) == (True, 0)  # a new producer id, as for an id never seen


def test_tombstones_are_split_at_the_batch_size():
    ids = [f"id-{i:04d}" for i in range(100)]
    chunks = tombstone_chunks(ids, 1000)
    assert [t for c in chunks for t in c] == ids and len(chunks) > 1
    assert all(61 + sum(26 + 4 + len(t) for t in c) <= 1000 for c in chunks)
    assert tombstone_chunks(["one"], 10) == [["one"]]  # a batch always takes one


# -- producer ids -----------------------------------------------------------------------------

def append(node, producer, partition=0, transactional=False, values=(b"v",)):
    plog = node.logs.get(TOPIC, partition)
    raw = bytearray(producer.batch(partition, *values, transactional=transactional))
    return plog.append(raw, parse_header(raw), wall_ms(), origin=Origin.CLIENT)


async def test_an_idle_producer_expires_and_is_taken_at_any_sequence(nodes):
    node = nodes(producer_id_expiration_ms=5_000, producer_id_expiration_check_interval_ms=500)
    node.logs.create_topic(TOPIC, 2)
    idem = Producer(900, 0)
    append(node, idem)
    append(node, idem)
    sent = wall_ms()
    assert set(await active_producers(node)) == {900}
    node.tick(sent + 4_000)
    assert set(await active_producers(node)) == {900}
    node.tick(sent + 10_000)
    assert await active_producers(node) == {}
    idem.seqs[0] = 7  # no state: any sequence is taken (Kafka: no UNKNOWN_PRODUCER_ID since KIP-360)
    append(node, idem)
    assert (await active_producers(node))[900].last_sequence == 7


async def test_the_first_producer_check_is_one_interval_after_the_start(nodes):
    node = nodes(producer_id_expiration_ms=1, producer_id_expiration_check_interval_ms=60_000)
    node.logs.create_topic(TOPIC, 2)
    append(node, Producer(900, 0))
    start = wall_ms()
    node.tick(start + 1_000)  # Kafka: PeriodicProducerExpirationCheck's first run waits one interval
    assert set(await active_producers(node)) == {900}
    node.tick(start + 60_000)
    assert await active_producers(node) == {}


async def test_a_producer_with_an_open_transaction_never_expires(txn_node):
    node = txn_node
    pid, epoch = node.txn.init_producer_id("x", 60_000, -1, -1, wall_ms())
    node.txn.add_partitions("x", pid, epoch, {TP0}, wall_ms())
    append(node, Producer(pid, epoch), transactional=True)
    append(node, Producer(901, 0))
    state = node.logs.get(*TP0).producer_state
    assert state.remove_expired_producers(wall_ms() + DAY * 30, DAY) == [901]
    assert set(await active_producers(node)) == {pid}


async def alter_broker(node, name, value, resource=""):
    """IncrementalAlterConfigs SET of one broker config (the cluster default unless ``resource``)."""
    m = request_module(44, 1)
    r = await call(node, 44, 1, validate_only=False, resources=(m.AlterConfigsResource(
        resource_type=4, resource_name=resource, configs=(m.AlterableConfig(name=name, config_operation=0, value=value),)),))
    return r.responses[0].error_code


async def test_producer_id_expiration_is_dynamic(nodes):
    node = nodes(producer_id_expiration_ms=100_000, producer_id_expiration_check_interval_ms=500)
    node.logs.create_topic(TOPIC, 2)
    append(node, Producer(900, 0))
    node.tick(wall_ms() + 10_000)
    assert set(await active_producers(node)) == {900}
    assert await alter_broker(node, "producer.id.expiration.ms", "100") == ErrorCode.none
    assert node.config.producer_id_expiration_ms == 100
    node.tick(wall_ms() + 20_000)
    assert await active_producers(node) == {}


async def test_the_next_snapshot_leaves_expired_producers_out(nodes):
    node = nodes()
    node.logs.create_topic(TOPIC, 2)
    append(node, Producer(900, 0))
    assert node.logs.get(*TP0).producer_state.remove_expired_producers(wall_ms() + 2 * DAY, DAY) == [900]
    append(node, Producer(901, 0))
    nodes.close(node)  # the snapshot of a clean close, at the log end
    node = nodes()  # the default expiration keeps whatever the snapshot has
    assert set(await active_producers(node)) == {901}


async def test_a_restart_leaves_out_what_expired_while_the_broker_was_down(nodes):
    node = nodes()
    node.logs.create_topic(TOPIC, 2)
    append(node, Producer(900, 0))
    nodes.close(node)
    node = nodes(producer_id_expiration_ms=1)  # Kafka: the snapshot's expired entries are not loaded
    assert await active_producers(node) == {}


def _pending_member(node, now):
    """A classic member given its id (KIP-394's MEMBER_ID_REQUIRED), pending until its session ends."""
    pending = node.groups.join_group("g", "", None, "consumer", [("range", b"")], session_timeout_ms=10_000,
                                     rebalance_timeout_ms=30_000, now_ms=now, client_id="c", client_host="/127.0.0.1",
                                     require_known_member_id=True, support_skip_assignment=False)
    assert pending.result.error == ErrorCode.member_id_required
    return pending.result.member_id


async def test_an_offline_directory_keeps_expired_ids_and_the_other_ticks_run(nodes):
    """A failed fsync took the data directory offline: the tombstones of expired ids cannot be
    written, so the ids stay, checked again an interval later (Kafka: the partition's log is not
    online, and a failed tombstone append leaves its ids cached), and the group coordinator's
    timers, ticked after the transaction coordinator's, still run."""
    node = nodes(fsync="always")
    node.logs.create_topic(TOPIC, 2)
    node.txn.load(T0)
    committed(node, "idle", T0)
    member = _pending_member(node, T0)
    node.logs.group_commit.fail(OSError(errno.EIO, "Input/output error"))
    assert node.logs.offline
    node.tick(T0 + WEEK)
    assert "idle" in node.txn.txns and records_of(node, "idle")[-1] is not None  # no tombstone
    assert node.txn.next_deadline() > T0 + WEEK  # checked again later, not at once
    assert member not in node.groups.groups["g"].pending_members  # its session ended: the group tick ran


async def test_a_failing_coordinator_tick_leaves_the_others_to_run(nodes, monkeypatch, caplog):
    """Whatever fails in one coordinator's tick is logged and retried alone; the ticks after it run."""
    node = nodes()
    member = _pending_member(node, T0)

    def broken(now_ms):
        raise RuntimeError("a coordinator bug")
    monkeypatch.setattr(node.txn, "tick", broken)
    deadline = node.tick(T0 + 10_000)
    assert member not in node.groups.groups["g"].pending_members
    assert deadline == T0 + 10_000 + TICK_RETRY_MS  # the failed tick is tried again then
    assert "a coordinator bug" in caplog.text
