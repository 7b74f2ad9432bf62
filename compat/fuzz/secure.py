"""Fuzzing the SASL exchange and the TLS listeners of a ``kafka-shim serve`` process.

The broker has all four listeners (a throwaway CA, user ``fuzz``, PLAIN, both SCRAMs and
OAUTHBEARER) and the canary produces on PLAINTEXT throughout. A case is one connection:

* ``sasl``: on SASL_PLAINTEXT or SASL_SSL, an exchange as a client would begin it (ApiVersions,
  SaslHandshake v0 or v1, the mechanism's tokens in SaslAuthenticate or as raw v0 frames, a request
  after it), its tokens mutated (bit flips, truncation, splices, runs, random or oversized bytes;
  SCRAM messages with odd names and nonces, OAUTHBEARER messages with mangled JWTs), sometimes a
  frame mutated whole or put out of order;
* ``reauth``: on SASL_PLAINTEXT or SASL_SSL, a PLAIN authentication that succeeds, then KIP-368
  re-authentications mid-stream (the broker's connections.max.reauth.ms is set), clean or hostile
  (another mechanism or user, mutated tokens, a request between handshake and token, a v0
  handshake, a token without a handshake), with requests between; clean ones must answer every
  request;
* ``tls``: on SSL or SASL_SSL, a mutated or truncated ClientHello or plain garbage instead of TLS;
  a real ClientHello, then the client's second flight mutated, cut or replaced by garbage; or a
  full handshake then mutated Kafka requests (fuzz/mutate.py's cases), ended by a bare FIN, a
  close_notify, or an abrupt close.

Each connection sends, then ends its side, then reads to EOF. A run fails when the broker exits,
logs a traceback or an internal error, leaves a connection open after the client ended its side
(``timeout``), lets the canary wait more than 10 s, passes its RSS limit, or keeps more sockets at
the end than before the fuzzing began (a leaked connection).
"""

from __future__ import annotations

import base64
import json
import os
import random
import re
import socket
import ssl
import struct
import tempfile
import time
from pathlib import Path

from shim.protocol.messages import RequestHeader, decode_response, encode_request, make, request_class, request_module

from . import mutate
from .broker import BrokerProcess, Canary
from .record import load
from .run import Result, _count_frames, record_canary

LISTENERS = "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,SASL_SSL://127.0.0.1:0"
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
USER, PASSWORD = "fuzz", "fuzz-secret"
READ_TIMEOUT = 5.0
REAUTH_MS = 600_000  # sessions expire (so KIP-368 re-authentication is allowed), but not within a run
TOKEN_OPS = tuple(op for op in mutate.OPS if op is not mutate.header_field)


def _request(key: int, version: int, correlation: int, **fields) -> bytes:
    return encode_request(RequestHeader(key, version, correlation, "fuzz-sasl"), make(request_class(key, version),
                                                                                      **fields))


def _jwt(rng: random.Random) -> str:
    now = int(time.time())
    claims = {"sub": rng.choice((USER, "", "x" * rng.randint(1, 300), 7)), "iat": now + rng.choice((0, -5, 99999)),
              "exp": rng.choice((now + 60, now - 60, "soon", 1e300, float("nan"), float("inf"), -1)),
              "scope": rng.choice(("a b", ["a"], 3, None))}
    header = rng.choice(({"alg": "none"}, {"alg": "RS256", "kid": "k"}, {}, {"alg": ["none"]}))
    enc = base64.b64encode if rng.random() < 0.5 else base64.urlsafe_b64encode
    parts = [enc(json.dumps(header).encode()).decode(), enc(json.dumps(claims).encode()).decode(),
             rng.choice(("", "c2ln", "!!"))]
    return ".".join(parts)


def tokens(rng: random.Random, mechanism: str) -> list[bytes]:
    """The tokens a client sends for ``mechanism`` (sent all at once: no answer is awaited)."""
    user = rng.choice((USER, "nobody", "=2C=3D", "a" * 200, ""))
    if mechanism == "PLAIN":
        out = [f"{rng.choice(('', user))}\0{user}\0{rng.choice((PASSWORD, 'wrong', ''))}".encode()]
    elif mechanism.startswith("SCRAM"):
        nonce = rng.choice(("abc", "x" * 500, "", "r=,"))
        out = [f"n,,n={user},r={nonce}".encode(), f"c=biws,r={nonce}srv,p={'A' * rng.randint(0, 100)}".encode()]
    else:
        ext = rng.choice(("", "traceId=1\x01", "auth=x\x01", "k=\x00\x01"))
        out = [f"n,{rng.choice(('', 'a=' + user))},\x01auth=Bearer {_jwt(rng)}\x01{ext}\x01".encode(), b"\x01"]
    for i, token in enumerate(out):
        draw = rng.random()
        if draw < 0.4:
            data = bytearray(token)
            for _ in range(rng.randint(1, 3)):
                rng.choice(TOKEN_OPS)(rng, data, out)
            out[i] = bytes(data)
        elif draw < 0.45:
            out[i] = rng.randbytes(rng.choice((1, 64, 4096)))
        elif draw < 0.47:
            out[i] = b"n,,n=" + b"A" * (600 * 1024)  # past sasl.server.max.receive.size
    return out


