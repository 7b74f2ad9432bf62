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

    def feed(self, data: bytes) -> list[bytes]:
        self._buf += data
        frames = []
        while len(self._buf) >= 4:
            (size,) = _SIZE.unpack_from(self._buf)
            if size < 0:
                raise FrameError(f"negative frame size {size}")
            if size > self._max:
                raise FrameError(f"frame of {size} bytes exceeds the limit of {self._max}")
            if len(self._buf) < 4 + size:
                break
            frames.append(bytes(self._buf[4 : 4 + size]))
            del self._buf[: 4 + size]
        return frames

    @property
    def pending(self) -> int:
        return len(self._buf)


def frame(payload: bytes) -> bytes:
    return _SIZE.pack(len(payload)) + payload


def frame_size(size: int) -> bytes:
    return _SIZE.pack(size)
