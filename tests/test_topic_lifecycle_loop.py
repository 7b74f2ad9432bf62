"""CreateTopics, DeleteTopics and CreatePartitions of many partitions do their file work off the event
loop: a second connection is answered while it runs, and the first is answered once it is done.

Each test holds the lifecycle thread at a gate (a threading.Event) once its file work began; the
second connection's answers arrive while the gate is shut, so they cannot depend on timing, and a
blocked loop would leave them unanswered (the read's timeout is only a guard against hanging).
"""

from __future__ import annotations

import asyncio
import datetime
import json
import struct
import threading

import pytest

from shim import Broker
from shim.errors import ErrorCode as E
from shim.protocol.messages import RequestHeader, decode_response, encode_request, request_module
from shim.storage import fs
from shim.storage.log_manager import LogManager
from loop_stall import stall_during
from test_server_limits import until

GUARD = 60  # seconds: only a hung test ever reaches it
TIMEOUT = datetime.timedelta(seconds=60)

META_V, CREATE_V, DELETE_V, GROW_V = 12, 7, 6, 3


class Client:
    def __init__(self, reader, writer) -> None:
        self.reader, self.writer, self.corr = reader, writer, 0

    def send(self, api_key: int, version: int, build) -> int:
        self.corr += 1
        payload = encode_request(RequestHeader(api_key, version, self.corr, "lifecycle"), build(request_module(api_key, version)))
        self.writer.write(struct.pack(">i", len(payload)) + payload)
        return self.corr

    async def answer(self, api_key: int, version: int, corr: int):
        got, response = decode_response(await self.answer_bytes(), api_key, version)
        assert got == corr
        return response

    async def answer_bytes(self) -> bytes:
        size = struct.unpack(">i", await asyncio.wait_for(self.reader.readexactly(4), GUARD))[0]
        return await self.reader.readexactly(size)

    async def call(self, api_key: int, version: int, build):
        return await self.answer(api_key, version, self.send(api_key, version, build))


async def client(broker) -> Client:
    c = Client(*await asyncio.open_connection(broker.node.host, broker.node.port))
    broker.test_clients.append(c)
    return c


def create(name, partitions):
    return lambda m: m.CreateTopicsRequest(timeout=TIMEOUT, validate_only=False, topics=(
        m.CreatableTopic(name=name, num_partitions=partitions, replication_factor=-1, assignments=(), configs=()),))


def metadata(name, auto_create=False):
    return lambda m: m.MetadataRequest(topics=(m.MetadataRequestTopic(name=name, topic_id=None),),
                                       allow_auto_topic_creation=auto_create, include_topic_authorized_operations=False)


def api_versions(m):
    return m.ApiVersionsRequest(client_software_name="lifecycle", client_software_version="1")


class Gate:
    """Wraps a LogManager method run on the lifecycle thread: it says when it began, then waits to be let go."""

    def __init__(self, monkeypatch, method: str) -> None:
        self.began, self.open = threading.Event(), threading.Event()
        real = getattr(LogManager, method)

        def gated(*args):
            self.began.set()
            assert self.open.wait(GUARD)
            return real(*args)

        monkeypatch.setattr(LogManager, method, gated)

    async def wait_began(self) -> None:
        assert await asyncio.to_thread(self.began.wait, GUARD)


@pytest.fixture
async def broker(tmp_path):
    async with Broker(data_dir=tmp_path / "d", listen="127.0.0.1:0", auto_create_topics=True) as b:
        b.test_clients = []
        yield b
        for c in b.test_clients:
            c.writer.close()


async def test_other_connections_are_served_while_a_big_topic_is_created(broker, monkeypatch):
    gate = Gate(monkeypatch, "_new_logs")
    a, b = await client(broker), await client(broker)
    pending = a.send(19, CREATE_V, create("big", 500))
    await gate.wait_began()

    assert (await b.call(18, 3, api_versions)).error_code == E.none
    (t,) = (await b.call(3, META_V, metadata("big"))).topics
    assert t.error_code == E.unknown_topic_or_partition  # not there until it is whole and durable
    (t,) = (await b.call(3, META_V, metadata("big", auto_create=True))).topics
    assert t.error_code == E.leader_not_available  # Kafka: its creation is under way
    assert "big" not in broker.node.logs.topics

    gate.open.set()
    (result,) = (await a.answer(19, CREATE_V, pending)).topics
    assert (result.error_code, result.num_partitions) == (E.none, 500)
    (t,) = (await b.call(3, META_V, metadata("big"))).topics
    assert t.error_code == E.none and len(t.partitions) == 500
    (again,) = (await b.call(19, CREATE_V, create("big", 1))).topics
    assert again.error_code == E.topic_already_exists


async def test_other_connections_are_served_while_a_big_topic_is_deleted(broker, monkeypatch):
    a, b = await client(broker), await client(broker)
    (result,) = (await a.call(19, CREATE_V, create("big", 500))).topics
    assert result.error_code == E.none
    gate = Gate(monkeypatch, "_remove_logs")
    pending = a.send(20, DELETE_V, lambda m: m.DeleteTopicsRequest(
        topics=(m.DeleteTopicState(name="big", topic_id=None),), timeout=TIMEOUT))
    await gate.wait_began()

    assert (await b.call(18, 3, api_versions)).error_code == E.none
    (t,) = (await b.call(3, META_V, metadata("big"))).topics
    assert t.error_code == E.unknown_topic_or_partition  # gone from every answer at once
    (t,) = (await b.call(3, META_V, metadata("big", auto_create=True))).topics
    assert t.error_code == E.leader_not_available  # its old files are still being removed
    assert (broker.node.logs.data_dir / "big-499").is_dir()

    gate.open.set()
    (deleted,) = (await a.answer(20, DELETE_V, pending)).responses
    assert deleted.error_code == E.none
    assert not (broker.node.logs.data_dir / "big-0").exists()
    (result,) = (await b.call(19, CREATE_V, create("big", 2))).topics  # the name is free again, with no old files
    assert result.error_code == E.none and broker.node.logs.get("big", 1).log_end_offset == 0


