"""A broker workload for the power-loss tests (imported as ``workload``): real encoded requests
through shim.apis.dispatch, and a record of everything the broker acknowledged.

The workload creates a topic, produces plain and transactional batches, commits one transaction
(with a TxnOffsetCommit) and aborts another, forms a consumer group (JoinGroup + SyncGroup) and
commits its offsets, then creates a topic, writes to it and deletes it. After every acknowledgement it calls ``on_ack(step, acked)``.
"""

from __future__ import annotations

import copy
import itertools
import struct
import time
from dataclasses import dataclass, field

from kafka_codecs import ControlRecordType, decode_batch, encode_batch, iter_batches, read_control_type
from shim.apis.dispatch import dispatch
from shim.errors import ErrorCode as E
from shim.protocol.messages import RequestHeader, decode_response, encode_request, make, request_class, request_module

TOPIC, TXN_ID, TXN_GROUP, GROUP = "t", "tx", "g", "cg"
PRODUCE, FETCH, METADATA, OFFSET_COMMIT, OFFSET_FETCH, JOIN, SYNC = 0, 1, 3, 8, 9, 11, 14
DELETE_TOPICS, CREATE_TOPICS, INIT_PID, ADD_PARTITIONS, ADD_OFFSETS, END_TXN, TXN_OFFSET_COMMIT, DESCRIBE_TXNS = 20, 19, 22, 24, 25, 26, 28, 65
_correlation = itertools.count(1)


def entity(api: int, version: int, name: str, /, **fields):
    return make(getattr(request_module(api, version), name), **fields)


async def call(node, api: int, version: int, **fields):
    corr = next(_correlation)
    frame = encode_request(RequestHeader(api, version, corr, "power-loss"), make(request_class(api, version), **fields))
    got, response = decode_response(await dispatch(node, frame), api, version)
    assert got == corr
    return response


@dataclass
class Acked:
    """What the broker acknowledged, as the next broker must show it."""

    topics: dict = field(default_factory=dict)  # name -> partitions
    records: dict = field(default_factory=dict)  # (topic, partition) -> {offset: value}, plain or committed
    aborted: dict = field(default_factory=dict)  # (topic, partition) -> {offset: value} of aborted transactions
    committed_markers: set = field(default_factory=set)  # (topic, partition, producer id) with a COMMIT acked
    offsets: dict = field(default_factory=dict)  # (group, topic, partition) -> committed offset
    generations: dict = field(default_factory=dict)  # group -> (generation, member id)
    deleted: set = field(default_factory=set)  # topics whose deletion was acknowledged
    # topics whose DeleteTopics is the next request: a cut in the middle of it may find them gone
    doomed: set = field(default_factory=set)
    producer: tuple | None = None  # (producer id, epoch) of TXN_ID
    txn_open: bool = False  # a transaction of TXN_ID is between AddPartitionsToTxn and EndTxn


# -- requests -----------------------------------------------------------------------------------


async def create_topic(node, name: str, partitions: int) -> int:
    topic = entity(CREATE_TOPICS, 5, "CreatableTopic", name=name, num_partitions=partitions, replication_factor=1,
                   assignments=(), configs=())
    r = await call(node, CREATE_TOPICS, 5, topics=(topic,), timeout=5000, validate_only=False)
    return r.topics[0].error_code


async def produce(node, partition: int, batch: bytes, txn_id: str | None = None, topic: str = TOPIC):
    data = (entity(PRODUCE, 9, "TopicProduceData", name=topic, partition_data=(
        entity(PRODUCE, 9, "PartitionProduceData", index=partition, records=batch),)),)
    r = await call(node, PRODUCE, 9, transactional_id=txn_id, acks=-1, timeout=5000, topic_data=data)
    p = r.responses[0].partition_responses[0]
    return p.error_code, p.base_offset


async def fetch(node, topic: str, partition: int, read_committed: bool) -> tuple[bytes, list]:
    """Everything a consumer reads from offset 0 on: (record bytes, aborted transactions)."""
    records, aborted, offset = b"", [], 0
    while True:
        p = await _fetch(node, topic, partition, offset, read_committed)
        if not p.records:
            return records, aborted
        records += p.records
        aborted += p.aborted_transactions or []
        offset = max(h.next_offset for _, h in iter_batches(p.records))


