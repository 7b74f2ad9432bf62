"""Hostile connections at scale, and the control plane, against a ``kafka-shim serve`` process.

Four phases, with the canary producing on its own connection throughout (fuzz/broker.py):

* ``loris``: hundreds of connections on the PLAINTEXT and SSL listeners at once, each holding a
  partial frame (two bytes of a size, a frame announcing up to the request limit and part of it, a
  request cut anywhere) or a partial TLS handshake, and trickling a little more now and then. The
  broker's RSS may grow by a bounded amount per connection plus what was sent, and after
  connections.max.idle.ms (short here) every one of them must have been closed by the broker,
  trickling or not.
* ``unread``: connections (half of them over TLS) that pipeline Fetch and Metadata requests as
  fast as the broker takes them and never read an answer. The broker must stop reading them (its memory bounded per
  connection: what it queued and one answer), and close them once idle.
* ``parked``: connections each parking a Fetch on every partition of a topic, while records are
  produced to another: the produces must not slow down (a parked Fetch wakes for its own
  partitions, as Kafka's purgatory watches them).
* ``abandon`` (longer runs only): hundreds of connections, some over TLS, each sending part of a
  frame (up to half a MiB of one announcing up to the request limit) and going with a FIN or a
  reset; the broker must let every one go and its RSS come back within a bound, round after round.
* ``segmented`` (longer runs only): connections sending ApiVersions, Metadata and a Produce of up to
  a MiB a few bytes per TCP segment (TCP_NODELAY), interleaved; every request must be answered in
  order, the Produce acknowledged.
* ``control``: the HTTP control listener fed garbage, cut and oversized request heads, bodies that
  are not JSON, and every operation (but crash and the clock) with hostile argument values; each
  answer must be an HTTP status of the documented ones (never 500), and the listener must keep
  answering.

A run fails on a broker exit, a traceback or internal error in its log, a canary produce refused or
slower than CANARY_LATENCY, memory past a phase's bound, or a connection the broker kept open.
``python -m compat.fuzz --flood --duration 300`` runs it longer (more rounds of each phase).
"""

from __future__ import annotations

import json
import os
import random
import re
import select
import socket
import ssl
import struct
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from shim.protocol.messages import RequestHeader, encode_request, make, request_class, request_module

from ..support import recv_exactly
from .broker import BrokerProcess, Canary, Connection, create_topic, produce
from .run import CANARY_LATENCY, Result, record_canary

IDLE_MS = 4000  # connections.max.idle.ms of the broker under test (default)
MAX_REQUEST = 1 << 20
BIG_TOPIC, PARKED_TOPIC = "flood-big", "flood-parked"
LORIS = 300  # connections held at once in a loris round (default)
UNREAD = 24  # connections pipelining without reading, per round (default)
LORIS_KIB_EACH = 96  # RSS a held connection may cost beyond twice what it sent
PARKED_PARTITIONS = 50  # of PARKED_TOPIC, each parked Fetch waits on all of them
PARKED_CONNECTIONS, PARKED_PRODUCES = 300, 100  # parked Fetches, and records produced elsewhere meanwhile
PHASES = ("loris", "unread", "parked", "control")
# Phases only longer runs draw (after each of PHASES once), so the bounded run in the suite keeps its time:
EXTRA_PHASES = ("abandon", "segmented")
ABANDON = 300  # connections a round that send part of a frame (up to 512 KiB of one) and go
ABANDON_SETTLED_KIB = 48 * 1024  # RSS a round may leave behind once the broker has let its connections go
SEGMENTED = 16  # connections a round sending whole requests a few bytes per TCP segment, interleaved
SEGMENTED_TOPIC = "flood-segmented"
UNREAD_KIB_EACH = 4 * 1024  # RSS an unread connection may cost: a MiB queued, an answer, buffers
CONTROL_STATUSES = {200, 400, 404, 405, 408, 409, 411, 413, 431, 503}
SKIPPED_OPS = {"crash", "advance_clock", "node_down", "hold_markers"}  # they stop or age what the canary needs
HOSTILE = (None, -1, 0, 1, 2**31, 2**63, -(2**63) - 1, 10**30, 1.5, float("inf"), True, "", "x" * 70000,
           "é\u2603\x00", [], [1, "a"], {}, {"a": {"b": []}}, "Produce", "NOT_LEADER_OR_FOLLOWER", "t")


