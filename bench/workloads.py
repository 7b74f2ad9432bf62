"""Client workloads. Each runs in its own spawned process (see runner.py) so that librdkafka's
threads and the Python loop driving it share nothing with the harness or with each other.

All producers use acks=all and 1 KiB values (random bytes; words when the throughput producers
compress, ``--compression``); the local queue is
bounded (``queue_messages``) so a producer keeps a steady backlog in front of the broker instead of
buffering the whole run, which is also what makes "commit every 100 ms" mean 100 ms of traffic.
"""

from __future__ import annotations

import contextlib
import os
import struct
import time
import uuid

RECORD_SIZE = 1024


def _broker_cpu(pid: int | None) -> float:
    """CPU seconds the broker (and its children) have used so far; read around the timed window."""
    from .procs import cpu_seconds

    return cpu_seconds(pid) if pid else 0.0


def _broker_wait(pid: int | None) -> float:
    from .procs import runqueue_wait_seconds

    return runqueue_wait_seconds(pid) if pid else 0.0


def _own_cpu() -> float:
    """CPU seconds of this client process, all threads (librdkafka's included)."""
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def producer_config(bootstrap: str, queue_messages: int, **extra) -> dict:
    conf = {
        "bootstrap.servers": bootstrap,
        "acks": "all",
        "compression.type": "none",
        "linger.ms": 5,
        "batch.size": 1_000_000,
        "batch.num.messages": 10_000,
        "queue.buffering.max.messages": queue_messages,
        "queue.buffering.max.kbytes": 1_048_576,
        "message.timeout.ms": 60_000,  # <= transaction.timeout.ms (60 s default)
        "delivery.report.only.error": True,
        "log_level": 3,
    }
    conf.update(extra)
    return conf


def consumer_config(bootstrap: str, isolation: str, **extra) -> dict:
    conf = {
        "bootstrap.servers": bootstrap,
        "group.id": f"bench-{uuid.uuid4().hex}",  # required by the client; only assign() is used
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "isolation.level": isolation,
        "fetch.max.bytes": 64 * 2**20,
        "max.partition.fetch.bytes": 16 * 2**20,
        # Above fetch.max.bytes: a broker that ignores the fetch limits (noida-db answers a whole
        # partition, ~100 MB for 100,000 records) is then measured rather than refused.
        "receive.message.max.bytes": 1_000_000_000,
        "queued.max.messages.kbytes": 512 * 1024,
        "queued.min.messages": 1_000_000,
        "log_level": 3,
    }
    conf.update(extra)
    return conf


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
    cpu0, own0, wait0 = _broker_cpu(broker_pid), _own_cpu(), _broker_wait(broker_pid)
    t0 = time.perf_counter()
    for i in range(records):
        _send(p, topic, values[i % nv], i % partitions)
    left = p.flush(120)
    dt = time.perf_counter() - t0
    cpu, own, wait = _broker_cpu(broker_pid) - cpu0, _own_cpu() - own0, _broker_wait(broker_pid) - wait0
    if left or errors.count:
        raise RuntimeError(f"{errors.count} delivery errors (first: {errors.first}), {left} undelivered")
    return {"records": records, "seconds": dt, "broker_cpu_s": cpu, "client_cpu_s": own, "broker_runqueue_wait_s": wait}


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
    cpu0, own0, wait0 = _broker_cpu(broker_pid), _own_cpu(), _broker_wait(broker_pid)
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
    cpu, own, wait = _broker_cpu(broker_pid) - cpu0, _own_cpu() - own0, _broker_wait(broker_pid) - wait0
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
        cpu0, own0, wait0 = _broker_cpu(broker_pid), _own_cpu(), _broker_wait(broker_pid)
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
        cpu, own, wait = _broker_cpu(broker_pid) - cpu0, _own_cpu() - own0, _broker_wait(broker_pid) - wait0
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


