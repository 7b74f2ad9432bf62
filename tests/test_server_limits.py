"""Connection limits of the shell over loopback: max.connections, max.connections.per.ip (and its
overrides), connections.max.idle.ms, and the bound on what a client that never reads holds.

Raw sockets speak ApiVersions to an in-process broker; every wait is on an observed state (an
answer, an end of file, a count on the broker's side).
"""

from __future__ import annotations

import asyncio
import socket
import struct
import time

import pytest

from shim import Broker, BrokerThread
from shim.errors import ErrorCode
from shim.event_loops import loop_name
from shim.protocol.messages import RequestHeader, decode_response, encode_request, request_class
from shim.protocol.framing import SCRATCH_BYTES
from shim.connection import MAX_QUEUED_BYTES, REQUEST_OVERHEAD


def api_versions(correlation_id: int = 1) -> bytes:
    request = request_class(18, 3)(client_software_name="limits-test", client_software_version="1")
    payload = encode_request(RequestHeader(18, 3, correlation_id, "limits-test"), request)
    return struct.pack(">i", len(payload)) + payload


async def connect(broker: Broker):
    return await asyncio.open_connection(broker.node.host, broker.node.port)


async def answered(reader, writer, correlation_id: int = 1) -> bool:
    """Send ApiVersions and read its answer; False if the broker closed the connection instead."""
    writer.write(api_versions(correlation_id))
    try:
        size = struct.unpack(">i", await reader.readexactly(4))[0]
        body = await reader.readexactly(size)
    except (asyncio.IncompleteReadError, ConnectionError):
        return False
    got_id, response = decode_response(body, 18, 3)
    return got_id == correlation_id and response.error_code == ErrorCode.none


async def closed_by_broker(reader) -> bool:
    try:
        return await asyncio.wait_for(reader.read(1), 10) == b""
    except ConnectionError:
        return True


async def until(condition, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.005)


async def test_a_connection_over_max_connections_per_ip_is_closed_right_after_accept(tmp_path):
    async with Broker(data_dir=tmp_path / "d", listen="127.0.0.1:0", max_connections_per_ip=2) as broker:
        first, second = await connect(broker), await connect(broker)
        assert await answered(*first) and await answered(*second)
        third = await connect(broker)
        assert await closed_by_broker(third[0])
        assert broker._server.quotas.counts == {"127.0.0.1": 2}
        first[1].close()
        await until(lambda: broker._server.quotas.total == 1)
        again = await connect(broker)  # the freed slot is available again
        assert await answered(*again) and await answered(*second)
        for _, w in (second, third, again):
            w.close()


async def test_max_connections_per_ip_overrides_raise_the_limit_for_one_address(tmp_path):
    async with Broker(data_dir=tmp_path / "d", listen="127.0.0.1:0", max_connections_per_ip=1,
                      max_connections_per_ip_overrides="127.0.0.1:3") as broker:
        conns = [await connect(broker) for _ in range(3)]
        assert all([await answered(*c) for c in conns])
        fourth = await connect(broker)
        assert await closed_by_broker(fourth[0])
        for _, w in (*conns, fourth):
            w.close()


async def test_at_max_connections_the_broker_stops_accepting_until_one_closes(tmp_path):
    """Kafka's acceptor waits for a slot: the next client is not refused, it waits in the backlog."""
    async with Broker(data_dir=tmp_path / "d", listen="127.0.0.1:0", max_connections=2) as broker:
        first, second = await connect(broker), await connect(broker)
        assert await answered(*first) and await answered(*second)
        waiting_reader, waiting_writer = await connect(broker)  # TCP completes in the kernel's backlog
        waiting_writer.write(api_versions(7))
        assert await answered(*first, correlation_id=2)  # the loop has run since: still two connections
        assert broker._server.quotas.total == 2 and len(broker._server.connections) == 2
        second[1].close()
        size = struct.unpack(">i", await asyncio.wait_for(waiting_reader.readexactly(4), 10))[0]
        assert decode_response(await waiting_reader.readexactly(size), 18, 3)[0] == 7
        assert broker._server.quotas.total == 2
        first[1].close(), waiting_writer.close()


@pytest.mark.asyncio(loop_factories=["asyncio", "uvloop"])
async def test_an_idle_connection_is_closed_after_connections_max_idle_ms(tmp_path):
    async with Broker(data_dir=tmp_path / "d", listen="127.0.0.1:0", connections_max_idle_ms=300) as broker:
        reader, writer = await connect(broker)
        assert await answered(reader, writer)
        answered_at = time.monotonic()
        assert await closed_by_broker(reader)
        assert time.monotonic() - answered_at >= 0.3 - 0.01  # not before its idle time
        await until(lambda: broker._server.quotas.total == 0)
        writer.close()


