"""``advance_clock`` (shim.control) moves the share coordinator's deadlines: acquisition locks and
share-group member sessions due within the advance expire at once. Share sessions have no deadline
(Kafka 4.1): tests/share/test_share_session_lifetime.py."""

from __future__ import annotations

from share.test_share_apis import acquired, heartbeat, node, produce, share_fetch, share_node  # noqa: F401
from shim.control.ops import call as control
from shim.errors import ErrorCode


async def test_an_acquisition_lock_expires_on_advance_clock_and_the_record_is_redelivered(share_node):  # noqa: F811
    await produce(share_node, 0, b"a", b"b")
    assert acquired(await share_fetch(share_node, "m1", 0)) == [(0, 1, 1)]
    early = await control(share_node.control, "advance_clock", {"ms": 29_000, "clock": "groups"})
    assert early["expired_acquisition_locks"] == []
    assert acquired(await share_fetch(share_node, "m2", 0)) == []  # still held by m1
    got = await control(share_node.control, "advance_clock", {"ms": 30_000, "clock": "groups"})
    assert got["expired_acquisition_locks"] == ["g/t-0@0", "g/t-0@1"]
    assert got["expired_share_members"] == []
    assert acquired(await share_fetch(share_node, "m2", 1)) == [(0, 1, 2)]


async def test_share_members_expire_on_advance_clock(share_node):  # noqa: F811
    assert (await heartbeat(share_node, "m1", 0)).error_code == ErrorCode.none
    await share_fetch(share_node, "m1", 0)
    got = await control(share_node.control, "advance_clock", {"ms": 45_000})
    assert got["expired_share_members"] == ["g/m1"]
    assert (await heartbeat(share_node, "m1", 1)).error_code == ErrorCode.unknown_member_id


async def test_advance_clock_of_transactions_leaves_share_locks(share_node):  # noqa: F811
    await produce(share_node, 0, b"a")
    assert acquired(await share_fetch(share_node, "m1", 0)) == [(0, 0, 1)]
    got = await control(share_node.control, "advance_clock", {"ms": 60_000, "clock": "transactions"})
    assert "expired_acquisition_locks" not in got
    assert acquired(await share_fetch(share_node, "m2", 0)) == []
