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


def first_address(bootstrap: str) -> tuple[str, int]:
    """(host, port) of the first broker of a bootstrap list."""
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    return host, int(port)


def _ask(address: tuple[str, int], api_key: int, version: int, request, timeout: float = 5.0):
    from shim.protocol.messages import RequestHeader, decode_response, encode_request

    payload = encode_request(RequestHeader(api_key, version, 1, "compat"), request)
    with socket.create_connection(address, timeout=timeout) as s:
        s.sendall(struct.pack(">i", len(payload)) + payload)
        return decode_response(recv_frame(s), api_key, version)[1]


def coordinator_address(bootstrap: str, key: str, key_type: int = 0, timeout: float = 5.0) -> tuple[str, int]:
    """Where a group's (key type 0) or transactional id's (1) coordinator listens (FindCoordinator),
    the first broker when it has none; OSError while the broker does not answer. COORDINATOR_NOT_AVAILABLE
    while the coordinator's internal topic is being created is asked again, as clients do."""
    from shim.protocol.messages import make, request_class

    deadline = time.monotonic() + timeout
    while True:
        r = _ask(first_address(bootstrap), 10, 4, make(request_class(10, 4), key_type=key_type,
                                                       coordinator_keys=(key,)), timeout)
        (c,) = r.coordinators
        if c.error_code != 15 or time.monotonic() > deadline:
            break
        time.sleep(0.05)  # a client's retry backoff
    return (c.host, c.port) if c.error_code == 0 else first_address(bootstrap)


def broker_addresses(bootstrap: str, timeout: float = 5.0) -> list[tuple[str, int]]:
    """Every live broker's (host, port), from Metadata (one broker's answer lists the cluster)."""
    from shim.protocol.messages import make, request_class

    r = _ask(first_address(bootstrap), 3, 12, make(request_class(3, 12), topics=(), allow_auto_topic_creation=False,
                                                   include_topic_authorized_operations=False), timeout)
    return [(b.host, b.port) for b in r.brokers]
