"""Helpers for the consumer-group compat tests (compat/test_groups_*.py, test_py_group_offsets.py):
one uniform, synchronous consumer-group member per client library, topic set-up, the group's
offsets through each library's admin client, and a raw OffsetFetch that keeps working while the
broker restarts.

A member wraps a subscribe()d consumer with manual commits: ``poll() assignment() commit()
committed(partition) group_metadata() close()``. It is polled continuously from its own thread, as
applications do (:class:`Polling`), or directly by a test that drives a single consumer; aiokafka's
consumers run on an event loop in another background thread. One thread per consumer matters for
kafka-python 3.0: a JoinGroup/SyncGroup round trip that completes while no poll() of that consumer
is waiting is dropped and started again (``join_group_async`` replaces a finished join task), so
polling several kafka-python consumers in turn from one thread with short timeouts can make a group
leader rebalance forever.
"""

from __future__ import annotations

import asyncio
import queue
import socket
import struct
import threading

from compat import support
from shim.protocol.messages import RequestHeader, decode_response, encode_request, make, request_class, request_module

FAST_GROUP = dict(session_timeout_ms=6_000, heartbeat_interval_ms=200)


def wait_for(condition, timeout: float, message: str, interval: float = 0.02):
    """:func:`compat.support.wait_for` with the message third, as the group tests call it."""
    return support.wait_for(condition, timeout, interval, message)


def take_all(members, expected: dict, timeout: float) -> list[list]:
    """Polls every member until as many records arrived as ``expected`` (partition -> values) holds;
    what each member got."""
    want = sum(len(v) for v in expected.values())
    got: list[list] = [[] for _ in members]

    def done():
        for i, m in enumerate(members):
            got[i] += m.take()
        return sum(len(g) for g in got) >= want
    wait_for(done, timeout, f"{want} records")
    return got


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(topic, partitions, 1)])
    finally:
        admin.close()


def produce(bootstrap: str, topic: str, values_by_partition: dict[int, list[bytes]]) -> None:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    for p, values in values_by_partition.items():
        for v in values:
            producer.send(topic, value=v, partition=p)
    producer.flush(30)
    producer.close()


# -- one group member per library -----------------------------------------------------------------


class KafkaPythonMember:
    def __init__(self, bootstrap, topic, group, *, strategy="range", read_committed=False, **extra):
        from kafka import KafkaConsumer
        from kafka.coordinator.assignors.range import RangePartitionAssignor
        from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

        assignor = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor}[strategy]
        self.topic = topic
        self.consumer = KafkaConsumer(
            topic, bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False,
            auto_offset_reset="earliest", partition_assignment_strategy=[assignor],
            isolation_level="read_committed" if read_committed else "read_uncommitted",
            **{**FAST_GROUP, **extra})
        # kafka-python 3.0 can lose an assignment for good when its first JoinGroup goes out before it
        # knows the topic's partitions: it joins with nothing to assign, joins again once the metadata
        # arrives, and when that second join outlasts the poll() that started it, no later poll() takes
        # up its result (need_rejoin() is False by then) and the member stays without partitions.
        # Knowing the partitions before the first poll() avoids that second join.
        wait_for(lambda: self.consumer.partitions_for_topic(topic), 30, f"the partitions of {topic}")

    def poll(self):
        got = self.consumer.poll(timeout_ms=100)
        return [(r.partition, r.offset, r.value) for records in got.values() for r in records]

    def assignment(self) -> set[int]:
        return {tp.partition for tp in self.consumer.assignment()}

    def commit(self) -> None:
        self.consumer.commit()

    def committed(self, partition: int) -> int | None:
        from kafka import TopicPartition

        return self.consumer.committed(TopicPartition(self.topic, partition), timeout_ms=20_000)

    def group_metadata(self):
        """What sendOffsetsToTransaction takes: generation and member id included (KIP-447)."""
        return self.consumer.group_metadata()

    def generation(self) -> tuple[int, str]:
        m = self.consumer.group_metadata()
        return m.generation_id, m.member_id

    def close(self) -> None:
        self.consumer.close()


