"""Under --fsync always each append fsyncs on the loop (several ms on a busy disk), so a Produce
naming many partitions looks at the clock every few partitions: it looked every 64 and ran 128
appends before its first yield, and a Produce of 1,000 partitions held the loop 0.8 s. Counted here
as fsyncs between two turns of the loop, whatever the disk's speed: at most two looks' worth."""

from __future__ import annotations

import asyncio
import datetime
import time

from kafka_codecs import encode_batch
from shim.apis import _pace, k00_produce
from shim.apis.dispatch import dispatch
from shim.config import BrokerConfig
from shim.node import Node
from shim.protocol.messages import RequestHeader, encode_request, request_module
from shim.storage import partition_log

PARTITIONS = 300


async def test_a_produce_of_many_partitions_yields_between_a_few_fsyncs(tmp_path, monkeypatch):
    node = Node(BrokerConfig(data_dir=tmp_path / "d", fsync="always"))
    try:
        node.logs.create_topic("t", PARTITIONS)
        since_turn, most, flush = [0], [0], partition_log.PartitionLog.flush

        def counted(self):
            since_turn[0] += 1
            most[0] = max(most[0], since_turn[0])
            flush(self)

        async def turns():
            while True:
                since_turn[0] = 0
                await asyncio.sleep(0)

        monkeypatch.setattr(partition_log.PartitionLog, "flush", counted)
        monkeypatch.setattr(k00_produce, "SLICE_S", 0.0)  # every look at the clock is out of time
        monkeypatch.setattr(_pace, "SLICE_S", 0.0)
        batch = encode_batch([(None, b"v", (), int(time.time() * 1000))])
        m = request_module(0, 9)
        request = m.ProduceRequest(transactional_id=None, acks=-1, timeout=datetime.timedelta(seconds=5), topic_data=(
            m.TopicProduceData(name="t", partition_data=tuple(
                m.PartitionProduceData(index=i, records=batch) for i in range(PARTITIONS))),))  # fmt: skip
        ticker = asyncio.ensure_future(turns())
        await asyncio.sleep(0)
        await dispatch(node, encode_request(RequestHeader(0, 9, 1, "c"), request))
        ticker.cancel()
        assert all(node.logs.get("t", i).log_end_offset == 1 for i in range(PARTITIONS))
        assert most[0] <= 2 * k00_produce.PACE_EVERY <= 16, most[0]
    finally:
        node.close()
