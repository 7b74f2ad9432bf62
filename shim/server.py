"""The asyncio shell: listen, accept connections, run timers, shut down (Kafka: SocketServer's
Acceptor with its ConnectionQuotas). Each accepted socket becomes a :class:`shim.connection.Connection`,
which frames, dispatches and answers its requests in order.

Limits, with Kafka's names: ``max.connections`` (the acceptor waits for a free slot),
``max.connections.per.ip`` (closed on accept), and an open-file budget for client sockets
(:func:`socket_budget`); ``connections.max.idle.ms`` and what one connection may hold are the
connection's (shim.connection).
"""

from __future__ import annotations

import asyncio
import errno
import logging
import resource
import socket

from .connection import Connection
from .deadline_timer import DeadlineTimer
from .limits import ConnectionQuotas
from .log_cleaner import LogCleaner
from .node import Node, now_ms
from .protocol.framing import BufferPool
from .notify import wait_or_timeout
from .security.tls import principal_mapper, server_context

log = logging.getLogger(__name__)
LISTEN_BACKLOG = 128
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
        self.frame_buffers = BufferPool()  # large frames' buffers, shared by the connections
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
            if listener.name in self.node.controller_listeners and node_id != self.node.config.node_id:
                continue  # the quorum's only voter is the first node (DescribeQuorum); the others are brokers
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
        self.node.fetch_sessions.forget(node_id)  # a stopped Kafka broker's FetchSessionCache goes with it

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
            self.node.share.connection_closed(conn.session)  # its open share sessions end (Kafka 4.1)
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
