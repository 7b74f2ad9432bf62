"""Phase groups. Each group starts its system fresh (new process, new port, new directory), runs
its phases in order and stops it. A phase that fails records its error text; a system that does
not start fails every phase of the group with the start error."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from . import runner
from .procs import RssSampler, cpu_seconds, machine_busy, rss_bytes, wait_until_quiet
from .systems import KafkaShim, StartError, System, launch

log = logging.getLogger("bench")


@dataclass
class Settings:
    records: int = 100_000
    queue_messages: int = 20_000
    commit_interval_s: float = 0.1
    latency_rate: int = 2_000
    latency_seconds: float = 5.0
    txns: int = 200
    txn_warmup: int = 10
    records_per_txn: int = 5
    tmp_root: Path | None = None
    py_spy_dir: Path | None = None
    py_spy_rate: int = 100
    compression: str = "none"
    quiet_threshold: float = 0.25
    quiet_wait_s: float = 0.0
    settle_s: float = 1.0  # idle RSS is read this long after ready
    busy_window_s: float = 0.25  # other work on the machine is read over this long before each start

    def phase_timeout(self, records: int | None = None) -> float:
        return 60 + (records or self.records) / 500


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    v = sorted(values)
    k = (len(v) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def latency_stats(values: list[float]) -> dict:
    return {"count": len(values), "p50_ms": percentile(values, 0.5), "p99_ms": percentile(values, 0.99),
            "p999_ms": percentile(values, 0.999), "max_ms": max(values) if values else None,
            "mean_ms": sum(values) / len(values) if values else None}


def create_topic(bootstrap: str, name: str, partitions: int, timeout: float = 30.0) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
    futures = admin.create_topics([NewTopic(name, partitions, 1)], operation_timeout=timeout, request_timeout=timeout)
    try:
        futures[name].result(timeout)
    except Exception as e:  # noqa: BLE001
        raise RuntimeError(f"CreateTopics {name} ({partitions} partitions) failed: {e}") from None
    deadline = time.monotonic() + timeout
    while True:
        md = admin.list_topics(name, timeout=timeout).topics.get(name)
        parts = md.partitions if md is not None and md.error is None else {}
        if len(parts) == partitions and all(p.leader >= 0 and p.error is None for p in parts.values()):
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"topic {name}: metadata shows {len(parts)} of {partitions} partitions with a leader")
        time.sleep(0.05)


class _PySpy:
    def __init__(self, pid: int, path: Path, rate: int) -> None:
        exe = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
        fmt = {".svg": "flamegraph", ".json": "speedscope"}.get(path.suffix, "raw")
        self.path = path
        self.proc = subprocess.Popen([exe, "record", "--pid", str(pid), "--rate", str(rate), "--nonblocking",
                                      "--format", fmt, "-o", str(path)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(0.5)  # attached before the phase begins

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGINT)
        try:
            _, err = self.proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        if not self.path.exists():
            log.warning("py-spy wrote no %s: %s", self.path, err.decode(errors="replace")[-500:])


class Group:
    """One fresh instance of a system and the phases run against it."""

    def __init__(self, name: str, system: System, settings: Settings, result: dict, rep: int = 0,
                 kill_after: bool = False) -> None:
        """``kill_after``: SIGKILL at the end instead of SIGTERM, for an instance whose directory is
        thrown away and whose stop is not measured (a clean stop of 10,000 partitions takes longer
        than all its phases)."""
        self.name, self.system, self.s, self.result, self.rep = name, system, settings, result, rep
        self.kill_after = kill_after
        self.phases: dict[str, dict] = {}  # this instance's records; result["phases"][name] lists every rep's
        self.run = None
        self.launch_rec: dict = {"group": name, "rep": rep}

    def __enter__(self) -> "Group":
        result_launches = self.result["launches"]
        result_launches.append(self.launch_rec)
        # None of this harness's processes run now: what is busy is other work on the machine.
        if self.s.quiet_wait_s > 0:
            busy, waited = wait_until_quiet(self.s.quiet_threshold, self.s.quiet_wait_s)
            self.launch_rec["waited_for_quiet_s"] = round(waited, 1)
        else:
            busy = machine_busy(self.s.busy_window_s)
        self.launch_rec["machine_busy_before"] = round(busy, 3)
        try:
            self.run = launch(self.system, self.s.tmp_root)
        except StartError as e:
            self.launch_rec["error"] = str(e)
            log.warning("%s did not start: %s", self.system.label, e)
            return self
        self.launch_rec.update(ready_s=self.run.ready_s, listen_s=self.run.listen_s)
        time.sleep(self.s.settle_s)
        self.launch_rec["idle_rss_bytes"] = rss_bytes(self.run.pid)
        self.sampler = RssSampler(self.run.pid, 0.1).__enter__()
        log.info("%s [%s #%d] ready in %.3f s (listening at %.3f s), idle RSS %.1f MB", self.system.label, self.name, self.rep + 1,
                 self.run.ready_s, self.run.listen_s, self.launch_rec["idle_rss_bytes"] / 1e6)
        return self

    def __exit__(self, *exc) -> None:
        if self.run is None:
            return
        self.sampler.__exit__()
        if self.kill_after:
            self.run.kill9()
        self.run.stop()
        if self.run.notes:
            self.launch_rec["notes"] = self.run.notes

    def rss(self) -> int:
        return rss_bytes(self.run.pid)

    def phase(self, name: str, fn, needs: tuple[str, ...] = ()) -> dict:
        rec = self._phase(name, fn, needs)
        rec["rep"] = self.rep
        self.phases[name] = rec
        self.result["phases"].setdefault(name, []).append(rec)
        return rec

    def _phase(self, name: str, fn, needs: tuple[str, ...]) -> dict:
        if self.run is None:
            return {"status": "failed", "error": f"did not start: {self.launch_rec.get('error')}"}
        for dep in needs:
            if self.phases.get(dep, {}).get("status") != "ok":
                return {"status": "failed", "error": f"no data: phase {dep} failed"}
        if not self.run.alive():
            return {"status": "failed", "error": f"{self.system.label} had exited (code {self.run.proc.returncode}): "
                                                 f"{self.run.output_tail()}"}
        spy = None
        if self.s.py_spy_dir is not None and isinstance(self.system, KafkaShim):
            suffix = f"-{self.rep + 1}" if self.rep else ""
            spy = _PySpy(self.run.pid, self.s.py_spy_dir / f"{name}{suffix}.txt", self.s.py_spy_rate)
        self.sampler.reset()
        cpu0, t0 = cpu_seconds(self.run.pid), time.perf_counter()
        try:
            rec = {"status": "ok", **fn()}
        except Exception as e:  # noqa: BLE001 - reported, never silently zero
            if not isinstance(e, (runner.PhaseError, RuntimeError)):
                traceback.print_exc()
            rec = {"status": "failed", "error": f"{e}" if isinstance(e, runner.PhaseError) else f"{type(e).__name__}: {e}"}
            if not self.run.alive():
                rec["error"] += f"; {self.system.label} exited (code {self.run.proc.returncode}): {self.run.output_tail()}"
        finally:
            if spy:
                spy.stop()
        rec["wall_s"] = time.perf_counter() - t0
        rec["phase_broker_cpu_s"] = cpu_seconds(self.run.pid) - cpu0  # whole phase, set-up included
        rec["rss_peak_bytes"] = self.sampler.peak()
        if rec["status"] == "ok":
            rate = f", {rec['records'] / rec['seconds']:,.0f} records/s" if "records" in rec else ""
            log.info("%s %s ok%s", self.system.label, name, rate)
        else:
            log.warning("%s %s FAILED: %s", self.system.label, name, rec["error"])
        return rec

    # workloads

    def produce(self, topic: str, partitions: int, kind: str = "plain", create: bool = True,
                client: str = "python") -> dict:
        """``client``: "python" (confluent-kafka), "c" (rdproduce) or "java" (JProduce)."""
        if create:
            create_topic(self.run.bootstrap, topic, partitions)
        warmup = f"{topic}-warmup"
        if create:
            create_topic(self.run.bootstrap, warmup, 1)
        common = dict(bootstrap=self.run.bootstrap, topic=topic, partitions=partitions, records=self.s.records,
                      queue_messages=self.s.queue_messages, broker_pid=self.run.pid, compression=self.s.compression)
        timeout = self.s.phase_timeout()
        if client in ("c", "java"):
            return runner.run(f"produce_{client}", timeout, kind=kind, commit_interval_s=self.s.commit_interval_s,
                              warmup_topic=warmup, **common)
        if kind == "txn":
            return runner.run("produce_transactional", timeout, commit_interval_s=self.s.commit_interval_s,
                              warmup_topic=warmup, **common)
        return runner.run("produce", timeout, idempotent=kind == "idempotent", warmup_topic=warmup, **common)

    def consume(self, topic: str, partitions: int, isolation: str, workload: str = "consume") -> dict:
        extra = {"warmup_topic": f"{topic}-warmup"} if workload == "consume" else {}
        r = runner.run(workload, self.s.phase_timeout(), bootstrap=self.run.bootstrap, topic=topic,
                       partitions=partitions, records=self.s.records, isolation=isolation, broker_pid=self.run.pid,
                       **extra)
        if r.get("records_total", r["records"]) != self.s.records:
            raise RuntimeError(f"read {r['records']} records, {self.s.records} were produced")
        return r

    def e2e_latency(self, topic: str) -> dict:
        create_topic(self.run.bootstrap, topic, 1)
        expected = int(self.s.latency_rate * self.s.latency_seconds)
        ready = runner.event()
        timeout = self.s.latency_seconds + 60
        consumer = runner.Child("latency_consumer", bootstrap=self.run.bootstrap, topic=topic, expected=expected,
                                timeout_s=timeout, consumer_ready=ready)
        try:
            prod = runner.Child("latency_producer", bootstrap=self.run.bootstrap, topic=topic,
                                rate=self.s.latency_rate, seconds=self.s.latency_seconds, consumer_ready=ready)
            p = prod.result(timeout + 10)
            c = consumer.result(timeout + 10)
        finally:
            consumer.kill()
        if c["received"] != expected:
            raise RuntimeError(f"received {c['received']} of {expected} records")
        return {"rate": self.s.latency_rate, "seconds": self.s.latency_seconds, "send_rate": p["send_rate"],
                **latency_stats(c["latencies_ms"])}

    def end_txn_latency(self, topic: str) -> dict:
        create_topic(self.run.bootstrap, topic, 1)
        r = runner.run("end_txn_latency", 120 + self.s.txns, bootstrap=self.run.bootstrap, topic=topic,
                       transactions=self.s.txns, warmup=self.s.txn_warmup, per_txn=self.s.records_per_txn)
        return {"records_per_txn": self.s.records_per_txn, **latency_stats(r["latencies_ms"])}


def throughput_group(system: System, s: Settings, result: dict, rep: int = 0) -> None:
    # Every produce phase starts from a fresh instance: on the reference machine (a VM) writes
    # into the page cache slow down several times over once a few hundred MB have been written
    # and not yet freed (six 200 MB runs in a row on one kafka-shim fell from 430,000 to 155,000
    # records/s; plain os.writev of 200 MB files in a row: 0.13 s for the first, 1.0 s for each
    # after it), so a second or third produce phase on one instance measured the machine's memory
    # rather than the broker. The reads follow the produce of the topic they read, on its instance.
    # The order changes from one repetition to the next (the four instances rotate, and
    # read_committed goes first in every other one), so that no phase always has the same place in
    # the sequence: a ratio between two phases then compares the phases, not their places.
    isolations = (("read_uncommitted", "ru"), ("read_committed", "rc"))
    if rep % 2:
        isolations = isolations[::-1]

    def reads(g: Group, name: str, topic: str, source: str) -> None:
        for workload, suffix in (("consume", ""), ("consume_kcat", "_kcat"), ("consume_c", "_c")):
            # with kcat and with rdconsume (librdkafka from C): the broker's speed, not the Python client's
            for iso, short in isolations:
                g.phase(f"consume_{name}_{short}{suffix}", lambda i=iso, w=workload: g.consume(topic, 1, i, w),
                        needs=(source,))

    def plain_1p() -> None:
        with Group("throughput", system, s, result, rep) as g:
            g.phase("produce_1p", lambda: g.produce("plain-1p", 1))
            reads(g, "plain", "plain-1p", "produce_1p")

    def plain_8p() -> None:
        with Group("throughput-8p", system, s, result, rep) as g:
            g.phase("produce_8p", lambda: g.produce("plain-8p", 8))

    def idempotent() -> None:
        with Group("throughput-idempotent", system, s, result, rep) as g:
            g.phase("produce_1p_idempotent", lambda: g.produce("idem-1p", 1, "idempotent"))

    def transactional() -> None:
        with Group("throughput-txn", system, s, result, rep) as g:
            g.phase("produce_1p_txn", lambda: g.produce("txn-1p", 1, "txn"))
            reads(g, "txn", "txn-1p", "produce_1p_txn")

    instances = [plain_1p, plain_8p, idempotent, transactional]
    shift = rep % len(instances)
    for run in instances[shift:] + instances[:shift]:
        run()


def _client_produce_group(client: str, suffix: str, system: System, s: Settings, result: dict, rep: int) -> None:
    kinds = [(f"produce_1p{suffix}", "plain"), (f"produce_1p_idempotent{suffix}", "idempotent"),
             (f"produce_1p_txn{suffix}", "txn")]
    shift = rep % len(kinds)
    for name, kind in kinds[shift:] + kinds[:shift]:
        with Group(f"{client[0]}produce-{kind}", system, s, result, rep) as g:
            g.phase(name, lambda k=kind: g.produce(f"{client[0]}-{k}-1p", 1, k, client=client))


def cproduce_group(system: System, s: Settings, result: dict, rep: int = 0) -> None:
    """The plain, idempotent and transactional produce to 1 partition again, with rdproduce
    (librdkafka from C) instead of the Python producer: each from a fresh instance, in an order
    that rotates with the repetition, as in the throughput group."""
    _client_produce_group("c", "_c", system, s, result, rep)


def jproduce_group(system: System, s: Settings, result: dict, rep: int = 0) -> None:
    """The same three with Apache Kafka's Java producer (bench/JProduce.java), which keeps up to
    five requests in flight per partition where librdkafka's idempotent and transactional
    producer keeps one."""
    _client_produce_group("java", "_j", system, s, result, rep)


def latency_group(system: System, s: Settings, result: dict, rep: int = 0) -> None:
    with Group("latency", system, s, result, rep) as g:
        g.phase("e2e_latency", lambda: g.e2e_latency("latency"))
        g.phase("endtxn_latency", lambda: g.end_txn_latency("endtxn"))


def growth_group(system: System, s: Settings, result: dict, rep: int = 0) -> None:
    """RSS with N, then 2N records stored in one partition (each read ``settle_s`` after its produce ends)."""
    with Group("growth", system, s, result, rep) as g:
        def step(create: bool) -> dict:
            r = g.produce("growth", 1, create=create)
            time.sleep(s.settle_s)
            return {**r, "rss_after_bytes": g.rss()}

        g.phase("growth_1x", lambda: step(True))
        g.phase("growth_2x", lambda: step(False), needs=("growth_1x",))


GROUPS = {"throughput": throughput_group, "cproduce": cproduce_group, "jproduce": jproduce_group,
          "latency": latency_group, "growth": growth_group}
REPEATED = ("throughput", "cproduce", "jproduce", "latency")  # run --repeat times; the others once
