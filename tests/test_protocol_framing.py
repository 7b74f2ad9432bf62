"""Sans-IO tests of the length-prefixed frame decoder (shim.protocol.framing)."""

from __future__ import annotations

import mmap
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shim.protocol.framing import FrameDecoder, FrameError, frame, frame_size


def test_frame_prefixes_big_endian_int32_size():
    assert frame(b"abc") == b"\x00\x00\x00\x03abc"
    assert frame(b"") == b"\x00\x00\x00\x00"


def test_one_frame_in_one_feed():
    d = FrameDecoder(1024)
    assert d.feed(frame(b"hello")) == [b"hello"]
    assert d.pending == 0


def test_frame_split_at_every_byte_boundary():
    payload = bytes(range(40))
    data = frame(payload)
    for cut in range(len(data) + 1):
        d = FrameDecoder(1024)
        first = d.feed(data[:cut])
        assert first == ([payload] if cut == len(data) else [])
        assert d.pending == (0 if cut == len(data) else cut)
        assert first + d.feed(data[cut:]) == [payload]
        assert d.pending == 0


def test_frame_fed_one_byte_at_a_time():
    payloads = [b"a" * 5, b"", b"xyz" * 100]
    d = FrameDecoder(1024)
    out = []
    for byte in b"".join(frame(p) for p in payloads):
        out += d.feed(bytes([byte]))
    assert out == payloads
    assert d.pending == 0


def test_many_frames_in_one_feed_keep_order_and_partial_tail():
    payloads = [f"request-{i}".encode() * (i % 7) for i in range(200)]
    tail = frame(b"incomplete-tail")
    d = FrameDecoder(1 << 20)
    assert d.feed(b"".join(frame(p) for p in payloads) + tail[:9]) == payloads
    assert d.pending == 9
    assert d.feed(tail[9:]) == [b"incomplete-tail"]
    assert d.pending == 0


def test_zero_length_frame_is_a_frame():
    d = FrameDecoder(16)
    assert d.feed(frame(b"") + frame(b"x")) == [b"", b"x"]


@pytest.mark.parametrize("size", [-1, -(2**31), -100])
def test_negative_size_is_refused_from_the_prefix_alone(size):
    d = FrameDecoder(1024)
    with pytest.raises(FrameError, match="negative"):
        d.feed(struct.pack(">i", size))


def test_negative_size_after_valid_frames_in_the_same_feed():
    # The frames before the bad size are handed out first (so they get answered), then the error.
    d = FrameDecoder(1024)
    assert d.feed(frame(b"ok") + struct.pack(">i", -5)) == [b"ok"]
    with pytest.raises(FrameError, match="negative"):
        d.raise_pending()
    with pytest.raises(FrameError, match="negative"):
        d.feed(b"")


def test_oversize_is_refused_before_the_body_arrives():
    d = FrameDecoder(100)
    # Only the four size bytes: the decoder must not wait for 101 bytes of body.
    with pytest.raises(FrameError, match="exceeds"):
        d.feed(struct.pack(">i", 101))


def test_size_split_across_feeds_is_checked_once_complete():
    d = FrameDecoder(100)
    assert d.feed(b"\x00\x00") == []
    with pytest.raises(FrameError):
        d.feed(b"\x01\x00")  # 256 > 100


def test_frame_of_exactly_the_limit_is_accepted():
    d = FrameDecoder(100)
    assert d.feed(frame(b"z" * 100)) == [b"z" * 100]
    with pytest.raises(FrameError):
        FrameDecoder(99).feed(frame(b"z" * 100))


@settings(max_examples=200, deadline=None)
@given(
    payloads=st.lists(st.binary(max_size=300), max_size=20),
    cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=10),
)
def test_any_split_of_any_frame_sequence_decodes_to_the_same_payloads(payloads, cuts):
    data = b"".join(frame(p) for p in payloads)
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    d = FrameDecoder(300)
    out = []
    for a, b in zip(points, points[1:]):
        out += d.feed(data[a:b])
    assert out == payloads
    assert d.pending == 0


def test_a_large_frame_announced_but_not_sent_holds_little_memory():
    """A peer that sends a 4-byte size of 90 MB and then nothing must not pin 90 MB."""
    import tracemalloc

    d = FrameDecoder(100 * 1024 * 1024)
    tracemalloc.start()
    try:
        assert d.feed(frame_size(90 * 1024 * 1024) + b"x" * 100) == []
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held < 1024 * 1024, held
    assert d.pending == 100


