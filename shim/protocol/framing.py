"""Length-prefixed frames (int32 size, then that many bytes), sans-IO."""

from __future__ import annotations

import struct

_SIZE = struct.Struct(">i")


class FrameError(Exception):
    """The peer sent bytes that are not a valid frame: the connection is closed."""


class FrameDecoder:
    """Accumulates bytes and hands out complete frames; refuses frames above ``max_frame``."""

    def __init__(self, max_frame: int) -> None:
        self._max = max_frame
        self._buf = bytearray()
        self._pending: FrameError | None = None

    def feed(self, data: bytes) -> list[bytes]:
        """Complete frames in order. A bad size after complete frames is kept for
        :meth:`raise_pending`, so the requests before it are answered first, as Kafka, which
        reads one request at a time, answers them."""
        self.raise_pending()
        self._buf += data
        frames = []
        while len(self._buf) >= 4:
            (size,) = _SIZE.unpack_from(self._buf)
            error = _check_size(size, self._max)
            if error is not None:
                if not frames:
                    raise error
                self._pending = error
                break
            if len(self._buf) < 4 + size:
                break
            frames.append(bytes(self._buf[4 : 4 + size]))
            del self._buf[: 4 + size]
        return frames

    def raise_pending(self) -> None:
        if self._pending is not None:
            raise self._pending

    @property
    def pending(self) -> int:
        return len(self._buf)


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
