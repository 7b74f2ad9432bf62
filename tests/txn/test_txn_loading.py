"""While the coordinators load (shim.coordinators.loader), the data path does not wait for them: a
partition's last stable offset comes from its own log's producer state, Produce and Fetch are
served; what needs the transaction coordinator answers as Kafka does while it loads."""

from __future__ import annotations

from shim.config import BrokerConfig
from shim.errors import ErrorCode as E
from shim.node import Node

from txn_helpers import (READ_COMMITTED, TOPIC, Producer, add_partitions, data_values, fetch, init_producer_id,
                         plain_batch, produce, write_marker)


async def _open_transaction_then_reopen(nodes):
    """A transaction left open in ``t``-0 after plain records 0-1; the node reopened, loading."""
    node = nodes()
    node.logs.create_topic(TOPIC, 2)
    assert (await produce(node, 0, plain_batch(b"a", b"b"))).error_code == E.none
    r = await init_producer_id(node, "tx")
    assert await add_partitions(node, "tx", r.producer_id, r.producer_epoch, [(TOPIC, 0)]) == {(TOPIC, 0): E.none}
    open_txn = Producer(r.producer_id, r.producer_epoch)
    assert (await produce(node, 0, open_txn.batch(0, b"open"), transactional_id="tx")).error_code == E.none
    nodes.close(node)
    loading = Node(BrokerConfig(data_dir=nodes.data_dir, **nodes.defaults), load_later=True)
    nodes.open.append(loading)
    assert not loading.loading.done
    return loading, open_txn


async def test_produce_fetch_and_the_last_stable_offset_do_not_wait_for_the_load(nodes):
    node, open_txn = await _open_transaction_then_reopen(nodes)
    assert (await produce(node, 0, plain_batch(b"c"))).error_code == E.none
    part = await fetch(node, 0, 0, isolation=READ_COMMITTED)
    assert (part.error_code, part.high_watermark, part.last_stable_offset) == (E.none, 4, 2)
    assert data_values(part.records) == [(0, b"a"), (1, b"b")]  # nothing of the open transaction or after it
    # the open transaction's own marker completes it: the coordinator is not asked
    assert await write_marker(node, open_txn.pid, open_txn.epoch, True, [(TOPIC, 0)]) == {(TOPIC, 0): E.none}
    part = await fetch(node, 0, 0, isolation=READ_COMMITTED)
    assert part.last_stable_offset == 5
    assert not node.loading.done


async def test_what_needs_the_transaction_coordinator_waits_for_the_load(nodes):
    node, _ = await _open_transaction_then_reopen(nodes)
    # a new transaction's first batch in a partition: the coordinator cannot verify it yet
    # (Kafka: ReplicaManager's postVerificationCallback turns COORDINATOR_LOAD_IN_PROGRESS into this)
    fresh = Producer(node.producer_ids.next_id(), 0)
    p = await produce(node, 1, fresh.batch(1, b"new"), transactional_id="other")
    assert p.error_code == E.not_enough_replicas
    assert p.error_message == ("Unable to verify the partition has been added to the transaction. "
                               "Underlying error: COORDINATOR_LOAD_IN_PROGRESS")
    # a marker for a loading offsets partition: Kafka 4's answer to the group coordinator's load error
    node.logs.create_topic("__consumer_offsets", 2)
    assert await write_marker(node, fresh.pid, 0, False, [("__consumer_offsets", 0), (TOPIC, 1)]) == {
        ("__consumer_offsets", 0): E.not_leader_or_follower, (TOPIC, 1): E.none}
    node.loading.run_now()
    assert await write_marker(node, fresh.pid, 0, False, [("__consumer_offsets", 0)]) == {
        ("__consumer_offsets", 0): E.none}
