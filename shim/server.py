"""The asyncio shell: accept connections, frame, dispatch in order, run timers, shut down.

Like Kafka's SocketServer, a connection has one request in flight at a time: responses go back in
request order, and a parked Fetch holds its connection only. A client a quota throttles gets its
answer at once and then nothing more is read from it for the throttle time (Kafka mutes the channel). Each connection is an
``asyncio.BufferedProtocol``: the socket reads straight into the frame decoder's buffers (a large
Produce lands in its own buffer, copied by nobody), and one task per connection answers the
requests in order.

Limits, with Kafka's names: ``max.connections`` (the acceptor waits for a free slot),
``max.connections.per.ip`` (closed on accept), ``connections.max.idle.ms``, and a bound on what
one connection holds: received requests up to MAX_QUEUED_BYTES, and no more reading while its
responses wait for the client to read them (Kafka mutes a channel whose response is unsent).
"""

from __future__ import annotations

import asyncio
import collections
import errno
import logging
import resource
import socket
import time

from .apis import dispatch as _dispatch
from .deadline_timer import DeadlineTimer
from .event_loops import send_region
from .limits import ConnectionQuotas
from .log_cleaner import LogCleaner
from .node import Node, now_ms
from .notify import wait_or_timeout
from .protocol.framing import FrameDecoder, FrameError, frame_size
from .protocol.messages import peek
from .security.scram import SaslFailure
from .security.session import ConnectionSession, SaslAuthenticator
from .security.tls import principal_mapper, principal_of, server_context

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
LISTEN_BACKLOG = 128
# Kafka: sasl.server.max.receive.size, the largest frame a SASL listener reads before authentication
SASL_SERVER_MAX_RECEIVE_SIZE = 524288
# Kafka: connection.failed.authentication.delay.ms, how long a failed authentication's connection lingers
FAILED_AUTHENTICATION_DELAY_S = 0.1
_OUT_OF_RESOURCES = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}


