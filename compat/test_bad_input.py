"""Malformed input on one connection closes that connection only.

While a kafka-python producer and consumer keep working on their own connections, raw sockets
send garbage, truncated and oversize frames, unknown API keys and unsupported versions. Each bad
connection must be closed by the broker, a bystander connection must stay usable, the client
traffic must keep flowing during and after, and nothing acknowledged may be lost. ApiVersions
with a version the broker does not know gets the KIP-511 answer instead of a close.
"""

from __future__ import annotations

import socket
import struct
import threading
import time

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

import shim
from shim.errors import ErrorCode
from shim.protocol.messages import RequestHeader, decode_response, encode_request, request_class

pytestmark = pytest.mark.shim_only("checks kafka-shim's own answers to malformed input")

MAX_REQUEST = 1 << 20
TOPIC = "steady"
API_VERSIONS = 18


def header_v1(api_key: int, version: int, correlation_id: int = 1, client_id: bytes = b"bad-input") -> bytes:
    return struct.pack(">hhih", api_key, version, correlation_id, len(client_id)) + client_id


def frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def api_versions_request(version: int, correlation_id: int) -> bytes:
    cls = request_class(API_VERSIONS, version)
    fields = {"client_software_name": "bad-input-test", "client_software_version": "1"} if version >= 3 else {}
    return frame(encode_request(RequestHeader(API_VERSIONS, version, correlation_id, "bad-input"), cls(**fields)))


class SteadyClients:
    """A synchronous acks=all producer and an assign()-only consumer, each on its own thread."""

    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        self.acked: dict[bytes, int] = {}
        self.consumed: list[tuple[int, bytes]] = []
        self.errors: list[BaseException] = []
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._produce, daemon=True),
                         threading.Thread(target=self._consume, daemon=True)]  # fmt: skip

    def __enter__(self):
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        for t in self._threads:
            t.join(30)

    def _produce(self) -> None:
        producer = KafkaProducer(bootstrap_servers=self.bootstrap, acks="all", linger_ms=0)
        try:
            i = 0
            while not self._stop.is_set():
                value = b"steady-%06d" % i
                self.acked[value] = producer.send(TOPIC, value=value, partition=0).get(timeout=20).offset
                i += 1
                time.sleep(0.002)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.errors.append(exc)
        finally:
            producer.close(timeout=5)

    def _consume(self) -> None:
        consumer = KafkaConsumer(bootstrap_servers=self.bootstrap, group_id=None, enable_auto_commit=False,
                                 auto_offset_reset="earliest", fetch_max_wait_ms=100)  # fmt: skip
        try:
            consumer.assign([TopicPartition(TOPIC, 0)])
            while not self._stop.is_set():
                for batch in consumer.poll(timeout_ms=100).values():
                    self.consumed += [(m.offset, m.value) for m in batch]
        except BaseException as exc:  # noqa: BLE001
            self.errors.append(exc)
        finally:
            consumer.close()

    def wait_progress(self, poll, records: int = 25) -> None:
        """Both the producer and the consumer get ``records`` further (with a deadline)."""
        acked, consumed = len(self.acked), len(self.consumed)
        poll(lambda: self.errors or (len(self.acked) >= acked + records and len(self.consumed) >= consumed + records),
             30, message="the steady clients to make progress")  # fmt: skip
        assert self.errors == []


def read_all(bootstrap: str) -> dict[int, bytes]:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, auto_offset_reset="earliest",
                             enable_auto_commit=False)  # fmt: skip
    tp = TopicPartition(TOPIC, 0)
    consumer.assign([tp])
    end = consumer.end_offsets([tp])[tp]
    log: dict[int, bytes] = {}
    deadline = time.monotonic() + 30
    while consumer.position(tp) < end and time.monotonic() < deadline:
        for batch in consumer.poll(timeout_ms=200).values():
            log.update((m.offset, m.value) for m in batch)
    consumer.close()
    assert len(log) == end
    return log


@pytest.fixture
def broker(tmp_path):
    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", max_request_bytes=MAX_REQUEST) as b:
        yield b


@pytest.fixture
def steady(broker, poll):
    with SteadyClients(broker.bootstrap_servers) as clients:
        clients.wait_progress(poll)
        yield clients
    # Everything acknowledged is in the log, once, at its offset, and the consumer saw it in order.
    assert clients.errors == []
    log = read_all(broker.bootstrap_servers)
    assert sorted(log) == list(range(len(log)))
    for value, offset in clients.acked.items():
        assert log.get(offset) == value
    assert [v for _, v in clients.consumed] == [log[o] for o, _ in clients.consumed]
    assert [o for o, _ in clients.consumed] == list(range(len(clients.consumed)))


def send_truncated_then_close(conn):
    conn.send_raw(struct.pack(">i", 100) + b"\x00" * 10)
    conn.sock.shutdown(socket.SHUT_WR)


