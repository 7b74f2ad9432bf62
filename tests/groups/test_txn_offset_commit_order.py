"""TxnOffsetCommit's checks in each coordinator's order, through the dispatcher: Kafka 3.9's
GroupCoordinator.handleTxnCommitOffsets adds an unknown group before it verifies the transaction
(a refused commit leaves an empty group, listed until the offsets retention check drops it); Kafka
4's GroupCoordinatorService verifies first and OffsetMetadataManager.commitTransactionalOffset
creates a group only for generation -1, reverting it with a refused write."""

from __future__ import annotations

import pytest

from group_helpers import TOPIC, E, call
from test_group_apis import LIST, TXN_OFFSET_COMMIT, codes, commit_topics


@pytest.fixture(params=["3.9", "4.1"])
def release_node(request, nodes):
    n = nodes(kafka_version=request.param)
    n.logs.create_topic(TOPIC, 2)
    return request.param, n


async def txn_commit(node, pid, epoch, generation=-1, member=""):
    r = await call(node, TXN_OFFSET_COMMIT, 3, transactional_id="tx", group_id="g", producer_id=pid,
                   producer_epoch=epoch, generation_id=generation, member_id=member, group_instance_id=None,
                   topics=commit_topics(TXN_OFFSET_COMMIT, 3, (0, 10)))
    return codes(r)[(TOPIC, 0)]


async def listed(node) -> list[str]:
    return [g.group_id for g in (await call(node, LIST, 4, states_filter=())).groups]


async def test_a_commit_outside_the_transaction_leaves_a_group_only_under_3_9(release_node):
    release, node = release_node
    pid, epoch = node.txn.init_producer_id("tx", 60_000, -1, -1, 0)  # no AddOffsetsToTxn
    assert await txn_commit(node, pid, epoch) == E.invalid_txn_state
    assert await listed(node) == (["g"] if release == "3.9" else [])


async def test_an_unknown_group_named_with_a_generation(release_node):
    release, node = release_node
    pid, epoch = node.txn.init_producer_id("tx", 60_000, -1, -1, 0)
    node.txn.add_offsets("tx", pid, epoch, "g", 0)
    # 3.9 checks the member of the group it just added; 4.x has no group to hold a generation
    expected = E.unknown_member_id if release == "3.9" else E.illegal_generation
    assert await txn_commit(node, pid, epoch, generation=3, member="m") == expected
    assert await listed(node) == (["g"] if release == "3.9" else [])


async def test_a_commit_of_a_simple_producer_creates_the_group(release_node):
    _, node = release_node
    pid, epoch = node.txn.init_producer_id("tx", 60_000, -1, -1, 0)
    node.txn.add_offsets("tx", pid, epoch, "g", 0)
    assert await txn_commit(node, pid, epoch) == E.none
    assert await listed(node) == ["g"]
