"""The ``kafka-shim serve`` console script: ready line, clean exit on SIGTERM and SIGINT with a
clean-shutdown marker, so the next start skips recovery; SIGKILL leaves no marker."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from shim.errors import ErrorCode
from shim.event_loops import ENV as EVENT_LOOP_ENV
from shim.protocol.messages import RequestHeader, decode_response, encode_request, request_class
from shim.storage.log_manager import CLEAN_SHUTDOWN, LogManager
from shim.storage.partition_log import LogConfig

pytestmark = pytest.mark.shim_only("starts the kafka-shim command itself")

READY = re.compile(r"^kafka-shim ready: bootstrap\.servers=127\.0\.0\.1:(\d+)(?:,\S+)? data-dir=(.+)$")
CONSOLE_SCRIPT = Path(sys.executable).parent / "kafka-shim"


def produce_and_count(bootstrap: str, topic: str, values: list[bytes]) -> list[bytes]:
    """Produce ``values`` (acks=all), then return everything in partition 0 of ``topic``."""
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    if values:
        producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
        for v in values:
            producer.send(topic, value=v, partition=0).get(timeout=10)
        producer.close()
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, auto_offset_reset="earliest")
    tp = TopicPartition(topic, 0)
    consumer.assign([tp])
    end = consumer.end_offsets([tp])[tp]
    got = []
    while len(got) < end:
        for batch in consumer.poll(timeout_ms=500).values():
            got += [m.value for m in batch]
    consumer.close()
    return got


def api_versions_roundtrip(raw_connection, bootstrap: str):
    conn = raw_connection(bootstrap)
    request = request_class(18, 3)(client_software_name="cli-test", client_software_version="1")
    payload = encode_request(RequestHeader(18, 3, 7, "cli-test"), request)
    conn.send_raw(len(payload).to_bytes(4, "big") + payload)
    assert decode_response(conn.recv_frame(), 18, 3)[1].error_code == ErrorCode.none
    return conn


def clean_start_flag(data_dir: Path) -> bool:
    """What the broker's own start-up would conclude about the previous stop."""
    logs = LogManager(data_dir, LogConfig())
    try:
        return logs.clean_start
    finally:
        logs.close()  # writes the marker back, as a clean stop does


