"""A Produce naming many partitions gives the loop up as it appends, and appends still follow the
order requests arrive in: before its first yield it reserves every partition it has still to
append to (as an append waiting behind a recompression on a worker thread does), so a Produce
from another connection arriving meanwhile appends after it, idempotent sequences included.

The other connection's requests are written when the big Produce first awaits its Pacer, i.e.
once it is walking the rest of its partitions; they are read at its next yield.
"""

from __future__ import annotations

import asyncio
import datetime
import struct
import time

from kafka_codecs import encode_batch

from shim import Broker
from shim.apis import _pace, k00_produce
from shim.apis import dispatch as _dispatch
from shim.errors import ErrorCode
from shim.protocol.messages import RequestHeader, decode_response, encode_request, make, peek, request_module

from test_server_limits import api_versions, connect, until

BYSTANDER, OTHER, PARTITIONS = 5000, 6000, 1000
N = PARTITIONS  # each named once: Kafka keys a Produce by partition (a repeated one counts once)
PID, LAST = 4242, PARTITIONS - 1
TS = int(time.time() * 1000)  # within retention.ms: no segment expires during the test


def _produce(correlation_id: int, partitions) -> bytes:
    """A Produce v9 (acks=all) of ``partitions``: (index, batch) pairs, in order."""
    m = request_module(0, 9)
    request = make(m.ProduceRequest, transactional_id=None, acks=-1, timeout=datetime.timedelta(seconds=30),
                   topic_data=(m.TopicProduceData(name="t", partition_data=tuple(
                       m.PartitionProduceData(index=i, records=b) for i, b in partitions)),))
    payload = encode_request(RequestHeader(0, 9, correlation_id, "pacing-test"), request)
    return struct.pack(">i", len(payload)) + payload


async def _answer(reader, key: int, version: int):
    size = struct.unpack(">i", await asyncio.wait_for(reader.readexactly(4), 60))[0]
    return decode_response(await reader.readexactly(size), key, version)


async def test_a_produce_naming_many_partitions_lets_others_in_and_keeps_arrival_order(tmp_path, monkeypatch):
    """100,000 partitions in one Produce held the loop 1.5 s. Another connection's ApiVersions is
    now answered while it appends, and another connection's Produce to a partition the big one
    has still to append to goes after it: the last partition's batch of the big request takes
    offset 0, the other's idempotent batch (sequence 1, following the big request's sequence 0 of
    the same producer) offset 1. The walk is made to yield at its second look at the clock, so
    a thousand partitions show it on any machine."""
    plain = bytes(encode_batch([(None, b"v", (), TS)]))
    first = bytes(encode_batch([(None, b"seq0", (), TS)], producer_id=PID, producer_epoch=0, base_sequence=0))
    second = bytes(encode_batch([(None, b"seq1", (), TS)], producer_id=PID, producer_epoch=0, base_sequence=1))
    big = [(i, plain) for i in range(N - 1)] + [(LAST, first)]
    paced, paced_when_others_came, done = [0], [], []
    original_pace, original_dispatch = _pace.Pacer.__call__, _dispatch.dispatch_request

    async def pace(self):
        paced[0] += 1
        if paced[0] == 1:  # the big Produce walks the rest of its partitions: the others arrive now
            bystander[1].write(api_versions(BYSTANDER))
            other[1].write(_produce(OTHER, [(LAST, second)]))
        await original_pace(self)

    async def handled(node, frame, *args, **kwargs):
        correlation_id = peek(frame)[2]
        if correlation_id != 1:
            paced_when_others_came.append(paced[0])
        answer = await original_dispatch(node, frame, *args, **kwargs)
        done.append(correlation_id)
        return answer

    async with Broker(data_dir=tmp_path / "d", listen="127.0.0.1:0") as broker:
        broker.node.logs.create_topic("t", PARTITIONS)
        conns = big_conn, bystander, other = await connect(broker), await connect(broker), await connect(broker)
        await until(lambda: len(broker._server.connections) == 3)
        monkeypatch.setattr(_pace.Pacer, "__call__", pace)
        monkeypatch.setattr(k00_produce, "SLICE_S", 0.0)
        monkeypatch.setattr(_dispatch, "dispatch_request", handled)
        big_conn[1].write(_produce(1, big))
        assert (await _answer(bystander[0], 18, 3))[0] == BYSTANDER
        other_id, other_answer = await _answer(other[0], 0, 9)
        big_id, big_answer = await _answer(big_conn[0], 0, 9)
        assert done.index(BYSTANDER) < done.index(1)  # answered while the big Produce appended
        assert max(paced_when_others_came) < N  # both arrived mid-walk
        assert (other_id, big_id) == (OTHER, 1)
        parts = big_answer.responses[0].partition_responses
        assert [p.index for p in parts] == [i for i, _ in big]
        assert all(p.error_code == ErrorCode.none for p in parts)
        assert all(p.base_offset == 0 for p in parts)
        (after,) = other_answer.responses[0].partition_responses
        assert (after.error_code, after.base_offset) == (ErrorCode.none, 1)
        assert broker.node.logs.get("t", LAST).log_end_offset == 2
        for _, writer in conns:
            writer.close()
