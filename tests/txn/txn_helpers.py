"""Helpers for the transaction tests (imported by the tests as ``txn_helpers``): a broker node without sockets, requests through
shim.apis.dispatch.dispatch with kio types, and batches built with kafka_codecs.

Time is explicit: the coordinator is driven with ``now_ms`` arguments (a fake clock), the API
handlers use the wall clock.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field

from kafka_codecs import ControlRecordType, decode_batch, encode_batch, iter_batches, read_control_type
from shim.apis.dispatch import dispatch
from shim.errors import ErrorCode
from shim.protocol.messages import RequestHeader, decode_response, encode_request, make, request_class, request_module

TOPIC = "t"
T0 = 1_700_000_000_000  # the fake clock's start
_correlation = itertools.count(1)

PRODUCE, FETCH, LIST_OFFSETS = 0, 1, 2
INIT_PRODUCER_ID, ADD_PARTITIONS, ADD_OFFSETS, END_TXN, WRITE_TXN_MARKERS = 22, 24, 25, 26, 27
DESCRIBE_PRODUCERS, DESCRIBE_TRANSACTIONS, LIST_TRANSACTIONS = 61, 65, 66
READ_UNCOMMITTED, READ_COMMITTED = 0, 1


def wall_ms() -> int:
    return int(time.time() * 1000)


# -- requests -------------------------------------------------------------------------------


async def call(node, api_key: int, version: int, **fields):
    """One request through the dispatcher; returns the decoded response body."""
    request = make(request_class(api_key, version), **fields)
    corr = next(_correlation)
    raw = await dispatch(node, encode_request(RequestHeader(api_key, version, corr, "txn-tests"), request))
    got_corr, response = decode_response(raw, api_key, version)
    assert got_corr == corr
    return response


async def init_producer_id(node, txn_id, *, timeout_ms=60_000, pid=-1, epoch=-1, version=4):
    return await call(node, INIT_PRODUCER_ID, version, transactional_id=txn_id, transaction_timeout=timeout_ms,
                      producer_id=pid, producer_epoch=epoch)


async def add_partitions(node, txn_id, pid, epoch, partitions, *, version=3):
    """``partitions``: [(topic, partition)]. Returns {(topic, partition): error code}."""
    m = request_module(ADD_PARTITIONS, version)
    by_topic: dict[str, list[int]] = {}
    for topic, p in partitions:
        by_topic.setdefault(topic, []).append(p)
    topics = tuple(m.AddPartitionsToTxnTopic(name=t, partitions=tuple(ps)) for t, ps in by_topic.items())
    r = await call(node, ADD_PARTITIONS, version, v3_and_below_transactional_id=txn_id,
                   v3_and_below_producer_id=pid, v3_and_below_producer_epoch=epoch, v3_and_below_topics=topics)
    return {(t.name, p.partition_index): p.partition_error_code
            for t in r.results_by_topic_v3_and_below for p in t.results_by_partition}


async def add_offsets(node, txn_id, pid, epoch, group, *, version=3):
    r = await call(node, ADD_OFFSETS, version, transactional_id=txn_id, producer_id=pid, producer_epoch=epoch,
                   group_id=group)
    return r.error_code


async def end_txn(node, txn_id, pid, epoch, commit, *, version=3):
    r = await call(node, END_TXN, version, transactional_id=txn_id, producer_id=pid, producer_epoch=epoch,
                   committed=commit)
    return r.error_code


async def produce(node, partition, batch, *, transactional_id=None, topic=TOPIC, version=9):
    """One batch to one partition; returns the PartitionProduceResponse."""
    m = request_module(PRODUCE, version)
    topic_data = (m.TopicProduceData(name=topic, partition_data=(m.PartitionProduceData(index=partition, records=batch),)),)
    r = await call(node, PRODUCE, version, transactional_id=transactional_id, acks=-1, timeout=5000,
                   topic_data=topic_data)
    (t,) = r.responses
    (p,) = t.partition_responses
    return p


async def fetch(node, partition, offset, *, isolation=READ_COMMITTED, max_bytes=1 << 20, max_wait_ms=0,
                min_bytes=0, topic=TOPIC, version=12):
    """One partition; returns its PartitionData."""
    m = request_module(FETCH, version)
    part = make(m.FetchPartition, partition=partition, current_leader_epoch=-1, fetch_offset=offset,
                last_fetched_epoch=-1, log_start_offset=-1, partition_max_bytes=max_bytes)
    r = await call(node, FETCH, version, cluster_id=None, replica_id=-1, max_wait=max_wait_ms, min_bytes=min_bytes,
                   max_bytes=max_bytes, isolation_level=isolation, session_id=0, session_epoch=-1,
                   topics=(m.FetchTopic(topic=topic, partitions=(part,)),), forgotten_topics_data=(), rack_id="")
    (t,) = r.responses
    (p,) = t.partitions
    return p


async def list_offset(node, partition, timestamp=-1, *, isolation=READ_COMMITTED, topic=TOPIC, version=8):
    m = request_module(LIST_OFFSETS, version)
    part = make(m.ListOffsetsPartition, partition_index=partition, current_leader_epoch=-1, timestamp=timestamp)
    r = await call(node, LIST_OFFSETS, version, replica_id=-1, isolation_level=isolation,
                   topics=(m.ListOffsetsTopic(name=topic, partitions=(part,)),))
    (t,) = r.topics
    (p,) = t.partitions
    assert p.error_code == ErrorCode.none
    return p.offset


async def write_marker(node, pid, epoch, commit, partitions, coordinator_epoch=0):
    """WriteTxnMarkers v1 with one marker; returns {(topic, partition): error code}."""
    m = request_module(WRITE_TXN_MARKERS, 1)
    by_topic: dict[str, list[int]] = {}
    for topic, p in partitions:
        by_topic.setdefault(topic, []).append(p)
    marker = m.WritableTxnMarker(producer_id=pid, producer_epoch=epoch, transaction_result=commit,
                                 topics=tuple(m.WritableTxnMarkerTopic(name=t, partition_indexes=tuple(ps))
                                              for t, ps in by_topic.items()),
                                 coordinator_epoch=coordinator_epoch)
    r = await call(node, WRITE_TXN_MARKERS, 1, markers=(marker,))
    (res,) = r.markers
    assert res.producer_id == pid
    return {(t.name, p.partition_index): p.error_code for t in res.topics for p in t.partitions}


# -- batches ----------------------------------------------------------------------------------


@dataclass
class Producer:
    """Builds batches for one producer id/epoch with consecutive sequence numbers per partition."""

    pid: int
    epoch: int
    seqs: dict = field(default_factory=dict)

    def batch(self, partition=0, *values: bytes, transactional=True) -> bytes:
        values = values or (b"v",)
        seq = self.seqs.get(partition, 0)
        self.seqs[partition] = seq + len(values)
        return encode_batch([(None, v, (), wall_ms()) for v in values], producer_id=self.pid,
                            producer_epoch=self.epoch, base_sequence=seq, is_transactional=transactional)


def plain_batch(*values: bytes) -> bytes:
    return encode_batch([(None, v, (), wall_ms()) for v in (values or (b"plain",))])


def batches(records: bytes) -> list:
    """[(header, decoded records)] of a fetch response's record bytes."""
    return [decode_batch(records[pos:pos + h.size]) for pos, h in iter_batches(records)]


