"""One fuzz run: mutated client requests against a ``kafka-shim serve`` process, with checks.

Each case goes on a connection of its own (sent, then the write side shut, then read to EOF);
meanwhile the canary produces on another connection. A run fails when the broker process exits,
the canary's produce is refused or takes more than ``CANARY_LATENCY`` (a blocked loop), the
broker's peak RSS passes the limit, the broker's log shows a close of a connection that sent no
malformed frame (the canary's above all), a malformed frame that closed nothing or closed it
before the requests ahead of it were answered, an internal error or a traceback, or when after a kill -9 and a restart an acknowledged canary record is missing.
"""

from __future__ import annotations

import asyncio
import inspect
import random
import re
import socket
import struct
import sys
import tempfile
import time
import types
from dataclasses import dataclass, field
from pathlib import Path

from shim.apis import REGISTRY
from shim.apis.registry import emulated_range
from shim.protocol.kafka_releases import DEFAULT_RELEASE, RELEASES
from shim.protocol.framing import FrameError
from shim.protocol.messages import decode_request, peek

from . import mutate
from .broker import CANARY_TOPIC, BrokerGone, BrokerProcess, Canary, Connection, read_all
from .record import load

CANARY_LATENCY = 10.0  # seconds an acks=all produce of one record may take while fuzzing
READ_TIMEOUT = 3.0  # seconds a fuzz connection waits for the broker to finish answering
MAX_REQUEST = 1 << 20
MAX_FINDINGS_PER_KIND = 5
EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Iteration|Exit|Interrupt)\b.*$", re.M)
CLOSE_LINE = re.compile(r"closing connection from \('127\.0\.0\.1', (\d+)\)(.*)")


@dataclass
class Result:
    seed: int
    cases: int = 0
    swept: int = 0  # the first cases: each corpus frame intact, with hostile values and byte-mutated
    outcomes: dict = field(default_factory=dict)
    failures: list = field(default_factory=list)
    failure_counts: dict = field(default_factory=dict)
    findings: list = field(default_factory=list)  # cases kept for a regression test
    closed_as_malformed: int = 0  # connections closed at a malformed frame, with their one log line
    fully_answered: int = 0  # connections of well-formed requests, every one answered
    peak_rss_kib: int = 0
    canary_acked: int = 0
    canary_max_latency: float = 0.0

    def fail(self, message: str, case: mutate.Case | None = None) -> None:
        """Each kind of failure once (ports, times and counts aside), with how often it happened."""
        kind = re.sub(r"\d+", "N", message.split("\n")[0])[:160]
        seen = self.failure_counts.get(kind, 0)
        self.failure_counts[kind] = seen + 1
        if seen == 0:
            self.failures.append(message)
        if case is not None and seen < MAX_FINDINGS_PER_KIND:
            self.findings.append({"why": message, "ops": case.ops, "wire": case.wire().hex()})


def expectation(frame: mutate.Frame) -> str:
    """What the broker must do with one frame: 'answer', 'none' (acks=0), 'close' or '?'."""
    if frame.size != len(frame.payload):
        return "close" if frame.size < 0 or frame.size > MAX_REQUEST else "?"
    try:
        key, version, _ = peek(frame.payload)
        spec = REGISTRY.get(key)
        served = None if spec is None else emulated_range(spec, RELEASES[DEFAULT_RELEASE])  # the broker's release
        if served is None:
            return "close"
        if not served[0] <= version <= served[1]:
            return "answer" if key == 18 else "close"
        _, request = decode_request(frame.payload, key, version)
        _validate(key, version, request)
    except FrameError:
        return "close"
    return "none" if key == 0 and request.acks == 0 else "answer"


def _validate(key: int, version: int, request) -> None:
    """FrameError where the API refuses what Kafka's request class refuses while parsing (an ACL
    filter with an UNKNOWN element): the broker closes the connection, as Kafka does."""
    validate = getattr(sys.modules[REGISTRY[key].handler.__module__], "validate", None)
    if validate is not None:
        checking = validate(types.SimpleNamespace(version=version), request)
        if inspect.iscoroutine(checking):
            asyncio.run(checking)