@pytest.mark.parametrize("chunk", [1000, 7 * 1024, 64 * 1024, 3 * 1024 * 1024])
def test_a_large_frame_arriving_in_pieces_grows_its_buffer_and_is_whole(chunk):
    payload = bytes(range(256)) * (6 * 1024 + 7)  # 1.5 MB and a bit, not a power of two
    data = frame(payload) + frame(b"next")
    d = FrameDecoder(100 * 1024 * 1024)
    out = []
    for i in range(0, len(data), chunk):
        out += d.feed(data[i : i + chunk])
    assert [bytes(f) for f in out] == [payload, b"next"]


def _held_by_a_decoder(data: bytes) -> int:
    """Bytes a new decoder holds after ``data`` arrived in reads of at most 64 KiB."""
    import tracemalloc

    tracemalloc.start()
    try:
        d = FrameDecoder(100 * 1024 * 1024)
        for i in range(0, len(data), 64 * 1024):
            d.feed(data[i : i + 64 * 1024])
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return held


def test_an_idle_or_slowly_trickling_connection_holds_a_few_times_what_it_sent():
    """2,000 connections that each announced a 100 MiB frame and sent 20 KB of it held 670 MiB of the
    broker's memory (64 KiB of shared buffer and a first body buffer of 256 KiB each), and idle ones
    64 KiB each. Now an idle connection holds 4 KiB and a trickle about twice what it sent."""
    assert _held_by_a_decoder(b"") < 8 * 1024
    assert _held_by_a_decoder(frame_size(100 * 1024 * 1024) + b"x" * 20_000) < 3 * 20_000 + 8 * 1024
    assert _held_by_a_decoder(frame_size(1000) + b"x" * 500) < 8 * 1024


def test_the_first_read_that_fills_the_small_buffer_grows_it():
    payloads = [bytes([i]) * 15_000 for i in range(5)] + [b"tail"]  # below DIRECT_BYTES: the shared buffer
    data = b"".join(frame(p) for p in payloads)
    d = FrameDecoder(1 << 20)
    out = []
    for i in range(0, len(data), 3000):
        out += [bytes(f) for f in d.feed(data[i : i + 3000])]
    assert out == payloads


def _reads(d: FrameDecoder, data: bytes) -> tuple[list[bytes], int]:
    """The frames of ``data`` and how many reads it took, each read as a socket with all of
    ``data`` waiting gives it: as much as the decoder's buffer holds."""
    out, reads, view = [], 0, memoryview(data)
    while view:
        target = d.buffer()
        n = min(len(target), len(view))
        target[:n] = view[:n]
        del target  # as a socket's read: its hold on the buffer ends with the read
        view = view[n:]
        reads += 1
        out += [bytes(f) for f in d.received(n)]
    return out, reads


def test_a_busy_connection_takes_many_produce_sized_frames_per_read():
    """librdkafka spreading records over 1,000 partitions sends ~24 KB Produce requests back to
    back. They used to be received one or two a read (a 64 KiB buffer, frames from 16 KiB each in
    a read of their own); a busy connection now reads 256 KiB at a time, about ten of them."""
    payloads = [bytes([i % 251]) * 24_000 for i in range(200)]
    d = FrameDecoder(1 << 20)
    out, reads = _reads(d, b"".join(frame(p) for p in payloads))
    assert out == payloads
    assert reads <= 4_800_000 // (256 * 1024) + 4  # two small reads while the buffer grows


def test_a_connection_that_sent_a_little_grows_its_buffer_a_step_at_a_time():
    """A client whose reads filled the 4 KiB buffer once holds 64 KiB, not the busy size."""
    d = FrameDecoder(1 << 20)
    out, reads = _reads(d, frame(b"x" * 5000))
    assert out == [b"x" * 5000] and reads == 2
    assert len(d.buffer()) <= 64 * 1024


def _large(fill: int, size: int = 300_000) -> bytes:
    return bytes([fill]) * size


