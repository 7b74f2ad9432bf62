"""Transaction version 2 on the wire (Kafka 4.x emulation): EndTxn v5's new identity, Produce v12
and TxnOffsetCommit v5 adding their partition themselves, AddPartitionsToTxn v4-5, and 3.9
emulation refusing all of it."""

from __future__ import annotations

import pytest

from shim.errors import ErrorCode
from shim.protocol.framing import FrameError
from shim.protocol.messages import request_module

from txn_helpers import (
    ADD_PARTITIONS, END_TXN, READ_COMMITTED, TOPIC, Producer, call, data_values, fetch, init_producer_id, produce,
)

TXN_OFFSET_COMMIT = 28
TP0, TP1 = (TOPIC, 0), (TOPIC, 1)


@pytest.fixture
def node(nodes):
    n = nodes(kafka_version="4.0")
    n.logs.create_topic(TOPIC, 2)
    return n


async def end_v5(node, pid, epoch, commit, txn_id="tx"):
    r = await call(node, END_TXN, 5, transactional_id=txn_id, producer_id=pid, producer_epoch=epoch, committed=commit)
    return r.error_code, r.producer_id, r.producer_epoch


async def identity(node, txn_id="tx"):
    r = await init_producer_id(node, txn_id, version=5)
    assert r.error_code == ErrorCode.none
    return r.producer_id, r.producer_epoch


async def add_v5(node, txn_id, pid, epoch, partitions, verify_only):
    m = request_module(ADD_PARTITIONS, 5)
    topics = tuple(m.AddPartitionsToTxnTopic(name=t, partitions=(p,)) for t, p in partitions)
    txn = m.AddPartitionsToTxnTransaction(transactional_id=txn_id, producer_id=pid, producer_epoch=epoch,
                                          verify_only=verify_only, topics=topics)
    r = await call(node, ADD_PARTITIONS, 5, transactions=(txn,))
    assert r.error_code == ErrorCode.none
    (res,) = r.results_by_transaction
    return {(t.name, p.partition_index): p.partition_error_code for t in res.topic_results for p in t.results_by_partition}


async def test_produce_v12_adds_the_partition_and_end_txn_v5_answers_the_next_identity(node):
    pid, epoch = await identity(node)
    producer = Producer(pid, epoch)
    # No AddPartitionsToTxn: Produce v12 adds the partition to the transaction itself.
    r = await produce(node, 0, producer.batch(0, b"a"), transactional_id="tx", version=12)
    assert r.error_code == ErrorCode.none
    assert node.txn.txns["tx"].partitions == {TP0}
    assert await end_v5(node, pid, epoch, True) == (ErrorCode.none, pid, epoch + 1)
    assert [v for _, v in data_values(bytes((await fetch(node, 0, 0, isolation=READ_COMMITTED)).records))] == [b"a"]
    # The finished epoch is fenced at produce time (PRODUCER_FENCED from the coordinator).
    late = await produce(node, 1, Producer(pid, epoch).batch(1, b"z"), transactional_id="tx", version=12)
    assert late.error_code == ErrorCode.invalid_producer_epoch


async def test_produce_v11_still_verifies_and_v12_error_mapping(node):
    pid, epoch = await identity(node)
    r = await produce(node, 0, Producer(pid, epoch).batch(0, b"a"), transactional_id="tx", version=11)
    assert r.error_code == ErrorCode.transaction_abortable  # not added: part 1 verification
    unknown = await produce(node, 0, Producer(pid + 99, 0).batch(0, b"a"), transactional_id="tx", version=12)
    assert unknown.error_code == ErrorCode.invalid_producer_id_mapping


async def test_end_txn_v5_errors_carry_no_identity(node):
    pid, epoch = await identity(node)
    assert await end_v5(node, pid, epoch, True) == (ErrorCode.invalid_txn_state, -1, -1)
    assert await end_v5(node, pid, epoch + 3, False) == (ErrorCode.producer_fenced, -1, -1)


async def test_add_partitions_v5_verifies_or_adds(node):
    pid, epoch = await identity(node)
    assert await add_v5(node, "tx", pid, epoch, [TP0], verify_only=False) == {TP0: ErrorCode.none}
    assert node.txn.txns["tx"].client_transaction_version == 2
    assert await add_v5(node, "tx", pid, epoch, [TP0, TP1], verify_only=True) == {
        TP0: ErrorCode.none, TP1: ErrorCode.transaction_abortable}
    assert await add_v5(node, "tx", pid, epoch - 1 if epoch else epoch + 1, [TP1], verify_only=True) == {
        TP1: ErrorCode.producer_fenced}
    assert await add_v5(node, "tx", pid, epoch, [(TOPIC, 9)], verify_only=False) == {
        (TOPIC, 9): ErrorCode.unknown_topic_or_partition}


@pytest.mark.parametrize("version,code", [(3, ErrorCode.invalid_txn_state), (4, ErrorCode.transaction_abortable),
                                          (5, ErrorCode.none)])
async def test_txn_offset_commit_without_add_offsets_per_version(node, version, code):
    pid, epoch = await identity(node)
    m = request_module(TXN_OFFSET_COMMIT, version)
    part = m.TxnOffsetCommitRequestPartition(partition_index=0, committed_offset=5, committed_leader_epoch=-1,
                                             committed_metadata="")
    r = await call(node, TXN_OFFSET_COMMIT, version, transactional_id="tx", group_id="g", producer_id=pid,
                   producer_epoch=epoch, generation_id=-1, member_id="", group_instance_id=None,
                   topics=(m.TxnOffsetCommitRequestTopic(name=TOPIC, partitions=(part,)),))
    assert r.topics[0].partitions[0].error_code == code
    in_txn = node.txn.offsets_partition("g") in node.txn.txns["tx"].partitions
    assert in_txn == (version == 5)  # the implicit AddOffsetsToTxn


async def test_3_9_emulation_serves_none_of_it(nodes):
    node = nodes(kafka_version="3.9")
    node.logs.create_topic(TOPIC, 1)
    pid, epoch = await identity(node)
    with pytest.raises(FrameError):
        await end_v5(node, pid, epoch, False)
    with pytest.raises(FrameError):
        await produce(node, 0, Producer(pid, epoch).batch(0, b"a"), transactional_id="tx", version=12)


async def test_add_partitions_v5_under_3_9_leaves_the_client_on_version_1(nodes):
    node = nodes(kafka_version="3.9")
    node.logs.create_topic(TOPIC, 1)
    pid, epoch = await identity(node)
    assert await add_v5(node, "tx", pid, epoch, [TP0], verify_only=False) == {TP0: ErrorCode.none}
    assert node.txn.txns["tx"].client_transaction_version == 0
