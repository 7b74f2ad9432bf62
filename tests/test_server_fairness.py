"""One connection cannot take the broker from the others: its pipelined requests are answered a
slice of time at a time, and the requests it queues behind one still in the broker are bounded
(Kafka's processors serve connections in turn and hold one request per connection).

Each wait is on an observed state: the order the broker handled requests in, or the broker no
longer reading a connection.
"""

from __future__ import annotations

import asyncio
import socket
import struct
import time

import pytest

from shim import Broker, BrokerThread
from shim.apis import dispatch as _dispatch
from shim.apis import (k02_list_offsets, k03_metadata, k15_describe_groups, k23_offset_for_leader_epoch,
                       k61_describe_producers)
from shim.protocol.messages import (RequestHeader, decode_response, encode_request, make, peek, request_class,
                                   request_module)

from test_server_limits import api_versions, connect, send_until_blocked, until

BYSTANDER = 5000


def burn(seconds: float) -> None:
    """Stand-in for a request that costs the loop CPU time (a busy wait, not a synchronisation)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


async def test_a_client_pipelining_many_requests_lets_another_connection_be_answered(tmp_path, monkeypatch):
    """1,000 pipelined requests of 0.2 ms each were answered in one turn of the loop: a request on
    another connection that arrived meanwhile waited for all of them (100,000 ApiVersions held the
    loop 9 s). Now it is answered within the first few dozen."""
    order: list[int] = []
    original = _dispatch.dispatch_request
    async with Broker(data_dir=tmp_path / "d", listen="127.0.0.1:0") as broker:
        flood, bystander = await connect(broker), await connect(broker)
        await until(lambda: len(broker._server.connections) == 2)

        async def handled(node, frame, *args, **kwargs):
            correlation_id = peek(frame)[2]
            order.append(correlation_id)
            if correlation_id == 1:  # the flood is being answered: the bystander's request arrives now
                bystander[1].write(api_versions(BYSTANDER))
            burn(0.0002)
            return await original(node, frame, *args, **kwargs)

        monkeypatch.setattr(_dispatch, "dispatch_request", handled)
        flood[1].write(b"".join(api_versions(cid) for cid in range(1, 1001)))
        size = struct.unpack(">i", await asyncio.wait_for(bystander[0].readexactly(4), 30))[0]
        assert decode_response(await bystander[0].readexactly(size), 18, 3)[0] == BYSTANDER
        for cid in range(1, 1001):  # the flood is answered too, in its order
            size = struct.unpack(">i", await flood[0].readexactly(4))[0]
            assert decode_response(await flood[0].readexactly(size), 18, 3)[0] == cid
        assert order.index(BYSTANDER) < 200, f"answered after {order.index(BYSTANDER)} of the flood's requests"
        flood[1].close(), bystander[1].close()


def metadata_request(correlation_id: int, topics: int = 300) -> bytes:
    m = request_module(3, 12)
    request = make(m.MetadataRequest, allow_auto_topic_creation=False, include_topic_authorized_operations=False,
                   topics=tuple(m.MetadataRequestTopic(topic_id=None, name=f"{'x' * 200}{i}") for i in range(topics)))
    payload = encode_request(RequestHeader(3, 12, correlation_id, "fairness-test"), request)
    return struct.pack(">i", len(payload)) + payload


def test_requests_queued_behind_a_parked_one_stay_about_a_mebibyte(tmp_path, monkeypatch):
    """A request still in the broker (a Fetch waiting for data) with a client pipelining 60 KiB
    requests behind it: the broker read up to 16 MiB of them per connection (40 connections: RSS
    38 -> 681 MiB). Kafka holds the one request; the broker now stops reading at 1 MiB."""
    original = _dispatch.dispatch_request
    with BrokerThread(data_dir=tmp_path / "d", listen="127.0.0.1:0", event_loop="asyncio") as broker:
        parked = broker.call(lambda: broker.loop.create_future())

        async def handled(node, frame, *args, **kwargs):
            if peek(frame)[2] == 1:
                await parked
            return await original(node, frame, *args, **kwargs)

        monkeypatch.setattr(_dispatch, "dispatch_request", handled)
        server = broker.broker._server
        sock = socket.create_connection((broker.node.host, broker.node.port))
        sock.sendall(api_versions(1))
        conn = None

        def connection():
            return next(iter(server.connections), None)

        deadline = time.monotonic() + 10
        while conn is None or not broker.call(lambda: conn.answering):
            assert time.monotonic() < deadline
            conn = broker.call(connection)
        sock.setblocking(False)
        sent = send_until_blocked(sock, metadata_request(2), lambda: broker.call(lambda: not conn._reading))
        queued = broker.call(lambda: conn.queued_bytes)
        assert sent > 2 * 1024 * 1024, "the client's sends blocked in the kernel before the broker's bound"
        assert queued < 2 * 1024 * 1024, f"{queued} bytes of requests queued behind the parked one"
        broker.call(lambda: parked.set_result(None))
        sock.setblocking(True)
        sock.settimeout(30)
        size = struct.unpack(">i", _read(sock, 4))[0]
        assert decode_response(_read(sock, size), 18, 3)[0] == 1  # answered once released
        sock.close()


def _read(sock, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        assert chunk, "closed"
        data += chunk
    return data


def _big_requests():
    """(api key, version, request) naming 20,000 items (DescribeConfigs: one topic 1,000 times,
    each answer 14 KiB of configs with synonyms and documentation), and the answer's item count."""
    lo, of, dc = request_module(2, 9), request_module(9, 9), request_module(32, 4)
    n = 20_000
    return {
        "DescribeGroups": (15, 5, make(request_class(15, 5), groups=tuple(f"group-{i}" for i in range(n)),
                                       include_authorized_operations=True), lambda r: len(r.groups), n),
        "ListOffsets": (2, 9, make(lo.ListOffsetsRequest, replica_id=-1, isolation_level=0, topics=(
            lo.ListOffsetsTopic(name="t", partitions=tuple(
                lo.ListOffsetsPartition(partition_index=i, current_leader_epoch=-1, timestamp=-1) for i in range(n))),)),
            lambda r: len(r.topics[0].partitions), n),
        "OffsetFetch": (9, 9, make(of.OffsetFetchRequest, require_stable=False, groups=(of.OffsetFetchRequestGroup(
            group_id="g", member_id=None, member_epoch=-1,
            topics=(of.OffsetFetchRequestTopics(name="t", partition_indexes=tuple(range(n))),)),)),
            lambda r: len(r.groups[0].topics[0].partitions), n),
        "Metadata": (3, 12, make(request_module(3, 12).MetadataRequest, allow_auto_topic_creation=False,
                                 include_topic_authorized_operations=True, topics=tuple(
                                     request_module(3, 12).MetadataRequestTopic(topic_id=None, name=f"nope-{i}")
                                     for i in range(n))), lambda r: len(r.topics), n),
        "OffsetForLeaderEpoch": (23, 4, make(request_module(23, 4).OffsetForLeaderEpochRequest, replica_id=-1, topics=(
            request_module(23, 4).OffsetForLeaderTopic(topic="t", partitions=tuple(
                request_module(23, 4).OffsetForLeaderPartition(partition=i, current_leader_epoch=-1, leader_epoch=0)
                for i in range(n))),)), lambda r: len(r.topics[0].partitions), n),
        "DescribeProducers": (61, 0, make(request_module(61, 0).DescribeProducersRequest, topics=(
            request_module(61, 0).TopicRequest(name="t", partition_indexes=tuple(range(n))),)),
            lambda r: len(r.topics[0].partitions), n),
        "DescribeConfigs": (32, 4, make(dc.DescribeConfigsRequest, include_synonyms=True, include_documentation=True,
                                        resources=(dc.DescribeConfigsResource(
                                            resource_type=2, resource_name="t", configuration_keys=None),) * 1000),
                            lambda r: len(r.results), 1000),
    }