def data_values(records: bytes) -> list[tuple[int, bytes]]:
    """(offset, value) of every data record in the bytes, without any filtering."""
    return [(r.offset, r.value) for h, rs in batches(records) if not h.is_control for r in rs]


def markers(records: bytes) -> list[tuple[int, int, ControlRecordType]]:
    """(offset, producer id, COMMIT/ABORT) of every control batch in the bytes."""
    out = []
    for pos, h in iter_batches(records):
        if h.is_control:
            out.append((h.base_offset, h.producer_id, read_control_type(records[pos:pos + h.size])))
    return out


def committed_view(records: bytes, aborted) -> list[tuple[int, bytes]]:
    """What a read_committed client returns from a response: Kafka's CompletedFetch algorithm."""
    pending = sorted((a.first_offset, a.producer_id) for a in aborted)
    aborting: set[int] = set()
    out = []
    for h, rs in batches(records):
        while pending and pending[0][0] <= h.last_offset:
            aborting.add(pending.pop(0)[1])
        if h.is_control:
            if rs and rs[0].key and int.from_bytes(rs[0].key[2:4], "big") == ControlRecordType.ABORT:
                aborting.discard(h.producer_id)
            continue
        if h.is_transactional and h.producer_id in aborting:
            continue
        out.extend((r.offset, r.value) for r in rs)
    return out
