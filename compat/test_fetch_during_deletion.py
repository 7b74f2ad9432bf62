"""A Fetch response already on its way survives the deletion of the segments it reads from.

Large fetches are sent from the segment files (sendfile). Kafka keeps the file open for the
response it built; here a consumer that reads slowly keeps the response in flight while
DeleteRecords (or retention) removes a segment that a later part of the response reads from.
The consumer must still receive the whole response it was promised, not a closed connection.
"""

from __future__ import annotations

import datetime
import socket
import struct

import pytest

from kafka_codecs import encode_batch, iter_batches
from shim.storage.producer_state import Origin
from shim.errors import ErrorCode
from shim.protocol.messages import RequestHeader, decode_response, encode_request, request_module
from shim.storage.validation import validate_client_batch

pytestmark = pytest.mark.shim_only("drives retention inside kafka-shim")

FETCH_VERSION = 12
BIG = 12 * 1024 * 1024  # more than the socket buffers on both sides hold


def fill(node, topic, batches, value_size, configs=None):
    node.logs.create_topic(topic, 1, configs or {})
    plog = node.logs.get(topic, 0)
    for i in range(batches):
        data = bytearray(encode_batch([(b"%d" % i, bytes([i % 256]) * value_size, (), 1_700_000_000_000 + i)]))
        plog.append(data, validate_client_batch(data, 1 << 24), 0, origin=Origin.CLIENT)
    return plog


def fetch_request(partitions, correlation_id=5) -> bytes:
    m = request_module(1, FETCH_VERSION)
    topics = tuple(
        m.FetchTopic(topic=topic, partitions=(m.FetchPartition(
            partition=0, current_leader_epoch=-1, fetch_offset=0, last_fetched_epoch=-1, log_start_offset=-1,
            partition_max_bytes=max_bytes),))
        for topic, max_bytes in partitions
    )  # fmt: skip
    request = m.FetchRequest(
        cluster_id=None, replica_id=-1, max_wait=datetime.timedelta(milliseconds=0), min_bytes=1, max_bytes=64 << 20,
        isolation_level=0, session_id=0, session_epoch=-1, topics=topics, forgotten_topics_data=(), rack_id="",
    )  # fmt: skip
    payload = encode_request(RequestHeader(1, FETCH_VERSION, correlation_id, "slow-consumer"), request)
    return struct.pack(">i", len(payload)) + payload


def recv_exactly(sock, n) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise ConnectionError(f"connection closed after {len(buf)} of {n} bytes")
        buf += chunk
    return bytes(buf)


@pytest.mark.parametrize("deletion", ["delete-records", "retention"])
def test_slow_fetch_response_survives_segment_deletion(kafka_shim, deletion):
    node = kafka_shim.node
    kafka_shim.call(fill, node, "big", 12, BIG // 12)
    small = kafka_shim.call(fill, node, "small", 3, 200_000, {"segment.bytes": "300000", "retention.bytes": "0"})
    assert kafka_shim.call(lambda: len(small.segments)) == 3
    first_small_batch = kafka_shim.call(lambda: small.segments[0].read(0, small.segments[0].size))

    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    host, port = kafka_shim.bootstrap_servers.split(",")[0].rsplit(":", 1)
    sock.connect((host, int(port)))
    sock.settimeout(30)
    try:
        # "big" comes first in the response and cannot all be buffered, so while we do not read,
        # the broker is stuck sending it and has not started on "small".
        sock.sendall(fetch_request([("big", 16 << 20), ("small", 250_000)]))
        (size,) = struct.unpack(">i", recv_exactly(sock, 4))
        assert size > BIG
        head = recv_exactly(sock, 256 * 1024)

        # The first segment of "small", which the response still has to send, goes away.
        if deletion == "delete-records":
            kafka_shim.call(small.delete_records, -1)
        else:
            kafka_shim.call(small.enforce_retention, 0)
        assert kafka_shim.call(lambda: small.log_start_offset) > 0
        assert not (small.directory / f"{0:020d}.log").exists()

        body = head + recv_exactly(sock, size - len(head))
    finally:
        sock.close()

    correlation_id, response = decode_response(body, 1, FETCH_VERSION)
    assert correlation_id == 5
    by_topic = {t.topic: t.partitions[0] for t in response.responses}
    assert by_topic["big"].error_code == ErrorCode.none
    assert sum(h.records_count for _, h in iter_batches(by_topic["big"].records)) == 12
    assert by_topic["small"].error_code == ErrorCode.none
    assert by_topic["small"].records == first_small_batch
