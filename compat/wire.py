"""A raw Kafka protocol connection for the admin requests no client library sends (ListOffsets,
DescribeProducers, DescribeTransactions, WriteTxnMarkers, CreateTopics, Fetch of the batch headers),
each sent to the broker that must answer it."""

from __future__ import annotations

import itertools
import socket
import struct
import time

from shim.protocol.messages import RequestHeader, decode_response, encode_request, make, request_class, request_module

from compat.support import recv_frame

_correlation = itertools.count(1)


class Wire:
    """Blocking connections for requests built with kio (no ApiVersions handshake: the versions
    used are supported by kafka-shim and Apache Kafka 3.9). Like a client, each request goes to
    the broker that must answer it: a partition's leader (Metadata), a group's or transactional
    id's coordinator (FindCoordinator), else the first bootstrap broker; so the scenarios hold on
    a cluster too (``--shim-brokers 3``)."""

    def __init__(self, bootstrap: str, timeout: float = 15.0) -> None:
        self.timeout = timeout
        host, port = bootstrap.split(",")[0].rsplit(":", 1)
        self.bootstrap = (host, int(port))
        self.socks: dict[tuple[str, int], socket.socket] = {}
        self.sock = self._connect(self.bootstrap)

    def _connect(self, address: tuple[str, int]) -> socket.socket:
        if address not in self.socks:
            self.socks[address] = socket.create_connection(address, timeout=self.timeout)
        return self.socks[address]

    def call(self, api_key: int, version: int, **fields):
        request = make(request_class(api_key, version), **fields)
        return self._send(self._connect(self._route(api_key, request)), api_key, version, request)

    def _send(self, sock: socket.socket, api_key: int, version: int, request):
        corr = next(_correlation)
        payload = encode_request(RequestHeader(api_key, version, corr, "txn-compat"), request)
        sock.sendall(struct.pack(">i", len(payload)) + payload)
        got_corr, response = decode_response(recv_frame(sock), api_key, version)
        assert got_corr == corr
        return response

    def _route(self, api_key: int, request) -> tuple[str, int]:
        partition = _partition_of(api_key, request)
        if partition is not None:
            return self._leader(*partition) or self.bootstrap
        key = _coordinator_key_of(api_key, request)
        if key is not None:
            return self._coordinator(*key) or self.bootstrap
        return self.bootstrap

    def _leader(self, topic: str, partition: int) -> tuple[str, int] | None:
        m = request_module(3, 12)
        r = self._send(self.sock, 3, 12, make(m.MetadataRequest, topics=(make(m.MetadataRequestTopic, topic_id=None, name=topic),),
                                              allow_auto_topic_creation=False, include_topic_authorized_operations=False))
        brokers = {b.node_id: (b.host, b.port) for b in r.brokers}
        leaders = {p.partition_index: p.leader_id for t in r.topics for p in t.partitions}
        return brokers.get(leaders.get(partition, -1))

    def _coordinator(self, key_type: int, key: str) -> tuple[str, int] | None:
        """As a client: COORDINATOR_NOT_AVAILABLE (the first ask, while the coordinator's internal
        topic is created, on Kafka as on kafka-shim) is asked again."""
        deadline = time.monotonic() + self.timeout
        while True:
            r = self._send(self.sock, 10, 4, make(request_class(10, 4), key_type=key_type, coordinator_keys=(key,)))
            (c,) = r.coordinators
            if c.error_code != 15 or time.monotonic() > deadline:
                return (c.host, c.port) if c.error_code == 0 else None
            time.sleep(0.05)  # a client's retry backoff

    def close(self) -> None:
        for sock in self.socks.values():
            sock.close()

    # -- the requests the scenarios use ----------------------------------------------------------

    def create_topic(self, name: str, partitions: int = 1, configs: dict[str, str] | None = None) -> None:
        m = request_module(19, 5)
        configs = tuple(m.CreatableTopicConfig(name=k, value=v) for k, v in (configs or {}).items())
        topic = m.CreatableTopic(name=name, num_partitions=partitions, replication_factor=1, assignments=(),
                                 configs=configs)
        r = self.call(19, 5, topics=(topic,), timeout=15_000, validate_only=False)
        assert r.topics[0].error_code == 0, r

    def list_offset(self, topic: str, partition: int, isolation: int, timestamp: int = -1, *,
                    check: bool = True) -> int | None:
        """ListOffsets v5; with ``check=False`` an error answer (e.g. a leader not yet elected on a
        just-created topic of Apache Kafka) gives None instead of failing."""
        m = request_module(2, 5)
        part = make(m.ListOffsetsPartition, partition_index=partition, current_leader_epoch=-1, timestamp=timestamp)
        r = self.call(2, 5, replica_id=-1, isolation_level=isolation,
                      topics=(m.ListOffsetsTopic(name=topic, partitions=(part,)),))
        (p,) = r.topics[0].partitions
        if not check and p.error_code != 0:
            return None
        assert p.error_code == 0, p
        return p.offset

    def fetch_batches(self, topic: str, partition: int, end: int, max_bytes: int = 1 << 20) -> list:
        """Every batch header of the partition from offset 0 up to ``end`` (read_uncommitted Fetch v12,
        control batches included): what the log holds, as any broker serves it."""
        from kafka_codecs import iter_batches

        m = request_module(1, 12)
        headers, offset = [], 0
        while offset < end:
            part = make(m.FetchPartition, partition=partition, current_leader_epoch=-1, fetch_offset=offset,
                        last_fetched_epoch=-1, log_start_offset=-1, partition_max_bytes=max_bytes)
            r = self.call(1, 12, replica_id=-1, max_wait=500, min_bytes=1, max_bytes=max_bytes, isolation_level=0,
                          session_id=0, session_epoch=-1, topics=(m.FetchTopic(topic=topic, partitions=(part,)),),
                          forgotten_topics_data=(), rack_id="")
            (p,) = r.responses[0].partitions
            assert p.error_code == 0, p
            got = [h for _, h in iter_batches(bytes(p.records or b""))]
            assert got, f"no batch at offset {offset} of {topic}-{partition} (high watermark {p.high_watermark})"
            headers += got
            offset = got[-1].base_offset + got[-1].last_offset_delta + 1
        return headers

    def describe_producers(self, topic: str, partition: int) -> list:
        m = request_module(61, 0)
        r = self.call(61, 0, topics=(m.TopicRequest(name=topic, partition_indexes=(partition,)),))
        (p,) = r.topics[0].partitions
        assert p.error_code == 0, p
        return list(p.active_producers)

    def describe_transaction(self, txn_id: str):
        r = self.call(65, 0, transactional_ids=(txn_id,))
        (state,) = r.transaction_states
        return state

    def write_txn_markers(self, producer_id: int, producer_epoch: int, coordinator_epoch: int, commit: bool,
                          topic: str, partitions) -> dict[int, int]:
        m = request_module(27, 1)
        marker = m.WritableTxnMarker(producer_id=producer_id, producer_epoch=producer_epoch, transaction_result=commit,
                                     topics=(m.WritableTxnMarkerTopic(name=topic, partition_indexes=tuple(partitions)),),
                                     coordinator_epoch=coordinator_epoch)
        r = self.call(27, 1, markers=(marker,))
        return {p.partition_index: p.error_code for t in r.markers[0].topics for p in t.partitions}


