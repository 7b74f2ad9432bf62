"""The broker under fuzz (a ``kafka-shim serve`` subprocess) and the canary beside it.

:class:`BrokerProcess` starts the console script on a free port with its log in a file, reads its
memory from /proc, and kills and restarts it. :class:`Canary` produces one acks=all record at a
time on its own connection and keeps what was acknowledged; it reads them back at the end.
"""

from __future__ import annotations

import datetime
import os
import re
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

from kafka_codecs.records import decode_batch, encode_batch
from kafka_codecs.batch import iter_batches

from shim.errors import ErrorCode

from .mutate import CANARY_TOPIC
from shim.protocol.messages import RequestHeader, decode_response, encode_request, make, request_class, request_module

READY = re.compile(r"kafka-shim ready: bootstrap\.servers=([\d.]+):(\d+)")
CONSOLE_SCRIPT = Path(sys.executable).parent / "kafka-shim"


class BrokerGone(Exception):
    """The broker process exited."""


class BrokerProcess:
    def __init__(self, data_dir: Path, log_path: Path, *extra: str) -> None:
        self.data_dir, self.log_path, self.extra = data_dir, log_path, extra
        self.proc: subprocess.Popen | None = None
        self.port = 0
        self.starts = 0

    def start(self, timeout: float = 30) -> None:
        out = self.log_path.with_suffix(f".stdout{self.starts}")
        cmd = [str(CONSOLE_SCRIPT), "serve", "--listen", "127.0.0.1:0", "--data-dir", str(self.data_dir), *self.extra]
        with open(out, "wb") as stdout, open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(cmd, stdout=stdout, stderr=log)
        self.starts += 1
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = READY.search(out.read_text(errors="replace"))
            if m:
                self.port = int(m.group(2))
                return
            if self.proc.poll() is not None:
                raise BrokerGone(f"kafka-shim serve exited {self.proc.returncode} before it was ready")
            time.sleep(0.05)
        raise TimeoutError("kafka-shim serve did not print its ready line")

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def memory_kib(self) -> dict[str, int]:
        """VmRSS and VmHWM (peak) of the broker, in KiB."""
        out = {}
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                out[name] = int(value.split()[0])
        return out

    def sockets(self) -> int:
        """Sockets the broker holds (listeners, connections, its own pipes' none)."""
        count = 0
        for fd in os.listdir(f"/proc/{self.proc.pid}/fd"):
            try:
                count += os.readlink(f"/proc/{self.proc.pid}/fd/{fd}").startswith("socket:")
            except OSError:
                pass  # closed meanwhile
        return count

    def kill9(self) -> int:
        self.proc.kill()
        return self.proc.wait(30)

    def stop(self) -> None:
        if self.alive():
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(30)


class Connection:
    """One raw Kafka connection speaking request/response through kio."""

    def __init__(self, bootstrap: str, timeout: float = 15) -> None:
        host, port = bootstrap.split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.local_port = self.sock.getsockname()[1]
        self.correlation = 0

    def call(self, key: int, version: int, request):
        self.correlation += 1
        payload = encode_request(RequestHeader(key, version, self.correlation, "fuzz-canary"), request)
        self.sock.sendall(struct.pack(">i", len(payload)) + payload)
        size = struct.unpack(">i", self._exactly(4))[0]
        correlation, response = decode_response(self._exactly(size), key, version)
        assert correlation == self.correlation, (correlation, self.correlation)
        return response

    def _exactly(self, n: int) -> bytes:
        out = bytearray()
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise ConnectionResetError("the broker closed the canary's connection")
            out += chunk
        return bytes(out)

    def close(self) -> None:
        self.sock.close()


def create_topic(conn: Connection, topic: str, partitions: int = 1) -> None:
    m = request_module(19, 7)
    request = make(request_class(19, 7), topics=(m.CreatableTopic(name=topic, num_partitions=partitions, replication_factor=1,
                                                                  assignments=(), configs=()),),
                   timeout_ms=datetime.timedelta(seconds=10), validate_only=False)  # fmt: skip
    code = conn.call(19, 7, request).topics[0].error_code
    assert code in (ErrorCode.none, ErrorCode.topic_already_exists), code


def produce(conn: Connection, topic: str, value: bytes) -> int:
    m = request_module(0, 9)
    batch = encode_batch([(None, value, [], int(time.time() * 1000))])
    request = make(request_class(0, 9), transactional_id=None, acks=-1, timeout=datetime.timedelta(seconds=10),
                   topic_data=(m.TopicProduceData(name=topic, partition_data=(
                       m.PartitionProduceData(index=0, records=batch),)),))  # fmt: skip
    part = conn.call(0, 9, request).responses[0].partition_responses[0]
    if part.error_code != ErrorCode.none:
        raise RuntimeError(f"canary produce failed with error {part.error_code}")
    return part.base_offset


def read_all(conn: Connection, topic: str) -> dict[int, bytes]:
    """Every record of partition 0 from offset 0 to the high watermark."""
    m = request_module(1, 12)
    got: dict[int, bytes] = {}
    offset, high = 0, None
    while high is None or offset < high:
        request = make(request_class(1, 12), max_wait=datetime.timedelta(milliseconds=100), min_bytes=1,
                       max_bytes=1 << 20, isolation_level=0, topics=(m.FetchTopic(topic=topic, partitions=(
                           m.FetchPartition(partition=0, fetch_offset=offset, partition_max_bytes=1 << 20),)),),
                       forgotten_topics_data=(), rack_id="")  # fmt: skip
        part = conn.call(1, 12, request).responses[0].partitions[0]
        if part.error_code != ErrorCode.none:
            raise RuntimeError(f"canary fetch failed with error {part.error_code}")
        high = part.high_watermark
        records = bytes(part.records or b"")
        for pos, header in iter_batches(records):
            _, recs = decode_batch(records[pos : pos + header.batch_length + 12])
            for r in recs:
                got[r.offset] = r.value
            offset = header.base_offset + header.last_offset_delta + 1
    return got


class Canary(threading.Thread):
    """Produces acks=all records one at a time on its own connection until stopped, timing each."""

    def __init__(self, bootstrap: str) -> None:
        super().__init__(daemon=True)
        self.bootstrap = bootstrap
        self.acked: dict[int, bytes] = {}
        self.ports: set[int] = set()
        self.max_latency = 0.0
        self.error: BaseException | None = None
        self._halt = threading.Event()
        self._count = 0
        self.connected = threading.Event()

    def run(self) -> None:
        conn = Connection(self.bootstrap)
        self.ports.add(conn.local_port)
        self.connected.set()
        try:
            create_topic(conn, CANARY_TOPIC)
            while not self._halt.is_set():
                value = b"canary-%08d" % self._count
                started = time.monotonic()
                self.acked[produce(conn, CANARY_TOPIC, value)] = value
                self.max_latency = max(self.max_latency, time.monotonic() - started)
                self._count += 1
                self._halt.wait(0.01)
        except BaseException as exc:  # noqa: BLE001 - reported by the run
            self.error = exc
        finally:
            conn.close()

    def stop(self) -> None:
        self._halt.set()
        self.join(30)