def test_console_script_is_installed():
    assert CONSOLE_SCRIPT.exists()
    out = subprocess.run([str(CONSOLE_SCRIPT), "serve", "--help"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0
    assert "--listen" in out.stdout and "--data-dir" in out.stdout


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_serve_prints_ready_and_stops_cleanly_on(sig, tmp_path, shim_process, raw_connection):
    data_dir = tmp_path / "data"
    broker = shim_process(data_dir, 0, console_script=True)
    bootstrap = broker.wait_ready(timeout=10)
    assert broker.ready_after < 2.5, f"ready after {broker.ready_after:.2f}s"
    m = READY.match(broker.ready_line)
    assert m, broker.ready_line
    assert int(m.group(1)) > 0 and m.group(2) == str(data_dir)
    assert not (data_dir / CLEAN_SHUTDOWN).exists(), "the marker must be consumed at start"

    assert produce_and_count(bootstrap, "cli", [b"a", b"b", b"c"]) == [b"a", b"b", b"c"]
    idle = api_versions_roundtrip(raw_connection, bootstrap)  # an open client connection at shutdown

    broker.send_signal(sig)
    assert broker.wait(timeout=10) == 0, broker.stderr
    assert idle.closed_by_peer(timeout=5)
    assert (data_dir / CLEAN_SHUTDOWN).exists()
    assert "Traceback" not in broker.stderr, broker.stderr

    # The next start sees a clean stop (no recovery) and has the data.
    assert clean_start_flag(data_dir) is True
    again = shim_process(data_dir, 0, console_script=True)
    bootstrap = again.wait_ready(timeout=10)
    assert produce_and_count(bootstrap, "cli", []) == [b"a", b"b", b"c"]
    again.send_signal(signal.SIGTERM)
    assert again.wait(timeout=10) == 0


def test_sigkill_leaves_no_clean_shutdown_marker(tmp_path, shim_process):
    data_dir = tmp_path / "data"
    broker = shim_process(data_dir, 0, console_script=True)
    bootstrap = broker.wait_ready(timeout=10)
    assert produce_and_count(bootstrap, "cli", [b"x"]) == [b"x"]
    broker.kill9()
    assert not (data_dir / CLEAN_SHUTDOWN).exists()
    assert clean_start_flag(data_dir) is False


@pytest.mark.parametrize("flag, env, expected", [
    ((), None, "uvloop"), (("--event-loop", "asyncio"), None, "asyncio"), ((), "asyncio", "asyncio"),
    (("--event-loop", "uvloop"), "asyncio", "uvloop"),
], ids=["default", "flag", "environment", "flag-over-environment"])  # fmt: skip
def test_serve_runs_on_the_event_loop_asked_for(tmp_path, shim_process, monkeypatch, flag, env, expected):
    if env is None:
        monkeypatch.delenv(EVENT_LOOP_ENV, raising=False)
    else:
        monkeypatch.setenv(EVENT_LOOP_ENV, env)
    broker = shim_process(tmp_path / "data", 0, console_script=True, args=flag)
    bootstrap = broker.wait_ready(timeout=10)
    assert broker.event_loop() == expected
    assert produce_and_count(bootstrap, "loop", [b"a", b"b"]) == [b"a", b"b"]
    broker.send_signal(signal.SIGTERM)  # the signal handler works on either loop
    assert broker.wait(timeout=10) == 0, broker.stderr


@pytest.mark.parametrize("flag, env", [(("--event-loop", "trio"), None), ((), "trio")], ids=["flag", "environment"])
def test_an_unknown_event_loop_exits_with_usage_error(tmp_path, monkeypatch, flag, env):
    if env:
        monkeypatch.setenv(EVENT_LOOP_ENV, env)
    out = subprocess.run([str(CONSOLE_SCRIPT), "serve", "--listen", "127.0.0.1:0", "--data-dir", str(tmp_path / "d"),
                          *flag], capture_output=True, text=True, timeout=30)  # fmt: skip
    assert out.returncode == 2
    assert "trio" in out.stderr and "Traceback" not in out.stderr, out.stderr


def test_invalid_listen_address_exits_with_usage_error(tmp_path):
    out = subprocess.run([str(CONSOLE_SCRIPT), "serve", "--listen", "no-port-here", "--data-dir", str(tmp_path / "d")],
                         capture_output=True, text=True, timeout=30)  # fmt: skip
    assert out.returncode == 2
    assert "listen" in out.stderr


def test_serve_brokers_runs_a_cluster_whose_brokers_each_listen(tmp_path, shim_process):
    from kafka.admin import KafkaAdminClient, NewTopic

    broker = shim_process(tmp_path / "data", 0, console_script=True, args=("--brokers", "3"))
    bootstrap = broker.wait_ready(timeout=10)
    addresses = bootstrap.split(",")
    assert len(addresses) == 3 and len(set(addresses)) == 3
    admin = KafkaAdminClient(bootstrap_servers=addresses[2])  # any broker answers for the cluster
    try:
        admin.create_topics([NewTopic("spread", 3, 3)])
        topic = admin.describe_topics(["spread"])[0]
        assert sorted(p["leader_id"] for p in topic["partitions"]) == [0, 1, 2]
        assert all(sorted(p["isr_nodes"]) == [0, 1, 2] for p in topic["partitions"])
        brokers = admin.describe_cluster()["brokers"]
        assert sorted(f"{b['host']}:{b['port']}" for b in brokers) == sorted(addresses)
    finally:
        admin.close()
