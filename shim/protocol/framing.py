"""Length-prefixed frames (int32 size, then that many bytes), sans-IO."""

from __future__ import annotations

import ctypes
import mmap
import struct
import sys

_SIZE = struct.Struct(">i")


class FrameError(Exception):
    """The peer sent bytes that are not a valid frame: the connection is closed."""


class CloseConnection(FrameError):
    """A request Kafka answers by closing the connection, after the answers before it: an acks=0
    Produce with an error, which the producer has no other way to learn of (KafkaApis)."""


# The shared buffer of small frames starts at FIRST_SCRATCH_BYTES and grows each time a read fills
# it, to 64 KiB and then SCRATCH_BYTES: an idle connection (or thousands of them) holds 4 KiB, one
# that sent a little 64 KiB, and a busy one reads 256 KiB at a time. librdkafka sends one Produce
# per partition batch, ~24 KB each when it spreads records over 1,000 partitions: in reads of
# 256 KiB each read takes about ten of them rather than one or two, and a read is a system call
# and, on loopback, a window update the broker delivers to the client's socket itself.
FIRST_SCRATCH_BYTES = 4 * 1024
SCRATCH_STEPS = (64 * 1024,)  # sizes between the first and the last
SCRATCH_BYTES = 256 * 1024
# Frames this large are received straight into a buffer of their own (a read each, but no copy);
# smaller ones arrive many per read in the shared buffer (see LENT_BYTES).
DIRECT_BYTES = 128 * 1024
# A frame's own buffer starts at most this large (or twice what already arrived) and doubles as
# its bytes arrive, so a peer that announces a large frame and trickles a little of it holds about
# twice what it sent, not the size it announced.
FIRST_BODY_BYTES = 32 * 1024
# Produce frames at least this large are handed out as views of the shared buffer instead of
# copies (librdkafka's ~20 KB requests to one partition of 1,000 each); the shared buffer is then
# read into again only once nothing refers to it, else a free one from the pool takes its place.
# Other requests, and small ones, are copied: a parked Fetch would pin the buffer its frame is in.
LENT_BYTES = 8 * 1024

# A large frame's bytes sit at the same offset within a memory page as within the frame (its
# 4-byte size counted), so its buffer has PAGE_BYTES to spare. The kernel's copy out of a socket
# (rep movsb) is at its slowest when its destination lies 1 to 31 bytes past its source within a
# page: on the benchmark machine (AMD EPYC) 0.35 ns a byte there against 0.10 at the same offset.
# A client's request that leaves in one send starts a page of the sender's socket buffer whenever
# the broker has read all it sent before, as a producer waiting for its acks finds it; its frame
# was received 12 bytes past that (the first 4 KiB in the shared buffer, the rest at offset 16 of
# a buffer malloc mapped), and a 1 MB Produce's copy took three times as long as aligned. How
# often a run met that depended on timing, so one run's broker CPU differed from the next's by a
# third with the same requests.
PAGE_BYTES = mmap.PAGESIZE

# Buffers of large frames a BufferPool keeps for the next ones, and the largest it keeps: one
# partition's 1 MB Produce after another fills a buffer the previous one left, already mapped,
# instead of a new one the kernel maps and zeroes page by page as the socket fills it (and
# unmaps after). Up to 8 MiB held by a broker whose clients sent large frames, however many.
POOLED_BUFFERS = 4
POOLED_BYTES = 2 * 1024 * 1024


class BufferPool:
    """Large frames' buffers, each lent again once nothing refers to its last frame.

    A frame is handed out as a view of its buffer; the buffer is lent for another frame only
    when no view of it and no reference to it is left anywhere (CPython's reference count: the
    count of a buffer only the pool holds, taken once by the same code, with nothing else
    holding it). So a request still being answered, a batch kept by a task, any memoryview of
    it, keep its buffer out of reuse. One pool per server, used from its event loop only.
    """

    def __init__(self, keep: int = POOLED_BUFFERS, largest: int = POOLED_BYTES) -> None:
        self._buffers: list[bytearray] = []
        self._keep, self._largest = keep, largest
        self.lent = 0  # buffers lent again so far

    def take(self, size: int) -> bytearray | None:
        """A buffer of at least ``size`` bytes nothing refers to, out of the pool, or None."""
        buffers = self._buffers
        for i in range(len(buffers)):
            if len(buffers[i]) >= size and _references(buffers, i) <= _UNSHARED:
                self.lent += 1
                return buffers.pop(i)
        return None

    def give(self, buffer: bytearray) -> None:
        """``buffer``, whose frame was just handed out, for a later frame once that one is done
        with; the oldest is dropped past ``keep``."""
        if len(buffer) <= self._largest + PAGE_BYTES:
            self._buffers.append(buffer)
            if len(self._buffers) > self._keep:
                del self._buffers[0]

    @property
    def held_bytes(self) -> int:
        return sum(len(b) for b in self._buffers)


