"""What may happen while a share group's partitions are being initialized a slice per loop turn
(:mod:`shim.coordinators.share.initialization`), one partition a turn here: the heartbeat writes
partition 0's first state, partition 1's waits for the next tick. Each slice writes only partitions
still ``initializing`` and without state by then, so AlterShareGroupOffsets, DeleteShareGroupOffsets,
DeleteGroups, a topic's deletion, a share fetch's acknowledgement and a crash in between keep what
they did (Kafka: initializeShareGroupState and uninitializeShareGroupState act on the initializing
partitions as they are when InitializeShareGroupState is answered)."""

from __future__ import annotations

import datetime
import time
import uuid

import pytest

from node_support import crash
from share.test_share_admin_apis import (G, T, alter, call, delete, describe, fetch, heartbeat, offsets, open_node,
                                         produce)
from share.test_share_state_metadata import _records
from shim.configs.admin import Op
from shim.control.ops import call as control
from shim.coordinators.share import initialization
from shim.coordinators.share import members as sm
from shim.coordinators.share import state_metadata as spm
from shim.errors import ErrorCode as E
from shim.protocol.messages import request_module

BOTH = frozenset({0, 1})
AVAILABLE, ACKNOWLEDGED = 0, 2
RELEASE_0_ACCEPT_1_RELEASE_2 = [(0, 0, 2), (1, 1, 1), (2, 2, 2)]


@pytest.fixture(autouse=True)
def one_a_turn(monkeypatch):
    monkeypatch.setattr(initialization, "INITIALIZATIONS_PER_TURN", 1)


def _open(path):
    n = open_node(path)
    n.finalize_features({"share.version": 1})
    n.share.configs.alter(G, [Op("share.auto.offset.reset", 0, "earliest")], False)
    return n


def _states(n):
    return [r.value for r in _records(n, sm.STATE_PARTITION_METADATA)]


def _keys(n, group=G):
    """partition -> start offset of the group's share state in the store."""
    return {p: e.snapshot.start_offset for (g, _, p), e in n.share.store.entries.items() if g == group}


def _batches(n, partition, group=G):
    key = (group, n.logs.topics[T].topic_id, partition)
    return [(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count)
            for b in n.share.store.get(key).batches]


def _run_jobs(n):
    """The loop's next turns, until no initialization is left (the shell's timer runs them at once)."""
    turns = 0
    while n.share.initialized.jobs:
        n.tick(int(time.time() * 1000))
        turns += 1
    return turns


async def _join_and_leave(n):
    """A member joins (partition 0 initialized in its turn, partition 1 not yet) and leaves."""
    member = str(uuid.uuid4())
    assert (await heartbeat(n, member, 0)).error_code == E.none
    tid = n.logs.topics[T].topic_id
    assert _keys(n) == {0: -1} and n.share.initialized.get(G).initializing == {tid: spm.Topic(T, BOTH)}
    assert (await heartbeat(n, member, -1)).error_code == E.none
    return member, tid


async def test_the_rest_is_written_by_the_next_turns_then_initialized(tmp_path):
    n = _open(tmp_path / "data")
    try:
        member, deadlines = str(uuid.uuid4()), []
        n.share.on_earlier_deadline = deadlines.append  # what the shell's timer is told
        assert (await heartbeat(n, member, 0)).member_epoch == 1
        assert min(deadlines) <= int(time.time() * 1000)  # the next turn, at once (else a session's expiry)
        tid = n.logs.topics[T].topic_id
        r = await heartbeat(n, member, 1)  # a heartbeat meanwhile neither starts them again nor assigns them
        assert (r.member_epoch, r.assignment) == (1, None)
        assert _states(n) == [spm.PartitionMetadata({tid: spm.Topic(T, BOTH)}, {}, {})]
        assert n.share.next_deadline() == 0  # due at once
        assert _run_jobs(n) == 1
        assert _keys(n) == {0: -1, 1: -1}
        assert _states(n)[1:] == [spm.PartitionMetadata({}, {tid: spm.Topic(T, BOTH)}, {})]
        r = await heartbeat(n, member, 1)
        assert r.member_epoch == 2 and sorted(r.assignment.topic_partitions[0].partitions) == [0, 1]
    finally:
        n.close()


async def test_offsets_altered_meanwhile_are_not_overwritten(tmp_path):
    n = _open(tmp_path / "data")
    try:
        _, tid = await _join_and_leave(n)
        r = await alter(n, {(T, 1): 5})
        assert [p.error_code for t in r.responses for p in t.partitions] == [E.none]
        _run_jobs(n)
        assert _keys(n) == {0: -1, 1: 5}
        assert n.share.initialized.get(G) == spm.PartitionMetadata({}, {tid: spm.Topic(T, BOTH)}, {})
        assert offsets(await describe(n)) == {(T, 0): (-1, E.none), (T, 1): (5, E.none)}
    finally:
        n.close()