PER_ITEM = {"DescribeGroups": (k15_describe_groups, "_describe"), "ListOffsets": (k02_list_offsets, "_partition"),
            "Metadata": (k03_metadata, "_topic"), "OffsetForLeaderEpoch": (k23_offset_for_leader_epoch, "_partition"),
            "DescribeProducers": (k61_describe_producers, "_partition")}


@pytest.mark.parametrize("api", ["DescribeGroups", "ListOffsets", "OffsetFetch", "Metadata", "OffsetForLeaderEpoch",
                                 "DescribeProducers", "DescribeConfigs"])
async def test_a_request_naming_many_items_lets_another_connection_be_answered(tmp_path, monkeypatch, api):
    """Kafka answers on a pool of handler threads; here the handlers of these read-only APIs give
    the loop up as they walk the request, and kio reads a large frame and writes a large answer on
    a worker thread. 100,000 groups in one DescribeGroups held the loop 0.8 s, a 60 KiB
    DescribeConfigs 5.8 s, 100,000 unknown names in
    one Metadata 1.1 s; another connection's request was answered only after them."""
    key, version, request, count, expected = _big_requests()[api]
    done: list[int] = []
    original = _dispatch.dispatch_request
    walked = [0]  # items the handler has answered, where it walks them one by one
    walked_when_bystander_came: list[int] = []
    if api in PER_ITEM:
        module, name = PER_ITEM[api]
        per_item = getattr(module, name)

        def counted(*args, **kwargs):
            walked[0] += 1
            if walked[0] == 1:  # the handler is walking the items: the bystander's request arrives now
                bystander[1].write(api_versions(BYSTANDER))
            return per_item(*args, **kwargs)
        monkeypatch.setattr(module, name, counted)
    async with Broker(data_dir=tmp_path / "d", listen="127.0.0.1:0") as broker:
        broker.node.logs.create_topic("t", 1)
        big, bystander = await connect(broker), await connect(broker)
        await until(lambda: len(broker._server.connections) == 2)

        async def handled(node, frame, *args, **kwargs):
            correlation_id = peek(frame)[2]
            if correlation_id == 1 and api not in PER_ITEM:  # in the broker: the bystander's arrives now
                bystander[1].write(api_versions(BYSTANDER))
            elif correlation_id != 1:
                walked_when_bystander_came.append(walked[0])
            answer = await original(node, frame, *args, **kwargs)
            done.append(correlation_id)
            return answer

        monkeypatch.setattr(_dispatch, "dispatch_request", handled)
        payload = encode_request(RequestHeader(key, version, 1, "fairness-test"), request)
        big[1].write(struct.pack(">i", len(payload)) + payload)
        size = struct.unpack(">i", await asyncio.wait_for(bystander[0].readexactly(4), 60))[0]
        assert decode_response(await bystander[0].readexactly(size), 18, 3)[0] == BYSTANDER
        size = struct.unpack(">i", await asyncio.wait_for(big[0].readexactly(4), 60))[0]
        correlation_id, response = decode_response(await big[0].readexactly(size), key, version)
        assert (correlation_id, count(response)) == (1, expected)
        assert done == [BYSTANDER, 1]
        if api in PER_ITEM:  # answered while the handler walked, not only while kio wrote the answer
            assert walked_when_bystander_came[0] < expected, walked_when_bystander_came
        big[1].close(), bystander[1].close()
