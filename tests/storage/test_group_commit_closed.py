"""A segment written under fsync "always" and closed before its fsync job starts (deleted by
retention, a cleaner's swap or its topic's deletion, or abandoned when the data directory went
offline) has nothing left to sync: the job skips it instead of calling fsync(-1), which raises
ValueError into every request waiting for the job (found by ``compat.fuzz.stateful --offline``)."""

from __future__ import annotations

import asyncio
import errno
import types
from concurrent.futures import ThreadPoolExecutor

import pytest

from shim.storage.group_commit import GroupCommit
from shim.storage.segment import LogSegment


def _plog(tmp_path):
    return types.SimpleNamespace(directory=tmp_path, _dir_dirty=False, synced=lambda offset: None)


async def test_a_segment_closed_before_its_job_starts_is_skipped(tmp_path):
    with ThreadPoolExecutor(1) as flusher:
        commit = GroupCommit(flusher)
        assert commit.attach()
        seg = LogSegment(tmp_path, 0, 4096)
        commit.wrote(_plog(tmp_path), seg)
        waiter = commit.barrier()  # the job starts on the next turn
        seg.close()  # the topic deleted in this turn
        await asyncio.wait_for(waiter, 10)
        assert commit.failed is None


async def test_an_offline_directory_s_abandoned_segment_fails_its_waiters_with_the_fsync_error(tmp_path):
    with ThreadPoolExecutor(1) as flusher:
        commit = GroupCommit(flusher)
        assert commit.attach()
        seg = LogSegment(tmp_path, 0, 4096)
        commit.wrote(_plog(tmp_path), seg)
        waiter = commit.barrier()
        error = OSError(errno.EIO, "Input/output error")
        commit.fail(error)  # another job's fsync failed: the logs are abandoned
        seg.close()
        with pytest.raises(OSError) as raised:
            await asyncio.wait_for(waiter, 10)
        assert raised.value is error
