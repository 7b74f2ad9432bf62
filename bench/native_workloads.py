"""The workloads run by clients outside Python: kcat, bench/rdproduce.c and bench/rdconsume.c
(librdkafka from C, built against the confluent-kafka wheel's librdkafka) and bench/JProduce.java
(Apache Kafka's Java producer). Same settings and loops as the Python workloads of workloads.py,
which the runner finds them through."""

from __future__ import annotations

import contextlib
import os
import time
import uuid

from .client_settings import RECORD_SIZE, broker_cpu, broker_oncpu, broker_wait, consumer_config, producer_config


def _kcat_run(cmd: list[str], count: int, stall_s: float, broker_pid: int | None, env: dict | None = None) -> dict:
    """Run kcat until it has printed ``count`` lines; its wall time, CPU and the broker's."""
    import select
    import subprocess

    cpu0, wait0 = broker_cpu(broker_pid), broker_wait(broker_pid)
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
            "broker_cpu_s": broker_cpu(broker_pid) - cpu0, "broker_runqueue_wait_s": broker_wait(broker_pid) - wait0}


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

    cpu0, wait0, on0 = broker_cpu(broker_pid), broker_wait(broker_pid), broker_oncpu(broker_pid)
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=120 + records / 1000)
    cpu, wait, on = broker_cpu(broker_pid) - cpu0, broker_wait(broker_pid) - wait0, broker_oncpu(broker_pid)
    if run.returncode != 0:
        raise RuntimeError(f"{name} exited with {run.returncode}: {run.stderr.strip()[-500:]}")
    r = json.loads(run.stdout.strip().splitlines()[-1])
    out = {k: r[k] for k in ("records", "seconds", "client_cpu_s")}
    if "threads" in r:  # rdproduce: each thread's CPU over the window
        out["client_threads"] = r["threads"]
    if kind == "txn":
        out.update({k: r[k] for k in ("transactions", "commit_seconds", "commit_flush_seconds", "commit_queued_records")})
    if on0 is not None and on is not None:  # to the nanosecond (procs.oncpu_seconds)
        out["broker_oncpu_s"] = on - on0
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
        try:
            os.replace(tmp, build)
        except OSError:  # another process built it first (a directory is not replaced when not empty)
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)
            if not (build / f"{name}.class").exists():
                raise
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
    cpu0, wait0 = broker_cpu(broker_pid), broker_wait(broker_pid)
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=60 + stall_s + records / 1000)
    cpu, wait = broker_cpu(broker_pid) - cpu0, broker_wait(broker_pid) - wait0
    if run.returncode != 0:
        raise RuntimeError(f"rdconsume exited with {run.returncode}: {run.stderr.strip()[-500:]}")
    r = json.loads(run.stdout)
    if r["bytes"] != r["records"] * RECORD_SIZE:
        raise RuntimeError(f"rdconsume read {r['records']} records of {r['bytes']} bytes in all, "
                           f"not {RECORD_SIZE} bytes each")
    # The broker's CPU is read around the whole process (its start and metadata included): an
    # upper bound for the window, the same way for every system.
    return {**r, "broker_cpu_s": cpu, "broker_runqueue_wait_s": wait}
