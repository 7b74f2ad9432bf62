"""The event loop a broker runs on: uvloop (libuv) when it is installed, else the standard library's.

The broker's code is the same on both: only ``shim.server`` touches the loop, through asyncio's
public interface. Where the two differ (uvloop has no ``loop.sendfile``), the server asks
:func:`has_native_sendfile` rather than the name of the loop.

The choice is ``BrokerConfig.event_loop`` and ``kafka-shim serve --event-loop``; the environment
variable :data:`ENV` sets the default of both, so a whole test run can be moved to one loop.
"""

from __future__ import annotations

import asyncio
import os
from typing import Callable

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
