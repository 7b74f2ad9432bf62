"""``python -m bench``: start each system, drive it with librdkafka, print one table, write JSON."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import os
import signal
import sys
import tempfile
from pathlib import Path

from . import done_when, done_when_report, report, scale, scale_report, suite
from .machine import load_snapshot, loadavg, machine_info
from .procs import tree
from .systems import ALL

DEFAULT_OUT = Path(__file__).resolve().parent / "results.json"
DONE_WHEN_OUT = DEFAULT_OUT.with_name("results-done-when.json")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--systems", default=None,
                   help="comma-separated, from: " + ", ".join(ALL) + " (default: all; with --smoke kafka-shim)")
    p.add_argument("--groups", default=None,
                   help="phase groups to run (default: all; with --smoke all but scale): " + ", ".join(suite.GROUPS))
    _workload_options(p)
    _run_options(p)
    _scale_options(p)
    _done_when_options(p)
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    return p


def _workload_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--records", type=int, default=100_000, help="records per produce phase (1 KiB each)")
    p.add_argument("--queue-messages", type=int, default=20_000,
                   help="producer queue bound (queue.buffering.max.messages)")
    p.add_argument("--compression", default="none", choices=("none", "gzip", "snappy", "lz4", "zstd"),
                   help="compression.type of the throughput and growth producers (values become compressible text)")
    p.add_argument("--commit-interval-ms", type=int, default=100, help="transactional produce commit interval")
    p.add_argument("--latency-rate", type=int, default=2_000, help="records/s for the end-to-end latency phase")
    p.add_argument("--latency-seconds", type=float, default=5.0, help="duration of the end-to-end latency phase")
    p.add_argument("--txns", type=int, default=200, help="transactions timed in the EndTxn latency phase")
    p.add_argument("--records-per-txn", type=int, default=5)
    p.add_argument("--repeat", type=int, default=5,
                   help="runs of the throughput, cproduce, jproduce and latency groups per system (fresh start each); "
                        "the table shows medians")


def _run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--smoke", action="store_true",
                   help="quick check: 5,000 records, kafka-shim only, 0.5 s of latency, 10 transactions, "
                        "RSS read 0.2 s after a start")
    p.add_argument("--settle", type=float, default=None, metavar="SECONDS",
                   help="how long after an instance is ready (or a scale step ends) its RSS is read "
                        "(default 1; 0.2 with --smoke)")
    p.add_argument("--out", type=Path, default=None,
                   help=f"JSON results file (default {DEFAULT_OUT.name}, or a temporary file with --smoke, "
                        "so a smoke run never replaces the published results)")
    p.add_argument("--tmp-dir", type=Path, default=None, help="where data directories go (default: system temp)")
    p.add_argument("--py-spy", type=Path, default=None, metavar="DIR",
                   help="attach py-spy to kafka-shim for every phase; raw stacks to DIR/<phase>.txt")
    p.add_argument("--py-spy-rate", type=int, default=100)
    p.add_argument("--wait-quiet", type=float, default=0.0, metavar="SECONDS",
                   help="before each group, wait up to this long for other work to leave the CPUs "
                        "less than --quiet-threshold busy (the share measured is recorded either way)")
    p.add_argument("--quiet-threshold", type=float, default=0.25, help="share of all CPUs, 0..1")
    p.add_argument("--render", type=Path, default=None, metavar="JSON",
                   help="print the table of an earlier results file (summaries recomputed) and exit")


def _scale_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scale-partitions", default="1,100,1000,10000", help="scale group: partition counts")
    p.add_argument("--scale-clients", default="1,10,100", help="scale group: concurrent producers / consumers")
    p.add_argument("--scale-log-gb", default="1,10", help="scale group: log sizes for the restart times (GB)")
    p.add_argument("--scale-connections", type=int, default=1000, help="scale group: connections held open")
    p.add_argument("--scale-open-txns", type=int, default=1000, help="scale group: transactions held open")
    p.add_argument("--scale-latency-seconds", type=float, default=3.0,
                   help="scale group: duration of each fixed-rate latency phase")


def _done_when_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--done-when", action="store_true",
                   help="instead of the groups: the figures the performance targets are judged by, in one run "
                        "(produce to 1 partition, many partitions, ready after kill -9; --repeat rounds, systems "
                        f"interleaved), JSON to {DONE_WHEN_OUT.name} and a plot beside it (bench/done_when.py)")
    p.add_argument("--done-when-partitions", type=int, default=10_000,
                   help="--done-when: partitions of the topic whose idle RSS and Metadata are measured")
    p.add_argument("--done-when-spread-partitions", type=int, default=1_000,
                   help="--done-when: partitions the spread produce writes to")
    p.add_argument("--done-when-clients", default="python,c",
                   help="--done-when: producers, from python (confluent-kafka) and c (rdproduce)")
    p.add_argument("--done-when-parts", default=",".join(done_when.PARTS),
                   help="--done-when: which parts to run, from " + ", ".join(done_when.PARTS))
    p.add_argument("--done-when-tail-records", type=int, default=10_000,
                   help="--done-when: records written before each kill -9 (the unflushed tail)")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.render is not None:
        return _render(args.render)
    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    if args.done_when:
        return _done_when(args)
    _defaults(args)
    keys = [k.strip() for k in args.systems.split(",") if k.strip()]
    groups = [g.strip() for g in args.groups.split(",") if g.strip()]
    bad = [k for k in keys if k not in ALL] + [g for g in groups if g not in suite.GROUPS]
    if bad:
        print(f"unknown system or group: {', '.join(bad)}", file=sys.stderr)
        return 2
    _configure_scale(args)
    if args.py_spy is not None:
        args.py_spy.mkdir(parents=True, exist_ok=True)
    settings = suite.Settings(
        records=args.records, queue_messages=args.queue_messages, commit_interval_s=args.commit_interval_ms / 1000,
        latency_rate=args.latency_rate, latency_seconds=args.latency_seconds, txns=args.txns,
        txn_warmup=min(10, max(1, args.txns // 10)), records_per_txn=args.records_per_txn, tmp_root=args.tmp_dir,
        py_spy_dir=args.py_spy, py_spy_rate=args.py_spy_rate, quiet_threshold=args.quiet_threshold,
        quiet_wait_s=args.wait_quiet, compression=args.compression, settle_s=args.settle,
        # a smoke times nothing: its twelve starts need not each watch the machine for a quarter second
        busy_window_s=0.05 if args.smoke else 0.25)
    results = _results_head(args, keys, groups)
    # group-major order: the systems are compared on the same workload close together in time
    for g in groups:
        for rep in range(args.repeat if g in suite.REPEATED else 1):
            for k in keys:
                suite.GROUPS[g](ALL[k], settings, results["systems"][k], rep)
    _finish(args, keys, results)
    print(report.render(results))
    if "scale" in groups:
        print("\n" + scale_report.render(results))
        png = scale_report.plot(results, args.out.with_suffix(".png"))
        print(f"\nscale curves drawn in {png}")
    print(f"\nwritten to {args.out}")
    return 1 if _shim_failed(results) else 0


def _render(path: Path) -> int:
    """--render: the table of an earlier results file, its summaries recomputed."""
    results = json.loads(path.read_text())
    for res in results["systems"].values():
        res["summary"] = report.summary(res)
    results["ratios"] = report.ratios(results)
    print(report.render(results))
    return 0


def _defaults(args) -> None:
    """The systems, groups and output file when not given; --smoke's small sizes."""
    if args.systems is None:
        args.systems = ",".join(ALL)
    if args.smoke:
        args.records, args.latency_rate, args.latency_seconds, args.txns, args.repeat = 5_000, 1_000, 0.5, 10, 1
        args.settle = 0.2 if args.settle is None else args.settle
        args.systems = "kafka-shim"
        if args.groups is None:  # the scale group's sizes are its own (--scale-*), not a smoke's
            args.groups = ",".join(g for g in suite.GROUPS if g != "scale")
        if args.out is None:
            args.out = Path(tempfile.gettempdir()) / "kafka-shim-bench-smoke.json"
    if args.out is None:
        args.out = DEFAULT_OUT
    if args.groups is None:
        args.groups = ",".join(suite.GROUPS)
    if args.settle is None:
        args.settle = 1.0


