"""``python -m bench --done-when``: the figures the performance targets are judged by, in one run.

Three parts, every one repeated ``rounds`` times with the systems interleaved, so that repetition
k of one system ran next to repetition k of the others and a ratio is taken pair by pair:

1. *produce to one partition*: ``records`` 1 KiB records from one librdkafka producer (linger 5 ms,
   acks=all), a fresh instance for every run, with each client of ``clients`` (the Python
   producer, which the targets were set with, and rdproduce, librdkafka from C, which leaves more
   of the machine to the broker);
2. *many partitions*: idle RSS once a topic of ``partitions`` partitions exists, the Metadata
   answer for every topic, and produce spread over ``spread_partitions`` partitions (fresh
   instance, same clients), to be set against the same round's produce to one partition;
3. *ready after kill -9* (systems that keep their log on disk): one data directory per size of
   ``log_gb`` filled once, then ``rounds`` cycles of: start over it (timed to the first Metadata
   answer), write an unflushed tail of ``tail_records``, kill -9. Before each start the bytes of
   every partition's last segment, and of kafka-shim's after the recovery points (what recovery
   re-reads), are counted from the directory.

The data directories go under the run's temporary root and are removed at the end, whatever
happens; the disk is checked first. Load snapshots (load averages, CPUs busy, other processes'
CPU) are taken at the start, before each round and part 3, and at the end.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from . import runner
from .machine import load_snapshot
from .procs import machine_busy, rss_bytes, tree
from .scale import produce_c
from .suite import Group, Settings, create_topic, latency_stats
from .systems import System, launch

log = logging.getLogger("bench")

SUFFIX = {"python": "", "c": "_c"}
CLIENT_LABEL = {"python": "the Python producer (confluent-kafka)", "c": "rdproduce (librdkafka from C)"}


@dataclass
class DoneWhen:
    rounds: int = 5
    clients: tuple[str, ...] = ("python", "c")
    partitions: int = 10_000
    spread_partitions: int = 1_000
    log_gb: tuple[float, ...] = (1.0, 10.0)
    tail_records: int = 10_000
    metadata_samples: int = 20
    snapshot_s: float = 1.0  # each load snapshot's window
    parts: tuple[str, ...] = ("produce", "partitions", "restarts")  # which of the three to run


def rotated(items: list, k: int) -> list:
    """``items`` starting at its (k mod n)-th: no system always runs first in a round."""
    if not items:
        return []
    shift = k % len(items)
    return items[shift:] + items[:shift]


def snapshot(results: dict, label: str, seconds: float = 1.0) -> dict:
    snap = {"label": label, **load_snapshot(seconds, exclude=set(tree(os.getpid())))}
    results["load"].append(snap)
    log.info("load %s: %.0f%% of the CPUs busy, other processes %.2f cores, load average %s", label,
             100 * snap["busy"], snap["others_cores"], snap["loadavg"])
    return snap


def produce_1p(system: System, s: Settings, dw: DoneWhen, res: dict, rep: int, client: str) -> None:
    suffix = SUFFIX[client]
    with Group(f"dw-produce-1p{suffix}", system, s, res, rep, kill_after=True) as g:
        g.phase(f"produce_1p{suffix}", lambda: g.produce("dw-1p", 1, client=client))


def many_partitions(system: System, s: Settings, dw: DoneWhen, res: dict, rep: int) -> None:
    n = dw.partitions
    with Group(f"dw-{n}p", system, s, res, rep, kill_after=True) as g:
        def create() -> dict:
            before = g.rss()
            t0 = time.perf_counter()
            create_topic(g.run.bootstrap, f"dw-{n}p", n, timeout=300)
            created = time.perf_counter() - t0
            time.sleep(s.settle_s)  # read like idle RSS after ready: a reading, not a sync
            return {"partitions": n, "create_s": created, "rss_before_bytes": before, "rss_after_bytes": g.rss()}

        g.phase(f"scale_topic_{n}p", create)
        g.phase(f"scale_metadata_{n}p", lambda: {**(r := runner.run(
            "scale_workloads.metadata_latency", 120, bootstrap=g.run.bootstrap, samples=dw.metadata_samples)),
            **latency_stats(r["latencies_ms"])}, needs=(f"scale_topic_{n}p",))


def spread_produce(system: System, s: Settings, dw: DoneWhen, res: dict, rep: int, client: str) -> None:
    n, suffix = dw.spread_partitions, SUFFIX[client]
    with Group(f"dw-produce-{n}p{suffix}", system, s, res, rep, kill_after=True) as g:
        def run() -> dict:
            create_topic(g.run.bootstrap, f"dw-{n}p", n, timeout=300)
            create_topic(g.run.bootstrap, f"dw-{n}p-warmup", 1)
            return g.produce(f"dw-{n}p", n, create=False, client=client)

        g.phase(f"produce_{n}p{suffix}", run)


def segment_bytes(data_dir: Path) -> dict:
    """Bytes of every partition's log and of its last (active) segment, from a listing of the data
    directory; for kafka-shim also the part of the last segments after the partitions' recovery
    points, which is what an unclean start re-reads (shim.storage.recovery_point)."""
    from shim.storage import recovery_point

    points = recovery_point.read(data_dir) if (data_dir / recovery_point.FILE).exists() else None
    total = active = parts = recheck = 0
    for d in data_dir.iterdir() if data_dir.is_dir() else ():
        if not d.is_dir():
            continue
        logs = sorted(f for f in os.listdir(d) if f.endswith(".log") and f[:-4].isdigit())
        if not logs:
            continue
        sizes = [os.path.getsize(d / f) for f in logs]
        total, active, parts = total + sum(sizes), active + sizes[-1], parts + 1
        topic, _, partition = d.name.rpartition("-")
        point = (points or {}).get((topic, int(partition))) if partition.isdigit() else None
        trusted = point[2] if point is not None and point[0] == int(logs[-1][:-4]) else 0
        recheck += max(sizes[-1] - trusted, 0)
    out = {"log_bytes_on_disk": total, "active_segment_bytes": active, "partitions_on_disk": parts}
    return out if points is None else {**out, "recheck_bytes": recheck}


def _record(res: dict, name: str, rep: int, rec: dict) -> None:
    rec["rep"] = rep
    res["phases"].setdefault(name, []).append(rec)
    if rec["status"] == "ok":
        log.info("%s %s #%d: ready in %.3f s, %.1f MB in last segments, %s MB after recovery points", res["label"],
                 name, rep + 1, rec["ready_s"], rec["active_segment_bytes"] / 1e6,
                 f'{rec["recheck_bytes"] / 1e6:.1f}' if "recheck_bytes" in rec else "-")
    else:
        log.warning("%s %s #%d FAILED: %s", res["label"], name, rep + 1, rec["error"])


def _tail(run, records: int, create: bool = False) -> None:
    """An unflushed tail for the crash to leave behind (rdproduce into its own topic, created by
    the fill; its warm-up topic too)."""
    if create:
        create_topic(run.bootstrap, "dw-tail", 1)
        create_topic(run.bootstrap, "dw-tail-warmup", 1)
    runner.run("produce_c", 120, bootstrap=run.bootstrap, topic="dw-tail", partitions=1, records=records,
               queue_messages=Settings().queue_messages, warmup_topic="dw-tail-warmup")


def _fill(system: System, s: Settings, dw: DoneWhen, gb: float) -> tuple[Path, dict]:
    """A fresh instance with ``gb`` of log in one partition (rdproduce) and a tail, killed -9."""
    run = launch(system, s.tmp_root)
    try:
        records = int(gb * 2**30 / 1024)
        create_topic(run.bootstrap, "dw-log", 1)
        r = produce_c(run.bootstrap, "dw-log", 1, records, s, 60 + records / 20_000, run.pid)
        _tail(run, dw.tail_records, create=True)
        run.kill9()
    except BaseException:
        run.stop()
        raise
    log.info(f"{system.label}: {gb:g} GB of log written at {r['records'] / r['seconds']:,.0f} records/s")
    return run.workdir, {"records": records, "fill_s": r["seconds"]}


def _cycle(system: System, workdir: Path, dw: DoneWhen) -> dict:
    """Start over ``workdir`` after kill -9 (timed), then write a tail and kill -9 again (after the
    last cycle too, so that every cycle is the same)."""
    on_disk = segment_bytes(workdir / "data")
    busy = machine_busy(0.25)  # as before every other start: what else was using the CPUs
    run = launch(system, workdir=workdir)
    try:
        rec = {"status": "ok", "ready_s": run.ready_s, "listen_s": run.listen_s, "machine_busy_before": round(busy, 3),
               "rss_after_ready_bytes": rss_bytes(run.pid), **on_disk}
        _tail(run, dw.tail_records)
    finally:
        run.kill9()
    return rec


def disk_needed(dw: DoneWhen) -> int:
    """Bytes part 3 writes: the logs (batch overhead included), their tails, and 1 GiB to spare."""
    return int(sum(dw.log_gb) * 2**30 * 1.05) + (dw.rounds + 1) * dw.tail_records * 1100 * len(dw.log_gb) + 2**30


def recovery(system: System, s: Settings, dw: DoneWhen, res: dict) -> None:
    if not system.persistent or not dw.log_gb:
        return
    names = {gb: f"ready_kill9_{gb:g}gb" for gb in dw.log_gb}
    root = s.tmp_root or Path(tempfile.gettempdir())
    free, need = shutil.disk_usage(root).free, disk_needed(dw)
    res["recovery_disk"] = {"root": str(root), "free_bytes": free, "needed_bytes": need}
    if free < need:
        for gb, name in names.items():
            _record(res, name, 0, {"status": "failed", "error": f"{free / 2**30:.1f} GiB free under {root}, "
                                                               f"{need / 2**30:.1f} GiB needed"})
        return
    dirs: dict[float, Path] = {}
    try:
        for gb in dw.log_gb:
            try:
                dirs[gb], res.setdefault("recovery_fill", {})[f"{gb:g}gb"] = _fill(system, s, dw, gb)
            except Exception as e:  # noqa: BLE001 - reported, never silently zero
                _record(res, names[gb], 0, {"status": "failed", "error": f"filling {gb:g} GB: {type(e).__name__}: {e}"})
        t0 = time.perf_counter()
        os.sync()  # the fill's dirty pages written back before the first cycle, not during it
        res["recovery_sync_s"] = time.perf_counter() - t0
        for k in range(dw.rounds):
            for gb in rotated([gb for gb in dw.log_gb if gb in dirs], k):
                try:
                    rec = _cycle(system, dirs[gb], dw)
                except Exception as e:  # noqa: BLE001
                    rec = {"status": "failed", "error": f"{type(e).__name__}: {e}"}
                    shutil.rmtree(dirs.pop(gb), ignore_errors=True)  # no more cycles over it
                _record(res, names[gb], k, rec)
    finally:
        for d in dirs.values():
            shutil.rmtree(d, ignore_errors=True)


PARTS = ("produce", "partitions", "restarts")


def run(systems: dict[str, System], s: Settings, dw: DoneWhen, results: dict) -> None:
    keys = list(systems)
    if "produce" in dw.parts or "partitions" in dw.parts:
        for k in range(dw.rounds):
            snapshot(results, f"round {k + 1}", dw.snapshot_s)
            for key in rotated(keys, k) if "produce" in dw.parts else ():
                for client in dw.clients:
                    produce_1p(systems[key], s, dw, results["systems"][key], k, client)
            for key in rotated(keys, k) if "partitions" in dw.parts else ():
                many_partitions(systems[key], s, dw, results["systems"][key], k)
                for client in dw.clients:
                    spread_produce(systems[key], s, dw, results["systems"][key], k, client)
    if "restarts" in dw.parts:
        snapshot(results, "ready after kill -9", dw.snapshot_s)
        for key in keys:
            recovery(systems[key], s, dw, results["systems"][key])
