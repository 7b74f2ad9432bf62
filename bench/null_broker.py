"""``python -m bench.null_broker --port P``: a sink that speaks just enough of Kafka for a plain
(not idempotent) producer and answers every Produce at once, writing nothing. What a producer does
against it is the producer's own ceiling on this machine: ``python -m bench.bound --systems null``.

It answers ApiVersions, Metadata (one broker, itself), CreateTopics (remembers the topic and its
partition count) and Produce (offsets counted from each batch's record count, nothing kept), one
request at a time per connection; anything else closes the connection. It advertises Fetch too,
without answering it, so that librdkafka writes record batches as it does to a broker. Not a broker: no
validation, no storage, no errors beyond an unknown topic. Encoding through shim.protocol.messages
(kio), so the answers are the ones kafka-shim's codec writes.
"""

from __future__ import annotations

import argparse
import asyncio
import struct
import uuid

from kio.schema.errors import ErrorCode

from shim.protocol.framing import frame
from shim.protocol import produce_wire
from shim.protocol.messages import decode_request, encode_response, make, peek, response_class, response_module

# ApiVersions, Metadata, Produce, CreateTopics; and Fetch v4+ advertised though never answered:
# librdkafka writes record batches (message format v2) only to a broker that has Produce v3+ and
# Fetch v4+ (its MsgVer2 feature), else the legacy message sets with a zlib CRC per record.
VERSIONS = {18: (0, 3), 3: (4, 12), 0: (3, 9), 19: (2, 7), 1: (4, 12)}
ANSWERED = (18, 3, 0, 19)
NODE = 1


class Sink:
    def __init__(self, port: int) -> None:
        self.port = port
        self.topics: dict[str, tuple[uuid.UUID, int]] = {}
        self.offsets: dict[tuple[str, int], int] = {}

    def nested(self, key: int, version: int, name: str) -> type:
        return getattr(response_module(key, version), name)

    def api_versions(self, v: int, req) -> object:
        keys = tuple(make(self.nested(18, v, "ApiVersion"), api_key=k, min_version=lo, max_version=hi)
                     for k, (lo, hi) in VERSIONS.items())
        return make(response_class(18, v), error_code=ErrorCode.none, api_keys=keys, throttle_time=0)

    def metadata(self, v: int, req) -> object:
        names = list(self.topics) if req.topics is None else [t.name for t in req.topics]
        part_cls, topic_cls = self.nested(3, v, "MetadataResponsePartition"), self.nested(3, v, "MetadataResponseTopic")
        topics = []
        for name in names:
            tid, n = self.topics.get(name, (uuid.UUID(int=0), 0))
            parts = tuple(make(part_cls, error_code=ErrorCode.none, partition_index=i, leader_id=NODE, leader_epoch=0,
                               replica_nodes=(NODE,), isr_nodes=(NODE,), offline_replicas=()) for i in range(n))
            error = ErrorCode.none if name in self.topics else ErrorCode.unknown_topic_or_partition
            topics.append(make(topic_cls, error_code=error, name=name, topic_id=tid, is_internal=False,
                               partitions=parts, topic_authorized_operations=-2147483648))
        broker = make(self.nested(3, v, "MetadataResponseBroker"), node_id=NODE, host="127.0.0.1", port=self.port,
                      rack=None)
        return make(response_class(3, v), throttle_time=0, brokers=(broker,), cluster_id="null-broker",
                    controller_id=NODE, topics=tuple(topics), cluster_authorized_operations=-2147483648)

    def create_topics(self, v: int, req) -> object:
        out = []
        for t in req.topics:
            self.topics.setdefault(t.name, (uuid.uuid4(), max(t.num_partitions, 1)))
            tid, n = self.topics[t.name]
            out.append(make(self.nested(19, v, "CreatableTopicResult"), name=t.name, topic_id=tid,
                            error_code=ErrorCode.none, error_message=None, topic_config_error_code=ErrorCode.none,
                            num_partitions=n, replication_factor=1, configs=()))
        return make(response_class(19, v), throttle_time=0, topics=tuple(out))

    def produce(self, data: bytes, v: int) -> bytes:
        """Read and answered by kafka-shim's own Produce codec (shim.protocol.produce_wire), the
        cheapest there is in this repository, so the sink costs less than any broker it stands for."""
        decoded = produce_wire.decode(data, v)
        header, req = decoded if decoded is not None else decode_request(data, 0, v)
        topics = []
        for t in req.topic_data:
            parts = []
            for p in t.partition_data:
                base = self.offsets.get((t.name, p.index), 0)
                count = struct.unpack_from(">i", p.records, 57)[0] if p.records and len(p.records) >= 61 else 0
                self.offsets[(t.name, p.index)] = base + count
                parts.append((p.index, 0, base, -1, 0))
            topics.append((t.name, getattr(t, "topic_id", None), parts))
        return produce_wire.encode_answer(header.correlation_id, v, topics, 0)

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        handlers = {18: self.api_versions, 3: self.metadata, 19: self.create_topics}
        try:
            while True:
                size = struct.unpack(">i", await reader.readexactly(4))[0]
                data = await reader.readexactly(size)
                key, version, _ = peek(data)
                lo, hi = VERSIONS.get(key, (0, -1))
                if key not in ANSWERED or not lo <= version <= hi:
                    break
                if key == 0:
                    writer.write(frame(self.produce(data, version)))
                else:
                    header, req = decode_request(data, key, version)
                    writer.write(frame(encode_response(header.correlation_id, handlers[key](version, req))))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


async def main(port: int) -> None:
    server = await asyncio.start_server(Sink(port).serve, "127.0.0.1", port)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(prog="python -m bench.null_broker")
    ap.add_argument("--port", type=int, required=True)
    port = ap.parse_args().port
    try:  # kafka-shim's default loop, where installed
        import uvloop
    except ImportError:
        asyncio.run(main(port))
    else:
        uvloop.run(main(port))