async def _fetch(node, topic: str, partition: int, offset: int, read_committed: bool):
    part = entity(FETCH, 12, "FetchPartition", partition=partition, current_leader_epoch=-1, fetch_offset=offset,
                  last_fetched_epoch=-1, log_start_offset=-1, partition_max_bytes=1 << 20)
    r = await call(node, FETCH, 12, cluster_id=None, replica_id=-1, max_wait=0, min_bytes=0, max_bytes=1 << 20,
                   isolation_level=int(read_committed), session_id=0, session_epoch=-1, rack_id="",
                   topics=(entity(FETCH, 12, "FetchTopic", topic=topic, partitions=(part,)),), forgotten_topics_data=())
    return r.responses[0].partitions[0]


async def offset_fetch(node, group: str, topic: str, partition: int) -> int:
    topics = (entity(OFFSET_FETCH, 7, "OffsetFetchRequestTopic", name=topic, partition_indexes=(partition,)),)
    r = await call(node, OFFSET_FETCH, 7, group_id=group, topics=topics, require_stable=False)
    return r.topics[0].partitions[0].committed_offset


def _commit_topics(api: int, version: int, partition: int, offset: int):
    prefix = "Txn" if api == TXN_OFFSET_COMMIT else ""
    part = entity(api, version, f"{prefix}OffsetCommitRequestPartition", partition_index=partition,
                  committed_offset=offset, committed_leader_epoch=-1, committed_metadata=None, commit_timestamp=-1)
    return (entity(api, version, f"{prefix}OffsetCommitRequestTopic", name=TOPIC, partitions=(part,)),)


def subscription() -> bytes:
    return struct.pack(">hih", 0, 1, len(TOPIC)) + TOPIC.encode() + struct.pack(">i", 0)


def batch(*values: bytes, producer: tuple | None = None, seq: int = 0) -> bytes:
    now = int(time.time() * 1000)
    if producer is None:
        return encode_batch([(None, v, (), now) for v in values])
    return encode_batch([(None, v, (), now) for v in values], producer_id=producer[0], producer_epoch=producer[1],
                        base_sequence=seq, is_transactional=True)


# -- the workload ---------------------------------------------------------------------------------


