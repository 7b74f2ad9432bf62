"""Small helpers shared by the compat suites: polling for a condition, reading whole frames."""

from __future__ import annotations

import socket
import struct
import time


def wait_for(condition, timeout: float = 20.0, interval: float = 0.02, message: str = "condition"):
    """Poll ``condition()`` until it returns something truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {message}")
        time.sleep(interval)


def recv_exactly(sock: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("closed by the broker")
        buf += chunk
    return buf


def recv_frame(sock: socket.socket) -> bytes:
    """One size-prefixed frame (a Kafka response without its size)."""
    (size,) = struct.unpack(">i", recv_exactly(sock, 4))
    return recv_exactly(sock, size)