@dataclass
class FloodResult(Result):
    rounds: dict = field(default_factory=dict)  # phase -> rounds run
    growth_kib: dict = field(default_factory=dict)  # phase -> the largest RSS growth seen in a round
    control_statuses: dict = field(default_factory=dict)
    seconds: dict = field(default_factory=dict)  # phase -> seconds spent in it


def _frame(key: int, version: int, correlation: int, **fields) -> bytes:
    payload = encode_request(RequestHeader(key, version, correlation, "flood"), make(request_class(key, version), **fields))
    return struct.pack(">i", len(payload)) + payload


def _fetch_frame(correlation: int) -> bytes:
    import datetime

    m = request_module(1, 12)
    return _frame(1, 12, correlation, max_wait=datetime.timedelta(0), min_bytes=0, max_bytes=MAX_REQUEST,
                  isolation_level=0, topics=(m.FetchTopic(topic=BIG_TOPIC, partitions=(m.FetchPartition(
                      partition=0, fetch_offset=0, partition_max_bytes=MAX_REQUEST),)),),
                  forgotten_topics_data=(), rack_id="")  # fmt: skip


def _parked_frame(correlation: int) -> bytes:
    import datetime

    m = request_module(1, 12)
    partitions = tuple(m.FetchPartition(partition=i, fetch_offset=0, partition_max_bytes=MAX_REQUEST)
                       for i in range(PARKED_PARTITIONS))
    return _frame(1, 12, correlation, max_wait=datetime.timedelta(seconds=30), min_bytes=MAX_REQUEST,
                  max_bytes=MAX_REQUEST, isolation_level=0, topics=(m.FetchTopic(topic=PARKED_TOPIC,
                  partitions=partitions),), forgotten_topics_data=(), rack_id="")  # fmt: skip


def _produce_frame(correlation: int, value: bytes) -> bytes:
    import datetime

    from kafka_codecs.records import encode_batch

    m = request_module(0, 9)
    batch = encode_batch([(None, value, [], int(time.time() * 1000))])
    return _frame(0, 9, correlation, transactional_id=None, acks=1, timeout=datetime.timedelta(seconds=10),
                  topic_data=(m.TopicProduceData(name=SEGMENTED_TOPIC, partition_data=(
                      m.PartitionProduceData(index=0, records=batch),)),))  # fmt: skip


def _metadata_frame(correlation: int) -> bytes:
    return _frame(3, 12, correlation, topics=None, allow_auto_topic_creation=False,
                  include_topic_authorized_operations=True)


