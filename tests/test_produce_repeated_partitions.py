"""A Produce request naming one partition more than once, on the wire: Kafka keys the request by
partition (KafkaApis.handleProduceRequest), so the last copy is appended and answered, once."""

from __future__ import annotations

import asyncio
import datetime
import struct
import uuid

from kafka_codecs import Compression, decode_batch, encode_batch
from shim import Broker
from shim.errors import ErrorCode
from shim.protocol.messages import RequestHeader, decode_response, encode_request, request_module

from test_server_limits import until

TS = 1_700_000_000_000


def batch(*values: bytes, compression=Compression.NONE) -> bytes:
    return encode_batch([(None, v, [], TS) for v in values], producer_id=-1, producer_epoch=-1, base_sequence=-1,
                        compression=compression)


async def produce(broker, topics, version=9, acks=-1):
    """``topics``: [(name or topic id, [(partition, records), ...]), ...], sent as given."""
    m = request_module(0, version)
    by_id = version >= 13

    def topic(key, parts):
        naming = {"topic_id": key} if by_id else {"name": key}
        return m.TopicProduceData(**naming, partition_data=tuple(
            m.PartitionProduceData(index=i, records=r) for i, r in parts))

    request = m.ProduceRequest(transactional_id=None, acks=acks, timeout=datetime.timedelta(seconds=5),
                               topic_data=tuple(topic(k, ps) for k, ps in topics))
    payload = encode_request(RequestHeader(0, version, 7, "repeat"), request)
    reader, writer = await asyncio.open_connection(broker.node.host, broker.node.port)
    try:
        writer.write(struct.pack(">i", len(payload)) + payload)
        size = struct.unpack(">i", await reader.readexactly(4))[0]
        return decode_response(await reader.readexactly(size), 0, version)[1]
    finally:
        writer.close()


def values(plog) -> list[bytes]:
    data, out, pos = bytes(plog.read(0, 1 << 20, False).data), [], 0
    while pos < len(data):
        size = 12 + struct.unpack_from(">i", data, pos + 8)[0]
        out.extend(r.value for r in decode_batch(data[pos:pos + size])[1])
        pos += size
    return out


def answer(response) -> list:
    return [(t.name, [(p.index, p.error_code, p.base_offset) for p in t.partition_responses])
            for t in response.responses]


async def test_the_last_copy_of_a_partition_is_appended_and_answered_once(tmp_path):
    async with Broker(data_dir=tmp_path / "d", listen="127.0.0.1:0") as broker:
        broker.node.logs.create_topic("t", 2)
        response = await produce(broker, [
            ("t", [(0, batch(b"a1", b"a2")), (1, batch(b"c")), (0, batch(b"b"))]),
            ("t", [(1, batch(b"d1", b"d2", b"d3"))]),
        ])
        # one topic entry, one entry per partition, as ProduceResponse groups Kafka's map
        assert answer(response) == [("t", [(0, 0, 0), (1, 0, 0)])]
        await until(lambda: broker.node.logs.get("t", 1).log_end_offset == 3)
        assert values(broker.node.logs.get("t", 0)) == [b"b"]
        assert values(broker.node.logs.get("t", 1)) == [b"d1", b"d2", b"d3"]


async def test_a_copy_validate_records_refuses_answers_though_another_copy_appends(tmp_path):
    # ProduceRequest.validateRecords refuses zstd below v7; Kafka's refusals are merged over the append's answer
    async with Broker(data_dir=tmp_path / "d", listen="127.0.0.1:0") as broker:
        broker.node.logs.create_topic("t", 2)
        zstd = batch(b"z", compression=Compression.ZSTD)
        response = await produce(broker, [("t", [(0, batch(b"kept")), (0, zstd), (1, zstd), (1, zstd)])], version=5)
        code = ErrorCode.unsupported_compression_type
        assert answer(response) == [("t", [(0, code, -1), (1, code, -1)])]
        assert values(broker.node.logs.get("t", 0)) == [b"kept"]
        assert broker.node.logs.get("t", 1).log_end_offset == 0


async def test_an_unknown_partition_named_twice_is_answered_once(tmp_path):
    async with Broker(data_dir=tmp_path / "d", listen="127.0.0.1:0") as broker:
        broker.node.logs.create_topic("t", 1)
        response = await produce(broker, [("t", [(5, batch(b"x")), (5, batch(b"y"))]), ("u", [(0, batch(b"x"))])])
        unknown = ErrorCode.unknown_topic_or_partition
        assert answer(response) == [("t", [(5, unknown, -1)]), ("u", [(0, unknown, -1)])]


async def test_topics_named_by_id_are_keyed_by_id(tmp_path):
    async with Broker(data_dir=tmp_path / "d", listen="127.0.0.1:0", kafka_version="4.1") as broker:
        broker.node.logs.create_topic("t", 1)
        topic_id = broker.node.logs.topic("t").topic_id
        unknown = uuid.uuid4()
        response = await produce(broker, [(topic_id, [(0, batch(b"a"))]), (unknown, [(0, batch(b"x"))]),
                                          (topic_id, [(0, batch(b"b"))]), (unknown, [(0, batch(b"y"))])], version=13)
        got = [(t.topic_id, [(p.index, p.error_code) for p in t.partition_responses]) for t in response.responses]
        assert got == [(topic_id, [(0, ErrorCode.none)]), (unknown, [(0, ErrorCode.unknown_topic_id)])]
        assert values(broker.node.logs.get("t", 0)) == [b"b"]


async def test_a_request_read_by_kio_is_keyed_too(tmp_path):
    # with the request log on, requests go through kio's objects, not the Produce reader
    async with Broker(data_dir=tmp_path / "d", listen="127.0.0.1:0") as broker:
        broker.node.logs.create_topic("t", 1)
        broker.node.control.requests.start()
        broker.node.control.refresh()
        response = await produce(broker, [("t", [(0, batch(b"a"))]), ("t", [(0, batch(b"b"))])])
        assert answer(response) == [("t", [(0, 0, 0)])]
        assert values(broker.node.logs.get("t", 0)) == [b"b"]
