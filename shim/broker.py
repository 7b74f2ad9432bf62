"""The public in-process broker: ``async with Broker(data_dir=..., listen="127.0.0.1:0") as b``."""

from __future__ import annotations

import asyncio
import threading

from .config import BrokerConfig
from .node import Node
from .server import Server


class Broker:
    def __init__(self, config: BrokerConfig | None = None, **overrides) -> None:
        self.config = config.replace(**overrides) if config else BrokerConfig(**overrides)
        self.node: Node | None = None
        self._server: Server | None = None

    async def start(self) -> "Broker":
        self.node = Node(self.config)
        self._server = Server(self.node)
        try:
            await self._server.start()
        except BaseException:
            self.node.close()
            raise
        return self

    async def stop(self) -> None:
        if self._server is not None:
            await self._server.stop()
            self._server = None
        if self.node is not None:
            self.node.close()

    @property
    def bootstrap_servers(self) -> str:
        return f"{self.node.host}:{self.node.port}"

    async def __aenter__(self) -> "Broker":
        return await self.start()

    async def __aexit__(self, *exc) -> None:
        await self.stop()


class BrokerThread:
    """A broker on its own event loop in a background thread, for synchronous code and tests."""

    def __init__(self, config: BrokerConfig | None = None, **overrides) -> None:
        self.broker = Broker(config, **overrides)
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="kafka-shim", daemon=True)

    def start(self) -> "BrokerThread":
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.broker.start(), self.loop).result(timeout=30)
        return self

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.broker.stop(), self.loop).result(timeout=30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=30)
        self.loop.close()

    def call(self, fn, *args):
        """Run ``fn(*args)`` on the broker's loop (the node is not thread-safe) and return its result."""
        async def run():
            return fn(*args)
        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(timeout=30)

    @property
    def bootstrap_servers(self) -> str:
        return self.broker.bootstrap_servers

    @property
    def node(self) -> Node:
        return self.broker.node

    def __enter__(self) -> "BrokerThread":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
