"""``kafka-shim serve`` holding many connections, and its connection limits from the command line.

A thousand connections stay open (each has had an ApiVersions answer) while a kafka-python
producer and consumer work next to them; the broker's resident memory per connection is printed
and bounded. The command-line options with Kafka's names (max.connections.per.ip,
connections.max.idle.ms) act on a broker started by the console script.
"""

from __future__ import annotations

import resource
import select
import signal
import socket
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from compat.support import recv_frame
from shim.errors import ErrorCode
from shim.protocol.messages import RequestHeader, decode_response, encode_request, request_class

pytestmark = pytest.mark.shim_only("starts the kafka-shim command itself")

CONNECTIONS = 1000
# Generous: a connection costs its decoder's 64 KiB scratch buffer plus a few KiB of objects.
MAX_RSS_PER_CONNECTION = 160 * 1024


def api_versions(correlation_id: int) -> bytes:
    request = request_class(18, 3)(client_software_name="limits-test", client_software_version="1")
    payload = encode_request(RequestHeader(18, 3, correlation_id, "limits-test"), request)
    return struct.pack(">i", len(payload)) + payload


def answered(sock: socket.socket, correlation_id: int) -> bool:
    sock.sendall(api_versions(correlation_id))
    got_id, response = decode_response(recv_frame(sock), 18, 3)
    return got_id == correlation_id and response.error_code == ErrorCode.none


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def connect(bootstrap: str) -> socket.socket:
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=20)


def produce_and_consume(bootstrap: str, topic: str, n: int) -> list[bytes]:
    values = [b"v-%04d" % i for i in range(n)]
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    for v in values:
        producer.send(topic, value=v, partition=0)
    producer.flush(timeout=30)
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, auto_offset_reset="earliest")
    tp = TopicPartition(topic, 0)
    consumer.assign([tp])
    got: list[bytes] = []
    while len(got) < n:
        for batch in consumer.poll(timeout_ms=1000).values():
            got += [m.value for m in batch]
    consumer.close()
    return got


@pytest.fixture
def enough_file_descriptors():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = CONNECTIONS * 2 + 256  # both ends live in this machine; the broker inherits the limit
    if soft < wanted:
        if hard != resource.RLIM_INFINITY and hard < wanted:
            pytest.skip(f"RLIMIT_NOFILE hard limit {hard} is below {wanted}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_thousand_open_connections_cost_little_memory_and_other_clients_are_served(
        tmp_path, shim_process, enough_file_descriptors):
    broker = shim_process(tmp_path / "data", args=["--log-level", "WARNING"])
    bootstrap = broker.wait_ready()
    assert produce_and_consume(bootstrap, "warm-up", 10) == [b"v-%04d" % i for i in range(10)]
    with connect(bootstrap) as warm:  # the code paths of a raw connection, loaded before measuring
        assert answered(warm, 1)
    before = rss_bytes(broker.proc.pid)

    socks = [connect(bootstrap) for _ in range(CONNECTIONS)]
    try:
        for i, s in enumerate(socks):
            s.sendall(api_versions(i))
        for i, s in enumerate(socks):  # every connection accepted and answered
            assert decode_response(recv_frame(s), 18, 3)[0] == i
        after = rss_bytes(broker.proc.pid)
        per_connection = (after - before) / CONNECTIONS
        print(f"\nbroker RSS {before / 2**20:.1f} MiB before, {after / 2**20:.1f} MiB with {CONNECTIONS} open "
              f"connections: {per_connection / 1024:.1f} KiB per connection")
        assert per_connection < MAX_RSS_PER_CONNECTION

        values = produce_and_consume(bootstrap, "busy", 500)
        assert values == [b"v-%04d" % i for i in range(500)]
        assert all(answered(s, CONNECTIONS + i) for i, s in enumerate(socks))  # still open and served
        peak = rss_bytes(broker.proc.pid)
        print(f"broker RSS {peak / 2**20:.1f} MiB after a client produced and consumed next to them")
    finally:
        for s in socks:
            s.close()
    broker.send_signal(signal.SIGTERM)
    assert broker.wait(timeout=20) == 0, broker.stderr
    assert "Traceback" not in broker.stderr, broker.stderr


def test_serve_applies_max_connections_per_ip_and_connections_max_idle_ms(tmp_path, shim_process):
    broker = shim_process(tmp_path / "data", console_script=True,
                          args=["--max-connections-per-ip", "3", "--connections-max-idle-ms", "1000",
                                "--max-request-bytes", "1000"])
    bootstrap = broker.wait_ready()
    with connect(bootstrap) as oversize:  # socket.request.max.bytes: a larger frame closes the connection
        oversize.sendall(struct.pack(">i", 1001))
        assert oversize.recv(1) == b""
    socks = [connect(bootstrap) for _ in range(3)]
    try:
        assert all(answered(s, i) for i, s in enumerate(socks))
        with connect(bootstrap) as fourth:
            assert fourth.recv(1) == b"", "the fourth connection from one address was not closed"
        for s in socks:  # connections.max.idle.ms: each is closed without a request
            s.settimeout(20)
            assert s.recv(1) == b""
        with connect(bootstrap) as again:  # the slots are free again
            assert answered(again, 9)
    finally:
        for s in socks:
            s.close()
    broker.send_signal(signal.SIGTERM)
    assert broker.wait(timeout=20) == 0, broker.stderr
    assert "Rejected connection from 127.0.0.1" in broker.stderr
    assert "idle for more than 1000 ms" in broker.stderr
    assert "frame of 1001 bytes exceeds the limit of 1000" in broker.stderr


def test_serve_help_names_the_kafka_properties():
    out = subprocess.run([str(Path(sys.executable).parent / "kafka-shim"), "serve", "--help"],
                         capture_output=True, text=True, timeout=30)
    for name in ("max.connections", "max.connections.per.ip", "max.connections.per.ip.overrides",
                 "connections.max.idle.ms", "socket.request.max.bytes"):
        assert name + ":" in out.stdout, name


def test_out_of_file_descriptors_the_broker_waits_for_a_connection_to_close(tmp_path, shim_process):
    """EMFILE on accept is neither a crash nor a busy loop: the broker waits until connections
    close, then accepts again. (With no descriptor left, a request that needs one can fail too;
    only accepting again is asserted.)"""
    broker = shim_process(tmp_path / "data")
    bootstrap = broker.wait_ready()
    hard = resource.prlimit(broker.proc.pid, resource.RLIMIT_NOFILE)[1]
    resource.prlimit(broker.proc.pid, resource.RLIMIT_NOFILE, (64, hard))  # the broker's alone
    socks: list[socket.socket] = []
    try:
        while "accept failed" not in broker.stderr:
            assert len(socks) < 64, "never ran out of descriptors"
            socks.append(connect(bootstrap))
            socks[-1].sendall(api_versions(1))
            while not select.select([socks[-1]], [], [], 0.02)[0] and "accept failed" not in broker.stderr:
                pass  # until it is answered (or closed), or the broker is out of descriptors
        for s in socks[:8]:
            s.close()
        del socks[:8]
        with connect(bootstrap) as fresh:
            assert answered(fresh, 2)
        assert broker.stderr.count("accept failed") <= 5, "accept retried in a loop"
    finally:
        for s in socks:
            s.close()
    broker.send_signal(signal.SIGTERM)
    assert broker.wait(timeout=20) == 0, broker.stderr
    assert "Too many open files" in broker.stderr