BAD_INPUTS = {
    "http-request": lambda c: c.send_raw(b"GET / HTTP/1.1\r\nHost: kafka\r\n\r\n"),  # size 0x47455420
    "garbage-bytes": lambda c: c.send_raw(b"\x00\x00\x00\x20" + b"\xde\xad\xbe\xef" * 8),
    "garbage-body": lambda c: c.send_raw(frame(header_v1(3, 12) + b"\xff" * 64)),  # Metadata v12, unparseable
    "frame-shorter-than-header": lambda c: c.send_raw(frame(b"\x00\x03")),
    "negative-size": lambda c: c.send_raw(struct.pack(">i", -7) + b"\x00" * 16),
    "oversize-frame": lambda c: c.send_raw(struct.pack(">i", MAX_REQUEST + 1)),  # no body follows
    "truncated-then-close": send_truncated_then_close,
    "unknown-api-key": lambda c: c.send_raw(frame(header_v1(32_000, 0) + b"\x00" * 8)),
    "metadata-version-too-high": lambda c: c.send_raw(frame(header_v1(3, 999) + b"\x00" * 8)),
    "produce-version-too-low": lambda c: c.send_raw(frame(header_v1(0, 2) + b"\x00" * 8)),
}


@pytest.mark.parametrize("kind", sorted(BAD_INPUTS))
def test_bad_input_closes_only_its_connection(broker, steady, raw_connection, poll, kind):
    bystander = raw_connection(broker.bootstrap_servers)
    bystander.send_raw(api_versions_request(0, 1))
    assert decode_response(bystander.recv_frame(), API_VERSIONS, 0)[1].error_code == ErrorCode.none

    bad = raw_connection(broker.bootstrap_servers)
    BAD_INPUTS[kind](bad)
    assert bad.closed_by_peer(timeout=10), f"{kind}: the broker kept the connection open"

    # The steady clients kept going, and an unrelated idle connection is still served.
    steady.wait_progress(poll)
    bystander.send_raw(api_versions_request(3, 2))
    correlation_id, response = decode_response(bystander.recv_frame(), API_VERSIONS, 3)
    assert (correlation_id, response.error_code) == (2, ErrorCode.none)


def test_all_bad_inputs_in_a_row_while_clients_run(broker, steady, raw_connection, poll):
    for kind in sorted(BAD_INPUTS):
        bad = raw_connection(broker.bootstrap_servers)
        BAD_INPUTS[kind](bad)
        assert bad.closed_by_peer(timeout=10), kind
    steady.wait_progress(poll, records=100)


def test_api_versions_with_unsupported_version_gets_kip511_answer(broker, raw_connection):
    conn = raw_connection(broker.bootstrap_servers)
    # A future ApiVersions: flexible header v2 (client id, empty tagged fields), opaque body.
    conn.send_raw(frame(header_v1(API_VERSIONS, 999, correlation_id=41) + b"\x00" + b"\x05hello\x021\x00"))
    correlation_id, response = decode_response(conn.recv_frame(), API_VERSIONS, 0)
    assert correlation_id == 41
    assert response.error_code == ErrorCode.unsupported_version == 35
    (entry,) = response.api_keys
    assert entry.api_key == API_VERSIONS
    assert entry.min_version == 0 and 3 <= entry.max_version < 999

    # The connection stays open and the client can retry with a version from that range.
    conn.send_raw(api_versions_request(entry.max_version, 42))
    correlation_id, response = decode_response(conn.recv_frame(), API_VERSIONS, entry.max_version)
    assert (correlation_id, response.error_code) == (42, ErrorCode.none)
    keys = {k.api_key for k in response.api_keys}
    assert {0, 1, 3, API_VERSIONS} <= keys



def test_request_pipelined_before_an_oversize_frame_is_still_answered(broker, raw_connection):
    conn = raw_connection(broker.bootstrap_servers)
    conn.send_raw(api_versions_request(0, 77) + struct.pack(">i", MAX_REQUEST + 1))
    correlation_id, response = decode_response(conn.recv_frame(), API_VERSIONS, 0)
    assert (correlation_id, response.error_code) == (77, ErrorCode.none)
    assert conn.closed_by_peer(timeout=10)


class PanicException(BaseException):
    """The shape of pyo3's PanicException (a Rust panic in a native extension): not an Exception."""


@pytest.mark.parametrize("error", [ValueError("a handler bug"), RecursionError(), PanicException("panicked")],
                         ids=lambda e: type(e).__name__)
def test_a_handler_that_raises_closes_only_its_connection(broker, raw_connection, monkeypatch, caplog, error):
    """Whatever a handler raises, Exception or not, ends its own connection with the traceback
    logged; the broker and the other connections go on."""
    from shim.apis import REGISTRY

    def raising(ctx, request):
        raise error

    from shim.apis.dispatch import forget_routes

    monkeypatch.setitem(REGISTRY, API_VERSIONS, REGISTRY[API_VERSIONS]._replace(handler=raising))
    forget_routes()  # the dispatcher looks each API up once per release and version
    bystander = raw_connection(broker.bootstrap_servers)
    bad = raw_connection(broker.bootstrap_servers)
    bad.send_raw(api_versions_request(3, 5))
    assert bad.closed_by_peer(timeout=10)
    monkeypatch.undo()
    forget_routes()
    bystander.send_raw(api_versions_request(3, 6))
    assert decode_response(bystander.recv_frame(), API_VERSIONS, 3)[1].error_code == ErrorCode.none
    assert "after an internal error" in caplog.text and type(error).__name__ in caplog.text
