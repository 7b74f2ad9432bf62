"""The shell on both event loops it supports: asyncio's and uvloop (the default when installed).

uvloop has no ``loop.sendfile``, so there large Fetch answers are read from the segment file in
chunks and written as the transport takes them; these tests fetch such answers over PLAINTEXT
and TLS on each loop, from a client that reads them at once and from one that stops reading, and
check that every path closes the file it sends from. Every wait is on an observed state.
"""

from __future__ import annotations

import asyncio
import datetime
import os
import ssl
import struct

import pytest

from kafka_codecs import encode_batch, iter_batches
from shim import Broker, BrokerThread
from shim.errors import ErrorCode
from shim.event_loops import has_native_sendfile, loop_name
from shim.node import now_ms
from shim.protocol.messages import RequestHeader, decode_response, encode_request, request_module
from shim.security.certs import make_certs
from shim.storage.producer_state import Origin
from shim.storage.validation import validate_client_batch

from test_server_limits import until

BOTH_LOOPS = pytest.mark.asyncio(loop_factories=["asyncio", "uvloop"])
FETCH_VERSION = 12
BATCH_VALUE = 256 * 1024


def fill(node, topic: str, batches: int) -> bytes:
    """``batches`` batches of one BATCH_VALUE-byte record each; the log's bytes."""
    node.logs.create_topic(topic, 1, {})
    plog = node.logs.get(topic, 0)
    for i in range(batches):
        data = bytearray(encode_batch([(b"%d" % i, bytes([i % 251]) * BATCH_VALUE, (), now_ms())]))
        plog.append(data, validate_client_batch(data, 1 << 24), 0, origin=Origin.CLIENT)
    segment = plog.segments[0]
    return segment.read(0, segment.size)


def fetch(topic: str, max_bytes: int, correlation_id: int = 7) -> bytes:
    m = request_module(1, FETCH_VERSION)
    partition = m.FetchPartition(partition=0, current_leader_epoch=-1, fetch_offset=0, last_fetched_epoch=-1,
                                 log_start_offset=-1, partition_max_bytes=max_bytes)
    request = m.FetchRequest(
        cluster_id=None, replica_id=-1, max_wait=datetime.timedelta(milliseconds=0), min_bytes=1,
        max_bytes=max_bytes, isolation_level=0, session_id=0, session_epoch=-1,
        topics=(m.FetchTopic(topic=topic, partitions=(partition,)),), forgotten_topics_data=(), rack_id="")
    payload = encode_request(RequestHeader(1, FETCH_VERSION, correlation_id, "loops-test"), request)
    return struct.pack(">i", len(payload)) + payload


async def read_fetch(reader) -> bytes:
    size = struct.unpack(">i", await asyncio.wait_for(reader.readexactly(4), 30))[0]
    correlation_id, response = decode_response(await asyncio.wait_for(reader.readexactly(size), 30), 1,
                                               FETCH_VERSION)
    assert correlation_id == 7
    partition = response.responses[0].partitions[0]
    assert partition.error_code == ErrorCode.none
    return partition.records