def _kcat_run(cmd: list[str], count: int, stall_s: float, broker_pid: int | None, env: dict | None = None) -> dict:
    """Run kcat until it has printed ``count`` lines; its wall time, CPU and the broker's."""
    import select
    import subprocess

    cpu0, wait0 = _broker_cpu(broker_pid), _broker_wait(broker_pid)
    t0 = time.perf_counter()
    proc = subprocess.Popen([*cmd, "-c", str(count)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    fd, lines, last_progress = proc.stdout.fileno(), 0, t0
    while True:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if not ready:
            if time.perf_counter() - last_progress > stall_s:
                proc.kill()
                raise RuntimeError(f"stalled: {lines} of {count} records read, nothing new for {stall_s:.0f} s")
            continue
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        lines += chunk.count(b"\n")
        last_progress = time.perf_counter()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    proc.returncode = code
    err = proc.stderr.read().decode(errors="replace").strip()
    if code != 0 or lines != count:
        raise RuntimeError(f"kcat exited with {code} after {lines} of {count} records: {err[-500:]}")
    return {"seconds": seconds, "client_cpu_s": usage.ru_utime + usage.ru_stime,
            "broker_cpu_s": _broker_cpu(broker_pid) - cpu0, "broker_runqueue_wait_s": _broker_wait(broker_pid) - wait0}


def consume_kcat(bootstrap: str, topic: str, partitions: int, records: int, isolation: str,
                 stall_s: float = 20.0, broker_pid: int | None = None) -> dict:
    """The same read as ``consume`` with kcat, librdkafka's C command-line client, with the same
    consumer settings: no Python object per record, so the client costs a fraction of a core and
    the broker's own speed shows. kcat prints one line per record (``%o``). Timed from kcat's
    launch to its exit, so its start, metadata and ListOffsets (a few tens of milliseconds) are
    inside the window: the rate is a conservative one, the same way for every system."""
    import re
    import shutil
    import subprocess

    exe = shutil.which("kcat") or shutil.which("kafkacat")
    if exe is None:
        raise RuntimeError("kcat is not on PATH (Debian: apt-get install kcat; `make bench` installs it as root)")
    cmd = [exe, "-C", "-b", bootstrap, "-t", topic, "-o", "beginning", "-e", "-q", "-f", "%o\n",
           *_x_args(consumer_config(bootstrap, isolation), "bootstrap.servers", "group.id", "enable.auto.commit",
                    "enable.auto.offset.store", "log_level")]
    with _librdkafka_of_confluent_kafka() as env:
        version = subprocess.run([exe, "-V"], capture_output=True, text=True, env=env).stdout
        librdkafka = next(iter(re.findall(r"librdkafka ([0-9][^ )]*)", version)), "?")
        return {"records": records, "kcat_librdkafka": librdkafka, **_kcat_run(cmd, records, stall_s, broker_pid, env)}


def _wheel_librdkafka() -> str | None:
    """The librdkafka shared library bundled with the confluent-kafka wheel, if there is one."""
    import glob

    import confluent_kafka

    libs = sorted(glob.glob(os.path.join(os.path.dirname(os.path.dirname(confluent_kafka.__file__)),
                                         "confluent_kafka.libs", "librdkafka*.so*")))
    return libs[0] if libs else None


def _x_args(conf: dict, *drop: str) -> list[str]:
    """Client settings as librdkafka's ``-X key=value`` arguments (kcat, rdconsume, rdproduce),
    without the keys in ``drop``; booleans as librdkafka spells them."""
    return [a for k, v in conf.items() if k not in drop
            for a in ("-X", f"{k}={str(v).lower() if isinstance(v, bool) else v}")]


@contextlib.contextmanager
def _librdkafka_of_confluent_kafka():
    """An environment in which kcat loads the librdkafka bundled with the confluent-kafka wheel, the
    one every other phase uses, instead of the distribution's (Debian 12 has 2.0.2, which cannot
    parse the tagged fields of some brokers' ApiVersions answers); None when there is none."""
    import tempfile

    lib = _wheel_librdkafka()
    if lib is None:
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="bench-rdkafka-") as d:
        os.symlink(lib, os.path.join(d, "librdkafka.so.1"))
        path = os.environ.get("LD_LIBRARY_PATH")
        yield {**os.environ, "LD_LIBRARY_PATH": d + (os.pathsep + path if path else "")}


def c_binary(name: str) -> str:
    """bench/<name>.c (rdconsume, rdproduce; both include rdclient.h) built against the librdkafka
    inside the confluent-kafka wheel (the one every other phase uses), once per source and library:
    a C compiler is all it needs."""
    import hashlib
    import shutil
    import subprocess
    import tempfile
    from pathlib import Path

    source = Path(__file__).with_name(f"{name}.c")
    lib = _wheel_librdkafka()
    if lib is None:
        raise RuntimeError(f"no librdkafka inside the confluent-kafka package to build {name} against")
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise RuntimeError(f"no C compiler (cc or gcc) to build bench/{name}.c")
    header = source.with_name("rdclient.h")  # what the two share, included by both
    key = hashlib.sha256(source.read_bytes() + header.read_bytes() + lib.encode()).hexdigest()[:16]
    exe = Path(tempfile.gettempdir()) / "kafka-shim-bench" / f"{name}-{key}"
    if not exe.exists():
        exe.parent.mkdir(parents=True, exist_ok=True)
        tmp = exe.with_name(f"{exe.name}.{os.getpid()}")
        build = subprocess.run([cc, "-O2", "-o", str(tmp), str(source), lib, f"-Wl,-rpath,{os.path.dirname(lib)}"],
                               capture_output=True, text=True)
        if build.returncode != 0:
            raise RuntimeError(f"building {name} failed: {build.stderr.strip()[-1000:]}")
        os.replace(tmp, exe)
    return str(exe)


def _producer_process(cmd: list[str], name: str, kind: str, records: int, broker_pid: int | None) -> dict:
    """Runs rdproduce or JProduce and returns its JSON line's figures with the broker's CPU. The
    broker's CPU is read around the whole process (its start, metadata and warm-up included): an
    upper bound for the window, the same way for every system."""
    import json
    import subprocess

    cpu0, wait0 = _broker_cpu(broker_pid), _broker_wait(broker_pid)
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=120 + records / 1000)
    cpu, wait = _broker_cpu(broker_pid) - cpu0, _broker_wait(broker_pid) - wait0
    if run.returncode != 0:
        raise RuntimeError(f"{name} exited with {run.returncode}: {run.stderr.strip()[-500:]}")
    r = json.loads(run.stdout.strip().splitlines()[-1])
    out = {k: r[k] for k in ("records", "seconds", "client_cpu_s")}
    if kind == "txn":
        out.update({k: r[k] for k in ("transactions", "commit_seconds", "commit_flush_seconds", "commit_queued_records")})
    return {**out, "broker_cpu_s": cpu, "broker_runqueue_wait_s": wait}


