"""ListOffsets by timestamp over a long segment of out-of-order timestamps: Kafka's answer, and the
event loop free while it is found (shim.storage.time_search)."""

from __future__ import annotations

import asyncio
import random
import struct
import time

import pytest

import shim.storage.time_search as time_search
from kafka_codecs import batch as batch_codec
from kafka_codecs import encode_batch
from shim.errors import ErrorCode
from shim.storage.producer_state import Origin
from shim.storage.validation import validate_client_batch

from test_offsets_apis import TS, list_offsets

N = 100_000


def _stamps(n: int, seed: int = 7) -> list[int]:
    """0..n-1 shuffled, with the second largest first and the largest last: the time index's
    first entry is then the segment's maximum but one, and a search for the largest walks it all."""
    stamps = list(range(n))
    random.Random(seed).shuffle(stamps)
    for value, where in ((n - 2, 0), (n - 1, n - 1)):
        i = stamps.index(value)
        stamps[i], stamps[where] = stamps[where], stamps[i]
    return stamps


def _fill(node, stamps):
    node.logs.create_topic("t", 1, {})
    plog = node.logs.get("t", 0)
    for ts in stamps:  # one record per batch
        data = bytearray(encode_batch([(None, b"v", (), TS + ts)]))
        plog.append(data, validate_client_batch(data, 1 << 20), 0, origin=Origin.CLIENT)
    return plog


class LoopProbe:
    """The most CPU time the loop's thread spent between two ticks of a 1 ms timer: what a request
    handled on the loop holds it for, whatever else the machine runs."""

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.worst = 0.0
        self.ticks = 0
        self._last = time.thread_time()
        self._handle = self.loop.call_later(0.001, self._tick)

    def _tick(self) -> None:
        now = time.thread_time()
        self.worst = max(self.worst, now - self._last)
        self._last, self.ticks = now, self.ticks + 1
        self._handle = self.loop.call_later(0.001, self._tick)

    def stop(self) -> float:
        self._tick()
        self._handle.cancel()
        return self.worst


def _expected(stamps, target):
    return next(((o, TS + t) for o, t in enumerate(stamps) if t >= target), None)


@pytest.mark.parametrize("native", [True, False])
async def test_a_long_search_answers_as_kafka_without_holding_the_loop(node, native, monkeypatch):
    if native and time_search.seek_timestamp is batch_codec._seek_timestamp_py:
        pytest.skip("kafka_codecs._walk is not built")
    if not native:
        monkeypatch.setattr(time_search, "seek_timestamp", batch_codec._seek_timestamp_py)
    stamps = _stamps(N)
    plog = _fill(node, stamps)
    assert len(plog.segments) == 1 and plog.segments[0].size > 4 * time_search.INLINE_BYTES
    for target in (N - 1, N - 2, N // 2, 0, N):
        probe = LoopProbe()
        code, offset, ts = await list_offsets(node, TS + target)
        held = probe.stop()
        want = _expected(stamps, target) or (-1, -1)
        assert (code, offset, ts) == (ErrorCode.none, *want), target
        assert held < 0.1, f"the loop was held {held * 1000:.0f} ms of CPU time for target {target}"
    assert (await list_offsets(node, TS + N - 1))[1] == N - 1  # the search for the largest walked it all


def _headers(stamps, sizes):
    out = bytearray()
    for ts, extra in zip(stamps, sizes):
        out += encode_batch([(None, b"x" * extra, (), ts)])
    return bytes(out)


def test_the_c_and_python_header_walks_agree():
    if time_search.seek_timestamp is batch_codec._seek_timestamp_py:
        pytest.skip("kafka_codecs._walk is not built")
    rng = random.Random(3)
    native, python = time_search.seek_timestamp, batch_codec._seek_timestamp_py
    for _ in range(200):
        n = rng.randint(0, 12)
        stamps = [rng.randint(-1, 50) for _ in range(n)]
        buf = _headers(stamps, [rng.randint(0, 90) for _ in range(n)])
        cut = buf[:rng.randint(0, len(buf))] if rng.random() < 0.5 else buf
        target = rng.randint(-2, 52)
        assert native(cut, target) == python(cut, target), (stamps, target, len(cut))
    bad = bytearray(_headers([5], [0]))
    bad[8:12] = struct.pack(">i", 3)  # shorter than a batch header
    for walk in (native, python):
        with pytest.raises(ValueError, match="invalid length"):
            walk(bytes(bad), 0)


def test_a_batch_larger_than_a_chunk_is_judged_by_its_header(node, monkeypatch):
    monkeypatch.setattr(time_search, "CHUNK", 128)
    stamps = [5, 1, 9, 3]
    node.logs.create_topic("t", 1, {})
    plog = node.logs.get("t", 0)
    for i, ts in enumerate(stamps):
        data = bytearray(encode_batch([(None, b"v" * (300 if i % 2 else 10), (), TS + ts)]))
        plog.append(data, validate_client_batch(data, 1 << 20), 0, origin=Origin.CLIENT)
    for target in range(0, 11):
        assert plog.offset_for_timestamp(TS + target, False) == _expected(stamps, target), target


def _open_fds(directory) -> int:
    """Descriptors of this process on files under ``directory``, removed files included: not all of
    its descriptors, which other threads of the test process open and close meanwhile (the
    librdkafka suite runs in the background, compat/peers/conftest.py)."""
    import os

    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed since it was listed
            continue
        count += target.startswith(f"{directory}{os.sep}")
    return count


@pytest.mark.parametrize("on_thread", [False, True])
async def test_a_planned_search_outlives_its_segment_and_leaks_no_descriptor(node, on_thread, monkeypatch):
    import shim.apis.k02_list_offsets as k02

    if on_thread:
        monkeypatch.setattr(k02, "INLINE_BYTES", -1)
    stamps = [5, 1, 9, 3]
    plog = _fill(node, stamps)
    before = _open_fds(node.config.data_dir)
    search = plog.timestamp_search(TS + 9, False)
    assert _open_fds(node.config.data_dir) == before + 1  # its own descriptor of the segment file
    node.logs.delete_topic("t")  # segments closed and files removed while the search waits for its thread
    assert plog.segments[0].closed
    assert search.run() == (2, TS + 9)
    assert _open_fds(node.config.data_dir) == before - len(plog.segments)  # the topic's own descriptors went with it
    _fill(node, stamps)
    before = _open_fds(node.config.data_dir)
    for target, want in ((9, 2), (0, 0), (10, -1)):  # through the handler: descriptors closed once answered
        assert (await list_offsets(node, TS + target))[1] == want
    assert _open_fds(node.config.data_dir) == before
