"""The event loop a broker runs on: uvloop (libuv) when it is installed, else the standard library's.

The broker's code is the same on both: only ``shim.server`` and ``shim.connection`` touch the
loop, through asyncio's public interface. Where the two differ (uvloop has no ``loop.sendfile``), the server asks
:func:`has_native_sendfile` rather than the name of the loop.

The choice is ``BrokerConfig.event_loop`` and ``kafka-shim serve --event-loop``; the environment
variable :data:`ENV` sets the default of both, so a whole test run can be moved to one loop.
"""

from __future__ import annotations

import asyncio
import os
from typing import Awaitable, Callable

ENV = "KAFKA_SHIM_EVENT_LOOP"
CHOICES = ("auto", "uvloop", "asyncio")


def default_choice() -> str:
    """The default event loop: $KAFKA_SHIM_EVENT_LOOP, else ``auto``."""
    return os.environ.get(ENV) or "auto"


def resolve(choice: str) -> str:
    """``uvloop`` or ``asyncio``: ``auto`` is uvloop when it can be imported."""
    if choice not in CHOICES:
        raise ValueError(f"event loop must be one of {', '.join(CHOICES)}, not {choice!r}")
    if choice == "asyncio":
        return "asyncio"
    try:
        import uvloop  # noqa: F401
    except ImportError:
        if choice == "uvloop":
            raise ValueError("event loop 'uvloop' asked for, but uvloop is not installed (pip install uvloop)") from None
        return "asyncio"
    return "uvloop"


def loop_factory(choice: str) -> Callable[[], asyncio.AbstractEventLoop]:
    """A function making a new loop of the chosen kind (for ``asyncio.Runner(loop_factory=...)``)."""
    if resolve(choice) == "uvloop":
        import uvloop

        return uvloop.new_event_loop
    return asyncio.new_event_loop


def loop_name(loop: asyncio.AbstractEventLoop) -> str:
    """``uvloop`` or ``asyncio``: which kind ``loop`` is."""
    return "uvloop" if type(loop).__module__.split(".")[0] == "uvloop" else "asyncio"


def has_native_sendfile(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether ``loop.sendfile`` is implemented: asyncio's loops have it (with their own fallback
    for TLS transports), uvloop's ``Loop`` inherits AbstractEventLoop's NotImplementedError."""
    return isinstance(loop, asyncio.BaseEventLoop)


# Without loop.sendfile (uvloop, TLS), file regions are read and written this many bytes at a time.
FILE_CHUNK = 256 * 1024


async def send_region(loop, transport, part, *, tls: bool, room: Callable[[], Awaitable[None]]) -> None:
    """A file region to the socket: with ``loop.sendfile`` on asyncio's loops over plain TCP;
    otherwise read in chunks of FILE_CHUNK and written, each once ``room()`` says the transport has
    room again (pause_writing), so a client that reads slowly makes the broker hold one chunk and
    the transport's buffer, not the region. uvloop has no ``loop.sendfile``; asyncio's own fallback
    for TLS reads from the file's current position when the offset is 0 (it seeks only for a true
    offset), and a region's descriptor shares its position with the segment's, at its end."""
    if has_native_sendfile(loop) and not tls:
        if await loop.sendfile(transport, part.file, part.position, part.size) != part.size:
            transport.abort()  # the file was truncated under the response: its frame cannot be finished
            raise ConnectionResetError("a file region ended early; connection closed")
        return
    fd, position, end = part.file.fileno(), part.position, part.position + part.size
    while position < end:
        await room()
        if transport.is_closing():
            raise ConnectionResetError("connection closed while answering")
        chunk = os.pread(fd, min(FILE_CHUNK, end - position), position)
        if not chunk:
            transport.abort()
            raise ConnectionResetError("a file region ended early; connection closed")
        transport.write(chunk)
        position += len(chunk)