class Workload:
    """The steps, each ending in an acknowledgement that updates ``acked`` and calls ``on_ack``."""

    def __init__(self, node, on_ack) -> None:
        self.node, self.on_ack, self.acked = node, on_ack, Acked()
        self.seqs: dict[int, int] = {}

    def ack(self, step: str) -> None:
        self.on_ack(step, copy.deepcopy(self.acked))

    async def run(self) -> None:
        a = self.acked
        assert await create_topic(self.node, TOPIC, 2) == E.none
        a.topics[TOPIC] = 2
        self.ack("create topic")
        await self.produce_plain(0, b"p0")
        await self.transaction(commit=True, partitions=(0, 1), group=TXN_GROUP, offset=7)
        await self.transaction(commit=False, partitions=(0,))
        await self.form_group()
        await self.produce_plain(1, b"p1")
        await self.short_lived_topic("gone")

    async def produce_plain(self, partition: int, value: bytes) -> None:
        code, offset = await produce(self.node, partition, batch(value))
        assert code == E.none
        self.acked.records.setdefault((TOPIC, partition), {})[offset] = value
        self.ack(f"produce {value!r}")

    async def transaction(self, commit: bool, partitions, group: str | None = None, offset: int = 0) -> None:
        a, node = self.acked, self.node
        if a.producer is None:
            r = await call(node, INIT_PID, 4, transactional_id=TXN_ID, transaction_timeout=60_000, producer_id=-1,
                           producer_epoch=-1)
            assert r.error_code == E.none
            a.producer = (r.producer_id, r.producer_epoch)
            self.ack("init producer id")
        pid, epoch = a.producer
        topics = (entity(ADD_PARTITIONS, 3, "AddPartitionsToTxnTopic", name=TOPIC, partitions=tuple(partitions)),)
        r = await call(node, ADD_PARTITIONS, 3, v3_and_below_transactional_id=TXN_ID, v3_and_below_producer_id=pid,
                       v3_and_below_producer_epoch=epoch, v3_and_below_topics=topics)
        assert all(p.partition_error_code == E.none for t in r.results_by_topic_v3_and_below for p in t.results_by_partition)
        a.txn_open = True
        self.ack("add partitions")
        written = {}
        for p in partitions:
            value = b"%s%d" % (b"c" if commit else b"a", p)
            seq = self.seqs.get(p, 0)
            code, base = await produce(node, p, batch(value, producer=a.producer, seq=seq), TXN_ID)
            assert code == E.none
            self.seqs[p] = seq + 1
            written[(TOPIC, p)] = (base, value)
            self.ack(f"produce {value!r} in a transaction")
        if group is not None:
            await self.txn_offset_commit(group, offset)
        r = await call(node, END_TXN, 3, transactional_id=TXN_ID, producer_id=pid, producer_epoch=epoch,
                       committed=commit)
        assert r.error_code == E.none
        a.txn_open = False
        for tp, (base, value) in written.items():
            (a.records if commit else a.aborted).setdefault(tp, {})[base] = value
            if commit:
                a.committed_markers.add((*tp, pid))
        if commit and group is not None:
            a.offsets[(group, TOPIC, 0)] = offset
        self.ack("commit" if commit else "abort")

    async def txn_offset_commit(self, group: str, offset: int) -> None:
        pid, epoch = self.acked.producer
        r = await call(self.node, ADD_OFFSETS, 3, transactional_id=TXN_ID, producer_id=pid, producer_epoch=epoch,
                       group_id=group)
        assert r.error_code == E.none
        self.ack("add offsets")
        r = await call(self.node, TXN_OFFSET_COMMIT, 3, transactional_id=TXN_ID, group_id=group, producer_id=pid,
                       producer_epoch=epoch, generation_id=-1, member_id="", group_instance_id=None,
                       topics=_commit_topics(TXN_OFFSET_COMMIT, 3, 0, offset))
        assert r.topics[0].partitions[0].error_code == E.none
        self.ack("txn offset commit")

    async def short_lived_topic(self, name: str) -> None:
        assert await create_topic(self.node, name, 1) == E.none
        self.acked.topics[name] = 1
        self.acked.doomed.add(name)
        self.ack(f"create topic {name}")
        code, _ = await produce(self.node, 0, batch(b"doomed"), topic=name)
        assert code == E.none
        r = await call(self.node, DELETE_TOPICS, 4, topic_names=(name,), timeout=5000)
        assert r.responses[0].error_code == E.none
        del self.acked.topics[name]
        self.acked.doomed.discard(name)
        self.acked.deleted.add(name)
        self.ack(f"delete topic {name}")

    async def form_group(self) -> None:
        node = self.node
        protocols = (entity(JOIN, 5, "JoinGroupRequestProtocol", name="range", metadata=subscription()),)
        member = ""
        for _ in range(2):  # the first answer is MEMBER_ID_REQUIRED (KIP-394)
            r = await call(node, JOIN, 5, group_id=GROUP, session_timeout=30_000, rebalance_timeout=30_000,
                           member_id=member, group_instance_id=None, protocol_type="consumer", protocols=protocols,
                           reason=None)
            member = r.member_id
        assert r.error_code == E.none
        assignment = (entity(SYNC, 3, "SyncGroupRequestAssignment", member_id=member, assignment=b"t-1"),)
        s = await call(node, SYNC, 3, group_id=GROUP, generation_id=r.generation_id, member_id=member,
                       group_instance_id=None, protocol_type="consumer", protocol_name="range", assignments=assignment)
        assert s.error_code == E.none
        self.acked.generations[GROUP] = (r.generation_id, member)
        self.ack("sync group")
        c = await call(node, OFFSET_COMMIT, 8, group_id=GROUP, generation_id_or_member_epoch=r.generation_id,
                       member_id=member, group_instance_id=None, retention_time=-1, topics=_commit_topics(OFFSET_COMMIT, 8, 1, 3))
        assert c.topics[0].partitions[0].error_code == E.none
        self.acked.offsets[(GROUP, TOPIC, 1)] = 3
        self.ack("offset commit")


# -- reading a fetch response -----------------------------------------------------------------------


def data_records(records: bytes) -> dict[int, bytes]:
    out = {}
    for pos, h in iter_batches(records):
        if not h.is_control:
            out.update((r.offset, r.value) for r in decode_batch(records[pos:pos + h.size])[1])
    return out


def markers(records: bytes) -> list[tuple[int, int, ControlRecordType]]:
    """(offset, producer id, COMMIT/ABORT) of every control batch."""
    return [(h.base_offset, h.producer_id, read_control_type(records[pos:pos + h.size]))
            for pos, h in iter_batches(records) if h.is_control]


def committed_view(records: bytes, aborted) -> dict[int, bytes]:
    """What a read_committed consumer keeps (Kafka's CompletedFetch: skip aborted transactions)."""
    pending = sorted((a.first_offset, a.producer_id) for a in aborted or ())
    aborting: set[int] = set()
    out = {}
    for pos, h in iter_batches(records):
        while pending and pending[0][0] <= h.last_offset:
            aborting.add(pending.pop(0)[1])
        raw = records[pos:pos + h.size]
        if h.is_control:
            if read_control_type(raw) == ControlRecordType.ABORT:
                aborting.discard(h.producer_id)
        elif not (h.is_transactional and h.producer_id in aborting):
            out.update((r.offset, r.value) for r in decode_batch(raw)[1])
    return out
