"""The control listener's bounds: a client that never reads its answer holds neither the answer
nor one of the listener's 64 connection slots past WRITE_TIMEOUT_S (it held both for ever: 64
such clients left every later control request a 503, each holding its answer in memory)."""

from __future__ import annotations

import asyncio
import socket

from shim.control import http

from test_server_limits import until


async def test_an_answer_never_read_is_dropped_with_its_connection(node, monkeypatch):
    async def huge(control, name, args):
        return {"entries": "x" * (32 << 20)}  # more than the socket buffers on both sides hold

    monkeypatch.setattr(http, "call", huge)
    monkeypatch.setattr(http, "WRITE_TIMEOUT_S", 0.5, raising=False)
    listener = http.ControlListener(node.control)
    host, port = await listener.start("127.0.0.1", 0)
    try:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.setblocking(False)
        loop = asyncio.get_running_loop()
        await loop.sock_connect(sock, (host, port))
        await loop.sock_sendall(sock, b"POST /v1/ops/faults HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
        await until(lambda: listener._open == 1)
        await until(lambda: listener._open == 0, timeout=10)  # dropped while the client still does not read
        received = 0
        try:
            while chunk := await asyncio.wait_for(loop.sock_recv(sock, 1 << 20), 10):
                received += len(chunk)
        except ConnectionResetError:
            pass
        assert received < 32 << 20  # the answer was cut off, not kept until the client took it
        sock.close()
    finally:
        await listener.stop()
