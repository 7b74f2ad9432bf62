"""Client workloads of the scale group, each run in its own spawned process (runner.py).

What they share with the throughput workloads (producer and consumer settings, 1 KiB values)
comes from workloads.py. The raw-protocol ones (Metadata timing, idle connections, open
transactions) speak Kafka through kio directly, so that what is timed or held is the broker's
part alone, not a client library's parsing or buffers.
"""

from __future__ import annotations

import os
import socket
import struct
import threading
import time
import uuid

from .workloads import RECORD_SIZE, _Errors, _send, commit_latencies, consumer_config, producer_config


class RawClient:
    """One TCP connection speaking Kafka requests built with kio (flexible versions only)."""

    def __init__(self, bootstrap: str, client_id: str = "bench-scale") -> None:
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=60)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.client_id = client_id
        self.correlation = 0

    def send(self, request, api_key: int, version: int) -> None:
        from shim.protocol.messages import RequestHeader, encode_request

        self.correlation += 1
        header = RequestHeader(api_key=api_key, api_version=version, correlation_id=self.correlation,
                               client_id=self.client_id)
        body = encode_request(header, request)
        self.sock.sendall(struct.pack(">i", len(body)) + body)

    def receive(self) -> bytes:
        size = struct.unpack(">i", self._exactly(4))[0]
        return self._exactly(size)

    def call(self, request, api_key: int, version: int):
        from shim.protocol.messages import decode_response

        self.send(request, api_key, version)
        return decode_response(self.receive(), api_key, version)[1]

    def _exactly(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(min(n - len(buf), 1 << 20))
            if not chunk:
                raise RuntimeError("the broker closed the connection")
            buf += chunk
        return bytes(buf)

    def close(self) -> None:
        self.sock.close()


def metadata_latency(bootstrap: str, samples: int) -> dict:
    """Metadata v9 for every topic, timed from the request's send to its last byte, unparsed."""
    from kio.schema.metadata.v9.request import MetadataRequest

    c = RawClient(bootstrap)
    req = MetadataRequest(topics=None, allow_auto_topic_creation=False, include_cluster_authorized_operations=False,
                          include_topic_authorized_operations=False)
    times, size = [], 0
    try:
        for _ in range(samples + 2):
            t0 = time.perf_counter()
            c.send(req, 3, 9)
            size = len(c.receive())
            times.append((time.perf_counter() - t0) * 1000)
    finally:
        c.close()
    return {"latencies_ms": times[2:], "response_bytes": size}


def fixed_rate_produce(bootstrap: str, topic: str, partitions: int, rate: int, seconds: float) -> dict:
    """Records at a fixed rate, round-robin over ``partitions`` (linger.ms=0, acks=all); the latency
    of each is librdkafka's produce() to delivery report (Message.latency())."""
    from confluent_kafka import Producer

    lat: list[float] = []
    errors = _Errors()

    def on_delivery(err, msg) -> None:
        if err is not None:
            errors(err, msg)
        else:
            lat.append(msg.latency() * 1000)

    p = Producer(producer_config(bootstrap, 100_000, on_delivery=on_delivery, **{"linger.ms": 0,
                                                                                "delivery.report.only.error": False}))
    p.list_topics(topic, timeout=60)
    value = os.urandom(RECORD_SIZE)
    for i in range(min(partitions, 1000)):  # a first batch to many partitions before the clock
        p.produce(topic, value, partition=i % partitions)
    if p.flush(60):
        raise RuntimeError("warm-up records not delivered within 60 s")
    lat.clear()
    total = int(rate * seconds)
    t0 = time.monotonic()
    for i in range(total):
        wait = t0 + i / rate - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        p.produce(topic, value, partition=i % partitions)
        p.poll(0)
    if p.flush(60) or errors.count:
        raise RuntimeError(f"{errors.count} delivery errors (first: {errors.first}) or records undelivered")
    return {"records": total, "latencies_ms": lat}


def _together(run, clients: int, start: threading.Barrier) -> float:
    """Runs ``run(k)`` for each client on a thread of its own; the seconds from ``start`` (a barrier
    the threads wait on too) until the last one ends."""
    threads = [threading.Thread(target=run, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    start.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    return time.perf_counter() - t0


def produce_many(bootstrap: str, topic: str, clients: int, records: int, queue_messages: int) -> dict:
    """``clients`` producers at once, each its own librdkafka instance on its own thread, producer
    k writing records/clients records to partition k; timed from the first send to the last ack."""
    from confluent_kafka import Producer

    per = records // clients
    value = os.urandom(RECORD_SIZE)
    errors = _Errors()
    producers = [Producer(producer_config(bootstrap, max(1000, queue_messages // clients), on_delivery=errors))
                 for _ in range(clients)]
    for p in producers:
        p.list_topics(topic, timeout=60)
    start = threading.Barrier(clients + 1)
    left = [0] * clients

    def run(k: int) -> None:
        p = producers[k]
        start.wait()
        for _ in range(per):
            _send(p, topic, value, k)
        left[k] = p.flush(120)

    dt = _together(run, clients, start)
    if any(left) or errors.count:
        raise RuntimeError(f"{errors.count} delivery errors (first: {errors.first}), {sum(left)} undelivered")
    return {"records": per * clients, "seconds": dt}


def consume_many(bootstrap: str, topic: str, clients: int, records: int, stall_s: float = 20.0) -> dict:
    """``clients`` consumers at once (read_committed), consumer k assigned partition k from offset 0."""
    from confluent_kafka import Consumer, TopicPartition

    per = records // clients
    consumers = [Consumer(consumer_config(bootstrap, "read_committed", **{"fetch.max.bytes": 8 * 2**20,
                                                                          "queued.max.messages.kbytes": 16 * 1024}))
                 for _ in range(clients)]
    for c in consumers:
        c.list_topics(topic, timeout=60)
    start = threading.Barrier(clients + 1)
    got = [0] * clients

    def run(k: int) -> None:
        c = consumers[k]
        start.wait()
        c.assign([TopicPartition(topic, k, 0)])
        last = time.perf_counter()
        while got[k] < per:
            n = sum(1 for m in c.consume(1000, 0.05) if m.error() is None)
            now = time.perf_counter()
            if n:
                got[k], last = got[k] + n, now
            elif now - last > stall_s:
                return

    dt = _together(run, clients, start)
    for c in consumers:
        c.close()
    if sum(got) != per * clients:
        raise RuntimeError(f"read {sum(got)} of {per * clients} records (stalled for {stall_s:.0f} s)")
    return {"records": sum(got), "seconds": dt}


def hold_connections(bootstrap: str, count: int, ready, release) -> dict:
    """``count`` connections, each having had an ApiVersions and a Metadata answer, held open until
    ``release`` is set; ``ready`` is set once all of them are in place."""
    from kio.schema.api_versions.v3.request import ApiVersionsRequest
    from kio.schema.metadata.v9.request import MetadataRequest

    clients = []
    try:
        for i in range(count):
            c = RawClient(bootstrap, f"bench-conn-{i}")
            c.call(ApiVersionsRequest(client_software_name="bench", client_software_version="1"), 18, 3)
            c.call(MetadataRequest(topics=(), allow_auto_topic_creation=False,
                                   include_cluster_authorized_operations=False,
                                   include_topic_authorized_operations=False), 3, 9)
            clients.append(c)
        ready.set()
        release.wait(600)
    finally:
        for c in clients:
            c.close()
    return {"connections": len(clients)}


def open_transactions(bootstrap: str, topic: str, count: int, ready, release) -> dict:
    """``count`` transactions left open: InitProducerId with a transactional id, then
    AddPartitionsToTxn for partition 0 of ``topic``, each id's transaction Ongoing until ``release``
    (then the process exits and they expire on the broker's clock)."""
    from kio.schema.add_partitions_to_txn.v3.request import AddPartitionsToTxnRequest, AddPartitionsToTxnTopic
    from kio.schema.init_producer_id.v4.request import InitProducerIdRequest
    import datetime

    from kio.static.primitive import i32Timedelta

    c = RawClient(bootstrap)
    tag = uuid.uuid4().hex[:8]
    opened = 0
    try:
        for i in range(count):
            tid = f"bench-open-{tag}-{i}"
            r = c.call(InitProducerIdRequest(transactional_id=tid, transaction_timeout=i32Timedelta.parse(
                datetime.timedelta(minutes=10)), producer_id=-1, producer_epoch=-1), 22, 4)
            if r.error_code.value:
                raise RuntimeError(f"InitProducerId {tid}: {r.error_code.name}")
            a = c.call(AddPartitionsToTxnRequest(v3_and_below_transactional_id=tid,
                                                 v3_and_below_producer_id=r.producer_id,
                                                 v3_and_below_producer_epoch=r.producer_epoch,
                                                 v3_and_below_topics=(AddPartitionsToTxnTopic(name=topic,
                                                                                               partitions=(0,)),)),
                       24, 3)
            errs = [p.partition_error_code.name for t in a.results_by_topic_v3_and_below for p in t.results_by_partition
                    if p.partition_error_code.value]
            if errs:
                raise RuntimeError(f"AddPartitionsToTxn {tid}: {errs}")
            opened += 1
        ready.set()
        release.wait(600)
    finally:
        c.close()
    return {"transactions": opened}


def end_txn_spanning(bootstrap: str, topic: str, partitions: int, transactions: int, warmup: int) -> dict:
    """EndTxn latency for transactions that write one record to each of ``partitions`` partitions:
    the records delivered (flush) first, then commit_transaction() timed."""
    from confluent_kafka import Producer

    errors = _Errors()
    p = Producer(producer_config(bootstrap, 100_000, on_delivery=errors,
                                 **{"transactional.id": f"bench-{uuid.uuid4().hex}", "linger.ms": 0}))
    p.list_topics(topic, timeout=60)
    p.init_transactions(60)
    return commit_latencies(p, errors, topic, list(range(partitions)), transactions, warmup, 60)