def produce_c(bootstrap: str, topic: str, partitions: int, records: int, queue_messages: int, kind: str = "plain",
              commit_interval_s: float = 0.1, warmup_topic: str = "", broker_pid: int | None = None,
              compression: str = "none") -> dict:
    """The produce phases with bench/rdproduce.c: librdkafka called from C, the same producer
    settings and the same loop as ``produce`` / ``produce_transactional`` (1 KiB random values, a
    1 ms poll when the queue is full, commits every ``commit_interval_s``), without Python's cost
    per record, so the client leaves more of the machine to the broker."""
    if compression != "none":
        raise RuntimeError("rdproduce sends random (incompressible) values only: run it without --compression")
    extra = {"transactional.id": f"bench-{uuid.uuid4().hex}"} if kind == "txn" else (
        {"enable.idempotence": True} if kind == "idempotent" else {})
    args = _x_args(producer_config(bootstrap, queue_messages, **extra), "bootstrap.servers")
    commit_ms = round(commit_interval_s * 1000) if kind == "txn" else 0
    cmd = [c_binary("rdproduce"), bootstrap, topic, str(partitions), str(records), str(commit_ms), warmup_topic, *args]
    return _producer_process(cmd, "rdproduce", kind, records, broker_pid)


def java_producer_config(queue_messages: int, kind: str) -> dict:
    """``producer_config``'s settings in the Java client's names. Its buffer is bytes, not records:
    room for ``queue_messages`` values and their record overhead. ``enable.idempotence`` is set
    both ways, since the Java client turns it on by default (librdkafka does not), and the five
    requests in flight per connection are its default, stated."""
    conf = {
        "acks": "all",
        "compression.type": "none",
        "linger.ms": 5,
        "batch.size": 1_000_000,
        "buffer.memory": queue_messages * (RECORD_SIZE + 64),
        "delivery.timeout.ms": 60_000,
        "max.in.flight.requests.per.connection": 5,
        "enable.idempotence": "false" if kind == "plain" else "true",
    }
    if kind == "txn":
        conf["transactional.id"] = f"bench-{uuid.uuid4().hex}"
    return conf


