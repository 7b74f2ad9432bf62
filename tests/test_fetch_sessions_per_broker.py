"""Each simulated broker keeps its own incremental fetch sessions (KIP-227), as each Kafka broker
keeps its own FetchSessionCache: on the wire, a session id broker 1 gave is unknown to broker 2,
and a broker that was stopped comes back without its sessions."""

from __future__ import annotations

import asyncio
import datetime
import struct

from shim import Broker
from shim.errors import ErrorCode as E
from shim.protocol.messages import RequestHeader, decode_response, encode_request, request_module

FETCH, VERSION = 1, 12


class Connection:
    def __init__(self, reader, writer) -> None:
        self.reader, self.writer, self.correlation = reader, writer, 0

    async def fetch(self, session_id: int, epoch: int, partitions=()):
        m = request_module(FETCH, VERSION)
        parts = tuple(m.FetchPartition(partition=i, current_leader_epoch=-1, fetch_offset=0, last_fetched_epoch=-1,
                                       log_start_offset=-1, partition_max_bytes=1 << 20) for i in partitions)
        request = m.FetchRequest(cluster_id=None, replica_id=-1, max_wait=datetime.timedelta(0), min_bytes=0,
                                 max_bytes=1 << 20, isolation_level=0, session_id=session_id, session_epoch=epoch,
                                 rack_id="", topics=(m.FetchTopic(topic="t", partitions=parts),) if parts else (),
                                 forgotten_topics_data=())
        self.correlation += 1
        payload = encode_request(RequestHeader(FETCH, VERSION, self.correlation, "sessions"), request)
        self.writer.write(struct.pack(">i", len(payload)) + payload)
        size = struct.unpack(">i", await self.reader.readexactly(4))[0]
        return decode_response(await self.reader.readexactly(size), FETCH, VERSION)[1]


async def connect(broker, node_id: int) -> Connection:
    return Connection(*await asyncio.open_connection(*broker.node.endpoint(None, node_id)))


def led_by(broker, node_id: int) -> list[int]:
    return [p for p in range(6) if broker.node.cluster.state("t", p).leader == node_id]


async def test_a_session_of_one_broker_is_unknown_to_another(tmp_path):
    async with Broker(data_dir=tmp_path / "d", listen="127.0.0.1:0", brokers=2) as broker:
        broker.node.logs.create_topic("t", 6)
        first, second = broker.node.node_ids
        one, two = await connect(broker, first), await connect(broker, second)
        full = await one.fetch(0, 0, led_by(broker, first))
        assert full.error_code == E.none and full.session_id != 0
        elsewhere = await two.fetch(full.session_id, 1)
        assert (elsewhere.error_code, elsewhere.session_id) == (E.fetch_session_id_not_found, 0)
        incremental = await one.fetch(full.session_id, 1)
        assert (incremental.error_code, incremental.session_id) == (E.none, full.session_id)
        stats = broker.node.fetch_sessions.stats()
        assert (stats["sessions"], stats["brokers"][first]["incremental_fetches"]) == (1, 1)
        # each broker holds sessions of its own, ids drawn independently
        other = await two.fetch(0, 0, led_by(broker, second))
        assert other.error_code == E.none and other.session_id != 0
        assert {n: s["sessions"] for n, s in broker.node.fetch_sessions.stats()["brokers"].items()} == {
            first: 1, second: 1}
        for c in (one, two):
            c.writer.close()


async def test_a_stopped_broker_comes_back_without_its_sessions(tmp_path):
    async with Broker(data_dir=tmp_path / "d", listen="127.0.0.1:0", brokers=2) as broker:
        broker.node.logs.create_topic("t", 6)
        first, second = broker.node.node_ids
        two = await connect(broker, second)
        full = await two.fetch(0, 0, led_by(broker, second))
        assert full.session_id != 0
        await broker.node_down(second)
        await broker.node_up(second)
        two = await connect(broker, second)
        again = await two.fetch(full.session_id, 1)
        assert again.error_code == E.fetch_session_id_not_found
        two.writer.close()
