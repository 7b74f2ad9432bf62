"""Share groups' isolation (KIP-932, ``share.isolation.level``): read_committed acquires nothing of
an aborted or still-open transaction and stops at the LSO; read_uncommitted acquires up to the high
watermark; neither ever acquires a control batch (Kafka: SharePartition, ShareFetchUtils)."""

from __future__ import annotations

from kafka_codecs.batch import iter_batches
from shim.configs.admin import Op
from test_fetch_isolation import mixed_log  # noqa: F401 -- the fixture
from txn_helpers import TOPIC

SET = 0


def share_group(node, group, isolation):
    ops = [Op("share.auto.offset.reset", SET, "earliest")]
    if isolation:
        ops.append(Op("share.isolation.level", SET, isolation))
    node.share.configs.alter(group, ops, False)


def acquired_offsets(node, group, member="m", now=0):
    plog = node.logs.get(TOPIC, 0)
    got = node.share.acquire(group, member, TOPIC, 0, plog, 500, 1 << 20, now)
    offsets = [o for first, last, _ in got.ranges for o in range(first, last + 1)]
    returned = [h for _, h in iter_batches(got.records)]
    assert all(not h.attributes & 0x20 for h in returned)  # no control batch is sent
    return offsets


async def test_read_committed_skips_aborted_and_open_transactions(mixed_log):  # noqa: F811
    node, a, b, c = mixed_log
    share_group(node, "rc", "read_committed")
    assert acquired_offsets(node, "rc") == [0, 3, 5]
    assert acquired_offsets(node, "rc") == []  # stops at the LSO (7): c7 is still open
    await c.end(True)
    assert acquired_offsets(node, "rc") == [7, 8]


async def test_read_uncommitted_acquires_everything_but_markers(mixed_log):  # noqa: F811
    node, *_ = mixed_log
    share_group(node, "ru", None)
    assert node.share.configs.get("ru", "share.isolation.level", "read_uncommitted") == "read_uncommitted"
    assert acquired_offsets(node, "ru") == [0, 1, 2, 3, 5, 7, 8]


async def test_an_aborted_open_transaction_is_never_delivered(mixed_log):  # noqa: F811
    node, a, b, c = mixed_log
    share_group(node, "rc", "read_committed")
    assert acquired_offsets(node, "rc") == [0, 3, 5]
    await c.end(False)
    assert acquired_offsets(node, "rc") == [8]