async def test_offsets_deleted_meanwhile_are_not_written_again(tmp_path):
    n = _open(tmp_path / "data")
    try:
        await _join_and_leave(n)
        r = await delete(n, [T])
        assert r.error_code == E.none and r.responses[0].error_code == E.none
        before = len(_states(n))
        _run_jobs(n)
        assert _keys(n) == {} and n.share.initialized.get(G) == spm.EMPTY
        assert len(_states(n)) == before  # no initialized record for partitions no longer initializing
        assert offsets(await describe(n)) == {}
    finally:
        n.close()


async def test_a_group_deleted_meanwhile_leaves_nothing_behind(tmp_path):
    n = _open(tmp_path / "data")
    try:
        await _join_and_leave(n)
        assert (await call(n, 42, 2, groups_names=(G,))).results[0].error_code == E.none
        assert n.share.initialized.jobs == {} and _keys(n) == {}
        assert _states(n)[-1] is None  # the group's tombstone ends it
        member = str(uuid.uuid4())  # a group of that name made again starts afresh
        assert (await heartbeat(n, member, 0)).member_epoch == 1
        _run_jobs(n)
        assert _keys(n) == {0: -1, 1: -1}
    finally:
        n.close()
    n = _open(tmp_path / "data")
    try:
        assert sorted(_keys(n)) == [0, 1]
    finally:
        n.close()


async def test_a_topic_deleted_meanwhile_gets_no_state(tmp_path):
    n = _open(tmp_path / "data")
    try:
        member, old = await _join_and_leave(n)
        m = request_module(20, 6)
        r = await call(n, 20, 6, topics=(m.DeleteTopicState(name=T, topic_id=None),), topic_names=(),
                       timeout=datetime.timedelta(seconds=5))
        assert r.responses[0].error_code == E.none
        n.logs.create_topic(T, 2)  # made again at once: another topic id
        _run_jobs(n)
        assert not [k for k in n.share.store.entries if k[1] == old]
        assert _keys(n) == {} and n.share.initialized.get(G) == spm.EMPTY
        assert (await heartbeat(n, member, 0)).error_code == E.none  # the new topic is initialized afresh
        _run_jobs(n)
        new = n.logs.topics[T].topic_id
        assert n.share.initialized.get(G) == spm.PartitionMetadata({}, {new: spm.Topic(T, BOTH)}, {})
    finally:
        n.close()


async def test_state_acknowledged_meanwhile_is_kept(tmp_path):
    n = _open(tmp_path / "data")
    try:
        await produce(n, 1, 3)
        member = str(uuid.uuid4())
        await heartbeat(n, member, 0)
        assert await fetch(n, member, 0, partition=1) == [(0, 2)]
        await fetch(n, member, 1, acks=RELEASE_0_ACCEPT_1_RELEASE_2, partition=1)  # before partition 1's turn
        _run_jobs(n)
        assert _keys(n) == {0: -1, 1: 0}
        assert _batches(n, 1) == [(0, 0, AVAILABLE, 1), (1, 1, ACKNOWLEDGED, 1), (2, 2, AVAILABLE, 1)]
    finally:
        n.close()


async def test_a_crash_midway_is_initialized_again_after_the_interval_keeping_what_was_written(tmp_path):
    """kill -9 between two turns: the record still says initializing, partition 0 has its first
    state and partition 1 the records accepted on it; after the retry interval the next heartbeat
    initializes what has no state, and the accepted records stay accepted."""
    n = _open(tmp_path / "data")
    await produce(n, 1, 3)
    member = str(uuid.uuid4())
    await heartbeat(n, member, 0)
    await fetch(n, member, 0, partition=1)
    await fetch(n, member, 1, acks=RELEASE_0_ACCEPT_1_RELEASE_2, partition=1)
    assert n.share.initialized.jobs  # partition 1's turn has not come
    crash(n)
    n = _open(tmp_path / "data")
    try:
        tid = n.logs.topics[T].topic_id
        assert n.share.initialized.get(G) == spm.PartitionMetadata({tid: spm.Topic(T, BOTH)}, {}, {})
        assert _keys(n) == {0: -1, 1: 0} and not n.share.initialized.jobs
        due = await control(n.control, "advance_clock", {"ms": 30_000, "clock": "groups"})
        assert due["share_initializations_due"] == [G]
        r = await heartbeat(n, member, 0)  # its session expired: it joins again
        assert r.error_code == E.none
        _run_jobs(n)
        assert n.share.initialized.get(G) == spm.PartitionMetadata({}, {tid: spm.Topic(T, BOTH)}, {})
        assert _keys(n) == {0: -1, 1: 0}
        assert _batches(n, 1) == [(0, 0, AVAILABLE, 1), (1, 1, ACKNOWLEDGED, 1), (2, 2, AVAILABLE, 1)]
        assert await fetch(n, r.member_id, 0, partition=1) == [(0, 0), (2, 2)]  # 1 stays accepted
    finally:
        n.close()