class _Loop:
    """An asyncio loop in a thread, shared by the aiokafka members of a test."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro, timeout=60):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


class AiokafkaMember:
    loop: _Loop | None = None

    def __init__(self, bootstrap, topic, group, *, strategy="roundrobin", read_committed=False, **extra):
        from aiokafka import AIOKafkaConsumer
        from aiokafka.coordinator.assignors.range import RangePartitionAssignor
        from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

        if AiokafkaMember.loop is None:
            AiokafkaMember.loop = _Loop()
        assignor = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor}[strategy]
        self.topic, self.group = topic, group

        async def start():
            c = AIOKafkaConsumer(
                topic, bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False,
                auto_offset_reset="earliest", partition_assignment_strategy=(assignor,),
                isolation_level="read_committed" if read_committed else "read_uncommitted", **{**FAST_GROUP, **extra})
            await c.start()
            return c

        self.consumer = self.loop.run(start())

    def poll(self):
        got = self.loop.run(self.consumer.getmany(timeout_ms=100))
        return [(r.partition, r.offset, r.value) for records in got.values() for r in records]

    def assignment(self) -> set[int]:
        return {tp.partition for tp in self.consumer.assignment()}

    def commit(self) -> None:
        self.loop.run(self.consumer.commit())

    def committed(self, partition: int) -> int | None:
        from aiokafka import TopicPartition

        return self.loop.run(self.consumer.committed(TopicPartition(self.topic, partition)))

    def group_metadata(self) -> str:
        """aiokafka's send_offsets_to_transaction takes the group id alone."""
        return self.group

    def generation(self) -> tuple[int, str]:
        coordinator = self.consumer._coordinator  # aiokafka has no public accessor for these
        return coordinator.generation, coordinator.member_id

    def close(self) -> None:
        self.loop.run(self.consumer.stop())


class ConfluentMember:
    def __init__(self, bootstrap, topic, group, *, strategy="cooperative-sticky", read_committed=False, **extra):
        import confluent_kafka as ck

        conf = {
            "bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
            "auto.offset.reset": "earliest", "partition.assignment.strategy": strategy,
            "session.timeout.ms": FAST_GROUP["session_timeout_ms"],
            "heartbeat.interval.ms": FAST_GROUP["heartbeat_interval_ms"],
            "isolation.level": "read_committed" if read_committed else "read_uncommitted",
        }
        conf.update(extra)
        self.topic = topic
        self.consumer = ck.Consumer(conf)
        self.consumer.subscribe([topic])

    def poll(self):
        out = []
        for m in self.consumer.consume(num_messages=500, timeout=0.1):
            if m.error() is None:
                out.append((m.partition(), m.offset(), m.value()))
        return out

    def assignment(self) -> set[int]:
        return {tp.partition for tp in self.consumer.assignment()}

    def commit(self) -> None:
        self.consumer.commit(asynchronous=False)

    def committed(self, partition: int) -> int | None:
        import confluent_kafka as ck

        (tp,) = self.consumer.committed([ck.TopicPartition(self.topic, partition)], timeout=20)
        return None if tp.offset < 0 else tp.offset

    def group_metadata(self):
        return self.consumer.consumer_group_metadata()

    def close(self) -> None:
        self.consumer.close()


MEMBERS = {"kafka-python": KafkaPythonMember, "aiokafka": AiokafkaMember, "confluent-kafka": ConfluentMember}


class Polling:
    """A member built and polled in its own thread; other threads read what it received and its
    assignment, and have it commit or close between two polls."""

    def __init__(self, factory) -> None:
        self._calls: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        self._records: list[tuple[int, int, bytes]] = []
        self._owned: set[int] = set()
        self._started = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(factory,), daemon=True)
        self._thread.start()
        self._started.wait(60)
        if self._error is not None:
            raise self._error

    def _run(self, factory) -> None:
        try:
            member = factory()
        except BaseException as exc:  # reported to the constructor's caller
            self._error = exc
            self._started.set()
            return
        self._started.set()
        while True:
            try:
                fn, done = self._calls.get_nowait()
            except queue.Empty:
                fn = None
            if fn is not None:
                try:
                    done.put((True, fn(member)))
                except BaseException as exc:  # handed to the waiting caller
                    done.put((False, exc))
                if fn is _close:
                    return
                continue
            got = member.poll()
            owned = member.assignment()
            with self._lock:
                self._records += got
                self._owned = owned

    def call(self, fn, timeout: float = 60):
        done: queue.Queue = queue.Queue()
        self._calls.put((fn, done))
        ok, value = done.get(timeout=timeout)
        if not ok:
            raise value
        return value

    def take(self) -> list[tuple[int, int, bytes]]:
        """Records received since the last take: (partition, offset, value)."""
        with self._lock:
            out, self._records = self._records, []
        return out

    def assignment(self) -> set[int]:
        with self._lock:
            return set(self._owned)

    def commit(self) -> None:
        self.call(lambda m: m.commit())

    def close(self) -> None:
        self.call(_close)
        self._thread.join(30)