def test_a_large_frames_buffer_is_lent_again_once_its_frame_is_dropped():
    """One partition's 1 MB Produce requests arrive one after another: each used to get a new
    buffer, mapped and zeroed by the kernel page by page; the next one now fills the last one's."""
    import tracemalloc

    d = FrameDecoder(1 << 24)
    data = frame(_large(2))
    (first,) = d.feed(frame(_large(1)))
    buffer = id(first.obj)  # not a reference: that would keep it from being lent again
    del first
    tracemalloc.start()
    try:
        (second,) = d.feed(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert id(second.obj) == buffer and bytes(second) == _large(2)
    assert peak < 100_000  # no new buffer for the 300 KB


@pytest.mark.parametrize("holder", ["view", "slice", "bytes-like record", "the buffer itself"])
def test_a_frame_still_referred_to_keeps_its_bytes(holder):
    """A request still being answered, a batch a task keeps (a memoryview of the frame), anything
    that refers to the buffer: the next large frame goes elsewhere."""
    d = FrameDecoder(1 << 24)
    (first,) = d.feed(frame(_large(1)))
    kept = {"view": first, "slice": first[1000:2000], "bytes-like record": memoryview(first)[10:],
            "the buffer itself": first.obj}[holder]
    expected = bytes(kept)
    del first
    (second,) = d.feed(frame(_large(2)))
    assert bytes(kept) == expected and bytes(second) == _large(2)
    assert second.obj is not (kept if holder == "the buffer itself" else kept.obj)


def test_a_pooled_buffer_larger_than_the_frame_takes_only_the_frame():
    """The frames after a smaller one in a larger pooled buffer are read as frames, not into it."""
    d = FrameDecoder(1 << 24)
    (big,) = d.feed(frame(_large(1, 1_000_000)))
    buffer = id(big.obj)
    del big
    out = d.feed(frame(_large(2, 200_000)) + frame(b"small") + frame(_large(3, 150_000))[:1000])
    assert [bytes(f) for f in out] == [_large(2, 200_000), b"small"]
    assert id(out[0].obj) == buffer and len(out[0]) == 200_000
    del out
    (rest,) = d.feed(frame(_large(3, 150_000))[1000:])
    assert bytes(rest) == _large(3, 150_000)


def test_decoders_share_a_pool_that_keeps_a_few_buffers_of_bounded_size():
    from shim.protocol.framing import PAGE_BYTES, POOLED_BUFFERS, POOLED_BYTES, BufferPool

    pool = BufferPool()
    decoders = [FrameDecoder(1 << 24, pool) for _ in range(POOLED_BUFFERS + 2)]
    frames = [d.feed(frame(_large(i)))[0] for i, d in enumerate(decoders)]  # all still in use
    assert len({id(f.obj) for f in frames}) == len(decoders)
    assert pool.held_bytes == POOLED_BUFFERS * (300_000 + PAGE_BYTES)  # each with a page to place its frame
    (huge,) = decoders[0].feed(frame(b"x" * (POOLED_BYTES + 1)))
    assert pool.held_bytes == POOLED_BUFFERS * (300_000 + PAGE_BYTES)  # too large to keep
    kept = {id(f.obj) for f in frames[-POOLED_BUFFERS:]}
    del frames, huge
    # another connection's next large frame fills one of the buffers the pool kept
    (again,) = decoders[1].feed(frame(_large(9)))
    assert id(again.obj) in kept and bytes(again) == _large(9)


def _produce(fill: int, size: int = 20_000) -> bytes:
    """A Produce-sized frame: API key 0 in its first two bytes."""
    return b"\x00\x00" + bytes([fill]) * (size - 2)


def test_produce_frames_are_handed_out_as_views_of_the_shared_buffer_and_kept_intact():
    """librdkafka's ~20 KB Produce requests to 1,000 partitions were each copied out of the shared
    buffer; they are now views of it, and the buffer is not read into over a frame still held."""
    d = FrameDecoder(1 << 24)
    payloads = [_produce(i) for i in range(1, 60)]  # 1.2 MB: the shared buffer fills several times
    held, kept = [], []
    data = memoryview(b"".join(frame(p) for p in payloads))
    while data:
        target = d.buffer()
        n = min(len(target), len(data))
        target[:n] = data[:n]
        del target
        data = data[n:]
        got = d.received(n)
        held += [(f, bytes(f)) for f in got[:1]]  # held on to, as a request still being answered
        kept += [bytes(f) for f in got]
        assert all(type(f) is memoryview for f in got)
    assert kept == payloads
    assert all(bytes(f) == when_read for f, when_read in held)
    assert len({id(f.obj) for f, _ in held}) > 1  # a full buffer still referred to was replaced


def test_other_requests_and_small_produce_frames_are_copied():
    """A Fetch parked for up to max_wait_ms would hold its connection's 256 KiB buffer if it were
    a view of it; requests other than Produce, and small ones, are copied out as before."""
    d = FrameDecoder(1 << 24)
    fetch = b"\x00\x01" + b"f" * 20_000
    out = d.feed(frame(fetch) + frame(_produce(7, 100)) + frame(_produce(8)))
    assert [type(f) for f in out] == [bytes, bytes, memoryview]
    assert [bytes(f) for f in out] == [fetch, _produce(7, 100), _produce(8)]


def test_the_shared_buffer_is_read_into_again_once_its_frames_are_dropped():
    d = FrameDecoder(1 << 24)
    d.feed(frame(b"x" * 70_000))  # grown to the busy size
    (first,) = d.feed(frame(_produce(1)))
    shared = id(first.obj)
    del first
    for i in range(40):  # 800 KB through the shared buffer, each frame dropped once read
        (f,) = d.feed(frame(_produce(i)))
        assert id(f.obj) == shared and bytes(f) == _produce(i)
        del f


def _page_offset(view: memoryview) -> int:
    import ctypes

    first = ctypes.c_char.from_buffer(view)
    try:
        return ctypes.addressof(first) % mmap.PAGESIZE
    finally:
        del first


@pytest.mark.parametrize("read_bytes", [65_483, 256 * 1024, 1 << 21])
def test_a_large_frame_is_read_at_its_own_offsets_within_a_page(read_bytes):
    """The kernel's copy out of a socket is at its slowest when its destination lies a few bytes
    past its source within a page, and a request sent in one piece starts a page of the sender's
    socket buffer. 1 MB Produce requests were read 12 bytes past their offsets in the frame (the
    first 4 KiB in the shared buffer, the rest at offset 16 of a buffer malloc mapped); every read
    into a large frame's buffer now puts each byte at its offset in the frame (size counted)
    within a page: in a buffer of its own as it grows, and in a pooled one."""
    payloads = [_produce(i, 1_000_000 - 4 * i) for i in range(1, 4)]
    data = memoryview(b"".join(frame(p) for p in payloads))
    starts = [sum(4 + len(p) for p in payloads[:i]) for i in range(len(payloads))]
    d, pos, out, direct = FrameDecoder(1 << 24), 0, [], 0
    while pos < len(data):
        into_frame_buffer = d.pending > 0  # a large frame begun: the rest goes to its own buffer
        target = d.buffer()
        if into_frame_buffer:
            frame_start = max(s for s in starts if s <= pos)
            assert _page_offset(target) == (pos - frame_start) % mmap.PAGESIZE
            direct += 1
        n = min(len(target), read_bytes, len(data) - pos)
        target[:n] = data[pos : pos + n]
        del target
        pos += n
        got = d.received(n)
        out += [bytes(f) for f in got]
        del got  # the request answered: its buffer may be lent again
    assert out == payloads
    assert direct >= len(payloads)


@pytest.mark.parametrize("start", [0, 1, 2048, 4084, 4095])
def test_a_large_frames_buffer_is_lent_again_to_the_next_frame_of_its_size_wherever_it_started(monkeypatch, start):
    """A buffer grown as its frame arrived could end a few bytes short of the frame and a page
    (where the frame starts in it depends on its address: 4084 in a buffer malloc maps), and the
    next frame of the same size then got a new one; every size's buffer is now lent again."""
    from shim.protocol import framing

    monkeypatch.setattr(framing, "_frame_start", lambda buffer: start)  # as the buffer's address would place it
    missed = []
    for size in range(140_000, 400_000, 8_999):  # from DIRECT_BYTES: a buffer of their own
        d = FrameDecoder(1 << 24)
        (first,) = d.feed(frame(_large(1, size)))
        buffer = id(first.obj)
        del first
        (second,) = d.feed(frame(_large(2, size)))
        if id(second.obj) != buffer or bytes(second) != _large(2, size):
            missed.append(size)
    assert missed == []
