"""``kafka-shim serve --config`` with the combined-mode server.properties Apache Kafka ships
(config/kraft/server.properties of 3.9, config/server.properties of 4.0), ports 0 for free ones and
log.dirs in the test's directory: clients are served on the PLAINTEXT listener, and the CONTROLLER
listener serves the controller's APIs alone (shim.apis.controller)."""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
import time

import pytest

from compat.test_cli_serve import produce_and_count
from shim.errors import ErrorCode
from shim.protocol.messages import RequestHeader, decode_response, encode_request, request_class

pytestmark = pytest.mark.shim_only("starts the kafka-shim command itself")

# the settings of Kafka 3.9.0's config/kraft/server.properties, in its order (its comments left out)
KAFKA_3_9 = """\
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@localhost:9093
listeners=PLAINTEXT://:9092,CONTROLLER://:9093
inter.broker.listener.name=PLAINTEXT
advertised.listeners=PLAINTEXT://localhost:9092,CONTROLLER://localhost:9093
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL
num.network.threads=3
num.io.threads=8
socket.send.buffer.bytes=102400
socket.receive.buffer.bytes=102400
socket.request.max.bytes=104857600
log.dirs=/tmp/kraft-combined-logs
num.partitions=1
num.recovery.threads.per.data.dir=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
log.retention.hours=168
log.segment.bytes=1073741824
log.retention.check.interval.ms=300000
"""
# 4.0's config/server.properties: a dynamic quorum (bootstrap servers, no static voters) and share groups' settings
KAFKA_4_0 = KAFKA_3_9.replace("controller.quorum.voters=1@localhost:9093",
                              "controller.quorum.bootstrap.servers=localhost:9093").replace(
    "transaction.state.log.replication.factor=1",
    "share.coordinator.state.topic.replication.factor=1\nshare.coordinator.state.topic.min.isr=1\n"
    "transaction.state.log.replication.factor=1")
LISTENERS = "kafka-shim listeners: "


def serve(tmp_path, properties: str, *args) -> tuple[subprocess.Popen, dict[str, str]]:
    """The broker and its listeners by name (host:port), once it is ready."""
    path = tmp_path / "server.properties"
    path.write_text(properties.replace(":9092", ":0").replace("//:9093", "//:0").replace(
        "CONTROLLER://localhost:9093", "CONTROLLER://localhost:0").replace(
        "/tmp/kraft-combined-logs", str(tmp_path / "logs")))
    proc = subprocess.Popen([sys.executable, "-m", "shim", "serve", "--config", str(path), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: queue.Queue[str] = queue.Queue()  # stdout read on a thread: a text pipe reads ahead of select
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout] and None, daemon=True).start()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=max(deadline - time.monotonic(), 0.01))
        except queue.Empty:
            break
        if line.startswith(LISTENERS):
            entries = line[len(LISTENERS):].strip().split(",")
            return proc, {e.partition("://")[0]: e.partition("://")[2] for e in entries}
    proc.kill()
    raise AssertionError(f"no listeners line; exit {proc.wait()}:\n{proc.stderr.read()}")


def api_keys(raw_connection, address: str) -> set[int]:
    conn = raw_connection(address)
    request = request_class(18, 3)(client_software_name="cli-test", client_software_version="1")
    payload = encode_request(RequestHeader(18, 3, 7, "cli-test"), request)
    conn.send_raw(len(payload).to_bytes(4, "big") + payload)
    answer = decode_response(conn.recv_frame(), 18, 3)[1]
    assert answer.error_code == ErrorCode.none
    return {k.api_key for k in answer.api_keys}


@pytest.mark.parametrize("properties, version", [(KAFKA_3_9, "3.9"), (KAFKA_4_0, "4.0")], ids=["3.9", "4.0"])
def test_kafkas_combined_mode_server_properties(tmp_path, raw_connection, properties, version):
    proc, listeners = serve(tmp_path, properties, "--kafka-version", version)
    try:
        assert set(listeners) == {"PLAINTEXT", "CONTROLLER"}
        assert listeners["PLAINTEXT"].startswith("localhost:") and listeners["CONTROLLER"].startswith("localhost:")
        assert produce_and_count(listeners["PLAINTEXT"], "kraft", [b"a", b"b"]) == [b"a", b"b"]
        broker_keys, controller_keys = (api_keys(raw_connection, listeners[n]) for n in ("PLAINTEXT", "CONTROLLER"))
        assert 0 in broker_keys and 0 not in controller_keys  # Produce: the broker's alone
        assert 52 in controller_keys and 52 not in broker_keys  # Vote: the controller's alone
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0, proc.stderr.read()
