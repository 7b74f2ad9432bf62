"""The scale group: how each system's costs grow with partitions, clients, connections, open
transactions and the size of its log.

Every step starts a fresh instance (as the throughput group does), so no step measures the
page cache or memory a previous one left behind. Phase names carry the step's size
(``scale_produce_1000p``, ``scale_ready_kill9_10gb``), so ``--repeat`` runs collect one record per
repetition under the same name, and the summary takes medians.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from . import runner, suite
from .procs import rss_bytes
from .suite import Group, Settings, create_topic, latency_stats
from .systems import System, launch


@dataclass
class ScaleSettings:
    partitions: tuple[int, ...] = (1, 100, 1000, 10_000)
    clients: tuple[int, ...] = (1, 10, 100)
    connections: int = 1000
    open_txns: int = 1000
    endtxn_partitions: tuple[int, ...] = (1, 10, 100)
    endtxn_count: int = 50
    log_gb: tuple[float, ...] = (1.0, 10.0)
    metadata_samples: int = 20
    latency_rate: int = 2000
    latency_seconds: float = 3.0


SCALE = ScaleSettings()


def produce_c(bootstrap: str, topic: str, partitions: int, records: int, s: Settings, timeout: float,
              broker_pid: int | None = None) -> dict:
    """rdproduce (librdkafka from C) into ``topic``, one record to its warm-up topic first."""
    create_topic(bootstrap, f"{topic}-warmup", 1)
    return runner.run("produce_c", timeout, bootstrap=bootstrap, topic=topic, partitions=partitions,
                      records=records, queue_messages=s.queue_messages, warmup_topic=f"{topic}-warmup",
                      broker_pid=broker_pid)


def _settle_rss(g: Group) -> int:
    time.sleep(g.s.settle_s)  # as long after the step as idle RSS after ready: a reading, not a sync
    return g.rss()


def partitions_step(system: System, s: Settings, result: dict, rep: int, parts: int) -> None:
    with Group(f"scale-{parts}p", system, s, result, rep) as g:
        topic = f"scale-{parts}p"

        def create() -> dict:
            before = g.rss()
            create_topic(g.run.bootstrap, topic, parts, timeout=300)
            after = _settle_rss(g)
            return {"partitions": parts, "rss_before_bytes": before, "rss_after_bytes": after}

        g.phase(f"scale_topic_{parts}p", create)
        need = (f"scale_topic_{parts}p",)
        g.phase(f"scale_metadata_{parts}p",
                lambda: latency_stats(runner.run("scale_workloads.metadata_latency", 120, bootstrap=g.run.bootstrap,
                                                 samples=SCALE.metadata_samples)["latencies_ms"]), needs=need)
        g.phase(f"scale_produce_{parts}p", lambda: produce_c(g.run.bootstrap, topic, parts, s.records, s,
                                                               s.phase_timeout(), g.run.pid), needs=need)
        g.phase(f"scale_consume_{parts}p", lambda: runner.run(
            "consume_c", s.phase_timeout(), bootstrap=g.run.bootstrap, topic=topic, partitions=parts,
            records=s.records, isolation="read_committed", broker_pid=g.run.pid), needs=(f"scale_produce_{parts}p",))
        g.phase(f"scale_latency_{parts}p", lambda: {"rate": SCALE.latency_rate, **latency_stats(runner.run(
            "scale_workloads.fixed_rate_produce", SCALE.latency_seconds + 120, bootstrap=g.run.bootstrap, topic=topic,
            partitions=parts, rate=SCALE.latency_rate, seconds=SCALE.latency_seconds)["latencies_ms"])}, needs=need)


def clients_step(system: System, s: Settings, result: dict, rep: int, clients: int) -> None:
    with Group(f"scale-{clients}c", system, s, result, rep) as g:
        topic = f"scale-{clients}c"
        if g.run is None:  # did not start: the launch record says why
            return
        create_topic(g.run.bootstrap, topic, clients)
        common = dict(bootstrap=g.run.bootstrap, topic=topic, clients=clients, records=s.records)
        g.phase(f"scale_producers_{clients}c", lambda: runner.run(
            "scale_workloads.produce_many", s.phase_timeout(), queue_messages=s.queue_messages, **common))
        g.phase(f"scale_consumers_{clients}c", lambda: runner.run(
            "scale_workloads.consume_many", s.phase_timeout(), **common), needs=(f"scale_producers_{clients}c",))


def _held(g: Group, workload: str, count: int, **kwargs) -> dict:
    """RSS before and while ``count`` connections / transactions are held open by a child process."""
    ready, release = runner.event(), runner.event()
    before = _settle_rss(g)
    child = runner.Child(workload, bootstrap=g.run.bootstrap, count=count, ready=ready, release=release, **kwargs)
    try:
        if not ready.wait(300):
            raise RuntimeError(f"{workload}: not all {count} in place within 300 s")
        during = _settle_rss(g)
    finally:
        release.set()
    child.result(60)
    return {"count": count, "rss_before_bytes": before, "rss_during_bytes": during,
            "bytes_each": (during - before) / count}


def memory_step(system: System, s: Settings, result: dict, rep: int) -> None:
    with Group("scale-memory", system, s, result, rep) as g:
        if g.run is None:  # did not start: the launch record says why
            return
        g.phase("scale_mem_connections", lambda: _held(g, "scale_workloads.hold_connections", SCALE.connections))
        create_topic(g.run.bootstrap, "scale-open-txns", 1)
        g.phase("scale_mem_open_txns", lambda: _held(g, "scale_workloads.open_transactions", SCALE.open_txns,
                                                     topic="scale-open-txns"))


def endtxn_step(system: System, s: Settings, result: dict, rep: int) -> None:
    with Group("scale-endtxn", system, s, result, rep) as g:
        if g.run is None:  # did not start: the launch record says why
            return
        for parts in SCALE.endtxn_partitions:
            topic = f"scale-endtxn-{parts}p"
            create_topic(g.run.bootstrap, topic, parts)
            g.phase(f"scale_endtxn_{parts}p", lambda t=topic, p=parts: {"partitions": p, **latency_stats(runner.run(
                "scale_workloads.end_txn_spanning", 300, bootstrap=g.run.bootstrap, topic=t, partitions=p,
                transactions=SCALE.endtxn_count, warmup=5)["latencies_ms"])})


def _record(result: dict, name: str, rep: int, rec: dict) -> None:
    rec["rep"] = rep
    result["phases"].setdefault(name, []).append(rec)


def recovery_step(system: System, s: Settings, result: dict, rep: int, label: str, fill) -> None:
    """Fill a fresh instance (``fill(run)``), then time ready after a clean stop and after kill -9
    over the same directory. Systems that keep no log on disk are skipped: they recover nothing."""
    if not system.persistent:
        return
    names = (f"scale_ready_clean_{label}", f"scale_ready_kill9_{label}")
    try:
        run = launch(system, s.tmp_root)
    except Exception as e:  # noqa: BLE001 - reported in the table
        for n in names:
            _record(result, n, rep, {"status": "failed", "error": f"did not start: {e}"})
        return
    workdir = run.workdir
    try:
        filled = fill(run)
        run.stop(keep=True)
        run = launch(system, workdir=workdir)
        _record(result, names[0], rep, {"status": "ok", "ready_s": run.ready_s, "listen_s": run.listen_s, **filled})
        fill_tail(run)  # an unflushed tail for the crash to leave behind
        run.kill9()
        run = launch(system, workdir=workdir)
        _record(result, names[1], rep, {"status": "ok", "ready_s": run.ready_s, "listen_s": run.listen_s,
                                        "rss_after_ready_bytes": rss_bytes(run.pid), **filled})
    except Exception as e:  # noqa: BLE001 - reported in the table, never silently zero
        for n in names:
            if len(result["phases"].get(n, [])) <= rep:
                _record(result, n, rep, {"status": "failed", "error": f"{type(e).__name__}: {e}"})
    finally:
        run.stop()


def fill_tail(run, records: int = 10_000) -> None:
    create_topic(run.bootstrap, "scale-tail", 1)
    produce_c(run.bootstrap, "scale-tail", 1, records, Settings(), 120)


def _fill_gb(gb: float, s: Settings):
    def fill(run) -> dict:
        records = int(gb * 2**30 / 1024)
        create_topic(run.bootstrap, "scale-log", 1)
        produce_c(run.bootstrap, "scale-log", 1, records, s, 60 + records / 20_000)
        return {"log_bytes": records * 1024}
    return fill


def _fill_partitions(parts: int, s: Settings):
    def fill(run) -> dict:
        create_topic(run.bootstrap, "scale-many", parts, timeout=300)
        produce_c(run.bootstrap, "scale-many", parts, s.records, s, s.phase_timeout())
        return {"partitions": parts, "log_bytes": s.records * 1024}
    return fill


def scale_group(system: System, s: Settings, result: dict, rep: int = 0) -> None:
    for parts in SCALE.partitions:
        partitions_step(system, s, result, rep, parts)
    for clients in SCALE.clients:
        clients_step(system, s, result, rep, clients)
    memory_step(system, s, result, rep)
    endtxn_step(system, s, result, rep)
    for gb in SCALE.log_gb:
        recovery_step(system, s, result, rep, f"{gb:g}gb", _fill_gb(gb, s))
    parts = max(SCALE.partitions)
    recovery_step(system, s, result, rep, f"{parts}p", _fill_partitions(parts, s))


suite.GROUPS["scale"] = scale_group
suite.REPEATED += ("scale",)