def _page_offset(buffer: bytearray) -> int:
    """Where in a memory page ``buffer``'s first byte lies."""
    first = ctypes.c_char.from_buffer(buffer)
    try:
        return ctypes.addressof(first) % PAGE_BYTES
    finally:
        del first  # its hold on the buffer, which the pool's count of references must not see


def _frame_start(buffer: bytearray) -> int:
    """Where a frame's bytes (after its size) start in ``buffer``: the place that puts each one at
    its offset in the frame within a page (PAGE_BYTES)."""
    return (_SIZE.size - _page_offset(buffer)) % PAGE_BYTES


def _room(want: int, size: int) -> int:
    """Room for ``want`` bytes of a frame of ``size``, or for all of it when the page to spare might
    hold the rest: the buffer a frame ends in then has room for the next frame of its size wherever
    its frame starts (the pool lends a buffer for ``size`` bytes and a page)."""
    return size if want + PAGE_BYTES >= size else want


def _references(buffers: list, i: int) -> int:
    return sys.getrefcount(buffers[i])


# What _references counts for a buffer only the pool's list refers to (the list, and the call's own).
_UNSHARED = _references([bytearray(1)], 0)


def _scratch_references(decoder: "FrameDecoder") -> int:
    return sys.getrefcount(decoder._scratch)