def _close(member) -> None:
    member.close()


def start_member(client: str, *args, **kw) -> Polling:
    return Polling(lambda: MEMBERS[client](*args, **kw))


def read_all(bootstrap: str, topic: str, partitions: int, read_committed: bool = True) -> list[bytes]:
    """Every value of ``topic`` visible at the chosen isolation level, read until each partition's
    position reaches its end offset (the last stable offset under read_committed)."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False,
                             isolation_level="read_committed" if read_committed else "read_uncommitted")
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        end = consumer.end_offsets(tps)
        values: list[bytes] = []

        def done():
            for records in consumer.poll(timeout_ms=100).values():
                values.extend(r.value for r in records)
            return all(consumer.position(tp) >= end[tp] for tp in tps)
        wait_for(done, 60, f"the end of {topic}")
        return values
    finally:
        consumer.close()


def admin_group_offsets(client: str, bootstrap: str, group: str) -> dict[tuple[str, int], int]:
    """The group's committed offsets as ``client``'s admin API lists them: {(topic, partition): offset}."""
    if client == "kafka-python":
        from kafka import KafkaAdminClient

        admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=15_000)
        try:
            found = admin.list_group_offsets({group: None})[group]
        finally:
            admin.close()
        return {(tp.topic, tp.partition): m.offset for tp, m in found.items()}
    if client == "aiokafka":
        from aiokafka.admin import AIOKafkaAdminClient

        async def listed():
            admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=15_000)
            await admin.start()
            try:
                return await admin.list_consumer_group_offsets(group)
            finally:
                await admin.close()
        return {(tp.topic, tp.partition): m.offset for tp, m in asyncio.run(listed()).items()}
    from confluent_kafka import ConsumerGroupTopicPartitions
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 2})
    found = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(20)
    return {(tp.topic, tp.partition): tp.offset for tp in found.topic_partitions}


# -- raw OffsetFetch ------------------------------------------------------------------------------


def offset_fetch(bootstrap: str, group: str, topic: str, partitions, timeout: float = 5.0) -> dict[int, int] | None:
    """Committed offsets through one OffsetFetch v7 (RequireStable off) on a fresh socket to the
    group's coordinator; None while the broker does not answer (e.g. it is restarting)."""
    m = request_module(9, 7)
    request = make(request_class(9, 7), group_id=group, require_stable=False,
                   topics=(m.OffsetFetchRequestTopic(name=topic, partition_indexes=tuple(partitions)),))
    payload = encode_request(RequestHeader(9, 7, 1, "groups-compat"), request)
    try:
        with socket.create_connection(support.coordinator_address(bootstrap, group), timeout=timeout) as s:
            s.sendall(struct.pack(">i", len(payload)) + payload)
            _, response = decode_response(support.recv_frame(s), 9, 7)
    except OSError:
        return None
    return {p.partition_index: p.committed_offset for t in response.topics for p in t.partitions}


def describe_group(bootstrap: str, group: str) -> tuple[str, list[str]] | None:
    """(state, member ids) through DescribeGroups v5 on a fresh socket to the group's coordinator;
    None if unreachable."""
    payload = encode_request(RequestHeader(15, 5, 1, "groups-compat"),
                             make(request_class(15, 5), groups=(group,), include_authorized_operations=False))
    try:
        with socket.create_connection(support.coordinator_address(bootstrap, group), timeout=5) as s:
            s.sendall(struct.pack(">i", len(payload)) + payload)
            _, response = decode_response(support.recv_frame(s), 15, 5)
    except OSError:
        return None
    (g,) = response.groups
    return g.group_state, sorted(m.member_id for m in g.members)


def group_types(bootstrap: str) -> dict[str, str]:
    """{group id: group type ("classic" or "consumer")} through ListGroups v5 on a fresh socket to
    each broker (each lists the groups it coordinates, as admin clients merge them)."""
    payload = encode_request(RequestHeader(16, 5, 1, "groups-compat"),
                             make(request_class(16, 5), states_filter=(), types_filter=()))
    types = {}
    for address in support.broker_addresses(bootstrap):
        with socket.create_connection(address, timeout=5) as s:
            s.sendall(struct.pack(">i", len(payload)) + payload)
            _, response = decode_response(support.recv_frame(s), 16, 5)
        types.update({g.group_id: g.group_type for g in response.groups})
    return types
