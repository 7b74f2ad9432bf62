"""The control plane of a ``kafka-shim serve --control-listen`` process, driven with curl and with
``kafka-shim ctl``: operations listed and run, bad input refused with a 4xx and a message, faults
seen by a real client, and a crash point that stops the process between the PrepareCommit record
and the markers, after which the restarted broker completes the commit."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from shim.control import CRASH_EXIT_CODE

pytestmark = pytest.mark.shim_only("starts the kafka-shim command itself")
CONTROL = re.compile(r" control=(http://\S+)")


@pytest.fixture
def broker(shim_process, tmp_path):
    """(process, bootstrap, control URL) of a broker with a control listener on a free port."""
    def start():
        p = shim_process(tmp_path / "data", args=["--control-listen", "127.0.0.1:0"])
        bootstrap = p.wait_ready()
        return p, bootstrap, CONTROL.search(p.ready_line).group(1)
    return start


def curl(*args: str) -> tuple[int, dict]:
    out = subprocess.run(["curl", "-sS", "-w", "\n%{http_code}", *args], capture_output=True, text=True, timeout=60)
    body, _, status = out.stdout.rpartition("\n")
    return int(status), json.loads(body)


def ctl(url: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "shim", "ctl", "--control", url, *args], capture_output=True,
                          text=True, timeout=60)


def test_curl_lists_runs_and_refuses(broker):
    _, _, url = broker()
    status, body = curl(f"{url}/v1/ops")
    assert status == 200 and {"error", "close", "hold_markers", "advance_clock", "crash"} <= {
        o["name"] for o in body["ops"]}
    status, rule = curl("-X", "POST", f"{url}/v1/ops/error", "-d",
                        '{"api": "Produce", "error": "NOT_LEADER_OR_FOLLOWER", "topic": "t", "count": 2}')
    assert status == 200 and (rule["error"], rule["count"], rule["match"]) == (
        "NOT_LEADER_OR_FOLLOWER", 2, {"apis": [0], "topic": "t"})
    status, body = curl("-X", "POST", f"{url}/v1/ops/faults")
    assert status == 200 and [r["rule"] for r in body["rules"]] == [rule["rule"]]
    for args, want, message in [
        (["-X", "POST", f"{url}/v1/ops/error", "-d", '{"api": "Produce"}'], 400, "error is required"),
        (["-X", "POST", f"{url}/v1/ops/error", "-d", "{not json"], 400, "not JSON"),
        (["-X", "POST", f"{url}/v1/ops/error", "-d", "[1]"], 400, "JSON object"),
        (["-X", "POST", f"{url}/v1/ops/delay", "-d", '{"ms": "soon"}'], 400, "ms must be an integer"),
        (["-X", "POST", f"{url}/v1/ops/nope"], 404, "no operation 'nope'"),
        (["-X", "DELETE", f"{url}/v1/ops/error"], 405, "POST"),
        ([f"{url}/elsewhere"], 404, "no such path"),
        (["-X", "POST", f"{url}/v1/ops/fence", "-d", '{"transactional_id": "x"}'], 409, "TRANSACTIONAL_ID_NOT_FOUND"),
        (["-X", "POST", f"{url}/v1/ops/wait", "-d", f'{{"rule": {rule["rule"]}, "timeout_ms": 0}}'], 408, "fired 0"),
    ]:
        status, body = curl(*args)
        assert (status, message in body.get("error", "")) == (want, True), (args, status, body)


def test_cli_arms_a_lost_response_a_client_retries(broker):
    from kafka import KafkaProducer

    _, bootstrap, url = broker()
    assert ctl(url, "log-requests").returncode != 0  # operations keep their names: log_requests
    done = ctl(url, "close", "--api", "Produce", "--when", "after", "--count", "1")
    assert done.returncode == 0, done.stderr
    rule = json.loads(done.stdout)["rule"]
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", retry_backoff_ms=20)
    try:
        assert producer.send("cli-topic", b"once", partition=0).get(30).offset == 0
        waited = ctl(url, "wait", "--rule", str(rule), "--fired", "1")
        assert waited.returncode == 0 and json.loads(waited.stdout)["fired"] == 1
        assert producer.send("cli-topic", b"twice", partition=0).get(30).offset == 1  # the first: once
    finally:
        producer.close()
    bad = ctl(url, "error", "--api", "Produce", "--error", "NOPE")
    assert bad.returncode == 1 and "must be a Kafka error name" in bad.stderr and bad.stdout == ""
    listing = ctl(url)
    assert listing.returncode == 0 and "hold_markers" in listing.stdout


def test_crash_between_prepare_commit_and_markers_then_recovery(broker):
    import confluent_kafka as ck
    from kafka import KafkaConsumer, TopicPartition

    process, bootstrap, url = broker()
    assert ctl(url, "crash", "--point", "txn.prepared").returncode == 0
    producer = ck.Producer({"bootstrap.servers": bootstrap, "transactional.id": "crashing", "log_level": 0})
    producer.init_transactions(20)
    producer.begin_transaction()
    producer.produce("crash-topic", b"committed?", partition=0)
    assert producer.flush(20) == 0
    with pytest.raises(ck.KafkaException):
        producer.commit_transaction(5)  # the broker stops before it answers
    assert process.wait(30) == CRASH_EXIT_CODE
    assert "crash point reached: stopped at txn.prepared" in process.stderr
    del producer

    _, bootstrap, _ = broker()  # the same data directory: the PrepareCommit record is completed
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level="read_committed",
                             auto_offset_reset="earliest", enable_auto_commit=False)
    tp = TopicPartition("crash-topic", 0)
    consumer.assign([tp])
    try:
        assert consumer.end_offsets([tp])[tp] == 2  # the record and the COMMIT marker written on restart
        got = []
        while consumer.position(tp) < 2:
            got += [r.value for rs in consumer.poll(timeout_ms=200).values() for r in rs]
        assert got == [b"committed?"]
    finally:
        consumer.close()


def test_oversized_or_malformed_requests_are_refused(tmp_path):
    import socket

    from shim.broker import BrokerThread

    with BrokerThread(data_dir=tmp_path / "d", listen="127.0.0.1:0", control_listen="127.0.0.1:0") as b:
        host, port = b.broker.control_address

        def raw(data: bytes) -> bytes:
            with socket.create_connection((host, port), timeout=10) as s:
                s.sendall(data)
                return s.recv(65536)
        assert raw(b"GET /v1/ops HTTP/1.1\r\nX: " + b"y" * 20_000 + b"\r\n\r\n").startswith(b"HTTP/1.1 431")
        assert raw(b"POST /v1/ops/faults HTTP/1.1\r\nContent-Length: 2000000\r\n\r\n").startswith(b"HTTP/1.1 413")
        assert raw(b"POST /v1/ops/faults HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n").startswith(b"HTTP/1.1 411")
        assert raw(b"NONSENSE\r\n\r\n").startswith(b"HTTP/1.1 400")
        nested = b"[" * 100_000  # json.loads raises RecursionError, not ValueError: this closed unanswered
        assert raw(b"POST /v1/ops/faults HTTP/1.1\r\nContent-Length: 100000\r\n\r\n" + nested).startswith(
            b"HTTP/1.1 400")
        assert raw(b"POST /v1/ops/faults HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}").startswith(b"HTTP/1.1 200")


def test_a_control_port_in_use_stops_the_start(shim_process, tmp_path):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        p = shim_process(tmp_path / "data", args=["--control-listen", f"127.0.0.1:{port}"])
        assert p.wait(30) == 2
    assert "kafka-shim:" in p.stderr and "address already in use" in p.stderr.lower()