def _configure_scale(args) -> None:
    scale.SCALE.partitions = tuple(int(x) for x in args.scale_partitions.split(","))
    scale.SCALE.clients = tuple(int(x) for x in args.scale_clients.split(","))
    scale.SCALE.connections, scale.SCALE.open_txns = args.scale_connections, args.scale_open_txns
    scale.SCALE.latency_seconds = args.scale_latency_seconds
    scale.SCALE.log_gb = tuple(float(x) for x in args.scale_log_gb.split(",") if x)


def _results_head(args, keys: list[str], groups: list[str]) -> dict:
    """The results file's head: the machine, its load, the settings, each system's version."""
    return {
        "schema": 1,
        "started_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine_info(),
        "loadavg_start": loadavg(),
        "load": [{"label": "start", **load_snapshot(0.2 if args.smoke else 1.0, exclude=set(tree(os.getpid())))}],
        "settings": {"records": args.records, "record_bytes": 1024, "compression": args.compression, "queue_messages": args.queue_messages,
                     "commit_interval_ms": args.commit_interval_ms, "latency_rate": args.latency_rate,
                     "latency_seconds": args.latency_seconds, "txns": args.txns,
                     "records_per_txn": args.records_per_txn, "repeat": args.repeat, "groups": groups, "smoke": args.smoke,
                     "settle_s": args.settle, "py_spy": args.py_spy is not None},
        "systems": _systems_head(keys),
    }


