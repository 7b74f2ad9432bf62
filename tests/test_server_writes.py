"""How the shell writes answers: requests a client pipelined are answered in one send."""

from __future__ import annotations

import asyncio
import struct

from shim import Broker, connection
from shim.apis import dispatch
from shim.protocol.messages import decode_response

from test_server_limits import api_versions, until


class RecordingTransport:
    """The connection's transport, recording what is written (uvloop's transports are native
    objects whose methods cannot be replaced)."""

    def __init__(self, transport) -> None:
        self._transport, self.writes = transport, []

    def write(self, data) -> None:
        self.writes.append(bytes(data))
        self._transport.write(data)

    def __getattr__(self, name):
        return getattr(self._transport, name)


def frames(data: bytes) -> list[bytes]:
    out, pos = [], 0
    while pos < len(data):
        size = struct.unpack_from(">i", data, pos)[0]
        out.append(data[pos + 4:pos + 4 + size])
        pos += 4 + size
    return out


async def test_answers_to_pipelined_requests_leave_in_one_write_in_order(tmp_path, monkeypatch):
    # answers are held while the answering task runs; it yields (and they leave) after each
    # connection.ANSWER_SLICE_S, and to encode on a worker thread an answer that took longer than
    # dispatch.SLICE_S to build: a loaded machine can spend either on three requests, and neither
    # is this test's subject
    monkeypatch.setattr(connection, "ANSWER_SLICE_S", 60.0)
    monkeypatch.setattr(dispatch, "SLICE_S", 60.0)
    async with Broker(data_dir=tmp_path / "d", listen="127.0.0.1:0") as broker:
        reader, writer = await asyncio.open_connection(broker.node.host, broker.node.port)
        await until(lambda: len(broker._server.connections) == 1)
        conn = next(iter(broker._server.connections))
        conn.transport = recorder = RecordingTransport(conn.transport)
        writes = recorder.writes

        writer.write(b"".join(api_versions(cid) for cid in (1, 2, 3)))  # three requests in one send
        ids = []
        for _ in range(3):
            size = struct.unpack(">i", await reader.readexactly(4))[0]
            ids.append(decode_response(await reader.readexactly(size), 18, 3)[0])
        assert ids == [1, 2, 3]
        assert len(writes) == 1
        assert [decode_response(f, 18, 3)[0] for f in frames(writes[0])] == [1, 2, 3]
        writer.close()
