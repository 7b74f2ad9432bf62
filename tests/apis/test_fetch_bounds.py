"""What one Fetch may make the broker read: fetch.max.bytes caps it whatever the request's
MaxBytes, and a partition named many times is read and answered once, as Kafka's request map
holds it once. A Fetch v3 naming one partition fifty times with MaxBytes 2 GiB read and
down-converted the whole log fifty times over, holding the loop for seconds."""

from __future__ import annotations

import datetime

import pytest

from kafka_codecs import encode_batch
from shim.config import BrokerConfig
from shim.errors import ErrorCode as E
from shim.node import Node
from shim.storage.producer_state import Origin
from shim.storage.validation import validate_client_batch

from apis_support import call

FETCH, TS, INT32_MAX = 1, 1_700_000_000_000, 2**31 - 1


def fill(node, batches: int, value_bytes: int = 1000) -> None:
    node.logs.create_topic("t", 1)
    for i in range(batches):
        data = bytearray(encode_batch([(None, b"%d" % i + b"x" * value_bytes, (), TS)]))
        node.logs.get("t", 0).append(data, validate_client_batch(data, 1 << 20), 0, origin=Origin.CLIENT)


async def fetch(node, version, copies=1, max_bytes=INT32_MAX, partition_max=INT32_MAX, session_epoch=-1):
    def build(m):
        fields = dict(replica_id=-1, max_wait=datetime.timedelta(0), min_bytes=1, topics=(m.FetchTopic(
            topic="t", partitions=tuple(m.FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=partition_max)
                                        for _ in range(copies))),))  # fmt: skip
        if version >= 3:
            fields["max_bytes"] = max_bytes
        if version >= 7:
            fields.update(session_id=0, session_epoch=session_epoch, forgotten_topics_data=())
        return m.FetchRequest(**fields)
    return await call(node, FETCH, version, build)


@pytest.mark.parametrize("version,epoch", [(3, -1), (4, -1), (12, -1), (12, 0)])
async def test_a_partition_named_many_times_is_answered_once(node, version, epoch):
    fill(node, 3)
    response = await fetch(node, version, copies=50, partition_max=1 << 20, max_bytes=1 << 20, session_epoch=epoch)
    assert [len(t.partitions) for t in response.responses] == [1]
    assert response.responses[0].partitions[0].error_code == E.none


@pytest.mark.parametrize("version", [2, 3, 12])
async def test_fetch_max_bytes_caps_what_one_request_reads(tmp_path, version):
    node = Node(BrokerConfig(data_dir=tmp_path / "data", extra={"fetch.max.bytes": "10240"}))
    try:
        fill(node, 40)  # about 40 KiB
        response = await fetch(node, version)
        records = response.responses[0].partitions[0].records
        assert 0 < len(records) <= 10240 + 1100  # the cap, give or take the batch that crosses it
    finally:
        node.close()


@pytest.mark.parametrize("version", [0, 3])
async def test_a_large_down_conversion_runs_off_the_loop(node, monkeypatch, version):
    import threading

    from shim.apis import k01_fetch

    threads = []

    def converting(*args):
        threads.append(threading.current_thread() is threading.main_thread())
        return real(*args)

    real = k01_fetch.down_convert
    monkeypatch.setattr(k01_fetch, "down_convert", converting)
    fill(node, 400)  # about 400 KiB: converted on a worker thread
    big = await fetch(node, version, max_bytes=1 << 20, partition_max=1 << 20)
    small = await fetch(node, version, max_bytes=1 << 20, partition_max=4096)
    assert threads == [False, True]
    assert len(big.responses[0].partitions[0].records) > 256 * 1024 > len(small.responses[0].partitions[0].records) > 0
