"""A parked Fetch wakes for its own partitions only, as Kafka's fetch purgatory watches them.

Every append woke every parked Fetch, and each read all of its partitions again: 300 connections
each holding a Fetch parked on 50 partitions of one topic made 200 produces to another topic take
29 s instead of 0.2 s. A parked Fetch now reads again when one of its partitions changes (or the
cluster's leadership or high watermarks do), and still answers at once when its records come."""

from __future__ import annotations

import asyncio
import datetime

import pytest

from kafka_codecs import encode_batch
from shim.apis import k01_fetch
from shim.storage.producer_state import Origin
from shim.storage.validation import validate_client_batch

from apis_support import call


def append(node, topic: str) -> None:
    data = bytearray(encode_batch([(None, b"v", (), 1_700_000_000_000)]))
    node.logs.get(topic, 0).append(data, validate_client_batch(data, 1 << 20), 0, origin=Origin.CLIENT)


@pytest.mark.parametrize("watch_limit", [1000, 0])  # 0: the Fetch watches its topics, as one of 1,001 partitions does
async def test_appends_elsewhere_leave_a_parked_fetch_parked(node, monkeypatch, watch_limit):
    monkeypatch.setattr(k01_fetch, "WATCH_LIMIT", watch_limit)
    node.logs.create_topic("t", 1)
    node.logs.create_topic("other", 1)
    reads, collect = [], k01_fetch._collect

    async def counted(*args):
        reads.append(1)
        return await collect(*args)

    monkeypatch.setattr(k01_fetch, "_collect", counted)

    def build(m):
        return m.FetchRequest(replica_id=-1, max_wait=datetime.timedelta(seconds=30), min_bytes=1, max_bytes=1 << 20,
                              isolation_level=0, topics=(m.FetchTopic(topic="t", partitions=(m.FetchPartition(
                                  partition=0, fetch_offset=0, partition_max_bytes=1 << 20),)),))  # fmt: skip

    parked = asyncio.ensure_future(call(node, 1, 4, build))
    while not reads:
        await asyncio.sleep(0)
    for _ in range(50):
        append(node, "other")
        await asyncio.sleep(0)
    assert len(reads) == 1 and not parked.done()
    append(node, "t")
    response = await asyncio.wait_for(parked, 5)
    assert len(reads) == 2 and len(response.responses[0].partitions[0].records) > 0