SASL_MECHANISMS = MECHANISMS + ("GSSAPI", "scram-sha-256", "")  # those served, one not, a case wrong, none


def sasl_case(rng: random.Random, mechanism: str | None = None, v0: bool | None = None) -> tuple[bytes, list[str]]:
    mechanism = rng.choice(SASL_MECHANISMS) if mechanism is None else mechanism
    v0 = rng.random() < 0.2 if v0 is None else v0
    frames, ops = [], [mechanism, "v0" if v0 else "v1"]
    if rng.random() < 0.5:
        frames.append(_request(18, 3, 1, client_software_name="fuzz", client_software_version="1"))
    frames.append(_request(17, 0 if v0 else 1, 2, mechanism=mechanism))
    for i, token in enumerate(tokens(rng, mechanism.upper())):
        frames.append(token if v0 else _request(36, rng.randint(0, 2), 3 + i, auth_bytes=token))
    if rng.random() < 0.5:  # a request after the exchange (before it, when shuffled below)
        m = request_module(3, 12)
        frames.append(_request(3, 12, 9, topics=(m.MetadataRequestTopic(topic_id=None, name="fuzz-canary"),),
                               allow_auto_topic_creation=False, include_topic_authorized_operations=False))
    if rng.random() < 0.15:
        rng.shuffle(frames)
        ops.append("shuffled")
    if rng.random() < 0.2:
        i = rng.randrange(len(frames))
        data = bytearray(frames[i])
        rng.choice(mutate.OPS)(rng, data, frames)
        frames[i] = bytes(data)
        ops.append(f"frame{i}-mutated")
    return b"".join(struct.pack(">i", len(f)) + f for f in frames), ops


def _metadata(correlation: int) -> bytes:
    m = request_module(3, 12)
    return _request(3, 12, correlation, topics=(m.MetadataRequestTopic(topic_id=None, name="fuzz-canary"),),
                    allow_auto_topic_creation=False, include_topic_authorized_operations=False)


def _plain(user: str = USER, password: str = PASSWORD) -> bytes:
    return f"\0{user}\0{password}".encode()


def reauth_case(rng: random.Random) -> tuple[bytes, list[str], int | None]:
    """KIP-368 mid-stream: a PLAIN authentication that succeeds, requests, then one or two
    re-authentications (a SaslHandshake v1 on the authenticated connection) with requests between
    and after. Each re-authentication is clean (the same user and password) or hostile: another
    mechanism, another user (Kafka: "Cannot change principals"), the tokens mutated, a request
    slipped between the handshake and its token, a v0 handshake, a token without a handshake.
    The bytes, the ops, and the answers due when every round was clean (each request answered),
    else None."""
    frames, ops, clean, corr = [], [], True, 1
    add = frames.append
    add(_request(17, 1, corr, mechanism="PLAIN"))
    add(_request(36, rng.randint(1, 2), corr + 1, auth_bytes=_plain()))
    add(_metadata(corr + 2))
    corr += 3
    for round_ in range(rng.choice((1, 1, 2))):
        draw = rng.random()
        if draw < 0.4:
            ops.append(f"reauth{round_}:clean")
            add(_request(17, 1, corr, mechanism="PLAIN"))
            add(_request(36, rng.randint(1, 2), corr + 1, auth_bytes=_plain()))
        elif draw < 0.5:
            ops.append(f"reauth{round_}:other-user")
            add(_request(17, 1, corr, mechanism="PLAIN"))
            add(_request(36, 1, corr + 1, auth_bytes=_plain("nobody", "x")))
        elif draw < 0.6:
            mechanism = rng.choice(SASL_MECHANISMS)
            ops.append(f"reauth{round_}:{mechanism or 'none'}")
            add(_request(17, 1, corr, mechanism=mechanism))
            for i, token in enumerate(tokens(rng, mechanism.upper())):
                add(_request(36, rng.randint(0, 2), corr + 1 + i, auth_bytes=token))
        elif draw < 0.7:
            ops.append(f"reauth{round_}:request-between")
            add(_request(17, 1, corr, mechanism="PLAIN"))
            add(_metadata(corr + 1))
            add(_request(36, 1, corr + 2, auth_bytes=_plain()))
        elif draw < 0.8:
            ops.append(f"reauth{round_}:v0-handshake")
            add(_request(17, 0, corr, mechanism="PLAIN"))
            add(_plain())
        elif draw < 0.9:
            ops.append(f"reauth{round_}:token-without-handshake")
            add(_request(36, 1, corr, auth_bytes=_plain()))
        else:
            ops.append(f"reauth{round_}:mutated")
            add(_request(17, 1, corr, mechanism="PLAIN"))
            data = bytearray(_plain())
            for _ in range(rng.randint(1, 3)):
                rng.choice(TOKEN_OPS)(rng, data, [_plain()])
            add(_request(36, 1, corr + 1, auth_bytes=bytes(data)))
        clean = clean and ops[-1].endswith(":clean")
        corr += 10
        add(_metadata(corr))
        corr += 1
    if rng.random() < 0.2:
        i = rng.randrange(3, len(frames))
        data = bytearray(frames[i])
        rng.choice(mutate.OPS)(rng, data, frames)
        frames[i] = bytes(data)
        ops.append(f"frame{i}-mutated")
        clean = False
    return b"".join(struct.pack(">i", len(f)) + f for f in frames), ops, len(frames) if clean else None


