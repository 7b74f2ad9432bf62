"""The control plane over HTTP/JSON (``kafka-shim serve --control-listen HOST:PORT``), stdlib asyncio.

    GET  /v1/ops          the operations and their arguments
    POST /v1/ops/NAME     run operation NAME; the body is a JSON object of its arguments (may be empty)

Answers are JSON: the operation's result with 200, or ``{"error": "..."}`` with 400 (bad JSON or
arguments), 404 (no such operation or path), 405, 408 (``wait`` timed out), 409 (the broker refused,
e.g. fencing an unknown transactional id), 411/413 (body length missing or too large). One request
per connection (``Connection: close``); a slow or oversized request is cut off, never buffered, and
an answer the client does not read within 10 s is dropped with its connection.
"""

from __future__ import annotations

import asyncio
import json
import logging
from http import HTTPStatus

from .args import ControlError
from .ops import OPS, call
from .plane import Control

log = logging.getLogger(__name__)

MAX_HEAD = 16 * 1024
MAX_BODY = 1024 * 1024
READ_TIMEOUT_S = 10.0
WRITE_TIMEOUT_S = 10.0  # an answer the client has not taken by then is dropped with its connection
MAX_CONNECTIONS = 64
PREFIX = "/v1/ops"


class ControlListener:
    def __init__(self, control: Control) -> None:
        self.control = control
        self.server: asyncio.base_events.Server | None = None
        self._open = 0

    async def start(self, host: str, port: int) -> tuple[str, int]:
        self.server = await asyncio.start_server(self._serve, host or None, port, limit=MAX_HEAD)
        bound = self.server.sockets[0].getsockname()
        return bound[0], bound[1]

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()
            self.server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._open += 1
        try:
            if self._open > MAX_CONNECTIONS:
                status, body = 503, {"error": "too many control connections"}
            else:
                status, body = await self._answer(reader)
            payload = json.dumps(body, indent=1).encode() + b"\n"
            writer.write(f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\nContent-Type: application/json\r\n"
                         f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n".encode() + payload)
            await asyncio.wait_for(writer.drain(), WRITE_TIMEOUT_S)
        except asyncio.TimeoutError:  # a client that does not read its answer holds neither it nor a slot
            writer.transport.abort()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._open -= 1
            writer.close()

    async def _answer(self, reader: asyncio.StreamReader) -> tuple[int, dict]:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), READ_TIMEOUT_S)
        except (asyncio.LimitOverrunError, ValueError):
            return 431, {"error": f"request head larger than {MAX_HEAD} bytes"}
        except asyncio.TimeoutError:
            return 408, {"error": "request not received in time"}
        try:
            method, path, headers = _parse_head(head)
        except ValueError as exc:
            return 400, {"error": str(exc)}
        if path.rstrip("/") == PREFIX:
            if method != "GET":
                return 405, {"error": f"{PREFIX} takes GET"}
            return 200, {"ops": [spec.describe() for spec in OPS.values()]}
        if not path.startswith(PREFIX + "/"):
            return 404, {"error": f"no such path {path!r}; operations are under {PREFIX}/"}
        name = path[len(PREFIX) + 1:].strip("/")
        if method == "GET" and name in OPS:
            return 200, OPS[name].describe()
        if method != "POST":
            return 405, {"error": f"run an operation with POST {PREFIX}/{name}"}
        status, args = await _read_json(reader, headers)
        if status != 200:
            return status, args
        try:
            return 200, await call(self.control, name, args)
        except ControlError as exc:
            return exc.status, {"error": str(exc)}
        except Exception as exc:  # a defect of an operation: answered, logged, the broker goes on
            log.exception("control operation %s failed", name)
            return 500, {"error": f"{name} failed: {exc!r}"}


def _parse_head(head: bytes) -> tuple[str, str, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise ValueError(f"not an HTTP/1.x request line: {lines[0][:100]!r}")
    headers = {}
    for line in lines[1:]:
        if line:
            name, sep, value = line.partition(":")
            if not sep:
                raise ValueError(f"malformed header line {line[:100]!r}")
            headers[name.strip().lower()] = value.strip()
    return parts[0], parts[1].split("?", 1)[0], headers


async def _read_json(reader: asyncio.StreamReader, headers: dict[str, str]) -> tuple[int, dict]:
    if "chunked" in headers.get("transfer-encoding", "").lower():
        return 411, {"error": "send the body with a Content-Length"}
    try:
        length = int(headers.get("content-length", "0"))
    except ValueError:
        return 400, {"error": "Content-Length is not a number"}
    if length < 0 or length > MAX_BODY:
        return 413, {"error": f"the body must be at most {MAX_BODY} bytes"}
    try:
        raw = await asyncio.wait_for(reader.readexactly(length), READ_TIMEOUT_S) if length else b""
    except asyncio.TimeoutError:
        return 408, {"error": "request body not received in time"}
    if not raw.strip():
        return 200, {}
    try:
        args = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:  # RecursionError: "[" nested 100,000 deep
        return 400, {"error": f"the body is not JSON: {exc}"}
    if not isinstance(args, dict):
        return 400, {"error": "the body must be a JSON object of the operation's arguments"}
    return 200, args