async def test_a_connection_sending_whole_requests_more_often_than_the_idle_time_stays_open(tmp_path):
    async with Broker(data_dir=tmp_path / "d", listen="127.0.0.1:0", connections_max_idle_ms=300) as broker:
        reader, writer = await connect(broker)
        started = time.monotonic()
        i = 0
        while time.monotonic() - started < 1.2:  # four idle periods, a request every 100 ms
            i += 1
            assert await answered(reader, writer, i), f"closed after {time.monotonic() - started:.2f}s"
            await asyncio.sleep(0.1)  # the client's pace, not a synchronisation
        writer.close()


@pytest.mark.asyncio(loop_factories=["asyncio", "uvloop"])
async def test_a_request_trickled_byte_by_byte_does_not_keep_the_connection_open(tmp_path):
    """Bytes of an unfinished request are not activity: the trickle is closed at the idle time."""
    async with Broker(data_dir=tmp_path / "d", listen="127.0.0.1:0", connections_max_idle_ms=300) as broker:
        reader, writer = await connect(broker)
        request = api_versions()
        started = time.monotonic()
        closed = asyncio.ensure_future(closed_by_broker(reader))
        for byte in request:
            if closed.done():
                break
            writer.write(bytes([byte]))
            await asyncio.sleep(0.05)  # the client's pace: the whole request would take seconds
        assert closed.done() and closed.result(), "the trickling connection was not closed"
        assert time.monotonic() - started < len(request) * 0.05
        writer.close()


def send_until_blocked(sock, request: bytes, held) -> int:
    """Sends ``request`` again and again on the non-blocking ``sock`` until its sends stay blocked
    for half a second while ``held()``; the bytes sent."""
    sent = 0
    deadline = time.monotonic() + 30
    blocked_since = None
    while True:
        try:
            sent += sock.send(request)
            blocked_since = None
            continue
        except BlockingIOError:
            pass
        if held():
            blocked_since = blocked_since or time.monotonic()
            if time.monotonic() - blocked_since > 0.5:  # the client stays blocked
                return sent
        assert time.monotonic() < deadline, f"the broker kept reading: {sent} bytes sent"
        time.sleep(0.01)