# Where Wire sends a request: (topic, partition) for the APIs a partition's leader answers, (key
# type, key) for those a coordinator answers (0: group, 1: transaction).
_PARTITION_OF = {
    0: lambda r: (r.topic_data[0].name, r.topic_data[0].partition_data[0].index),
    1: lambda r: (r.topics[0].topic, r.topics[0].partitions[0].partition),
    2: lambda r: (r.topics[0].name, r.topics[0].partitions[0].partition_index),
    21: lambda r: (r.topics[0].name, r.topics[0].partitions[0].partition_index),
    23: lambda r: (r.topics[0].topic, r.topics[0].partitions[0].partition),
    27: lambda r: (r.markers[0].topics[0].name, r.markers[0].topics[0].partition_indexes[0]),
    61: lambda r: (r.topics[0].name, r.topics[0].partition_indexes[0]),
}
_GROUP_APIS = {8, 11, 12, 13, 14, 28, 47, 68}
_TXN_APIS = {22, 25, 26}


def _partition_of(api_key: int, request):
    get = _PARTITION_OF.get(api_key)
    try:
        return get(request) if get else None
    except (AttributeError, IndexError, TypeError):  # by topic id, or nothing named: the bootstrap broker
        return None


def _coordinator_key_of(api_key: int, request):
    if api_key in _GROUP_APIS or (api_key == 9 and getattr(request, "group_id", None)):
        return 0, request.group_id
    if api_key == 9 and getattr(request, "groups", None):
        return 0, request.groups[0].group_id
    if api_key == 15 and request.groups:
        return 0, request.groups[0]
    if api_key in _TXN_APIS and getattr(request, "transactional_id", None):
        return 1, request.transactional_id
    if api_key == 24:
        txn_id = getattr(request, "v3_and_below_transactional_id", None) or (
            request.transactions[0].transactional_id if getattr(request, "transactions", None) else None)
        return (1, txn_id) if txn_id else None
    if api_key == 65 and request.transactional_ids:
        return 1, request.transactional_ids[0]
    return None
