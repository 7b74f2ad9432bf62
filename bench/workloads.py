"""Client workloads. Each runs in its own spawned process (see runner.py) so that librdkafka's
threads and the Python loop driving it share nothing with the harness or with each other.

All producers use acks=all and 1 KiB values (random bytes; words when the throughput producers
compress, ``--compression``); the local queue is
bounded (``queue_messages``) so a producer keeps a steady backlog in front of the broker instead of
buffering the whole run, which is also what makes "commit every 100 ms" mean 100 ms of traffic.
"""

from __future__ import annotations

import os
import struct
import time
import uuid

from .client_settings import (
    RECORD_SIZE,
    broker_cpu,
    broker_oncpu,
    broker_wait,
    consumer_config,
    own_cpu,
    producer_config,
)
from .native_workloads import (  # noqa: F401 (the runner finds every workload here by name)
    consume_c,
    consume_kcat,
    java_producer_config,
    produce_c,
    produce_java,
)
from .procs import threads_cpu, threads_delta


def _payloads(n: int = 64, compressible: bool = False) -> list[bytes]:
    """Random bytes, or (for runs with compression) text of random words, which compresses a few times."""
    if not compressible:
        return [os.urandom(RECORD_SIZE) for _ in range(n)]
    import random

    rnd = random.Random(8)
    words = ["".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rnd.randint(3, 9))) for _ in range(500)]
    out = []
    for _ in range(n):
        text = " ".join(rnd.choice(words) for _ in range(RECORD_SIZE // 4)).encode()
        out.append(text[:RECORD_SIZE])
    return out


class _Errors:
    def __init__(self) -> None:
        self.count = 0
        self.first = None

    def __call__(self, err, msg) -> None:
        if err is not None:
            self.count += 1
            self.first = self.first or str(err)


def _ready(producer, topic: str, warmup_topic: str | None = None) -> None:
    """Connection and metadata in place before the clock starts; with ``warmup_topic``, one record
    delivered there too, so an idempotent producer has its producer id before the clock starts."""
    producer.list_topics(topic, timeout=30)
    if warmup_topic:
        producer.produce(warmup_topic, b"warm-up", partition=0)
        if producer.flush(30):
            raise RuntimeError(f"warm-up record to {warmup_topic} not delivered within 30 s")


def _send(producer, topic, value, partition) -> None:
    while True:
        try:
            producer.produce(topic, value, partition=partition)
            return
        except BufferError:
            producer.poll(0.001)


def produce(bootstrap: str, topic: str, partitions: int, records: int, queue_messages: int,
            idempotent: bool = False, warmup_topic: str | None = None, broker_pid: int | None = None,
            compression: str = "none") -> dict:
    from confluent_kafka import Producer

    errors = _Errors()
    p = Producer(producer_config(bootstrap, queue_messages, on_delivery=errors, **{"compression.type": compression},
                                 **({"enable.idempotence": True} if idempotent else {})))
    _ready(p, topic, warmup_topic)
    values = _payloads(compressible=compression != "none")
    nv = len(values)
    threads0 = threads_cpu(os.getpid())
    cpu0, own0, wait0, on0 = broker_cpu(broker_pid), own_cpu(), broker_wait(broker_pid), broker_oncpu(broker_pid)
    t0 = time.perf_counter()
    for i in range(records):
        _send(p, topic, values[i % nv], i % partitions)
    left = p.flush(120)
    dt = time.perf_counter() - t0
    cpu, own, wait = broker_cpu(broker_pid) - cpu0, own_cpu() - own0, broker_wait(broker_pid) - wait0
    on, threads = broker_oncpu(broker_pid), threads_delta(threads0, threads_cpu(os.getpid()))
    if left or errors.count:
        raise RuntimeError(f"{errors.count} delivery errors (first: {errors.first}), {left} undelivered")
    return {"records": records, "seconds": dt, "broker_cpu_s": cpu, "client_cpu_s": own, "broker_runqueue_wait_s": wait,
            "client_threads": threads, **_oncpu(on0, on)}


def _oncpu(before: float | None, after: float | None) -> dict:
    """The broker's CPU seconds over the run to the nanosecond, where they could be read (see
    procs.oncpu_seconds): broker_cpu_s counts ticks of 10 ms."""
    return {} if before is None or after is None else {"broker_oncpu_s": after - before}


def produce_transactional(bootstrap: str, topic: str, partitions: int, records: int, queue_messages: int,
                          commit_interval_s: float, broker_pid: int | None = None, compression: str = "none",
                          warmup_topic: str | None = None) -> dict:
    from confluent_kafka import Producer

    errors = _Errors()
    p = Producer(producer_config(bootstrap, queue_messages, on_delivery=errors,
                                 **{"transactional.id": f"bench-{uuid.uuid4().hex}", "compression.type": compression}))
    _ready(p, topic)
    p.init_transactions(30)
    if warmup_topic:  # one whole transaction before the clock, as the other producers deliver one record
        p.begin_transaction()
        p.produce(warmup_topic, b"warm-up", partition=0)
        p.commit_transaction(30)
    values = _payloads(compressible=compression != "none")
    nv = len(values)
    commits, commit_time, flush_time, queued = 0, 0.0, 0.0, 0
    cpu0, own0, wait0 = broker_cpu(broker_pid), own_cpu(), broker_wait(broker_pid)
    t0 = time.perf_counter()
    p.begin_transaction()
    next_commit = t0 + commit_interval_s

    def commit() -> float:
        # commit_transaction() first delivers every queued record, then sends EndTxn; the
        # explicit flush() does that first part alone, so the pause splits into the two.
        nonlocal commits, commit_time, flush_time, queued
        c0 = time.perf_counter()
        queued += len(p)
        if p.flush(120):
            raise RuntimeError(f"transaction {commits + 1}: records not delivered within 120 s")
        c1 = time.perf_counter()
        p.commit_transaction(120)
        now = time.perf_counter()
        commits, flush_time, commit_time = commits + 1, flush_time + c1 - c0, commit_time + now - c0
        return now

    for i in range(records):
        _send(p, topic, values[i % nv], i % partitions)
        if not i & 63 and time.perf_counter() >= next_commit:
            now = commit()
            p.begin_transaction()
            next_commit = now + commit_interval_s
    commit()
    dt = time.perf_counter() - t0
    cpu, own, wait = broker_cpu(broker_pid) - cpu0, own_cpu() - own0, broker_wait(broker_pid) - wait0
    if errors.count:
        raise RuntimeError(f"{errors.count} delivery errors (first: {errors.first})")
    return {"records": records, "seconds": dt, "broker_cpu_s": cpu, "client_cpu_s": own,
            "broker_runqueue_wait_s": wait, "transactions": commits,
            "commit_seconds": commit_time, "commit_flush_seconds": flush_time, "commit_queued_records": queued}


def consume(bootstrap: str, topic: str, partitions: int, records: int, isolation: str,
            stall_s: float = 20.0, broker_pid: int | None = None, warmup_topic: str | None = None) -> dict:
    """A fresh consumer assigned every partition from offset 0; timed from assign() (once the
    client has its bootstrap connection and metadata, and with ``warmup_topic`` has read that
    topic's one record) until ``records`` records have been returned."""
    from confluent_kafka import Consumer, KafkaError, TopicPartition

    if warmup_topic:
        _read_one(bootstrap, isolation, warmup_topic, stall_s)
    c = Consumer(consumer_config(bootstrap, isolation))
    try:
        c.list_topics(topic, timeout=30)  # bootstrap connection and metadata before the clock starts
        got, first, errors, first_error = 0, None, 0, None
        cpu0, own0, wait0 = broker_cpu(broker_pid), own_cpu(), broker_wait(broker_pid)
        t0 = time.perf_counter()
        c.assign([TopicPartition(topic, i, 0) for i in range(partitions)])
        last_progress = t0
        while got < records:
            msgs = c.consume(10_000, 0.01)
            n = 0
            for m in msgs:
                e = m.error()
                if e is None:
                    n += 1
                elif e.code() != KafkaError._PARTITION_EOF:
                    if e.fatal():
                        raise RuntimeError(f"fatal consumer error after {got} records: {e}")
                    errors, first_error = errors + 1, first_error or str(e)
            now = time.perf_counter()
            if n:
                got += n
                last_progress = now
                first = first or now - t0
            elif now - last_progress > stall_s:
                raise RuntimeError(f"stalled: {got} of {records} records read, nothing new for {stall_s:.0f} s"
                                   + (f"; {errors} consumer errors, first: {first_error}" if errors else ""))
        dt = time.perf_counter() - t0
        cpu, own, wait = broker_cpu(broker_pid) - cpu0, own_cpu() - own0, broker_wait(broker_pid) - wait0
    finally:
        c.close()
    return {"records": got, "seconds": dt, "broker_cpu_s": cpu, "client_cpu_s": own, "broker_runqueue_wait_s": wait,
            "first_record_s": first,
            "consumer_errors": errors, "first_consumer_error": first_error}


def _read_one(bootstrap: str, isolation: str, topic: str, stall_s: float) -> None:
    """Read the first record of ``topic``-0 with a consumer of its own (the measured one must not
    inherit its parked Fetch, which a broker may hold for fetch.wait.max.ms)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(consumer_config(bootstrap, isolation))
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        deadline = time.perf_counter() + stall_s
        while time.perf_counter() < deadline:
            m = consumer.poll(0.1)
            if m is not None and m.error() is None:
                return
        raise RuntimeError(f"the warm-up record of {topic} was not read within {stall_s:.0f} s")
    finally:
        consumer.close()


# End-to-end latency: values carry (kind, sequence, send time on CLOCK_MONOTONIC, which is
# system-wide on Linux); the consumer runs in another process.
_LAT = struct.Struct(">BIq")
WARMUP, MEASURED, END = 0, 1, 2


def _lat_value(kind: int, seq: int, pad: bytes) -> bytes:
    return _LAT.pack(kind, seq, time.monotonic_ns()) + pad


def latency_producer(bootstrap: str, topic: str, rate: int, seconds: float, consumer_ready) -> dict:
    from confluent_kafka import Producer

    errors = _Errors()
    p = Producer(producer_config(bootstrap, 100_000, on_delivery=errors, **{"linger.ms": 0}))
    _ready(p, topic)
    pad = os.urandom(RECORD_SIZE - _LAT.size)
    deadline = time.monotonic() + 30
    seq = 0
    while not consumer_ready.is_set():  # warm-up records until the consumer has seen one
        if time.monotonic() > deadline:
            raise RuntimeError("the consumer saw none of the warm-up records within 30 s")
        p.produce(topic, _lat_value(WARMUP, seq, pad), partition=0)
        seq += 1
        p.poll(0.02)
    for _ in range(20):
        p.produce(topic, _lat_value(WARMUP, seq, pad), partition=0)
        p.poll(0.01)
    total = int(rate * seconds)
    interval = 1.0 / rate
    t0 = time.monotonic()
    for i in range(total):
        wait = t0 + i * interval - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        p.produce(topic, _lat_value(MEASURED, i, pad), partition=0)
        p.poll(0)
    elapsed = time.monotonic() - t0
    p.produce(topic, _lat_value(END, total, pad), partition=0)
    left = p.flush(60)
    if left or errors.count:
        raise RuntimeError(f"{errors.count} delivery errors (first: {errors.first}), {left} undelivered")
    return {"sent": total, "send_rate": total / elapsed}


def latency_consumer(bootstrap: str, topic: str, expected: int, timeout_s: float, consumer_ready) -> dict:
    from confluent_kafka import Consumer, TopicPartition

    # librdkafka's default fetch.wait.max.ms (500) is kept: a broker that answers a parked Fetch
    # when data arrives shows it; one that waits out max_wait shows that too.
    c = Consumer(consumer_config(bootstrap, "read_uncommitted"))
    lat = []
    try:
        c.assign([TopicPartition(topic, 0, 0)])
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            m = c.poll(0.1)
            if m is None or m.error() is not None:
                continue
            now = time.monotonic_ns()
            kind, seq, sent = _LAT.unpack_from(m.value())
            if kind == MEASURED:
                lat.append((now - sent) / 1e6)
            elif kind == WARMUP:
                consumer_ready.set()
            elif kind == END:
                break
        else:
            raise RuntimeError(f"timed out: {len(lat)} of {expected} records received")
    finally:
        c.close()
    return {"received": len(lat), "expected": expected, "latencies_ms": lat}


def end_txn_latency(bootstrap: str, topic: str, transactions: int, warmup: int, per_txn: int) -> dict:
    """Time commit_transaction() alone: each transaction's records are flushed (delivered) first,
    so what is timed is EndTxn and the markers behind it."""
    from confluent_kafka import Producer

    errors = _Errors()
    p = Producer(producer_config(bootstrap, 100_000, on_delivery=errors,
                                 **{"transactional.id": f"bench-{uuid.uuid4().hex}", "linger.ms": 0}))
    _ready(p, topic)
    p.init_transactions(30)
    return commit_latencies(p, errors, topic, [0] * per_txn, transactions, warmup, 30)


def commit_latencies(p, errors: _Errors, topic: str, partitions: list[int], transactions: int, warmup: int,
                     timeout_s: float) -> dict:
    """``warmup`` + ``transactions`` transactions of one record to each of ``partitions`` (a
    partition named twice gets two), each flushed (delivered) before its commit_transaction() is
    timed; the warm-up ones are not counted."""
    value = os.urandom(RECORD_SIZE)
    times = []
    for i in range(warmup + transactions):
        p.begin_transaction()
        for k in partitions:
            p.produce(topic, value, partition=k)
        if p.flush(timeout_s):
            raise RuntimeError(f"transaction {i}: records not delivered within {timeout_s} s")
        t = time.perf_counter()
        p.commit_transaction(timeout_s)
        if i >= warmup:
            times.append((time.perf_counter() - t) * 1000)
    if errors.count:
        raise RuntimeError(f"{errors.count} delivery errors (first: {errors.first})")
    return {"transactions": transactions, "latencies_ms": times}
