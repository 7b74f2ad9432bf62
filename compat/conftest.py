"""Helpers for the real-client tests: a broker subprocess, a fault-injecting TCP proxy,
a raw Kafka-protocol connection, and polling with a deadline.

They are exposed as fixtures (``shim_process``, ``dropping_proxy``, ``free_port``) so that the
test modules need not import this file.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import os
import selectors
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from kafka_codecs import iter_batches
from compat.support import recv_frame, wait_for
from compat.targets import BROKERS_ENV
from shim.protocol.messages import decode_request, decode_response, encode_response, peek

REPO = Path(__file__).resolve().parent.parent
READY_PREFIX = "kafka-shim ready: bootstrap.servers="
EVENT_LOOP_PREFIX = "kafka-shim event loop: "


def pick_free_port() -> int:
    """A free port; under --shim-brokers N the first of N free ports in a row (broker i listens on
    port+i), so a kafka-shim restarted on it finds all of them."""
    brokers = int(os.environ.get(BROKERS_ENV) or 1)
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if brokers == 1 or all(_free(port + i) for i in range(1, brokers)):
            return port


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


# -- a broker in a subprocess ------------------------------------------------------------------


class ShimProcess:
    """``kafka-shim serve`` (or ``python -m shim serve``) as a child process."""

    def __init__(self, data_dir: Path, port: int = 0, *, console_script: bool = False, args=()) -> None:
        if console_script:
            cmd = [str(Path(sys.executable).parent / "kafka-shim")]
        else:
            cmd = [sys.executable, "-m", "shim"]
        # group.initial.rebalance.delay.ms=0 instead of Kafka's 3000, for fast tests (as the Kafka targets)
        cmd += ["serve", "--listen", f"127.0.0.1:{port}", "--data-dir", str(data_dir),
                "--override", "group.initial.rebalance.delay.ms=0", *args]
        brokers = os.environ.get(BROKERS_ENV)  # --shim-brokers N: every kafka-shim of the run is a cluster
        if brokers and "--brokers" not in args:
            cmd += ["--brokers", brokers]
        self.data_dir = data_dir
        self.started = time.monotonic()
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO, text=True)
        self.ready_line: str | None = None
        self.ready_after: float | None = None
        self._stderr: list[str] = []
        self._stderr_thread = threading.Thread(target=self._drain_stderr, daemon=True)
        self._stderr_thread.start()

    def _drain_stderr(self) -> None:
        for line in self.proc.stderr:
            self._stderr.append(line)

    @property
    def stderr(self) -> str:
        return "".join(self._stderr)

    def wait_ready(self, timeout: float = 15.0) -> str:
        """Read stdout until the ready line; returns bootstrap.servers."""
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        try:
            while self.ready_line is None:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not sel.select(remaining):
                    raise AssertionError(f"no ready line within {timeout}s; stderr:\n{self.stderr}")
                line = self.proc.stdout.readline()
                if not line:
                    raise AssertionError(f"broker exited ({self.proc.wait()}) before it was ready:\n{self.stderr}")
                if line.startswith(READY_PREFIX):
                    self.ready_line = line.rstrip("\n")
                    self.ready_after = time.monotonic() - self.started
        finally:
            sel.close()
        return self.bootstrap_servers

    @property
    def bootstrap_servers(self) -> str:
        return self.ready_line[len(READY_PREFIX):].split()[0]

    def event_loop(self, timeout: float = 15.0) -> str:
        """The event loop the broker says it runs on (``uvloop`` or ``asyncio``), from the line it
        prints after its ready line and listeners."""
        self.wait_ready(timeout)
        while line := self.proc.stdout.readline():
            if line.startswith(EVENT_LOOP_PREFIX):
                return line[len(EVENT_LOOP_PREFIX):].strip()
        raise AssertionError(f"broker exited ({self.proc.wait()}) without naming its event loop:\n{self.stderr}")

    def send_signal(self, sig: int) -> None:
        self.proc.send_signal(sig)

    def wait(self, timeout: float = 15.0) -> int:
        return self.proc.wait(timeout)

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def cleanup(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self._stderr_thread.join(5)
        self.proc.stdout.close()
        self.proc.stderr.close()


@pytest.fixture
def shim_process():
    """Factory: ``shim_process(data_dir, port=0, console_script=False, args=())`` -> ShimProcess.

    Every process it started is killed at teardown if still running.
    """
    started: list[ShimProcess] = []

    def start(data_dir, port=0, **kw) -> ShimProcess:
        p = ShimProcess(Path(data_dir), port, **kw)
        started.append(p)
        return p

    yield start
    for p in started:
        p.cleanup()


@pytest.fixture
def free_port():
    return pick_free_port


# -- a proxy that loses Produce responses ----------------------------------------------------


class _Cut(Exception):
    pass


class DroppingProxy:
    """A TCP proxy on 127.0.0.1 in front of one broker.

    It forwards requests and responses unchanged, except: for the Produce requests whose ordinal
    number (1-based, counted across all connections) is in ``drop``, it waits for the broker's
    response, then swallows it and closes both sides of that connection. The client saw its request
    go out and no answer come back, so it must retry the same batch with the same sequence numbers,
    and the broker, which did append it, must recognise the retry as a duplicate.

    ``on_drop()`` runs (on the proxy's thread) just before a dropped connection is closed.
    With ``advertise``, Metadata responses are rewritten to name the proxy's port, for brokers
    whose advertised port cannot be changed (a subprocess); in front of a cluster it listens on one
    port per broker and each broker is advertised as its own proxy port.
    """

    def __init__(self, upstream_port: int, drop, *, advertise: bool = False, on_drop=None) -> None:
        self.upstream_port = upstream_port
        self.drop = set(drop)
        self.advertise = advertise
        self.on_drop = on_drop
        self.produce_requests = 0
        self.produced_batches: list[tuple[int, int, int, int]] = []  # (producer id, epoch, base seq, count)
        self.dropped = 0
        self.connections = 0
        self.port: int | None = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="dropping-proxy", daemon=True)
        self._tasks: set[asyncio.Task] = set()
        self.ports: dict[int, int] = {}  # upstream broker port -> proxy port
        self._servers: list = []

    def start(self) -> "DroppingProxy":
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)
        return self

    async def _start(self) -> None:
        upstreams = [self.upstream_port]
        if self.advertise:  # every broker of a cluster behind a proxy port of its own
            from compat.support import broker_addresses

            addresses = await asyncio.to_thread(broker_addresses, f"127.0.0.1:{self.upstream_port}")
            upstreams += [port for _, port in addresses if port != self.upstream_port]
        for upstream in upstreams:
            server = await asyncio.start_server(functools.partial(self._handle, upstream=upstream), "127.0.0.1", 0)
            self._servers.append(server)
            self.ports[upstream] = server.sockets[0].getsockname()[1]
        self.port = self.ports[self.upstream_port]

    def stop(self) -> None:
        async def shutdown():
            for server in self._servers:
                server.close()
            for t in list(self._tasks):
                t.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    def _rewrite_metadata(self, body: bytes, version: int) -> bytes:
        correlation_id, response = decode_response(body, 3, version)
        brokers = tuple(dataclasses.replace(b, port=self.ports.get(b.port, self.port)) for b in response.brokers)
        return encode_response(correlation_id, dataclasses.replace(response, brokers=brokers))

    async def _handle(self, client_r, client_w, upstream: int) -> None:
        self._tasks.add(asyncio.current_task())
        self.connections += 1
        try:
            broker_r, broker_w = await asyncio.open_connection("127.0.0.1", upstream)
        except OSError:
            client_w.close()
            return
        doomed: set[int] = set()  # correlation ids whose response is to be swallowed
        versions: dict[int, tuple[int, int]] = {}  # correlation id -> (api key, version)
        tasks = [asyncio.create_task(self._requests(client_r, broker_w, versions, doomed)),
                 asyncio.create_task(self._responses(broker_r, client_w, versions, doomed))]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for w in (client_w, broker_w):
                w.close()
            self._tasks.discard(asyncio.current_task())

    async def _requests(self, client_r, broker_w, versions: dict, doomed: set) -> None:
        """Client to broker: every request forwarded; the Produce requests counted, and the ones
        numbered in ``drop`` marked to lose their response."""
        while True:
            size, body = await _frame(client_r)
            api_key, version, correlation_id = struct.unpack_from(">hhi", body)
            versions[correlation_id] = (api_key, version)
            if api_key == 0:
                self.produce_requests += 1
                self.produced_batches += _batches_of_produce(body)
                if self.produce_requests in self.drop:
                    doomed.add(correlation_id)
            broker_w.write(size + body)
            await broker_w.drain()

    async def _responses(self, broker_r, client_w, versions: dict, doomed: set) -> None:
        """Broker to client: a doomed response cuts the connection instead; with ``advertise``,
        Metadata names the proxy ports."""
        while True:
            size, body = await _frame(broker_r)
            correlation_id = struct.unpack_from(">i", body)[0]
            api_key, version = versions.pop(correlation_id, (None, None))
            if correlation_id in doomed:
                self.dropped += 1
                if self.on_drop is not None:
                    self.on_drop()
                raise _Cut
            if self.advertise and api_key == 3:
                body = self._rewrite_metadata(body, version)
                size = struct.pack(">i", len(body))
            client_w.write(size + body)
            await client_w.drain()


async def _frame(reader) -> tuple[bytes, bytes]:
    """One size-prefixed frame: its four size bytes and its body."""
    size = await reader.readexactly(4)
    return size, await reader.readexactly(struct.unpack(">i", size)[0])


def _batches_of_produce(frame: bytes) -> list[tuple[int, int, int, int]]:
    api_key, version, _ = peek(frame)
    _, request = decode_request(frame, api_key, version)
    out = []
    for t in request.topic_data:
        for p in t.partition_data:
            for _, h in iter_batches(p.records or b""):
                out.append((h.producer_id, h.producer_epoch, h.base_sequence, h.records_count))
    return out


@pytest.fixture
def dropping_proxy():
    """Factory: ``dropping_proxy(broker_port, drop={3, 7}, advertise=False, on_drop=None)`` -> started proxy."""
    proxies: list[DroppingProxy] = []

    def start(upstream_port: int, drop, **kw) -> DroppingProxy:
        p = DroppingProxy(upstream_port, drop, **kw).start()
        proxies.append(p)
        return p

    yield start
    for p in proxies:
        p.stop()


# -- the raw protocol ------------------------------------------------------------------------


class RawConnection:
    """A blocking socket that speaks Kafka framing, for requests no client library would send."""

    def __init__(self, bootstrap: str, timeout: float = 10.0) -> None:
        host, port = bootstrap.split(",")[0].rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send_frame(self, payload: bytes) -> None:
        self.sock.sendall(struct.pack(">i", len(payload)) + payload)

    def recv_frame(self) -> bytes:
        return recv_frame(self.sock)

    def closed_by_peer(self, timeout: float = 10.0) -> bool:
        """True once the broker has closed its side (EOF or reset), without sending anything."""
        self.sock.settimeout(timeout)
        try:
            data = self.sock.recv(1 << 16)
        except ConnectionResetError:
            return True
        except socket.timeout:
            return False
        if data:
            raise AssertionError(f"expected the connection to be closed, got {data[:40]!r}")
        return True

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def raw_connection():
    """Factory: ``raw_connection("host:port")`` -> RawConnection, closed at teardown."""
    conns: list[RawConnection] = []

    def connect(bootstrap: str) -> RawConnection:
        c = RawConnection(bootstrap)
        conns.append(c)
        return c

    yield connect
    for c in conns:
        c.close()


@pytest.fixture
def wire(compat_target):
    """A raw kio connection to the broker under test (compat.wire.Wire)."""
    from compat.wire import Wire

    w = Wire(compat_target.bootstrap_servers)
    yield w
    w.close()


@pytest.fixture
def clients(client_name, compat_target):
    """Producers and consumers of the client library ``client_name`` (a test parameter)."""
    from compat.txn_clients import Clients

    c = Clients(client_name, compat_target.bootstrap_servers)
    yield c
    c.close_all()


@pytest.fixture
def poll():
    """``poll(condition, timeout, message=...)``: wait for a condition with a deadline."""
    return wait_for


# -- the SparkSession the PySpark modules share (compat/spark_support.py) -----------------------

LAST_SPARK_TEST = pytest.StashKey[object]()


@pytest.hookimpl(trylast=True)  # after the module's own teardown
def pytest_runtest_teardown(item, nextitem):
    """Stops the shared SparkSession after the last test of the session that uses it (its ``spark`` fixture)."""
    stash = item.config.stash
    if LAST_SPARK_TEST not in stash:
        users = [i for i in item.session.items if "spark" in getattr(i, "fixturenames", ())]
        stash[LAST_SPARK_TEST] = users[-1] if users else None
    if nextitem is None or item is stash[LAST_SPARK_TEST]:
        _stop_spark()


def pytest_sessionfinish(session):
    _stop_spark()


def _stop_spark() -> None:
    spark_support = sys.modules.get("compat.spark_support")
    if spark_support is not None:
        spark_support.stop_shared_session()


# The compat-matrix machinery: --kafka-bootstrap / KAFKA_SHIM_TARGET, compat_target, java_drivers,
# apache_kafka, and the compat(client=..., scenario=...) marker (see compat/plugin.py).
from compat.plugin import *  # noqa: E402,F401,F403
