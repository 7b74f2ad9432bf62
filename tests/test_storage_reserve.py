"""Space reserved ahead of a growing segment (shim.storage.reserve): invisible in the file's size,
given back when the segment is sealed or closed, and after a kill at the next start."""

from __future__ import annotations

import os

import pytest

from kafka_codecs import encode_batch
from shim.storage.producer_state import Origin
from shim.storage import reserve, segment
from shim.storage.partition_log import LogConfig
from shim.storage.validation import validate_client_batch

MiB = 1 << 20
VALUE = os.urandom(100_000)


@pytest.fixture
def reserving(tmp_path):
    """Skip where this filesystem (or platform) cannot reserve space past the end of a file."""
    fd = os.open(tmp_path / "probe", os.O_RDWR | os.O_CREAT)
    try:
        if not reserve.reserve(fd, 0, MiB):
            pytest.skip("fallocate(FALLOC_FL_KEEP_SIZE) is not available here")
    finally:
        os.close(fd)


def allocated(path) -> int:
    return os.stat(path).st_blocks * 512


def fill(plog, megabytes: float) -> None:
    """Batches of one 100 kB record until the log holds ``megabytes`` more."""
    target = plog.size_bytes() + megabytes * MiB
    while plog.size_bytes() < target:
        first = plog.log_end_offset
        data = bytearray(encode_batch([(None, VALUE, [], 1_700_000_000_000)]))
        h = validate_client_batch(data, plog.config.max_message_bytes)
        assert plog.append(data, h, 0, origin=Origin.CLIENT).base_offset == first


def test_a_small_segment_reserves_nothing(open_log, reserving):
    plog = open_log()
    fill(plog, 0.5)
    path = plog.active.log_path
    assert allocated(path) < os.path.getsize(path) + 64 * 1024


def test_a_growing_segment_reserves_past_its_end_and_its_size_stays_what_was_written(open_log, reserving):
    plog = open_log()
    fill(plog, 3)
    path = plog.active.log_path
    size = os.path.getsize(path)
    assert size == plog.active.size == plog.size_bytes()
    assert allocated(path) > size + 256 * 1024  # reserved ahead: up to as much again as it holds
    assert allocated(path) <= 2 * size + 256 * 1024
    records = plog.read(0, 64 * MiB, False).data
    assert len(records) == size


def test_the_reservation_stops_at_the_segment_size_limit(open_log, reserving):
    plog = open_log(LogConfig(segment_bytes=int(2.5 * MiB)))
    fill(plog, 2.3)  # the last reservation, at 2.2 MB, would reach 4.4 MB without the limit
    assert len(plog.segments) == 1
    assert allocated(plog.active.log_path) <= 2.5 * MiB + 64 * 1024


def test_sealing_and_closing_give_the_reservation_back(open_log, reserving):
    config = LogConfig(segment_bytes=4 * MiB)
    plog = open_log(config)
    fill(plog, 6.5)
    assert len(plog.segments) == 2
    sealed = plog.segments[0].log_path
    assert allocated(sealed) < os.path.getsize(sealed) + 64 * 1024
    active = plog.active.log_path
    assert allocated(active) > os.path.getsize(active) + 256 * 1024
    open_log.close(plog)
    assert allocated(active) < os.path.getsize(active) + 64 * 1024


def test_a_reservation_left_by_a_kill_is_given_back_at_the_next_start(open_log, reserving):
    plog = open_log()
    fill(plog, 3)
    end, path = plog.log_end_offset, plog.active.log_path
    open_log.crash(plog)
    assert allocated(path) > os.path.getsize(path) + 256 * 1024
    plog = open_log(clean=False)
    assert allocated(path) < os.path.getsize(path) + 64 * 1024
    assert plog.log_end_offset == end
    fill(plog, 0.2)
    assert plog.log_end_offset > end


def test_appends_go_ahead_where_nothing_can_be_reserved(open_log, monkeypatch):
    calls = []
    monkeypatch.setattr(segment.reserve, "reserve", lambda fd, offset, length: calls.append(length) or False)
    plog = open_log()
    fill(plog, 3)
    assert len(calls) == 1  # tried once, then the segment stops asking
    assert os.path.getsize(plog.active.log_path) == plog.size_bytes()
    assert len(plog.read(0, 64 * MiB, False).data) == plog.size_bytes()