def sasl_errors(answers: bytes, frames: bytes) -> list[tuple[int, int]]:
    """(api key, error code) of each SaslHandshake or SaslAuthenticate answer that is not NONE,
    the answers matched to the requests ``frames`` by correlation id."""
    asked = {}
    for frame in _frames(frames):
        if len(frame) >= 8:
            key, version, correlation = struct.unpack_from(">hhi", frame)
            asked[correlation] = (key, version)
    out = []
    for body in _frames(answers):
        key, version = asked.get(struct.unpack_from(">i", body)[0], (None, None))
        if key in (17, 36):
            code = decode_response(body, key, version)[1].error_code
            if code:
                out.append((key, code))
    return out


def _frames(data: bytes):
    pos = 0
    while pos + 4 <= len(data):
        size = struct.unpack_from(">i", data, pos)[0]
        yield data[pos + 4 : pos + 4 + size]
        pos += 4 + size


def client_hello(server_name: str = "localhost") -> bytes:
    """The first flight of a TLS client (what ssl sends before any answer)."""
    ctx = ssl.create_default_context()
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(incoming, outgoing, server_hostname=server_name)
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return outgoing.read()


class SecureRun:
    def __init__(self, seed: int, workdir: Path, rss_limit_mib: int = 400) -> None:
        from shim.security.certs import make_certs

        self.rng = random.Random(seed)
        self.result = Result(seed)
        self.corpus = load()
        self.certs = make_certs(workdir / "certs")
        self.log_path = workdir / "broker.log"
        self.broker = BrokerProcess(
            workdir / "data", self.log_path, "--listeners", LISTENERS, "--ssl-keystore-location",
            str(self.certs["broker.pem"]), "--ssl-truststore-location", str(self.certs["ca.pem"]),
            "--ssl-client-auth", "requested", "--sasl-user", f"{USER}:{PASSWORD}",
            "--sasl-enabled-mechanisms", ",".join(MECHANISMS), "--max-request-bytes", str(1 << 20),
            "--connections-max-reauth-ms", str(REAUTH_MS))
        self.tls = ssl.create_default_context(cafile=str(self.certs["ca.pem"]))
        self.tls.check_hostname = False
        self.hello = client_hello()
        self.rss_limit_kib = rss_limit_mib * 1024
        self.ports: dict[str, int] = {}
        self.received = b""  # what the broker answered on the last connection that ended with eof

    def run(self, duration: float) -> Result:
        try:
            self.broker.start()
            self.ports = self._listener_ports()
            self.log = self.log_path.open(errors="replace")
            baseline = self._sockets()
            canary = Canary(self.broker.bootstrap)
            canary.start()
            canary.connected.wait(10)
            deadline = time.monotonic() + duration
            sweep = self.sweep()  # always finished, however slow the machine; then random cases
            while (sweep or time.monotonic() < deadline) and canary.error is None and self.broker.alive():
                self.one_case(*(sweep.pop(0) if sweep else ()))
            canary.stop()
            self._conclude(canary, baseline)
            return self.result
        finally:
            self.broker.stop()

    def _listener_ports(self) -> dict[str, int]:
        """From the line ``kafka-shim serve`` prints after its ready line (read until it is there)."""
        deadline = time.monotonic() + 30
        while not (line := re.search(r"kafka-shim listeners: (\S+)", self.log_path.with_suffix(".stdout0").read_text())):
            if time.monotonic() > deadline or not self.broker.alive():
                raise RuntimeError("kafka-shim serve printed no listeners line")
            time.sleep(0.05)
        return {name: int(port) for name, port in re.findall(r"(\w+)://[^,]*:(\d+)", line.group(1))}

    def _sockets(self) -> int:
        count = 0
        for fd in os.listdir(f"/proc/{self.broker.proc.pid}/fd"):
            try:
                count += os.readlink(f"/proc/{self.broker.proc.pid}/fd/{fd}").startswith("socket:")
            except OSError:
                pass  # closed meanwhile
        return count

    @staticmethod
    def sweep() -> list[tuple]:
        """The first cases of a run, whatever its length: every SASL mechanism (and the wrong ones)
        in both framings on both SASL listeners, and on both TLS listeners garbage and each way of
        ending a connection after a handshake."""
        sasl = [("sasl", listener, {"mechanism": m, "v0": v0}) for listener in ("SASL_PLAINTEXT", "SASL_SSL")
                for m in SASL_MECHANISMS for v0 in (False, True)]
        sasl += [("reauth", listener, {}) for listener in ("SASL_PLAINTEXT", "SASL_SSL")]
        tls = [("tls", listener, {"close": close}) for listener in ("SSL", "SASL_SSL")
               for close in ("raw", "mid", "fin", "close_notify", "abort")]
        return sasl + tls

    def one_case(self, kind: str | None = None, listener: str | None = None, forced: dict | None = None) -> None:
        kind = kind or self.rng.choice(("sasl", "sasl", "reauth", "tls"))
        listener = listener or self.rng.choice(("SSL", "SASL_SSL") if kind == "tls" else ("SASL_PLAINTEXT", "SASL_SSL"))
        due = None
        if kind == "sasl":
            wire, ops = sasl_case(self.rng, **(forced or {}))
            ending = self.send(listener, wire, handshake=listener == "SASL_SSL", close="fin")
        elif kind == "reauth":
            wire, ops, due = reauth_case(self.rng)
            ending = self.send(listener, wire, handshake=listener == "SASL_SSL", close="fin", want=due)
        else:
            wire, ops, handshake, close = self.tls_case(**(forced or {}))
            ending = self.send(listener, wire, handshake, close)
        ops = [kind, listener, *ops]
        self.result.cases += 1
        self.result.outcomes[ending] = self.result.outcomes.get(ending, 0) + 1
        if ending == "timeout":
            self.result.fail(f"a connection stayed open after the client ended its side: {ops}")
        elif due is not None and ending == "eof" and _count_frames(self.received) != due:
            self.result.fail(f"{_count_frames(self.received)} answers to {due} requests of clean re-authentications: {ops}")
        elif due is not None and ending == "eof" and sasl_errors(self.received, wire):
            self.result.fail(f"clean re-authentications answered {sasl_errors(self.received, wire)}: {ops}")
        self._check_log(ops)
        if not self.broker.alive():
            self.result.fail(f"the broker exited with {self.broker.proc.returncode} after {ops}")
        else:
            peak = self._peak_rss()
            self.result.peak_rss_kib = max(self.result.peak_rss_kib, peak)
            if peak > self.rss_limit_kib:
                self.result.fail(f"broker peak RSS {peak // 1024} MiB passed {self.rss_limit_kib // 1024} MiB")

    def tls_case(self, close: str | None = None) -> tuple[bytes, list[str], bool, str]:
        """``close``: "raw" (no TLS), "mid" (garbage in the middle of a handshake), or how a
        connection that completed its handshake ends."""
        draw = self.rng.random()
        if close == "mid" or close is None and draw < 0.15:
            return b"", ["mid"], False, "mid"
        if close == "raw" or close is None and draw < 0.35:  # no TLS: a mutated or cut ClientHello, or anything else
            data = bytearray(self.rng.choice((self.hello, self.hello, self.rng.randbytes(64), b"GET / HTTP/1.1\r\n\r\n")))
            for _ in range(self.rng.randint(0, 3)):
                self.rng.choice(TOKEN_OPS)(self.rng, data, [self.hello])
            return bytes(data), ["raw"], False, "fin"
        case = mutate.case(self.rng, self.corpus)
        close = close or self.rng.choice(("fin", "close_notify", "abort"))
        return case.wire(), [*case.ops, close], True, close

    def send(self, listener: str, wire: bytes, handshake: bool, close: str, want: int | None = None) -> str:
        """``want``: answers to read before the client ends its side (a TLS connection's bare FIN
        may drop answers still due, as Kafka's selector drops a connection at its EOF)."""
        try:
            sock = socket.create_connection(("127.0.0.1", self.ports[listener]), timeout=10)
        except OSError as exc:
            return f"connect:{exc.__class__.__name__}"
        try:
            if close == "mid":
                wire = self._mid_handshake(sock)
                close = "fin"
            if handshake:
                sock = self.tls.wrap_socket(sock, server_hostname="localhost")
            sock.sendall(wire)
            if close == "abort":
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                return "abort"
            sock.settimeout(READ_TIMEOUT)
            self.received = b""
            while want is not None and _count_frames(self.received) < want and (chunk := sock.recv(1 << 16)):
                self.received += chunk
            if close == "close_notify" and isinstance(sock, ssl.SSLSocket):
                sock = sock.unwrap()
            sock.shutdown(socket.SHUT_WR)
            while chunk := sock.recv(1 << 16):
                self.received += chunk
            return "eof"
        except socket.timeout:
            return "timeout"
        except OSError:  # ssl.SSLError too: the broker refused the handshake or closed mid-stream
            return "reset"
        finally:
            sock.close()

    def _mid_handshake(self, sock: socket.socket) -> bytes:
        """A real ClientHello, the server's first flight read, then (instead of the client's second
        flight) that flight mutated, cut, or garbage: what ``send`` writes next."""
        rng, incoming, outgoing = self.rng, ssl.MemoryBIO(), ssl.MemoryBIO()
        obj = self.tls.wrap_bio(incoming, outgoing, server_hostname="localhost")
        try:
            obj.do_handshake()
        except ssl.SSLWantReadError:
            pass
        sock.sendall(outgoing.read())
        sock.settimeout(READ_TIMEOUT)
        flight = b""
        while True:  # feed the server's answer until the client has its second flight ready
            chunk = sock.recv(1 << 16)
            if not chunk:
                return b""
            incoming.write(chunk)
            try:
                obj.do_handshake()
            except ssl.SSLWantReadError:
                pass
            except ssl.SSLError:
                return b""
            flight = outgoing.read()
            if flight:
                break
        data = bytearray(flight)
        for _ in range(rng.randint(1, 3)):
            rng.choice(TOKEN_OPS)(rng, data, [flight])
        return rng.choice((bytes(data), flight[: rng.randrange(len(flight))], rng.randbytes(rng.randint(1, 300))))

    def _peak_rss(self) -> int:
        try:
            return self.broker.memory_kib()["VmHWM"]
        except (OSError, KeyError):
            return 0

    def _check_log(self, ops) -> None:
        chunk = self.log.read()
        for marker in ("Traceback", "internal error", "cannot encode", "Task exception was never retrieved",
                       "Exception in callback"):
            if marker == "cannot encode" and all("closing connection" in ln and "cannot encode the" in ln
                                                 for ln in chunk.splitlines() if marker in ln):
                continue  # a response whose fields overflow: closed as Kafka does (shim/apis/dispatch.py, run.py)
            if marker in chunk:
                i = chunk.index(marker)
                self.result.fail(f"the broker log has {marker!r} after {ops}:\n{chunk[max(0, i - 300): i + 1500]}")

    def _conclude(self, canary: Canary, baseline: int) -> None:
        record_canary(self.result, canary, self.broker.alive)
        if not self.broker.alive():
            return
        # every fuzz connection and the canary's are closed on the client side: the broker's must go too
        deadline = time.monotonic() + 10
        while self._sockets() > baseline and time.monotonic() < deadline:
            time.sleep(0.1)
        if self._sockets() > baseline:
            self.result.fail(f"{self._sockets() - baseline} connection(s) still open in the broker after every client "
                             f"closed (sockets before: {baseline})")


def secure_fuzz(duration: float, seed: int, workdir: Path | None = None, rss_limit_mib: int = 400) -> Result:
    if workdir is not None:
        workdir.mkdir(parents=True, exist_ok=True)
        return SecureRun(seed, workdir, rss_limit_mib).run(duration)
    with tempfile.TemporaryDirectory(prefix="kafka-shim-fuzz-secure-") as tmp:
        return SecureRun(seed, Path(tmp), rss_limit_mib).run(duration)
