"""A Fetch naming many partitions gives the loop up as it reads them, and what it read before a
yield survives the deletion of its segment meanwhile (retention, DeleteRecords, the cleaner):
records are pinned before each yield, read into memory when small, given a file handle of their
own when large, and the answer is then encoded on a worker thread.

The bystander's ApiVersions and the deletions are started from the first pin before a yield, so
they happen while the big Fetch walks its partitions.
"""

from __future__ import annotations

import asyncio
import datetime
import struct
import time

from kafka_codecs import decode_batch, encode_batch

from shim import Broker
from shim.apis import dispatch as _dispatch
from shim.apis import k01_fetch
from shim.errors import ErrorCode
from shim.protocol.messages import RequestHeader, decode_response, encode_request, make, peek, request_module
from shim.storage.producer_state import Origin
from shim.storage.validation import validate_client_batch

from test_server_limits import api_versions, connect, until

BYSTANDER, PARTITIONS, N, VERSION = 5000, 100, 20_000, 12
TS = int(time.time() * 1000)  # within retention.ms, so only the test deletes segments
LARGE = 256 * 1024  # past SENDFILE_MIN_BYTES: sent from its own file handle


def _append(plog, value: bytes) -> None:
    data = bytearray(encode_batch([(None, value, (), TS)]))
    plog.append(data, validate_client_batch(data, 1 << 24), 0, origin=Origin.CLIENT)


def _fetch() -> bytes:
    """Partitions 0 and 1 first (read in the first slice), then 19,998 more: the topic's other 98,
    then partitions it does not have (a partition named twice is read once, as in Kafka)."""
    m = request_module(1, VERSION)
    indexes = list(range(N))
    request = make(m.FetchRequest, cluster_id=None, replica_id=-1, max_wait=datetime.timedelta(0), min_bytes=1,
                   max_bytes=64 << 20, isolation_level=0, session_id=0, session_epoch=-1, forgotten_topics_data=(),
                   rack_id="", topics=(m.FetchTopic(topic="t", partitions=tuple(m.FetchPartition(
                       partition=i, current_leader_epoch=-1, fetch_offset=0, last_fetched_epoch=-1,
                       log_start_offset=-1, partition_max_bytes=1 << 20) for i in indexes)),))
    payload = encode_request(RequestHeader(1, VERSION, 1, "pacing-test"), request)
    return struct.pack(">i", len(payload)) + payload


async def test_a_fetch_naming_many_partitions_lets_others_in_and_survives_deletions(tmp_path, monkeypatch):
    """100,000 partitions in one Fetch held the loop 2.5 s. Another connection's request is now
    answered while it reads them, and partitions 0 (a 256 KiB batch) and 1 (a small one), read
    before the first yield, have their segments deleted during it: the answer still carries
    their records, whole."""
    pinned, done, walked_when_bystander_came = [0], [], []
    original_pin, original_dispatch = k01_fetch._Walk.pin, _dispatch.dispatch_request

    def pin(self):
        pinned[0] += 1
        if pinned[0] == 1:  # about to yield with partitions 0 and 1 read: the others act during the yield
            bystander[1].write(api_versions(BYSTANDER))
            for index in (0, 1):
                asyncio.get_running_loop().call_soon(broker.node.logs.get("t", index).delete_records, 1)
        original_pin(self)

    async def handled(node, frame, *args, **kwargs):
        correlation_id = peek(frame)[2]
        if correlation_id == BYSTANDER:
            walked_when_bystander_came.append(pinned[0])
        answer = await original_dispatch(node, frame, *args, **kwargs)
        done.append(correlation_id)
        return answer

    async with Broker(data_dir=tmp_path / "d", listen="127.0.0.1:0") as broker:
        broker.node.logs.create_topic("t", PARTITIONS)
        for index in range(PARTITIONS):
            plog = broker.node.logs.get("t", index)
            _append(plog, b"L" * LARGE if index == 0 else b"v%d" % index)
            if index < 2:  # sealed: DeleteRecords can remove the segment
                plog.roll()
        big, bystander = await connect(broker), await connect(broker)
        await until(lambda: len(broker._server.connections) == 2)
        monkeypatch.setattr(k01_fetch._Walk, "pin", pin)
        monkeypatch.setattr(_dispatch, "dispatch_request", handled)
        big[1].write(_fetch())
        size = struct.unpack(">i", await asyncio.wait_for(bystander[0].readexactly(4), 60))[0]
        assert decode_response(await bystander[0].readexactly(size), 18, 3)[0] == BYSTANDER
        size = struct.unpack(">i", await asyncio.wait_for(big[0].readexactly(4), 60))[0]
        correlation_id, response = decode_response(await big[0].readexactly(size), 1, VERSION)
        assert correlation_id == 1 and done == [BYSTANDER, 1]
        assert walked_when_bystander_came[0] < pinned[0], (walked_when_bystander_came, pinned)  # mid-walk
        for index in (0, 1):  # deleted meanwhile
            assert broker.node.logs.get("t", index).log_start_offset == 1
        parts = response.responses[0].partitions
        assert len(parts) == N and [p.error_code for p in parts[:2]] == [ErrorCode.none] * 2
        assert decode_batch(parts[0].records)[1][0].value == b"L" * LARGE
        assert decode_batch(parts[1].records)[1][0].value == b"v1"
        for p in parts[2:PARTITIONS]:
            assert decode_batch(p.records)[1][0].value == b"v%d" % p.partition_index
        assert {p.error_code for p in parts[PARTITIONS:]} == {ErrorCode.unknown_topic_or_partition}
        assert pinned[0] > 1  # the walk went on after the deletions
        big[1].close(), bystander[1].close()