def send_case(port: int, case: mutate.Case) -> tuple[int, int, str]:
    """(local port, responses received, 'eof' | 'timeout' | 'reset')."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    local = sock.getsockname()[1]
    data, ending = b"", "eof"
    try:
        sock.sendall(case.wire())
        sock.shutdown(socket.SHUT_WR)
        sock.settimeout(READ_TIMEOUT)
        while True:
            chunk = sock.recv(1 << 16)
            if not chunk:
                break
            data += chunk
    except socket.timeout:
        ending = "timeout"
    except (ConnectionResetError, BrokenPipeError):
        ending = "reset"
    finally:
        sock.close()
    return local, _count_frames(data), ending


def _count_frames(data: bytes) -> int:
    n = pos = 0
    while pos + 4 <= len(data):
        pos += 4 + struct.unpack_from(">i", data, pos)[0]
        if pos <= len(data):
            n += 1
    return n


def record_canary(result: Result, canary: Canary, broker_alive) -> None:
    """What the canary saw, into ``result``: a failure if it failed while the broker still ran
    (``broker_alive()``), or if one of its produces took longer than CANARY_LATENCY."""
    result.canary_acked = len(canary.acked)
    result.canary_max_latency = canary.max_latency
    if canary.error is not None and broker_alive():
        result.fail(f"the canary failed: {canary.error!r}")
    if canary.max_latency > CANARY_LATENCY:
        result.fail(f"a canary produce took {canary.max_latency:.1f}s")


class Run:
    def __init__(self, seed: int, workdir: Path, rss_limit_mib: int = 400) -> None:
        self.rng = random.Random(seed)
        self.result = Result(seed)
        self.corpus = load()
        self.workdir = workdir
        self.log_path = workdir / "broker.log"
        self.broker = BrokerProcess(workdir / "data", self.log_path, "--max-request-bytes", str(MAX_REQUEST))
        self.rss_limit_kib = rss_limit_mib * 1024
        self.canary_ports: set[int] = set()

    def run(self, duration: float) -> Result:
        try:
            return self._run(duration)
        finally:
            self.broker.stop()

    def _run(self, duration: float) -> Result:
        self.broker.start()
        self.log = self.log_path.open(errors="replace")
        canary = Canary(self.broker.bootstrap)
        canary.start()
        canary.connected.wait(10)
        self.canary_ports = canary.ports
        deadline = time.monotonic() + duration
        next_probe = 0.0
        sweep = mutate.sweep(self.rng, self.corpus)
        try:
            # the sweep always finishes, however slow the machine; then random cases until the deadline
            while (sweep or time.monotonic() < deadline) and canary.error is None:
                if sweep:
                    self.one_case(sweep.pop(0))
                    self.result.swept += 1
                else:
                    self.one_case(mutate.case(self.rng, self.corpus))
                if time.monotonic() >= next_probe:
                    self.probe(canary)
                    next_probe = time.monotonic() + 1
        finally:
            canary.stop()
        record_canary(self.result, canary, self.broker.alive)
        self.new_close_lines()
        self.check_recovery(canary.acked)
        return self.result

    def one_case(self, case: mutate.Case) -> None:
        self.result.cases += 1
        try:
            local, answers, ending = send_case(self.broker.port, case)
        except OSError as exc:
            local, answers, ending = 0, 0, f"connect:{exc.__class__.__name__}"
        self.result.outcomes[ending] = self.result.outcomes.get(ending, 0) + 1
        lines = self.new_close_lines()
        if not self.broker.alive():
            self.result.fail(f"the broker exited with {self.broker.proc.returncode}", case)
            self.broker.start()  # go on: one run can find several defects
            return
        if local and ending != "timeout":
            # The broker logs a close before it closes, so the line is in by the time of our EOF.
            self.check_connection(case, [expectation(f) for f in case.frames], answers, ending,
                                  [text for port, text in lines if port == local])  # fmt: skip

    def new_close_lines(self) -> list[tuple[int, str]]:
        """Close lines logged since the last call; the canary's are failures on the spot."""
        chunk = self.log.read()
        out = [(int(m.group(1)), m.group(2)) for m in CLOSE_LINE.finditer(chunk)]
        for port, text in out:
            if port in self.canary_ports:
                self.result.fail(f"the canary's connection was closed:{text}")
        for marker in ("Traceback", "Task exception was never retrieved", "Exception in callback"):
            if marker in chunk:
                i = chunk.index(marker)
                last = EXCEPTION_LINE.search(chunk, i)
                self.result.fail(f"the broker log has {marker!r} ending {last.group(0) if last else '?'}\n"
                                 f"{chunk[max(0, i - 300) : i + 1500]}")  # fmt: skip
        return out

    def probe(self, canary: Canary) -> None:
        if not self.broker.alive():
            return
        memory = self.broker.memory_kib()
        self.result.peak_rss_kib = max(self.result.peak_rss_kib, memory["VmHWM"])
        if memory["VmHWM"] > self.rss_limit_kib and not any("RSS" in f for f in self.result.failures):
            self.result.fail(f"broker peak RSS {memory['VmHWM'] // 1024} MiB passed {self.rss_limit_kib // 1024} MiB")

    def check_connection(self, case, expected: list[str], answers: int, ending: str, lines: list[str]) -> None:
        if any("internal error" in ln for ln in lines):
            self.result.fail(f"an internal error closed a connection: {case.ops}", case)
            return
        if len(lines) == 1 and "cannot encode the" in lines[0]:
            return  # a response whose fields overflow: closed as Kafka does (shim/apis/dispatch.py)
        if len(lines) == 1 and "an acks=0 Produce failed" in lines[0] and "none" in expected:
            return  # an acks=0 Produce with an error: closed as Kafka does (shim/apis/k00_produce.py)
        if "?" in expected:
            expected = expected[: expected.index("?")]
            if "close" not in expected:
                return  # a lying frame size: what the broker reads next is unknowable here
        due = expected[: expected.index("close")] if "close" in expected else expected
        due_answers = due.count("answer")
        if "close" in expected:
            if len(lines) != 1:
                self.result.fail(f"a malformed frame was logged closing its connection {len(lines)} times: "
                                 f"{case.ops}", case)  # fmt: skip
            elif answers != due_answers:
                self.result.fail(f"{answers} answers before the close, {due_answers} due: {case.ops}", case)
            else:
                self.result.closed_as_malformed += 1
        elif lines:
            self.result.fail(f"a connection of well-formed requests was closed: {lines} {case.ops}", case)
        elif ending == "eof" and answers != due_answers:
            self.result.fail(f"{answers} answers to {due_answers} well-formed requests: {case.ops}", case)
        elif ending == "eof":
            self.result.fully_answered += 1

    def check_recovery(self, acked: dict[int, bytes]) -> None:
        try:
            conn = Connection(self.broker.bootstrap)
            before = read_all(conn, CANARY_TOPIC)
            conn.close()
            self.broker.kill9()
            self.broker.start()
            conn = Connection(self.broker.bootstrap)
            after = read_all(conn, CANARY_TOPIC)
            conn.close()
        except (OSError, RuntimeError, BrokerGone) as exc:
            self.result.fail(f"reading the canary back failed: {exc!r}")
            return
        for name, seen in (("before the restart", before), ("after kill -9 and a restart", after)):
            missing = [o for o, v in acked.items() if seen.get(o) != v]
            if missing:
                self.result.fail(f"{len(missing)} acknowledged canary records unreadable {name}, e.g. {missing[:5]}")


def fuzz(duration: float, seed: int, workdir: Path | None = None, rss_limit_mib: int = 400) -> Result:
    if workdir is not None:
        workdir.mkdir(parents=True, exist_ok=True)
        return Run(seed, workdir, rss_limit_mib).run(duration)
    with tempfile.TemporaryDirectory(prefix="kafka-shim-fuzz-") as tmp:
        return Run(seed, Path(tmp), rss_limit_mib).run(duration)