def java_class(name: str) -> list[str]:
    """The command that runs bench/<name>.java with kafka-clients 3.9.1 (the jars of the ``java``
    extra, found by compat/javarun.py as the Java compat suites find them), compiled with javac
    once per source and jar set."""
    import hashlib
    import subprocess
    import tempfile
    from pathlib import Path

    from compat.javarun import JavaUnavailable, find_jars, find_tools

    try:
        java, javac = find_tools()
        jars = find_jars()
    except JavaUnavailable as e:
        raise RuntimeError(str(e)) from None
    source = Path(__file__).with_name(f"{name}.java")
    classpath = os.pathsep.join(map(str, jars))
    key = hashlib.sha256(source.read_bytes() + classpath.encode()).hexdigest()[:16]
    build = Path(tempfile.gettempdir()) / "kafka-shim-bench" / f"{name}-java-{key}"
    if not (build / f"{name}.class").exists():
        tmp = build.with_name(f"{build.name}.{os.getpid()}")
        run = subprocess.run([javac, "-nowarn", "-encoding", "UTF-8", "-d", str(tmp), "-cp", classpath, str(source)],
                             capture_output=True, text=True, timeout=300)
        if run.returncode != 0:
            raise RuntimeError(f"javac {source.name} failed: {(run.stdout + run.stderr).strip()[-1000:]}")
        os.replace(tmp, build)
    return [java, "-cp", os.pathsep.join((str(build), classpath)), name]


def produce_java(bootstrap: str, topic: str, partitions: int, records: int, queue_messages: int, kind: str = "plain",
                 commit_interval_s: float = 0.1, warmup_topic: str = "", broker_pid: int | None = None,
                 compression: str = "none") -> dict:
    """The produce phases with bench/JProduce.java: Apache Kafka's Java producer (kafka-clients
    3.9.1), the producer whose idempotent and transactional modes keep up to five requests in
    flight per partition (librdkafka's keep one). Settings as ``producer_config``; the same loop,
    except that a full buffer blocks send(), as the Java client does; records/2 warm-up records
    before the clock, for the JIT."""
    if compression != "none":
        raise RuntimeError("JProduce sends random (incompressible) values only: run it without --compression")
    conf = java_producer_config(queue_messages, kind)
    commit_ms = round(commit_interval_s * 1000) if kind == "txn" else 0
    cmd = [*java_class("JProduce"), bootstrap, topic, str(partitions), str(records), str(commit_ms),
           warmup_topic, str(max(1, records // 2)), *(f"{k}={v}" for k, v in conf.items())]
    return _producer_process(cmd, "JProduce", kind, records, broker_pid)


def consume_c(bootstrap: str, topic: str, partitions: int, records: int, isolation: str,
              stall_s: float = 20.0, broker_pid: int | None = None) -> dict:
    """The same read as ``consume`` with bench/rdconsume.c: librdkafka called from C, records
    taken from its queue in batches and counted, no object per record; timed like ``consume``,
    from assign() to the last record (connection and metadata before the clock), so unlike the
    kcat read its rate holds no process start. Same consumer settings as the other two reads."""
    import json
    import subprocess

    cmd = [c_binary("rdconsume"), bootstrap, topic, str(partitions), str(records), str(stall_s),
           *_x_args(consumer_config(bootstrap, isolation), "bootstrap.servers", "group.id", "enable.auto.commit",
                    "enable.auto.offset.store")]
    cpu0, wait0 = _broker_cpu(broker_pid), _broker_wait(broker_pid)
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=60 + stall_s + records / 1000)
    cpu, wait = _broker_cpu(broker_pid) - cpu0, _broker_wait(broker_pid) - wait0
    if run.returncode != 0:
        raise RuntimeError(f"rdconsume exited with {run.returncode}: {run.stderr.strip()[-500:]}")
    r = json.loads(run.stdout)
    if r["bytes"] != r["records"] * RECORD_SIZE:
        raise RuntimeError(f"rdconsume read {r['records']} records of {r['bytes']} bytes in all, "
                           f"not {RECORD_SIZE} bytes each")
    # The broker's CPU is read around the whole process (its start and metadata included): an
    # upper bound for the window, the same way for every system.
    return {**r, "broker_cpu_s": cpu, "broker_runqueue_wait_s": wait}


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
    value = os.urandom(RECORD_SIZE)
    times = []
    for i in range(warmup + transactions):
        p.begin_transaction()
        for _ in range(per_txn):
            p.produce(topic, value, partition=0)
        if p.flush(30):
            raise RuntimeError(f"transaction {i}: records not delivered within 30 s")
        t = time.perf_counter()
        p.commit_transaction(30)
        if i >= warmup:
            times.append((time.perf_counter() - t) * 1000)
    if errors.count:
        raise RuntimeError(f"{errors.count} delivery errors (first: {errors.first})")
    return {"transactions": transactions, "latencies_ms": times}
