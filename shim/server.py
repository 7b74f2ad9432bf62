"""The asyncio shell: accept connections, frame, dispatch in order, run timers, shut down.

Like Kafka's SocketServer, a connection has one request in flight at a time: responses go back in
request order, and a parked Fetch holds its connection only. Each connection is an
``asyncio.BufferedProtocol``: the socket reads straight into the frame decoder's buffers (a large
Produce lands in its own buffer, copied by nobody), and one task per connection answers the
requests in order.
"""

from __future__ import annotations

import asyncio
import collections
import logging

from .apis import dispatch as _dispatch
from .node import Node, now_ms
from .protocol.framing import FrameDecoder, FrameError, frame_size

log = logging.getLogger(__name__)
# Parts of a response shorter than this are joined into one write (Connection._send).
_JOIN_LIMIT = 64 * 1024

# Requests set new deadlines (a rebalance, a member's session) without waking the timer loop,
# so it looks at least this often: session and rebalance timeouts fire within this much.
MAX_TIMER_SLEEP_MS = 200
# Stop reading from a client whose received, unanswered requests exceed this many bytes.
MAX_QUEUED_BYTES = 16 * 1024 * 1024


class Server:
    def __init__(self, node: Node) -> None:
        self.node = node
        self._server: asyncio.base_events.Server | None = None
        self._timer: asyncio.Task | None = None
        self.connections: set[Connection] = set()

    async def start(self) -> None:
        host, port = self.node.config.host_port()
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: Connection(self), host, port)
        self.node.port = self._server.sockets[0].getsockname()[1]
        self._timer = asyncio.create_task(self._run_timers())

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        if self._timer is not None:
            self._timer.cancel()
        tasks = [c.task for c in self.connections if c.task is not None]
        for conn in list(self.connections):
            conn.close()
        await asyncio.gather(*tasks, return_exceptions=True)
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


class Connection(asyncio.BufferedProtocol):
    def __init__(self, server: Server) -> None:
        self.server = server
        self.decoder = FrameDecoder(server.node.config.max_request_bytes)
        self.requests: collections.deque = collections.deque()
        self.queued_bytes = 0
        self.error: FrameError | None = None
        self.done = False
        self.task: asyncio.Task | None = None
        self.transport: asyncio.Transport | None = None
        self._wake: asyncio.Future | None = None
        self._writable: asyncio.Future | None = None
        self._reading = True

    # -- protocol callbacks (the event loop's side) -----------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:
        self.transport = transport
        peer = transport.get_extra_info("peername")
        self.peer = peer
        self.client_host = f"/{peer[0]}" if isinstance(peer, tuple) else ""
        self.server.connections.add(self)
        self.task = asyncio.get_running_loop().create_task(self._answer())

    def get_buffer(self, sizehint: int) -> memoryview:
        return self.decoder.buffer()

    def buffer_updated(self, nbytes: int) -> None:
        try:
            frames = self.decoder.received(nbytes)
        except FrameError as exc:
            frames, self.error = [], exc
        for f in frames:
            self.requests.append(f)
            self.queued_bytes += len(f)
        try:
            self.decoder.raise_pending()  # a bad frame after good ones: answer those, then close
        except FrameError as exc:
            self.error = exc
        if self.error is not None or self.queued_bytes > MAX_QUEUED_BYTES:
            self._pause_reading()
        self._notify()

    def eof_received(self) -> bool:
        self.done = True
        self._notify()
        return True  # keep the transport until the queued requests are answered

    def connection_lost(self, exc: Exception | None) -> None:
        self.done = True
        self.requests.clear()
        self.server.connections.discard(self)
        self._notify()
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)

    def pause_writing(self) -> None:
        self._writable = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)
        self._writable = None

    # -- the answering task -----------------------------------------------------------------

    async def _answer(self) -> None:
        try:
            while True:
                if self.requests:
                    request = self.requests.popleft()
                    self.queued_bytes -= len(request)
                    if not self._reading and self.error is None and self.queued_bytes <= MAX_QUEUED_BYTES // 2:
                        self._reading = True
                        self.transport.resume_reading()
                    parts = await _dispatch.dispatch_parts(self.server.node, request, self.client_host)
                    if parts is not None:
                        await self._send(parts)
                elif self.error is not None:
                    raise self.error
                elif self.done:
                    break
                else:
                    self._wake = asyncio.get_running_loop().create_future()
                    await self._wake
        except FrameError as exc:
            log.warning("closing connection from %s: %s", self.peer, exc)
        except (ConnectionError, asyncio.CancelledError):
            pass
        except Exception:
            log.exception("closing connection from %s after an internal error", self.peer)
        except BaseException as exc:
            # A native extension's panic (pyo3's PanicException) is a BaseException: it ends this
            # connection only. Interrupts and exits still stop the broker.
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            log.exception("closing connection from %s after an internal error", self.peer)
        finally:
            self.close()

    async def _send(self, parts: list) -> None:
        """One response frame: bytes are written, file regions go from the file to the socket."""
        transport = self.transport
        try:
            # Bytes go out in as few writes as possible: on loopback each send also delivers the
            # data to the reader, so a frame written in pieces costs a syscall and a wake-up per
            # piece. Runs of bytes are joined with the size in front; file regions go by sendfile.
            # A large bytes part is written on its own rather than copied into the join.
            pending = [frame_size(sum(len(p) for p in parts))]
            for part in parts:
                if isinstance(part, bytes) and len(part) < _JOIN_LIMIT:
                    pending.append(part)
                    continue
                transport.write(b"".join(pending))
                pending = []
                if isinstance(part, bytes):
                    transport.write(part)
                else:
                    await asyncio.get_running_loop().sendfile(transport, part.file, part.position, part.size)
            if pending:
                transport.write(b"".join(pending))
            if self._writable is not None:
                await self._writable
            if transport.is_closing():
                raise ConnectionResetError("connection closed while answering")
        finally:
            for part in parts:
                if not isinstance(part, bytes):
                    part.close()

    # -- helpers ----------------------------------------------------------------------------

    def _notify(self) -> None:
        if self._wake is not None and not self._wake.done():
            self._wake.set_result(None)

    def _pause_reading(self) -> None:
        if self._reading and not self.transport.is_closing():
            self._reading = False
            self.transport.pause_reading()

    def close(self) -> None:
        self.done = True
        self.server.connections.discard(self)
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()
        if self.task is not None and self.task is not asyncio.current_task():
            self.task.cancel()