@pytest.mark.parametrize("event_loop", ["asyncio", "uvloop"])
def test_a_client_that_never_reads_its_responses_stops_being_read(tmp_path, event_loop):
    """Kafka mutes a channel while its response is unsent. A client that sends ApiVersions
    without end and reads nothing soon finds its sends blocked, while the broker holds a bounded
    queue of its requests and a bounded write buffer."""
    # connections.max.idle.ms: 3 s, over twice the time from the mute to the readings below (the
    # client must stay blocked half a second first); the close comes 1-2 idle periods after the mute
    with BrokerThread(data_dir=tmp_path / "d", listen="127.0.0.1:0", connections_max_idle_ms=3_000,
                      event_loop=event_loop) as broker:
        assert loop_name(broker.loop) == event_loop
        server = broker.broker._server
        sock = socket.create_connection((broker.node.host, broker.node.port))
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
        sock.setblocking(False)
        request = api_versions()

        def held():
            """The connection is open and the broker holds none of it or has muted it. (The client
            can also find its sends blocked before any mute: the kernel's buffers between the two
            fill first in some runs, with nothing left queued in the broker.)"""
            conns = list(server.connections)
            if not conns:
                return False
            c = conns[0]
            return (not c._reading and c._writable is not None) or \
                (not c.requests and not c.transport.get_write_buffer_size())

        sent = send_until_blocked(sock, request, lambda: broker.call(held))

        def readings():
            (conn,) = server.connections  # still open: read before the idle close
            return conn.queued_bytes, conn.transport.get_write_buffer_size()

        queued, unsent = broker.call(readings)
        print(f"client sent {sent} bytes of requests; broker holds {queued} bytes of queued requests "
              f"and {unsent} bytes of unsent responses")
        # Reading stops at MAX_QUEUED_BYTES, past it by at most one read (a request counts
        # REQUEST_OVERHEAD besides its bytes; libuv reads up to 32 buffers a turn).
        assert queued <= MAX_QUEUED_BYTES + SCRATCH_BYTES * (1 + REQUEST_OVERHEAD // 40) * (32 if event_loop == "uvloop" else 1)
        assert unsent < 1024 * 1024
        assert sent < 32 * 1024 * 1024, "bounded by socket buffers, not by the broker's memory"

        # connections.max.idle.ms closes it: the client never took a response.
        deadline = time.monotonic() + 30
        while broker.call(lambda: len(server.connections)):
            assert time.monotonic() < deadline, "the stuck connection was never closed"
            time.sleep(0.05)
        sock.close()


@pytest.mark.parametrize("fields, message", [
    (dict(max_connections_per_ip=0), "max.connections.per.ip can be set to zero only"),
    (dict(max_connections=-1), "at least 0"),
    (dict(max_connections_per_ip_overrides="127.0.0.1"), "not host:count"),
    (dict(connections_max_idle_ms=0), "connections.max.idle.ms"),
])
def test_invalid_limits_are_refused_by_the_config(tmp_path, fields, message):
    from shim.config import BrokerConfig

    with pytest.raises(ValueError, match=message):
        BrokerConfig(data_dir=tmp_path, **fields)


async def test_at_max_connections_every_listening_socket_waits_and_each_is_woken(tmp_path):
    """Listening on all interfaces makes an IPv4 and an IPv6 socket, each with its own acceptor."""
    with socket.socket(socket.AF_INET6) as probe:
        try:
            probe.bind(("::1", 0))
        except OSError:
            pytest.skip("no IPv6 loopback")
        port = probe.getsockname()[1]
    async with Broker(data_dir=tmp_path / "d", listen=f":{port}", max_connections=1) as broker:
        assert len(broker._server._sockets[0]) == 2
        first = await asyncio.open_connection("127.0.0.1", port)
        assert await answered(*first)
        waiting = [await asyncio.open_connection(host, port) for host in ("127.0.0.1", "::1")]
        reads = {}
        for i, (reader, writer) in enumerate(waiting):
            writer.write(api_versions(10 + i))
            reads[asyncio.ensure_future(reader.readexactly(4))] = i
        first[1].close()
        for _ in waiting:  # each closes once answered, which lets the other in
            done, _ = await asyncio.wait(reads, timeout=10, return_when=asyncio.FIRST_COMPLETED)
            assert done, "a waiting client was never accepted"
            read = done.pop()
            i = reads.pop(read)
            reader, writer = waiting[i]
            body = await reader.readexactly(struct.unpack(">i", read.result())[0])
            assert decode_response(body, 18, 3)[0] == 10 + i
            writer.close()


async def test_client_sockets_stop_at_the_budget_the_open_file_limit_leaves(tmp_path):
    """Past Server.max_sockets (the open-file limit less a reserve) the next client waits in the
    backlog, as at max.connections, until one closes."""
    async with Broker(data_dir=tmp_path / "d", listen="127.0.0.1:0") as broker:
        from shim.server import socket_budget

        assert broker._server.max_sockets == socket_budget() < __import__("resource").getrlimit(
            __import__("resource").RLIMIT_NOFILE)[0]  # fmt: skip
        broker._server.max_sockets = 2
        first, second = await connect(broker), await connect(broker)
        assert await answered(*first) and await answered(*second)
        waiting_reader, waiting_writer = await connect(broker)
        waiting_writer.write(api_versions(7))
        assert await answered(*first, correlation_id=2)
        assert len(broker._server.connections) == 2
        second[1].close()
        size = struct.unpack(">i", await asyncio.wait_for(waiting_reader.readexactly(4), 10))[0]
        assert decode_response(await waiting_reader.readexactly(size), 18, 3)[0] == 7
        first[1].close(), waiting_writer.close()


def test_a_flood_of_connections_leaves_the_broker_files_to_serve_a_produce(tmp_path):
    """A broker under an open-file limit of 160, 250 connections opened at it, then a client's first
    Produce: the connections took every descriptor (the rest waited in the backlog), and the
    Produce failed importing crc32c with EMFILE, which closed that client's connection. Now the
    connections stop short of the limit and the Produce is answered."""
    import os
    import resource
    import subprocess
    import sys

    from compat.fuzz.broker import READY, Connection, create_topic, produce

    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (160, 160))

    out = tmp_path / "stdout"
    with open(out, "wb") as stdout:
        proc = subprocess.Popen([sys.executable, "-m", "shim", "serve", "--listen", "127.0.0.1:0", "--data-dir",
                                 str(tmp_path / "data")], stdout=stdout, stderr=subprocess.DEVNULL,
                                preexec_fn=limit, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})  # fmt: skip
    flood = []
    try:
        deadline = time.monotonic() + 30
        while not READY.search(out.read_text()):
            assert proc.poll() is None and time.monotonic() < deadline, "kafka-shim serve did not start"
            time.sleep(0.05)
        bootstrap = "127.0.0.1:%s" % READY.search(out.read_text()).group(2)
        client = Connection(bootstrap)
        create_topic(client, "t")
        for _ in range(200):
            flood.append(socket.create_connection(("127.0.0.1", int(bootstrap.split(":")[1])), timeout=10))
        produced = {produce(client, "t", b"after the flood %d" % i) for i in range(3)}
        assert produced == {0, 1, 2}
        client.close()
    finally:
        for s in flood:
            s.close()
        proc.kill()
        proc.wait(30)
