"""``broker.control``: the operations table as Python methods, ``control.error(api="Produce", ...)``.

Each method is an operation of shim.control.ops with the same keyword arguments as the HTTP body
and the CLI flags, and answers the same dict; bad arguments raise ControlError.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from .ops import OPS, call


class _Methods:
    def __dir__(self) -> list[str]:
        return sorted(OPS) + ["call"]

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name not in OPS:
            raise AttributeError(f"no control operation {name!r}")
        return lambda **args: self.call(name, **args)


class AsyncControl(_Methods):
    """For an async :class:`shim.Broker`: ``await broker.control.fence(transactional_id="t")``."""

    def __init__(self, broker) -> None:
        self._broker = broker

    async def call(self, name: str, **args: Any) -> dict:
        return await call(self._broker.node.control, name, args)


class ThreadControl(_Methods):
    """For a :class:`shim.broker.BrokerThread` (the pytest fixture): blocking calls run on the broker's loop."""

    def __init__(self, thread) -> None:
        self._thread = thread

    def call(self, name: str, **args: Any) -> dict:
        future = asyncio.run_coroutine_threadsafe(call(self._thread.node.control, name, args), self._thread.loop)
        return future.result()
