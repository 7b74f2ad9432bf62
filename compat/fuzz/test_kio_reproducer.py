"""kio 0.6.5's preallocation defect, through a real connection to a ``kafka-shim serve`` process.

A Fetch v12 of 36 bytes whose compact topics count is 2^32 - 2 (or 2^28 - 2) made kio's native
parser ask for 34 GB (or 4 GB) up front: the first aborted the process (SIGABRT), the second
allocated gigabytes before failing. Now the frame closes its own connection with one warning
naming the peer, while another connection keeps producing and the broker stays small.
"""

from __future__ import annotations

import socket
import struct

import pytest

from .broker import BrokerProcess, Connection, create_topic, produce

pytestmark = pytest.mark.shim_only("sends kio's crashing frame to a kafka-shim process of its own")

FETCH_V12_FIXED = struct.pack(">iiiibii", -1, 500, 1, 1024, 0, 0, -1)


def fetch_v12_with_topics_count(varint: bytes) -> bytes:
    payload = struct.pack(">hhih", 1, 12, 1, 1) + b"r" + b"\x00" + FETCH_V12_FIXED + varint
    return struct.pack(">i", len(payload)) + payload


@pytest.fixture
def broker(tmp_path):
    b = BrokerProcess(tmp_path / "data", tmp_path / "broker.log")
    b.start()
    yield b
    b.stop()


@pytest.mark.parametrize("varint", [b"\xff\xff\xff\xff\x0f", b"\xff\xff\xff\x7f"], ids=["2^32-2", "2^28-2"])
def test_a_huge_compact_count_closes_only_its_connection(broker, varint):
    steady = Connection(broker.bootstrap)
    create_topic(steady, "steady")
    first = produce(steady, "steady", b"before")
    bad = socket.create_connection(("127.0.0.1", broker.port), timeout=10)
    bad_port = bad.getsockname()[1]
    bad.sendall(fetch_v12_with_topics_count(varint))
    assert bad.recv(1024) == b""  # closed without an answer
    bad.close()
    assert broker.alive()
    assert produce(steady, "steady", b"after") == first + 1
    steady.close()
    log = broker.log_path.read_text()
    closes = [ln for ln in log.splitlines() if f"closing connection from ('127.0.0.1', {bad_port})" in ln]
    assert len(closes) == 1 and "WARNING" in closes[0] and "FetchRequest.topics" in closes[0], log
    assert broker.memory_kib()["VmHWM"] < 200 * 1024