class FrameDecoder:
    """Splits a byte stream into frames, refusing sizes above ``max_frame``.

    Built for ``asyncio.BufferedProtocol``: :meth:`buffer` is where the next bytes should land and
    :meth:`received` reports how many did. Small frames share one scratch buffer (many per read),
    copied out of it but for Produce frames of LENT_BYTES and more, handed out as views of it;
    a large frame gets a buffer of its own, filled by the socket directly, and is handed out
    without another copy; that buffer comes from ``pool`` when one there is free and large
    enough. :meth:`feed` does the same for bytes that are already in memory.
    """

    def __init__(self, max_frame: int, pool: BufferPool | None = None) -> None:
        self._max = max_frame
        self._pool = BufferPool() if pool is None else pool
        self._scratch = bytearray(FIRST_SCRATCH_BYTES)
        self._start = self._end = 0
        self._body: bytearray | None = None
        self._at = 0  # where the frame starts in _body (_frame_start)
        self._size = 0  # of the frame being received into _body
        self._filled = 0
        self._pending: FrameError | None = None
        self._lent = False  # frames were handed out as views of _scratch, which may still be read

    @property
    def max_frame(self) -> int:
        """Frames larger than this are refused; may change between frames (SASL before and after
        authentication)."""
        return self._max

    @max_frame.setter
    def max_frame(self, value: int) -> None:
        self._max = value

    def buffer(self) -> memoryview:
        if self._body is not None:
            at, filled = self._at, self._filled
            if at + filled == len(self._body):  # a new buffer: the socket may still hold a view of the old
                grown = bytearray(_room(2 * filled, self._size) + PAGE_BYTES)
                self._at = _frame_start(grown)
                grown[self._at : self._at + filled] = memoryview(self._body)[at : at + filled]
                self._body, at = grown, self._at
            return memoryview(self._body)[at + filled : at + self._size]  # a pooled buffer may be larger
        if self._lent:
            self._after_lending()
        if self._end == len(self._scratch):
            kept = self._end - self._start
            if len(self._scratch) < SCRATCH_BYTES:  # a read filled it: this connection is busy
                grown = bytearray(_next_size(len(self._scratch)))  # new: the socket may hold a view of the old
                grown[:kept] = self._scratch[self._start : self._end]
                self._scratch = grown
            else:
                self._scratch[:kept] = self._scratch[self._start : self._end]
            self._start, self._end = 0, kept
        return memoryview(self._scratch)[self._end:]

    def _after_lending(self) -> None:
        """Before a read into the shared buffer whose frames were handed out as views: once
        nothing refers to it, it is reused as before; while something may, the read goes after
        the last frame, and a full buffer is replaced (the rest of a frame copied over)."""
        if _scratch_references(self) <= _SCRATCH_UNSHARED:
            self._lent = False
            if self._start == self._end:
                self._start = self._end = 0
        elif self._end == len(self._scratch):
            kept, size = self._end - self._start, len(self._scratch)
            fresh = self._pool.take(size)
            if fresh is None:
                fresh = bytearray(size)
            fresh[:kept] = self._scratch[self._start : self._end]
            self._pool.give(self._scratch)
            self._scratch, self._start, self._end, self._lent = fresh, 0, kept, False

    def received(self, nbytes: int) -> list[bytes | memoryview]:
        """Complete frames in order. A bad size after complete frames is kept for
        :meth:`raise_pending`, so the requests before it are answered first, as Kafka, which
        reads one request at a time, answers them."""
        self.raise_pending()
        if self._body is not None:
            self._filled += nbytes
            if self._filled < self._size:
                return []
            body, self._body = self._body, None
            self._pool.give(body)
            return [memoryview(body)[self._at : self._at + self._size].toreadonly()]  # kio parses read-only buffers only
        self._end += nbytes
        return self._split()

    def _split(self) -> list[bytes | memoryview]:
        frames: list[bytes | memoryview] = []
        view = memoryview(self._scratch)
        while self._end - self._start >= 4:
            (size,) = _SIZE.unpack_from(self._scratch, self._start)
            error = _check_size(size, self._max)
            if error is not None:
                if not frames:
                    raise error
                self._pending = error
                break
            begin, available = self._start + 4, self._end - self._start - 4
            if available >= size:
                if size >= LENT_BYTES and not self._scratch[begin] and not self._scratch[begin + 1]:  # Produce
                    frames.append(view[begin : begin + size].toreadonly())
                    self._lent = True
                else:
                    frames.append(bytes(view[begin : begin + size]))
                self._start = begin + size
            else:
                if size >= DIRECT_BYTES:
                    self._size = size
                    body = self._pool.take(size + PAGE_BYTES)
                    if body is None:  # grown as the bytes arrive (see buffer)
                        body = bytearray(_room(max(FIRST_BODY_BYTES, 2 * available), size) + PAGE_BYTES)
                    self._body, self._at = body, _frame_start(body)
                    body[self._at : self._at + available] = view[begin : self._end]
                    self._filled = available
                    self._start = self._end
                break
        if self._start == self._end and not self._lent:
            self._start = self._end = 0
        return frames

    def feed(self, data: bytes) -> list[bytes | memoryview]:
        """Frames completed by ``data`` (bytes already in memory)."""
        self.raise_pending()
        frames: list[bytes | memoryview] = []
        view = memoryview(data)
        while view:
            target = self.buffer()
            n = min(len(target), len(view))
            target[:n] = view[:n]
            del target  # held no longer than a socket's read holds it
            view = view[n:]
            try:
                frames += self.received(n)
            except FrameError as error:
                if not frames:
                    raise
                self._pending = error
                break
        return frames

    @property
    def pending(self) -> int:
        """Bytes received that are not yet part of a complete frame."""
        return self._filled if self._body is not None else self._end - self._start

    def raise_pending(self) -> None:
        if self._pending is not None:
            raise self._pending


def _next_size(size: int) -> int:
    return next((step for step in SCRATCH_STEPS if step > size), SCRATCH_BYTES)


def _check_size(size: int, limit: int) -> FrameError | None:
    if size < 0:
        return FrameError(f"negative frame size {size}")
    if size > limit:
        return FrameError(f"frame of {size} bytes exceeds the limit of {limit}")
    return None


def frame(payload: bytes) -> bytes:
    return _SIZE.pack(len(payload)) + payload


def frame_size(size: int) -> bytes:
    return _SIZE.pack(size)


# What _scratch_references counts for a shared buffer only its decoder refers to.
_SCRATCH_UNSHARED = _scratch_references(FrameDecoder(1))