async def test_other_connections_are_served_while_partitions_are_added(broker, monkeypatch):
    a, b = await client(broker), await client(broker)
    assert (await a.call(19, CREATE_V, create("grow", 1))).topics[0].error_code == E.none
    gate = Gate(monkeypatch, "_new_logs")
    pending = a.send(37, GROW_V, lambda m: m.CreatePartitionsRequest(
        topics=(m.CreatePartitionsTopic(name="grow", count=500, assignments=None),), timeout=TIMEOUT,
        validate_only=False))
    await gate.wait_began()

    (t,) = (await b.call(3, META_V, metadata("grow"))).topics
    assert t.error_code == E.none and len(t.partitions) == 1  # the new count shows once the partitions exist

    gate.open.set()
    (grown,) = (await a.answer(37, GROW_V, pending)).results
    assert grown.error_code == E.none
    (t,) = (await b.call(3, META_V, metadata("grow"))).topics
    assert len(t.partitions) == 500


async def test_a_creation_whose_connection_is_dropped_still_completes(broker, monkeypatch):
    gate = Gate(monkeypatch, "_new_logs")
    a = await client(broker)
    await until(lambda: len(broker._server.connections) == 1)
    (conn,) = broker._server.connections
    a.send(19, CREATE_V, create("orphan", 50))
    await gate.wait_began()
    conn.abort()  # the broker drops the connection, cancelling the request's task
    await until(lambda: conn.task.done())
    gate.open.set()
    await until(lambda: "orphan" in broker.node.logs.topics)
    b = await client(broker)
    (t,) = (await b.call(3, META_V, metadata("orphan"))).topics
    assert t.error_code == E.none and len(t.partitions) == 50


async def test_a_stop_during_a_creation_is_clean_and_the_next_start_has_no_trace_of_it(tmp_path, monkeypatch):
    gate = Gate(monkeypatch, "_new_logs")
    real_close = LogManager.close

    def closing(self):
        gate.open.set()  # the creation's file work ends while the stop waits for it
        real_close(self)

    monkeypatch.setattr(LogManager, "close", closing)
    broker = await Broker(data_dir=tmp_path / "d", listen="127.0.0.1:0").start()
    a = Client(*await asyncio.open_connection(broker.node.host, broker.node.port))
    a.send(19, CREATE_V, create("late", 200))
    await gate.wait_began()
    await broker.stop()
    a.writer.close()
    assert (tmp_path / "d" / ".kafka_cleanshutdown").exists()
    monkeypatch.undo()
    async with Broker(data_dir=tmp_path / "d", listen="127.0.0.1:0") as again:
        assert again.node.logs.clean_start and "late" not in again.node.logs.topics
        assert not list((tmp_path / "d").glob("late-*"))


def create_many(names, validate_only=False):
    return lambda m: m.CreateTopicsRequest(timeout=TIMEOUT, validate_only=validate_only, topics=tuple(
        m.CreatableTopic(name=n, num_partitions=1, replication_factor=-1, assignments=(), configs=()) for n in names))


async def test_many_topics_in_one_request_are_made_together_and_written_once(broker, monkeypatch):
    """10,000 topics in one CreateTopics took over a minute: each topic's partitions were made, and
    topics.json rewritten and synced on the loop, one topic after the other. Now the request's
    topics are checked a slice of the loop at a time, every partition is made in one go on the
    lifecycle thread and the file is written once; each topic still gets its own answer."""
    n = 2_000
    names = [f"many-{i}" for i in range(n)]
    names[5], names[7] = "bad/name", "many-6"  # refused: an illegal name, a name given twice
    a, b = await client(broker), await client(broker)
    assert (await a.call(19, CREATE_V, create("many-9", 1))).topics[0].error_code == E.none  # exists already
    writes = []
    real_write = fs.atomic_write
    monkeypatch.setattr(fs, "atomic_write", lambda path, data, *args, **kw: (
        writes.append(path.name), real_write(path, data, *args, **kw))[1])
    expected = {name: E.none for name in names}
    expected.update({"bad/name": E.invalid_topic_exception, "many-9": E.topic_already_exists})

    checked = await a.call(19, CREATE_V, create_many(names, validate_only=True))
    # Kafka: a name given twice is left out and answered once, after the others (ControllerApis.createTopics)
    assert [(t.name, t.error_code) for t in checked.topics] == [
        (name, expected[name]) for name in names if name != "many-6"] + [("many-6", E.invalid_request)]
    assert "many-0" not in broker.node.logs.topics and writes == []

    corr = a.send(19, CREATE_V, create_many(names))
    answer, stall = await stall_during(a.answer_bytes())  # read, not decoded: the client's work is not measured
    assert decode_response(answer, 19, CREATE_V)[0] == corr
    created = decode_response(answer, 19, CREATE_V)[1]
    assert [t.error_code for t in created.topics] == [t.error_code for t in checked.topics]
    assert writes.count("topics.json") == 1
    on_disk = {t["name"] for t in json.loads((broker.node.logs.meta_dir / "topics.json").read_text())["topics"]}
    assert on_disk == set(names) - {"bad/name", "many-6"}  # durable once answered
    (t,) = (await b.call(3, META_V, metadata("many-1999"))).topics
    assert t.error_code == E.none and len(t.partitions) == 1
    assert stall.cpu < 0.1, stall