def open_log_files(directory) -> int:
    """Descriptors of this process open on a .log file under ``directory``."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        count += target.startswith(str(directory)) and target.endswith(".log")
    return count


def tls_broker(tmp_path) -> tuple[Broker, ssl.SSLContext]:
    certs = make_certs(tmp_path / "certs")
    broker = Broker(data_dir=tmp_path / "d", listeners="SSL://127.0.0.1:0", ssl_keystore_location=str(certs["broker.pem"]))
    return broker, ssl.create_default_context(cafile=str(certs["ca.pem"]))


async def connect(broker: Broker, tls: ssl.SSLContext | None, limit: int = 1 << 16):
    return await asyncio.open_connection(broker.node.host, broker.node.port, ssl=tls,
                                         server_hostname="localhost" if tls else None, limit=limit)


@BOTH_LOOPS
@pytest.mark.parametrize("listener", ["PLAINTEXT", "SSL"])
async def test_a_large_fetch_is_sent_from_the_segment_file_whole(tmp_path, listener, request):
    if listener == "SSL":
        broker, tls = tls_broker(tmp_path)
    else:
        broker, tls = Broker(data_dir=tmp_path / "d", listen="127.0.0.1:0"), None
    async with broker:
        log_bytes = fill(broker.node, "big", 24)  # 6 MiB: sent from the file, in many chunks on uvloop
        reader, writer = await connect(broker, tls)
        writer.write(fetch("big", 16 << 20))
        records = await read_fetch(reader)
        assert records == log_bytes
        assert sum(h.records_count for _, h in iter_batches(records)) == 24
        conn = next(iter(broker._server.connections))
        assert f"[{loop_name(conn.loop)}-" in request.node.name  # the loop the test asked for
        writer.close()
        await until(lambda: not broker._server.connections)
        assert open_log_files(tmp_path / "d") == 1  # the segment's own; the response's copy is closed


@BOTH_LOOPS
@pytest.mark.parametrize("listener", ["PLAINTEXT", "SSL"])
async def test_a_client_that_reads_slowly_makes_the_broker_hold_a_bounded_buffer(tmp_path, listener):
    """The broker writes a large answer only as fast as the client takes it: the transport holds
    about its high-water mark and one chunk at any time, never the 12 MiB of the answer."""
    if listener == "SSL":
        broker, tls = tls_broker(tmp_path)
    else:
        broker, tls = Broker(data_dir=tmp_path / "d", listen="127.0.0.1:0"), None
    async with broker:
        log_bytes = fill(broker.node, "big", 48)
        reader, writer = await connect(broker, tls)
        writer.write(fetch("big", 16 << 20))
        size = struct.unpack(">i", await asyncio.wait_for(reader.readexactly(4), 30))[0]
        conn = next(iter(broker._server.connections))
        loop, held, paused = asyncio.get_running_loop(), [], []

        def sample():  # what the broker holds for this client, every millisecond
            held.append(conn.transport.get_write_buffer_size())
            paused.append(conn._writable is not None)
            if not conn.lost:
                loop.call_later(0.001, sample)
        sample()
        body = bytearray()
        while len(body) < size:
            body += await asyncio.wait_for(reader.read(64 * 1024), 30)
            await asyncio.sleep(0.002)  # the client's pace
        writer.close()
        await until(lambda: conn.lost)
        correlation_id, response = decode_response(bytes(body), 1, FETCH_VERSION)
        assert response.responses[0].partitions[0].records == log_bytes
        assert max(held) < 2 * 1024 * 1024, max(held)
        if listener == "SSL" or not has_native_sendfile(loop):  # written by the broker, not by the kernel
            assert any(paused), "the transport never paused writing"


@BOTH_LOOPS
async def test_a_client_gone_in_the_middle_of_a_file_region_frees_its_file(tmp_path):
    async with Broker(data_dir=tmp_path / "d", listen="127.0.0.1:0") as broker:
        fill(broker.node, "big", 48)  # 12 MiB: more than the socket buffers between the two hold
        reader, writer = await connect(broker, None)
        writer.write(fetch("big", 16 << 20))
        await asyncio.wait_for(reader.readexactly(4), 30)  # the answer has started, and cannot end
        assert open_log_files(tmp_path / "d") == 2  # the segment's and the answer's
        writer.transport.abort()
        await until(lambda: not broker._server.connections)
        await until(lambda: open_log_files(tmp_path / "d") == 1)


@pytest.mark.parametrize("event_loop", ["asyncio", "uvloop"])
def test_a_broker_thread_runs_on_the_loop_its_config_names(tmp_path, event_loop):
    with BrokerThread(data_dir=tmp_path / "d", listen="127.0.0.1:0", event_loop=event_loop) as thread:
        assert loop_name(thread.loop) == event_loop
        assert thread.call(lambda: loop_name(asyncio.get_running_loop())) == event_loop


def test_a_broker_thread_runs_on_uvloop_unless_told_otherwise(tmp_path, monkeypatch):
    monkeypatch.delenv("KAFKA_SHIM_EVENT_LOOP", raising=False)
    with BrokerThread(data_dir=tmp_path / "d", listen="127.0.0.1:0") as thread:
        assert type(thread.loop).__module__ == "uvloop"
    monkeypatch.setenv("KAFKA_SHIM_EVENT_LOOP", "asyncio")
    with BrokerThread(data_dir=tmp_path / "d", listen="127.0.0.1:0") as thread:
        assert isinstance(thread.loop, asyncio.BaseEventLoop)


def test_an_unknown_event_loop_is_refused(tmp_path, monkeypatch):
    from shim.config import BrokerConfig

    with pytest.raises(ValueError, match="event loop must be one of auto, uvloop, asyncio, not 'trio'"):
        BrokerConfig(data_dir=tmp_path, event_loop="trio")
    monkeypatch.setenv("KAFKA_SHIM_EVENT_LOOP", "libev")
    with pytest.raises(ValueError, match="not 'libev'"):
        BrokerConfig(data_dir=tmp_path)
