"""One client connection (Kafka: SocketServer's Processor and its KafkaChannel): frame, dispatch
in order, answer.

Like Kafka's SocketServer, a connection has one request in flight at a time: responses go back in
request order, and a parked Fetch holds its connection only. A client a quota throttles gets its
answer at once and then nothing more is read from it for the throttle time (Kafka mutes the
channel). Each connection is an ``asyncio.BufferedProtocol``: the socket reads straight into the
frame decoder's buffers (a large Produce lands in its own buffer, copied by nobody), and one task
per connection answers the requests in order. The buffers of large frames are lent again, by
the server's pool, once their requests are done with (shim.protocol.framing.BufferPool).

Limits, with Kafka's names: ``connections.max.idle.ms``, ``sasl.server.max.receive.size``, and a
bound on what one connection holds: received requests up to MAX_QUEUED_BYTES, and no more reading
while its responses wait for the client to read them (Kafka mutes a channel whose response is
unsent). Only this module and shim.server touch sockets and the event loop.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from typing import TYPE_CHECKING

from .apis import dispatch as _dispatch
from .event_loops import send_region
from .node import now_ms
from .notify import wait_or_timeout
from .protocol.framing import FrameDecoder, FrameError, frame_size
from .protocol.messages import peek
from .security.scram import SaslFailure
from .security.session import ConnectionSession, SaslAuthenticator
from .security.tls import principal_of

if TYPE_CHECKING:
    from .server import Server

log = logging.getLogger(__name__)
# Parts of a response shorter than this are joined into one write (Connection._send).
_JOIN_LIMIT = 64 * 1024

# Stop reading from a client whose received, unanswered requests exceed this many bytes; each
# request counts its Python object too, so a flood of tiny requests is bounded as well. Kafka holds
# one request per connection (the channel is muted until its answer is sent); this reads a little
# further ahead, so pipelined Produce requests wait here rather than in the client, yet a thousand
# connections each pipelining behind a parked Fetch hold about 1 GiB, not 16.
MAX_QUEUED_BYTES = 1024 * 1024
REQUEST_OVERHEAD = 128
# One connection's answering task gives the other connections a turn of the loop after answering
# for this long: a client pipelining 100,000 cheap requests held the loop for seconds, as Kafka's
# processors serve their connections in turn.
ANSWER_SLICE_S = 0.005
# Kafka: sasl.server.max.receive.size, the largest frame a SASL listener reads before authentication
SASL_SERVER_MAX_RECEIVE_SIZE = 524288
# Kafka: connection.failed.authentication.delay.ms, how long a failed authentication's connection lingers
FAILED_AUTHENTICATION_DELAY_S = 0.1


class Connection(asyncio.BufferedProtocol):
    def __init__(self, server: "Server", ip: str, listener, node_id: int) -> None:
        self.server = server
        self.node_id = node_id  # the simulated broker whose listener accepted it
        self.ip = ip
        self.listener = listener
        self.session = None
        self.decoder = FrameDecoder(server.node.config.max_request_bytes, server.frame_buffers)
        self.requests: collections.deque = collections.deque()
        self.queued_bytes = 0
        self.error: FrameError | None = None
        self.done = False
        self.lost = False
        self.task: asyncio.Task | None = None
        self.transport: asyncio.Transport | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.last_active = 0.0  # loop time of the last complete request or response
        self.answering = False  # a request is in the broker (a parked Fetch or JoinGroup is not idle)
        self._idle: asyncio.TimerHandle | None = None
        self._pending_at_check = 0
        self._wake: asyncio.Future | None = None
        self._writable: asyncio.Future | None = None
        self._reading = True
        self._muted = False  # a quota's throttle time is running (see _mute)
        self._out: list = []  # answers written once the answering task yields (see _defer)
        self._out_bytes = 0
        self._flush_scheduled = False

    # -- protocol callbacks (the event loop's side) -----------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:
        self.transport = transport
        peer = transport.get_extra_info("peername")
        self.peer = peer
        self.client_host = f"/{peer[0]}" if isinstance(peer, tuple) else ""
        try:
            self.session, refused = self._session(transport), None
        except ValueError as e:  # no mapping rule names the certificate: Kafka fails its requests
            self.session, refused = ConnectionSession(self.listener.name), e
        self.session.client_port = peer[1] if isinstance(peer, tuple) else None  # KIP-714 client_source_port
        if self.listener.sasl:  # an unauthenticated client may not make the broker hold 100 MiB
            self.decoder.max_frame = min(self.decoder.max_frame, SASL_SERVER_MAX_RECEIVE_SIZE)
        self.server.connections.add(self)
        self.loop = loop = asyncio.get_running_loop()
        self.session.gone = loop.create_future()  # done when the client closes: parked requests end
        self.last_active = loop.time()
        self._idle = loop.call_at(self.last_active + self.server.idle_s, self._check_idle)
        self.task = loop.create_task(self._answer())
        if refused is not None:
            log.warning("closing connection from %s: %s", peer, refused)
            self.done = True
            transport.abort()

    def get_buffer(self, sizehint: int) -> memoryview:
        return self.decoder.buffer()

    def buffer_updated(self, nbytes: int) -> None:
        try:
            frames = self.decoder.received(nbytes)
        except FrameError as exc:
            frames, self.error = [], exc
        if frames:
            self.last_active = self.loop.time()
            received = now_ms()  # when the requests arrived, for the deadlines (DeadlineTimer.catch_up)
        for f in frames:
            self.requests.append((f, received))
            self.queued_bytes += len(f) + REQUEST_OVERHEAD
        try:
            self.decoder.raise_pending()  # a bad frame after good ones: answer those, then close
        except FrameError as exc:
            self.error = exc
        if self.error is not None or self.queued_bytes > MAX_QUEUED_BYTES:
            self._pause_reading()
        self._notify()

    def eof_received(self) -> bool:
        self.done = True
        self._peer_gone()
        self._notify()
        # keep the transport until the queued requests are answered (TLS cannot half-close: it closes)
        return not self.listener.tls

    def connection_lost(self, exc: Exception | None) -> None:
        self.done = self.lost = True
        self.requests.clear()
        self._peer_gone()
        if self._idle is not None:
            self._idle.cancel()
        self.server.connection_closed(self)
        self._notify()
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)

    def _peer_gone(self) -> None:
        """A Fetch parked for min_bytes ends now rather than at its max_wait (up to 24 days): Kafka
        closes a channel at its end of stream, so no answer is due, and the parked Fetches of
        closed connections held memory and were all walked again at every append."""
        gone = getattr(self.session, "gone", None)
        if gone is not None and not gone.done():
            gone.set_result(None)

    def pause_writing(self) -> None:
        # Kafka mutes a channel while its response is unsent: a client that does not read its
        # responses gets no more of its requests read, so neither side grows.
        self._writable = asyncio.get_running_loop().create_future()
        self._pause_reading()

    def resume_writing(self) -> None:
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)
        self._writable = None
        self._maybe_resume_reading()

    # -- connections.max.idle.ms ------------------------------------------------------------

    def _check_idle(self) -> None:
        """Close the connection when nothing completed for connections.max.idle.ms.

        Kafka's Selector counts any readiness of the socket as activity; here only a complete
        request or a response taken by the client does, so a client trickling a request byte by
        byte, or not reading its responses at all, is closed too. A request parked in the broker
        (Fetch with max_wait_ms, a JoinGroup waiting for the rebalance) keeps its connection, and so
        does a response the client is still reading, however slowly.
        """
        if self.lost:
            return
        loop = self.loop
        now, idle_s = loop.time(), self.server.idle_s
        pending = self.transport.get_write_buffer_size()
        if self.answering or pending != self._pending_at_check:  # parked, or the client reads slowly
            self.last_active = now
        self._pending_at_check = pending
        if now - self.last_active >= idle_s:
            log.info("closing connection from %s: idle for more than %d ms", self.peer, idle_s * 1000)
            self.done = True
            self.transport.abort()  # unsent responses are dropped, as Kafka's close of an expired channel
            return
        self._idle = loop.call_at(self.last_active + idle_s, self._check_idle)

    # -- the answering task -----------------------------------------------------------------

    async def _answer(self) -> None:
        """The connection's task: answer its requests until it ends, then close it. What ends it
        is logged by kind; nothing that goes wrong here ends more than this connection."""
        try:
            await self._answer_requests()
        except FrameError as exc:
            log.warning("closing connection from %s: %s", self.peer, exc)
        except SaslFailure as exc:
            log.info("closing connection from %s on listener %s: %s", self.peer, self.listener.name, exc)
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

    async def _answer_requests(self) -> None:
        """One request at a time, in order, each answer sent (or deferred) before the next; a bad
        frame raises once the requests before it are answered."""
        clock = time.monotonic  # not loop.time(): uvloop's stands still within one turn of the loop
        slice_end = clock() + ANSWER_SLICE_S
        while True:
            if self.requests:
                if clock() >= slice_end:  # the other connections' turn
                    await asyncio.sleep(0)
                    slice_end = clock() + ANSWER_SLICE_S
                request, received = self.requests.popleft()
                self.queued_bytes -= len(request) + REQUEST_OVERHEAD
                if not self._reading:
                    self._maybe_resume_reading()
                if self.server.timer is not None:  # a deadline that came before the request goes first
                    self.server.timer.catch_up(received)
                self.answering = True
                if self.session.sasl:
                    answer = await self._respond(request)
                else:  # nothing to check first: no coroutine of its own for each request
                    answer = await _dispatch.dispatch_request(self.server.node, request, self.client_host,
                                                              self.session, self.node_id)
                self.answering = False
                sending = None if answer.parts is None else self._send(answer.parts)
                if sending is not None:
                    await sending
                self.last_active = self.loop.time()
                if self.session.failed:
                    await self._linger()
                    raise SaslFailure("authentication failed")
                if answer.mute_ms > 0:
                    await self._mute(answer.mute_ms / 1000)
                request = answer = None  # a large frame's buffer is free for the next (FrameDecoder)
            elif self.error is not None:
                raise self.error
            elif self.done:
                return
            else:
                self._wake = asyncio.get_running_loop().create_future()
                await self._wake
                slice_end = clock() + ANSWER_SLICE_S

    # -- who the client is (listeners, TLS, SASL) ------------------------------------------

    def _session(self, transport: asyncio.Transport):
        node, name = self.server.node, self.listener.name
        if self.listener.sasl:
            return SaslAuthenticator(name, node.sasl_mechanisms, node.credentials,
                                     node.config.connections_max_reauth_ms, node.release.scram_nonce_check,
                                     node.oauth_validator)
        ssl_object = transport.get_extra_info("ssl_object")
        return ConnectionSession(name, principal_of(ssl_object.getpeercert() if ssl_object else None,
                                                    self.server.principal_mapper))

    async def _linger(self) -> None:
        """After a failed authentication's answer: no more requests are served, and the connection
        closes when the client closes it or after connection.failed.authentication.delay.ms, as
        Kafka delays the close, so the client reads the answer before it sees the end of stream."""
        deadline = self.loop.time() + FAILED_AUTHENTICATION_DELAY_S
        while not self.done and self.loop.time() < deadline:
            self.requests.clear()  # read and dropped: unread bytes would make the close a reset
            self.queued_bytes = 0
            self._wake = self.loop.create_future()
            if not await wait_or_timeout(self._wake, deadline - self.loop.time()):
                break

    async def _respond(self, request) -> _dispatch.Answer:
        """Dispatch a request on a SASL listener, unless the connection must authenticate first
        (Kafka's SaslServerAuthenticator sits before the request handlers)."""
        session, now = self.session, now_ms()
        if session.sasl and session.raw_tokens:  # after a v0 SaslHandshake: a bare token, a bare answer
            answer = session.raw_token(bytes(request), now)
            if session.complete:
                self.decoder.max_frame = self.server.node.config.max_request_bytes
            return _dispatch.Answer([answer], 0)
        api_key = peek(request)[0]
        if not session.admits(api_key, now):
            raise SaslFailure(f"request of API key {api_key} not allowed in SASL state {session.state.name}")
        answer = await _dispatch.dispatch_request(self.server.node, request, self.client_host, session, self.node_id)
        if session.sasl and session.complete:
            self.decoder.max_frame = self.server.node.config.max_request_bytes
        return answer

    def _send(self, parts: list):
        """One response frame; an awaitable unless it was queued whole with nothing to wait for.
        The common answer, one small bytes part (a Produce's), takes no coroutine of its own."""
        part = parts[0] if len(parts) == 1 else None
        if part.__class__ is bytes and len(part) < _JOIN_LIMIT:
            self._defer((frame_size(len(part)), part), 4 + len(part))
            return None if self._writable is None and not self.transport.is_closing() else self._sent()
        return self._send_parts(parts)

    async def _send_parts(self, parts: list) -> None:
        """Bytes are written, file regions go from the file to the socket."""
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
                self._flush_out()  # the answers before this one go first
                transport.write(b"".join(pending))
                pending = []
                if isinstance(part, bytes):
                    transport.write(part)
                else:
                    await self._send_file(part)
            if pending:
                self._defer(pending, sum(len(p) for p in pending))
            await self._sent()
        finally:
            for part in parts:
                if not isinstance(part, bytes):
                    part.close()

    async def _sent(self) -> None:
        """Once the transport has room again; a connection closed meanwhile ends the answering."""
        if self._writable is not None:
            await self._writable
        if self.transport.is_closing():
            raise ConnectionResetError("connection closed while answering")

    async def _send_file(self, part) -> None:
        await send_region(self.loop, self.transport, part, tls=self.listener.tls, room=self._room)

    async def _room(self) -> None:
        if self._writable is not None:
            await self._writable

    def _defer(self, pending, nbytes: int) -> None:
        """Write ``pending`` once the answering task yields to the loop: the answers to requests a
        client pipelined (librdkafka keeps many Produce requests in flight, one partition each)
        leave in one send instead of one each. Past _JOIN_LIMIT bytes they are written at once, so
        a client that does not read still meets the transport's flow control (pause_writing).
        ``nbytes``: their length."""
        self._out += pending
        self._out_bytes += nbytes
        if self._out_bytes >= _JOIN_LIMIT:
            self._flush_out()
        elif not self._flush_scheduled:
            self._flush_scheduled = True
            self.loop.call_soon(self._flush_out)

    def _flush_out(self) -> None:
        self._flush_scheduled = False
        if self._out:
            out, self._out, self._out_bytes = b"".join(self._out), [], 0
            if not self.transport.is_closing():
                self.transport.write(out)

    # -- helpers ----------------------------------------------------------------------------

    def _notify(self) -> None:
        if self._wake is not None and not self._wake.done():
            self._wake.set_result(None)

    async def _mute(self, seconds: float) -> None:
        """A quota throttled this client: nothing more is read from it for that long (Kafka mutes the channel)."""
        self._muted = True
        self._pause_reading()
        try:
            await asyncio.sleep(seconds)
        finally:
            self._muted = False
        self.last_active = self.loop.time()
        self._maybe_resume_reading()

    def _pause_reading(self) -> None:
        if self._reading and not self.transport.is_closing():
            self._reading = False
            self.transport.pause_reading()

    def _maybe_resume_reading(self) -> None:
        if (not self._reading and self.error is None and self._writable is None and not self._muted
                and self.queued_bytes <= MAX_QUEUED_BYTES // 2 and not self.transport.is_closing()):
            self._reading = True
            self.transport.resume_reading()

    def abort(self) -> None:
        """Drop the connection at once, unsent responses included (its broker went down)."""
        self.done = True
        if self.transport is not None:
            self.transport.abort()
        if self.task is not None and self.task is not asyncio.current_task():
            self.task.cancel()

    def close(self) -> None:
        self.done = True
        if self.transport is not None and not self.transport.is_closing():
            self._flush_out()  # answers still deferred (Connection._defer) go before the close
            self.transport.close()
        if self.task is not None and self.task is not asyncio.current_task():
            self.task.cancel()
