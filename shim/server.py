"""The asyncio shell: accept connections, frame, dispatch in order, run timers, shut down.

Like Kafka's SocketServer, a connection has one request in flight at a time: responses go back in
request order, and a parked Fetch holds its connection only.
"""

from __future__ import annotations

import asyncio
import logging

from .apis import dispatch as _dispatch
from .node import Node, now_ms
from .protocol.framing import FrameDecoder, FrameError, frame_size

log = logging.getLogger(__name__)

# Requests set new deadlines (a rebalance, a member's session) without waking the timer loop,
# so it looks at least this often: session and rebalance timeouts fire within this much.
MAX_TIMER_SLEEP_MS = 200


class Server:
    def __init__(self, node: Node) -> None:
        self.node = node
        self._server: asyncio.base_events.Server | None = None
        self._timer: asyncio.Task | None = None
        self._connections: set[asyncio.Task] = set()

    async def start(self) -> None:
        host, port = self.node.config.host_port()
        self._server = await asyncio.start_server(self._serve, host, port, limit=1 << 20)
        self.node.port = self._server.sockets[0].getsockname()[1]
        self._timer = asyncio.create_task(self._run_timers())

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        if self._timer is not None:
            self._timer.cancel()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()

    async def _run_timers(self) -> None:
        while True:
            now = now_ms()
            try:
                deadline = self.node.tick(now)
            except Exception:
                log.exception("a timer failed; retrying on the next tick")
                deadline = now + MAX_TIMER_SLEEP_MS
            await asyncio.sleep(max(0.01, min(deadline - now, MAX_TIMER_SLEEP_MS) / 1000))

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._connections.add(task)
        peer = writer.get_extra_info("peername")
        decoder = FrameDecoder(self.node.config.max_request_bytes)
        client_host = f"/{peer[0]}" if isinstance(peer, tuple) else ""
        try:
            while data := await reader.read(1 << 16):
                for request in decoder.feed(data):
                    parts = await _dispatch.dispatch_parts(self.node, request, client_host)
                    if parts is not None:
                        await _send(writer, parts)
                decoder.raise_pending()
        except FrameError as exc:
            log.warning("closing connection from %s: %s", peer, exc)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            pass
        except Exception:
            log.exception("closing connection from %s after an internal error", peer)
        finally:
            self._connections.discard(task)
            writer.close()


async def _send(writer: asyncio.StreamWriter, parts: list) -> None:
    """One response frame: bytes are written, file regions go from the file to the socket (sendfile)."""
    writer.write(frame_size(sum(len(p) for p in parts)))
    loop = asyncio.get_running_loop()
    try:
        for part in parts:
            if isinstance(part, bytes):
                writer.write(part)
                continue
            await writer.drain()
            await loop.sendfile(writer.transport, part.file, part.position, part.size)
        await writer.drain()
    finally:
        for part in parts:
            if not isinstance(part, bytes):
                part.close()
