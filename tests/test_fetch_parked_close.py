"""A Fetch parked for min_bytes ends when its client closes the connection, as Kafka closes a
channel at its end of stream: it used to wait out max_wait (up to 24 days), so clients that sent
one and closed left it behind, holding memory and walked again at every append (3,000 of them:
40 MB and each later produce 0.6-1 s, before; 2 MB and 0.2 ms after)."""

from __future__ import annotations

import asyncio
import datetime
import struct

from shim import Broker
from shim.protocol.messages import RequestHeader, encode_request, make, request_module

from test_server_limits import until

VERSION = 12
m = request_module(1, VERSION)


def parked_fetch() -> bytes:
    request = make(m.FetchRequest, replica_id=-1, max_wait=datetime.timedelta(days=1), min_bytes=2**31 - 1,
                   max_bytes=1 << 20, isolation_level=0, session_id=0, session_epoch=-1, rack_id="",
                   forgotten_topics_data=(), topics=(m.FetchTopic(topic="t", partitions=(m.FetchPartition(
                       partition=0, current_leader_epoch=-1, fetch_offset=0, last_fetched_epoch=-1,
                       log_start_offset=-1, partition_max_bytes=1024),)),))  # fmt: skip
    payload = encode_request(RequestHeader(1, VERSION, 1, "parked"), request)
    return struct.pack(">i", len(payload)) + payload


async def test_a_parked_fetch_ends_when_its_client_closes(tmp_path):
    async with Broker(data_dir=tmp_path / "d", listen="127.0.0.1:0") as broker:
        node = broker.node
        node.logs.create_topic("t", 1)
        kept_reader, kept = await asyncio.open_connection(node.host, node.port)
        kept.write(parked_fetch())
        closing = []
        for _ in range(20):
            reader, writer = await asyncio.open_connection(node.host, node.port)
            writer.write(parked_fetch())
            closing.append(writer)
        await until(lambda: node.changes.parked() == 21)
        for writer in closing:
            writer.close()
        await until(lambda: node.changes.parked() == 1)  # stayed 21 until max_wait before
        kept.close()
        await until(lambda: not node.changes.parked())