class FloodRun:
    def __init__(self, seed: int, workdir: Path, rss_limit_mib: int = 600, loris: int = LORIS, unread: int = UNREAD,
                 idle_ms: int = IDLE_MS) -> None:
        from shim.security.certs import make_certs

        self.loris_n, self.unread_n, self.idle_ms = loris, unread, idle_ms
        self.rng = random.Random(seed)
        self.result = FloodResult(seed)
        certs = make_certs(workdir / "certs")
        self.log_path = workdir / "broker.log"
        self.broker = BrokerProcess(
            workdir / "data", self.log_path, "--listeners", "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
            "--ssl-keystore-location", str(certs["broker.pem"]), "--ssl-truststore-location", str(certs["ca.pem"]),
            "--max-request-bytes", str(MAX_REQUEST), "--connections-max-idle-ms", str(idle_ms),
            "--control-listen", "127.0.0.1:0")  # fmt: skip
        self.rss_limit_kib = rss_limit_mib * 1024
        self.ports: dict[str, int] = {}
        self.control_port = 0
        self.tls = ssl.create_default_context(cafile=str(certs["ca.pem"]))
        self.tls.check_hostname = False

    def run(self, duration: float) -> FloodResult:
        try:
            self.broker.start()
            stdout = self.log_path.with_suffix(".stdout0").read_text()
            self.ports = {n: int(p) for n, p in re.findall(r"(\w+)://[^,\s]*:(\d+)", stdout.split("listeners:")[1])}
            self.control_port = int(re.search(r"control=http://[^:]+:(\d+)", stdout).group(1))
            self.log = self.log_path.open(errors="replace")
            self._fill()
            canary = Canary(self.broker.bootstrap)
            canary.start()
            canary.connected.wait(10)
            deadline = time.monotonic() + duration
            phases = list(PHASES)  # each once, then at random (EXTRA_PHASES too) until the deadline
            while (phases or time.monotonic() < deadline) and canary.error is None and self.broker.alive():
                phase = phases.pop(0) if phases else self.rng.choice(PHASES + EXTRA_PHASES)
                started = time.monotonic()
                getattr(self, phase)()
                self.result.seconds[phase] = round(self.result.seconds.get(phase, 0) + time.monotonic() - started, 1)
                self.result.rounds[phase] = self.result.rounds.get(phase, 0) + 1
                self.result.cases += 1
                self._check(phase)
            canary.stop()
            record_canary(self.result, canary, self.broker.alive)
            self._check("end")
            return self.result
        finally:
            self.broker.stop()

    def _fill(self) -> None:
        """BIG_TOPIC holds a few MiB, so each of the unread phase's Fetches has a MiB to answer."""
        conn = Connection(self.broker.bootstrap)
        try:
            create_topic(conn, BIG_TOPIC)
            create_topic(conn, PARKED_TOPIC, PARKED_PARTITIONS)
            create_topic(conn, SEGMENTED_TOPIC)
            for i in range(4):
                produce(conn, BIG_TOPIC, bytes([65 + i]) * (MAX_REQUEST - 4096))
        finally:
            conn.close()

    # -- phases ---------------------------------------------------------------------------------

    def loris(self) -> None:
        before = self._rss()
        socks, sent = [], 0
        for i in range(self.loris_n):
            listener = "SSL" if i % 5 == 0 else "PLAINTEXT"
            data = self._partial(listener)
            try:
                s = socket.create_connection(("127.0.0.1", self.ports[listener]), timeout=10)
                s.sendall(data)
            except OSError as exc:
                self.result.fail(f"a loris connection could not be made or written: {exc!r}")
                break
            socks.append(s)
            sent += len(data)
        for _ in range(3):  # a trickle: whole requests never complete, the connections stay busy-looking
            for s in self.rng.sample(socks, min(50, len(socks))):
                try:
                    s.send(b"\x00")
                except OSError:
                    pass
            time.sleep(0.2)
        self._growth("loris", before, self.loris_n * LORIS_KIB_EACH + 2 * sent // 1024)
        self._all_closed_by_broker("loris", socks)

    def _partial(self, listener: str) -> bytes:
        rng = self.rng
        if listener == "SSL":  # half a ClientHello, or garbage, then nothing
            from .secure import client_hello

            hello = client_hello()
            return rng.choice((hello[: rng.randint(1, len(hello) - 1)], rng.randbytes(rng.randint(1, 200))))
        kind = rng.randrange(3)
        if kind == 0:
            return b"\x00\x00"[: rng.randint(1, 2)]
        if kind == 1:  # announces up to the limit, sends a little of it
            size = rng.randint(1, MAX_REQUEST)
            return struct.pack(">i", size) + rng.randbytes(min(size - 1, rng.randint(0, 64 * 1024)))
        whole = _metadata_frame(rng.randrange(1 << 20))
        return whole[: rng.randint(1, len(whole) - 1)]

    def unread(self) -> None:
        before = self._rss()
        socks = []
        for i in range(self.unread_n):  # every other one over TLS
            listener = "SSL" if i % 2 else "PLAINTEXT"
            s = socket.create_connection(("127.0.0.1", self.ports[listener]), timeout=10)
            if listener == "SSL":
                s = self.tls.wrap_socket(s, server_hostname="localhost")
            s.setblocking(False)
            socks.append(s)
        # pipeline until the broker stops reading every one (a send blocked 2 s, or closed), at most 30 s
        blob = b"".join((_fetch_frame if i % 3 else _metadata_frame)(i) for i in range(1, 3000))  # ~300 KB
        pending = {s: b"" for s in socks}
        blocked, closed, deadline = {}, set(), time.monotonic() + 30
        while time.monotonic() < deadline:
            now = time.monotonic()
            if all(s in closed or now - blocked.get(s, now) > 2 for s in socks):
                break
            for s in socks:
                if s in closed:
                    continue
                if not pending[s]:
                    pending[s] = blob
                try:
                    n = s.send(pending[s])
                    pending[s] = pending[s][n:]
                    blocked.pop(s, None)
                except (BlockingIOError, ssl.SSLWantWriteError, ssl.SSLWantReadError):
                    blocked.setdefault(s, now)
                except OSError:
                    closed.add(s)  # closed by the broker (idle): bounded too
            time.sleep(0.01)
        else:
            reading = [s for s in socks if s not in closed and time.monotonic() - blocked.get(s, time.monotonic()) <= 2]
            self.result.fail(f"the broker kept reading {len(reading)} connections that never read an answer for 30 s")
        self._growth("unread", before, self.unread_n * UNREAD_KIB_EACH)
        self._all_closed_by_broker("unread", socks)

    def parked(self) -> None:
        """PARKED_CONNECTIONS each park a Fetch for a MiB on every partition of PARKED_TOPIC; produces
        to another topic must not make each of them read its partitions again (Kafka's purgatory
        wakes a delayed fetch for its own partitions only): they may take at most ten times as long
        as before the Fetches parked, and 2 s."""
        baseline = self._produce_time()
        socks = []
        versions = _frame(18, 3, 0, client_software_name="flood", client_software_version="1")
        for i in range(PARKED_CONNECTIONS):
            s = socket.create_connection(("127.0.0.1", self.ports["PLAINTEXT"]), timeout=30)
            s.sendall(versions + _parked_frame(i))
            socks.append(s)
        for s in socks:  # each ApiVersions answered: the Fetch behind it is the broker's next request
            size = struct.unpack(">i", recv_exactly(s, 4))[0]
            recv_exactly(s, size)
        try:
            took = self._produce_time()
        finally:
            for s in socks:
                s.close()
        self.result.growth_kib["parked_produce_ms"] = max(self.result.growth_kib.get("parked_produce_ms", 0),
                                                          int(took * 1000))  # fmt: skip
        if took > 10 * baseline + 2:
            self.result.fail(f"parked: {PARKED_PRODUCES} produces took {took:.1f} s beside {len(socks)} parked "
                             f"Fetches, {baseline:.2f} s before")  # fmt: skip

    def _produce_time(self) -> float:
        conn = Connection(self.broker.bootstrap)
        try:
            started = time.monotonic()
            for i in range(PARKED_PRODUCES):
                produce(conn, BIG_TOPIC, b"p%d" % i)
            return time.monotonic() - started
        finally:
            conn.close()

    def abandon(self) -> None:
        before, baseline, rng = self._rss(), self.broker.sockets(), self.rng
        for i in range(ABANDON):
            listener = "SSL" if i % 6 == 0 else "PLAINTEXT"
            size = rng.randint(1, MAX_REQUEST)
            data = struct.pack(">i", size) + rng.randbytes(min(size - 1, rng.randint(0, 512 * 1024)))
            s = None
            try:
                s = socket.create_connection(("127.0.0.1", self.ports[listener]), timeout=10)
                if listener == "SSL":
                    s = self.tls.wrap_socket(s, server_hostname="localhost")
                s.sendall(data[: rng.randint(1, len(data))])
                if rng.random() < 0.5:  # a reset rather than a FIN
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            except OSError:
                pass  # the broker refused the frame first: gone all the same
            finally:
                if s is not None:
                    s.close()
        deadline = time.monotonic() + 10
        while self.broker.sockets() > baseline and time.monotonic() < deadline:
            time.sleep(0.1)
        if self.broker.sockets() > baseline:
            self.result.fail(f"abandon: {self.broker.sockets() - baseline} abandoned connections still held 10 s on")
        self._growth("abandon", before, ABANDON_SETTLED_KIB)

    def segmented(self) -> None:
        rng = self.rng
        socks, due = [], {}
        for i in range(SEGMENTED):
            s = socket.create_connection(("127.0.0.1", self.ports["PLAINTEXT"]), timeout=30)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            value = rng.randbytes(rng.choice((1, 100, 64 * 1024, MAX_REQUEST // 2)))
            frames = [_frame(18, 3, 1, client_software_name="flood", client_software_version="1"),
                      _metadata_frame(2), _produce_frame(3, value)]
            socks.append(s)
            due[s] = [bytearray(b"".join(frames)), 0]
        while any(data for data, _ in due.values()):
            for s in socks:
                data = due[s][0]
                n = rng.choice((1, 1, 2, 3, 7, 64, 1500)) if len(data) < 4096 else rng.randint(1, 16 * 1024)
                s.sendall(data[:n])
                del data[:n]
        for s in socks:
            try:
                self._segmented_answers(s)
            finally:
                s.close()

    def _segmented_answers(self, s: socket.socket) -> None:
        from shim.protocol.messages import decode_response

        for correlation, (key, version) in enumerate(((18, 3), (3, 12), (0, 9)), 1):
            try:
                size = struct.unpack(">i", recv_exactly(s, 4))[0]
                got, answer = decode_response(recv_exactly(s, size), key, version)
            except OSError as exc:
                self.result.fail(f"segmented: no answer {correlation} of 3: {exc!r}")
                return
            if got != correlation:
                self.result.fail(f"segmented: answer {got} where {correlation} was due")
            elif key == 0 and answer.responses[0].partition_responses[0].error_code != 0:
                self.result.fail(f"segmented: a Produce sent in pieces was refused: {answer!r}"[:500])

    def control(self) -> None:
        rng = self.rng
        for _ in range(40):
            kind = rng.random()
            if kind < 0.5:
                self._control_op()
            elif kind < 0.8:
                self._http(self._garbage_http())
            else:
                self._http(rng.randbytes(rng.randint(0, 3000)), expect_http=False)
        # the listener still answers, and nothing the fuzz armed stays armed
        status, _ = self._http(b"POST /v1/ops/clear HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
        if status != 200:
            self.result.fail(f"the control listener answered {status} to a plain clear after the fuzz")

    def _control_op(self) -> None:
        from shim.control.ops import OPS

        rng = self.rng
        name = rng.choice([n for n in OPS if n not in SKIPPED_OPS] + ["nope", "", "../x"])
        args: dict = {}
        spec = OPS.get(name)
        for arg in spec.args if spec else ():
            if rng.random() < 0.5:
                args[arg.name] = rng.choice(HOSTILE)
        if rng.random() < 0.1:
            args["unknown"] = 1
        if spec and any(a.name == "client_id" for a in spec.args):
            args["client_id"] = "fuzz-nobody"  # an armed fault never matches the canary
        if name == "wait":
            args["timeout_ms"] = rng.choice((0, 1, 10))
        body = json.dumps(args).encode() if rng.random() < 0.9 else rng.choice((b"[", b"{" * 5000, b"\xff\xfe", b"1"))
        head = f"POST /v1/ops/{name} HTTP/1.1\r\nContent-Length: {len(body)}\r\n\r\n".encode()
        self._http(head + body)

    def _garbage_http(self) -> bytes:
        rng = self.rng
        return rng.choice((
            b"GET /v1/ops HTTP/1.1\r\n" + b"X: " + b"a" * rng.randint(1, 40000) + b"\r\n\r\n",
            b"POST /v1/ops/faults HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n",
            b"POST /v1/ops/faults HTTP/1.1\r\nContent-Length: -5\r\n\r\n",
            b"POST /v1/ops/faults HTTP/1.1\r\nContent-Length: zz\r\n\r\n",
            b"POST /v1/ops/faults HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            b"POST /v1/ops/faults HTTP/1.1\r\nContent-Length: 10\r\n\r\n{}",  # cut body: 408 or the close
            b"DELETE /v1/ops HTTP/1.1\r\n\r\n",
            b"GET /v1/ops/" + bytes(rng.randbytes(20)) + b" HTTP/1.1\r\n\r\n",
            b"GET / HTTP/1.1\r\nbad header line\r\n\r\n",
            b"\r\n\r\n",
            b"GET /v1/ops",  # never ends: the listener's read timeout, or our close
        ))

    def _http(self, data: bytes, expect_http: bool = True) -> tuple[int | None, bytes]:
        try:
            s = socket.create_connection(("127.0.0.1", self.control_port), timeout=15)
        except OSError as exc:
            self.result.fail(f"the control listener refused a connection: {exc!r}")
            return None, b""
        out = b""
        try:
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
            while chunk := s.recv(1 << 16):
                out += chunk
        except socket.timeout:
            self.result.fail(f"the control listener held a connection 15 s: {data[:200]!r}")
        except OSError:
            pass
        finally:
            s.close()
        m = re.match(rb"HTTP/1\.1 (\d{3}) ", out)
        status = int(m.group(1)) if m else None
        key = str(status)
        self.result.control_statuses[key] = self.result.control_statuses.get(key, 0) + 1
        if status is not None and status not in CONTROL_STATUSES:
            self.result.fail(f"the control listener answered {status} to {data[:300]!r}: {out[-500:]!r}")
        elif status is None and expect_http and out:
            self.result.fail(f"the control listener answered no HTTP to {data[:300]!r}: {out[:300]!r}")
        return status, out

    # -- checks ---------------------------------------------------------------------------------

    def _rss(self) -> int:
        try:
            return self.broker.memory_kib()["VmRSS"]
        except (OSError, KeyError):
            return 0

    def _growth(self, phase: str, before: int, allowed_kib: int) -> None:
        grown = self._rss() - before
        self.result.growth_kib[phase] = max(self.result.growth_kib.get(phase, 0), grown)
        if grown > allowed_kib:
            self.result.fail(f"{phase}: the broker's RSS grew {grown // 1024} MiB, {allowed_kib // 1024} MiB allowed")

    def _all_closed_by_broker(self, phase: str, socks: list) -> None:
        """Every one of ``socks`` sees the broker's close (a FIN or a reset, answers left unread)
        within twice connections.max.idle.ms and a margin."""
        poller = select.poll()
        for s in socks:
            poller.register(s, select.POLLRDHUP)
        open_ = {s.fileno() for s in socks}
        deadline = time.monotonic() + self.idle_ms / 1000 * 2 + 10
        while open_ and time.monotonic() < deadline:
            for fd, events in poller.poll(500):
                if events & (select.POLLRDHUP | select.POLLHUP | select.POLLERR):
                    poller.unregister(fd)
                    open_.discard(fd)
        if open_:
            self.result.fail(f"{phase}: {len(open_)} of {len(socks)} connections still open "
                             f"{self.idle_ms * 2 // 1000 + 10} s after their last complete request")  # fmt: skip
        for s in socks:
            s.close()

    def _check(self, phase: str) -> None:
        chunk = self.log.read()
        for marker in ("Traceback", "internal error", "Task exception was never retrieved", "Exception in callback"):
            if marker in chunk:
                i = chunk.index(marker)
                self.result.fail(f"after {phase} the broker log has {marker!r}:\n{chunk[max(0, i - 300): i + 1500]}")
        if not self.broker.alive():
            self.result.fail(f"the broker exited with {self.broker.proc.returncode} during {phase}")
            return
        peak = self.broker.memory_kib()["VmHWM"]
        self.result.peak_rss_kib = max(self.result.peak_rss_kib, peak)
        if peak > self.rss_limit_kib:
            self.result.fail(f"broker peak RSS {peak // 1024} MiB passed {self.rss_limit_kib // 1024} MiB")


def flood_fuzz(duration: float, seed: int, workdir: Path | None = None, rss_limit_mib: int = 600,
               **sizes) -> FloodResult:
    """``sizes``: loris, unread (connections a round) and idle_ms (the broker's connections.max.idle.ms)."""
    if workdir is not None:
        workdir.mkdir(parents=True, exist_ok=True)
        return FloodRun(seed, workdir, rss_limit_mib, **sizes).run(duration)
    with tempfile.TemporaryDirectory(prefix="kafka-shim-fuzz-flood-") as tmp:
        return FloodRun(seed, Path(tmp), rss_limit_mib, **sizes).run(duration)