def socket_budget() -> int | None:
    """How many client sockets the process may hold: its open-file limit less a reserve for segment
    files, indexes, snapshots and lazy imports (a quarter, 64 at least). Without it a flood of
    connections took the last descriptor and the next Produce failed opening a file, closing a
    healthy client's connection; past it the next client waits in the backlog, as at
    max.connections."""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft == resource.RLIM_INFINITY:
        return None
    return max(soft - max(64, soft // 4), 1)


class Server:
    def __init__(self, node: Node) -> None:
        self.node = node
        config = node.config
        self.quotas = ConnectionQuotas(config.max_connections, config.max_connections_per_ip,
                                       config.per_ip_overrides())
        self.idle_s = config.connections_max_idle_ms / 1000
        self.max_sockets = socket_budget()
        self.timer: DeadlineTimer | None = None
        self.cleaner = LogCleaner(node)
        self.connections: set[Connection] = set()
        self._sockets: dict[int, list[socket.socket]] = {}  # node id -> its listening sockets
        self._acceptors: dict[int, list[asyncio.Task]] = {}
        self._ports: dict[tuple[int, str], int] = {}  # (node id, listener name) -> bound port
        self._tls: dict = {}
        self.principal_mapper = None  # ssl.principal.mapping.rules, parsed at start
        self._slot_waiters: list[asyncio.Future] = []  # acceptors waiting for a connection to close
        self._handshakes: set[asyncio.Task] = set()  # TLS handshakes under way, off the accept loop
        node.config_listeners.append(self._config_changed)

    def _config_changed(self) -> None:
        """A dynamic broker config changed: max.connections and the per-ip limits apply at once."""
        c = self.node.config
        self.quotas.update(c.max_connections, c.max_connections_per_ip, c.per_ip_overrides())
        self._wake_acceptors()

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        listeners = self.node.listeners
        config = self.node.config
        # ssl.client.auth is the SSL listeners'; on SASL_SSL the client is known by SASL (Kafka, KIP-684)
        tls = {"SSL": server_context(config) if any(lst.protocol == "SSL" for lst in listeners) else None,
               "SASL_SSL": server_context(config.replace(ssl_client_auth="none"))
               if any(lst.protocol == "SASL_SSL" for lst in listeners) else None}
        self._tls = tls
        if any(lst.protocol != "PLAINTEXT" for lst in listeners):  # Kafka parses them for SSL and SASL listeners
            self.principal_mapper = principal_mapper(config)
        try:
            for node_id in self.node.node_ids:
                await self._bind(node_id)
        except BaseException:
            await self.stop()
            raise
        self.timer = DeadlineTimer(loop, self.node)
        self.timer.start()
        self.cleaner.start()
        self.node.control.server = self  # node down/up close and reopen listeners (shim.control.cluster_ops)

    async def _bind(self, node_id: int) -> None:
        """Listen on every listener of ``node_id``: the first node on the configured ports, node i
        on port+i (a free port for port 0); a node brought back binds the ports it had."""
        loop = asyncio.get_running_loop()
        index = self.node.node_ids.index(node_id)
        self._sockets.setdefault(node_id, [])
        self._acceptors.setdefault(node_id, [])
        for listener in self.node.listeners:
            port = self._ports.get((node_id, listener.name), listener.port + index if listener.port else 0)
            sockets = await _listen(loop, listener.host, port)
            self._sockets[node_id] += sockets
            bound = sockets[0].getsockname()[1]
            self._ports[(node_id, listener.name)] = bound
            self.node.bound(listener, bound, node_id)
            self._acceptors[node_id] += [
                loop.create_task(self._accept(sock, listener, self._tls.get(listener.protocol), node_id))
                for sock in sockets]

    async def _unbind(self, node_id: int) -> None:
        """Close ``node_id``'s listeners and its open connections (a broker gone)."""
        tasks = self._acceptors.pop(node_id, [])
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for sock in self._sockets.pop(node_id, []):
            sock.close()
        closing = [c for c in self.connections if c.node_id == node_id]
        for conn in closing:
            conn.abort()
        await asyncio.gather(*[c.task for c in closing if c.task is not None], return_exceptions=True)

    async def node_down(self, node_id: int) -> None:
        """Stop broker ``node_id``: leadership and coordinators move first, then its listeners close."""
        if node_id not in self._sockets:
            raise ValueError(f"node {node_id} is not up")
        self.node.cluster.node_down(node_id, now_ms())
        await self._unbind(node_id)

    async def node_up(self, node_id: int) -> None:
        """Start broker ``node_id`` again on the ports it had; it rejoins the ISR of its partitions."""
        if node_id in self._sockets:
            raise ValueError(f"node {node_id} is up")
        await self._bind(node_id)
        self.node.cluster.node_up(node_id, now_ms())

    async def stop(self) -> None:
        await self.cleaner.stop()
        acceptors = [t for tasks in self._acceptors.values() for t in tasks]
        for task in acceptors + list(self._handshakes):
            task.cancel()
        await asyncio.gather(*acceptors, *self._handshakes, return_exceptions=True)
        for sockets in self._sockets.values():
            for sock in sockets:
                sock.close()
        if self.timer is not None:
            self.timer.stop()
        tasks = [c.task for c in self.connections if c.task is not None]
        for conn in list(self.connections):
            conn.close()
        await asyncio.gather(*tasks, return_exceptions=True)

    # -- accepting (Kafka: Acceptor + ConnectionQuotas) -------------------------------------

    async def _accept(self, listener: socket.socket, endpoint, tls, node_id: int) -> None:
        loop = asyncio.get_running_loop()
        while True:
            if not self.quotas.slot_available() or self._out_of_sockets():
                await self._wait_for_slot()  # max.connections: the next client waits in the backlog
                continue
            try:
                sock, addr = await loop.sock_accept(listener)
            except OSError as exc:
                if exc.errno in _OUT_OF_RESOURCES:  # as asyncio's own accept loop: wait, then retry
                    log.warning("accept failed, waiting for a connection to close: %s", exc)
                    await self._wait_for_slot(timeout=1.0)
                continue  # otherwise a client gone before its accept (ECONNABORTED and the like)
            ip = addr[0]
            if not self.quotas.inc(ip):
                log.info("Rejected connection from %s, address already has the configured maximum of %d "
                         "connections.", ip, self.quotas.limit_for(ip))
                sock.close()
                continue
            if tls is None:
                await self._connect(sock, ip, endpoint, None, node_id)
            else:  # a client slow to finish its TLS handshake must not hold up the next accept
                task = loop.create_task(self._connect(sock, ip, endpoint, tls, node_id))
                self._handshakes.add(task)
                task.add_done_callback(self._handshake_done)

    def _handshake_done(self, task: asyncio.Task) -> None:
        self._handshakes.discard(task)
        self._wake_acceptors()  # a failed handshake freed its socket

    def _out_of_sockets(self) -> bool:
        if self.max_sockets is None or len(self.connections) + len(self._handshakes) < self.max_sockets:
            return False
        log.warning("not accepting: %d client sockets are all the open-file limit leaves", self.max_sockets)
        return True

    async def _connect(self, sock: socket.socket, ip: str, endpoint, tls, node_id: int) -> None:
        loop = asyncio.get_running_loop()
        extra = {} if tls is None else {"ssl": tls, "ssl_handshake_timeout": min(self.idle_s, 60.0)}
        try:
            await loop.connect_accepted_socket(lambda: Connection(self, ip, endpoint, node_id), sock, **extra)
        except (OSError, asyncio.TimeoutError, asyncio.CancelledError) as exc:  # ssl.SSLError is an OSError
            log.info("connection from %s failed before its first request: %r", ip, exc)
            self.quotas.dec(ip)
            sock.close()
            if isinstance(exc, asyncio.CancelledError):
                raise

    async def _wait_for_slot(self, timeout: float | None = None) -> None:
        freed = asyncio.get_running_loop().create_future()
        self._slot_waiters.append(freed)
        try:
            await wait_or_timeout(freed, timeout)
        finally:
            if freed in self._slot_waiters:
                self._slot_waiters.remove(freed)

    def connection_closed(self, conn: "Connection") -> None:
        self.connections.discard(conn)
        if conn.session is not None:
            self.node.client_metrics.disconnected(conn.session)  # KIP-714 instances go with it (Kafka 4.0+)
        self.quotas.dec(conn.ip)
        self._wake_acceptors()

    def _wake_acceptors(self) -> None:
        waiters, self._slot_waiters = self._slot_waiters, []
        for freed in waiters:
            if not freed.done():
                freed.set_result(None)


async def _listen(loop: asyncio.AbstractEventLoop, host: str, port: int) -> list[socket.socket]:
    """Listening sockets for every address ``host`` resolves to (all interfaces for ``""``)."""
    infos = await loop.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(infos):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            sock.listen(LISTEN_BACKLOG)
            sock.setblocking(False)
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    return sockets


class Connection(asyncio.BufferedProtocol):
    def __init__(self, server: Server, ip: str, listener, node_id: int) -> None:
        self.server = server
        self.node_id = node_id  # the simulated broker whose listener accepted it
        self.ip = ip
        self.listener = listener
        self.session = None
        self.decoder = FrameDecoder(server.node.config.max_request_bytes)
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
        if self.listener.sasl:  # an unauthenticated client may not make the broker hold 100 MiB
            self.decoder.max_frame = min(self.decoder.max_frame, SASL_SERVER_MAX_RECEIVE_SIZE)
        self.server.connections.add(self)
        self.loop = loop = asyncio.get_running_loop()
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
        for f in frames:
            self.requests.append(f)
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
        self._notify()
        # keep the transport until the queued requests are answered (TLS cannot half-close: it closes)
        return not self.listener.tls

    def connection_lost(self, exc: Exception | None) -> None:
        self.done = self.lost = True
        self.requests.clear()
        if self._idle is not None:
            self._idle.cancel()
        self.server.connection_closed(self)
        self._notify()
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)

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
        clock = time.monotonic  # not loop.time(): uvloop's stands still within one turn of the loop
        slice_end = clock() + ANSWER_SLICE_S
        try:
            while True:
                if self.requests:
                    if clock() >= slice_end:  # the other connections' turn
                        await asyncio.sleep(0)
                        slice_end = clock() + ANSWER_SLICE_S
                    request = self.requests.popleft()
                    self.queued_bytes -= len(request) + REQUEST_OVERHEAD
                    self._maybe_resume_reading()
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
                elif self.error is not None:
                    raise self.error
                elif self.done:
                    break
                else:
                    self._wake = asyncio.get_running_loop().create_future()
                    await self._wake
                    slice_end = clock() + ANSWER_SLICE_S
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
            self._defer([frame_size(len(part)), part])
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
                self._defer(pending)
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

    def _defer(self, pending: list) -> None:
        """Write ``pending`` once the answering task yields to the loop: the answers to requests a
        client pipelined (librdkafka keeps many Produce requests in flight, one partition each)
        leave in one send instead of one each. Past _JOIN_LIMIT bytes they are written at once, so
        a client that does not read still meets the transport's flow control (pause_writing)."""
        self._out += pending
        self._out_bytes += sum(len(p) for p in pending)
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