def _systems_head(keys: list[str]) -> dict:
    """Each system's label, version (or why it cannot run) and what preparing it gave."""
    systems = {}
    for k in keys:
        s = ALL[k]
        why = s.missing()
        systems[k] = {"label": s.label, "version": why or s.version(), "persistent": s.persistent,
                      "launches": [], "phases": {}}
        if why is None and (prepared := s.prepare()):
            systems[k]["prepared"] = prepared
    return systems


def _finish(args, keys: list[str], results: dict) -> None:
    """Summaries, ratios and the closing load; the results file written."""
    for k in keys:
        results["systems"][k]["summary"] = report.summary(results["systems"][k])
        version_end = ALL[k].missing() or ALL[k].version()
        if version_end != results["systems"][k]["version"]:  # e.g. a commit landed during the run
            results["systems"][k]["version_at_end"] = version_end
    results["ratios"] = report.ratios(results)
    results["finished_at"] = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    results["loadavg_end"] = loadavg()
    results["load"].append({"label": "end", **load_snapshot(0.2 if args.smoke else 1.0,
                                                            exclude=set(tree(os.getpid())))})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")


def _shim_failed(results: dict) -> bool:
    """Whether a phase of kafka-shim's failed (the exit status says so)."""
    shim = results["systems"].get("kafka-shim")
    return bool(shim and any(p.get("status") != "ok" for recs in shim["phases"].values() for p in recs))


def _interrupted(signum, frame) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def _done_when_results(args, keys: list[str], dw) -> dict:
    """The results file's head: the machine, the settings, each system's version."""
    return {
        "schema": 1, "mode": "done-when",
        "started_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine_info(), "load": [],
        "settings": {"records": args.records, "record_bytes": 1024, "queue_messages": args.queue_messages,
                     "smoke": args.smoke, "done_when": {**dw.__dict__, "clients": list(dw.clients),
                                                        "log_gb": list(dw.log_gb)}},
        "systems": _systems_head(keys),
    }


def _done_when_smoke(args) -> None:
    """The harness, not speed: toy sizes, one round, kafka-shim unless --systems says more."""
    args.records, args.repeat = 2_000, 1
    args.done_when_partitions, args.done_when_spread_partitions = 50, 10
    args.done_when_tail_records, args.scale_log_gb = 500, "0.002,0.01"
    args.systems = args.systems or "kafka-shim"
    args.out = args.out or Path(tempfile.gettempdir()) / "kafka-shim-bench-done-when-smoke.json"


def _done_when(args) -> int:
    if args.smoke:
        _done_when_smoke(args)
    args.systems = args.systems or ",".join(ALL)
    args.out = args.out or DONE_WHEN_OUT
    keys = [k.strip() for k in args.systems.split(",") if k.strip()]
    clients = tuple(c.strip() for c in args.done_when_clients.split(",") if c.strip())
    parts = tuple(x.strip() for x in args.done_when_parts.split(",") if x.strip())
    bad = ([k for k in keys if k not in ALL] + [c for c in clients if c not in done_when.SUFFIX]
           + [x for x in parts if x not in done_when.PARTS])
    if bad or not keys or not clients or not parts:
        print(f"unknown system, client or part: {', '.join(bad) or '(none given)'}", file=sys.stderr)
        return 2
    # SIGTERM unwinds like Ctrl-C, so that the instances are stopped and the data directories removed
    signal.signal(signal.SIGTERM, _interrupted)
    dw = done_when.DoneWhen(rounds=args.repeat, clients=clients, partitions=args.done_when_partitions,
                            spread_partitions=args.done_when_spread_partitions,
                            log_gb=tuple(float(x) for x in args.scale_log_gb.split(",") if x),
                            tail_records=args.done_when_tail_records, snapshot_s=0.2 if args.smoke else 1.0,
                            parts=parts)
    settings = suite.Settings(records=args.records, queue_messages=args.queue_messages, tmp_root=args.tmp_dir,
                              quiet_threshold=args.quiet_threshold, quiet_wait_s=args.wait_quiet,
                              settle_s=args.settle if args.settle is not None else 0.2 if args.smoke else 1.0,
                              py_spy_dir=args.py_spy, py_spy_rate=args.py_spy_rate)
    if args.py_spy is not None:
        args.py_spy.mkdir(parents=True, exist_ok=True)
    results = _done_when_results(args, keys, dw)
    done_when.snapshot(results, "start", dw.snapshot_s)
    try:
        done_when.run({k: ALL[k] for k in keys}, settings, dw, results)
    finally:
        done_when.snapshot(results, "end", dw.snapshot_s)
        results["finished_at"] = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        results["verdicts"] = done_when_report.verdicts(results)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(done_when_report.render(results))
    png = done_when_report.plot(results, args.out.with_suffix(".png"))
    print(f"\nwritten to {args.out}; plot in {png}")
    return 1 if _shim_failed(results) else 0
