"""Produce read and answered without kio's objects (shim.protocol.produce_wire) gives the bytes kio's
path gives: the same requests to a node on the fast path and to one whose request log is on (which
takes kio's path throughout) get identical answers and leave identical logs, on every version."""

from __future__ import annotations

import datetime

import pytest

from kafka_codecs import encode_batch
from shim.apis import k00_produce
from shim.apis.dispatch import dispatch, forget_routes
from shim.config import BrokerConfig
from shim.node import Node
from shim.protocol import produce_wire
from shim.protocol.messages import RequestHeader, encode_request, request_module

RELEASE_VERSIONS = [("3.9", v) for v in range(0, 12)] + [("4.1", v) for v in range(3, 14)]


def _batch(seq: int, n: int = 3) -> bytes:
    records = [(b"k%d" % i, b"v" * 100, [("h", b"x")], 1_700_000_000_000 + i) for i in range(n)]
    if seq < 0:
        return encode_batch(records)
    return encode_batch(records, producer_id=7, producer_epoch=0, base_sequence=seq)


def _frame(node, version: int, correlation_id: int, partitions: dict, acks: int = -1) -> bytes:
    m = request_module(0, version)
    topic = {"topic_id": node.logs.topics["t"].topic_id} if version >= 13 else {"name": "t"}
    fields = dict(acks=acks, timeout=datetime.timedelta(seconds=5), topic_data=(m.TopicProduceData(
        **topic, partition_data=tuple(m.PartitionProduceData(index=p, records=r) for p, r in partitions.items())),))
    if version >= 3:
        fields["transactional_id"] = None
    return encode_request(RequestHeader(0, version, correlation_id, "client"), m.ProduceRequest(**fields))


@pytest.fixture
def pair(tmp_path):
    def make(release):
        nodes = []
        for name in ("fast", "kio"):
            node = Node(BrokerConfig(data_dir=tmp_path / name, kafka_version=release))
            node.logs.create_topic("t", 3)
            nodes.append(node)
        nodes[1].control.requests.start(100)
        nodes[1].control.refresh()
        made.extend(nodes)
        return nodes

    made = []
    yield make
    forget_routes()
    for node in made:
        node.close()


@pytest.mark.parametrize("release,version", RELEASE_VERSIONS)
async def test_the_fast_path_answers_and_writes_as_kio_does(pair, release, version, monkeypatch):
    fast, slow = pair(release)
    read = []
    monkeypatch.setattr(k00_produce, "decode", lambda f, v: read.append(produce_wire.decode(f, v)) or read[-1])
    forget_routes()  # the dispatcher looks each API's module up once
    requests = [
        {0: _batch(-1)},  # a plain append
        {0: _batch(-1), 1: _batch(-1, 5), 2: _batch(-1, 1)},  # three partitions
        {1: _batch(0)}, {1: _batch(3)}, {1: _batch(0)},  # idempotent, then a duplicate of the first
        {1: _batch(9)},  # out of order: an error on the wire, kio's entities
        {0: _batch(-1), 7: _batch(-1)},  # one unknown partition among good ones
        {0: b"\x00" * 70},  # malformed batch
    ]
    for i, partitions in enumerate(requests):
        answers = []
        for node in (fast, slow):
            answers.append(await dispatch(node, _frame(node, version, i, partitions)))
        # each node drew its own topic id, which v13 answers carry
        ids = [node.logs.topics["t"].topic_id.bytes for node in (fast, slow)]
        assert answers[0] == answers[1].replace(ids[1], ids[0]), (i, partitions.keys())
    assert await dispatch(fast, _frame(fast, version, 99, {2: _batch(-1)}, acks=0)) is None
    assert await dispatch(slow, _frame(slow, version, 99, {2: _batch(-1)}, acks=0)) is None
    assert read and all(r is not None for r in read)  # the fast node read every request itself
    for p in range(3):
        logs = [node.logs.get("t", p) for node in (fast, slow)]
        assert logs[0].log_end_offset == logs[1].log_end_offset
        assert logs[0].active.read(0, logs[0].active.size) == logs[1].active.read(0, logs[1].active.size)
