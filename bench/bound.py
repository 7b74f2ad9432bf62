"""``python -m bench.bound``: is produce bound by the client, the broker or the machine?

For each producer (the Python producer and rdproduce), each partition count (1 and 1,000) and
each system, alternating the systems run by run (a fresh instance every run, as the done-when run
does), one produce of ``--records`` 1 KiB records, recording: wall time and throughput; the
producer's CPU over its timed window, in all and per thread (``client_threads``: librdkafka's
broker thread, its main thread, the application thread); the broker's CPU around the run, in all
and its busiest thread; the load averages before the run.

From CPU time, which other work on a shared machine leaves comparable where wall clock is not,
each run gives three ceilings (records/s):

- *client thread*: records / CPU of the producer's busiest thread: no producer goes faster than
  its busiest thread;
- *client*: records / max(busiest thread, client CPU / cores): the producer alone on the machine,
  with a broker that costs nothing;
- *machine*: records / max(busiest client thread, busiest broker thread, (client CPU + broker
  CPU) / cores): both on the machine's cores, each thread at most one core.

The table prints the medians per system, client and partition count, and the throughput as a share
of each ceiling. ``--systems`` may name ``null``, bench/null_broker.py: answers Produce at once and
writes nothing, so the producer runs at its own speed. Results to ``--out`` (JSON), ``--render``
prints an earlier file.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import time
from pathlib import Path

from .procs import threads_cpu, threads_delta
from .suite import Group, Settings, create_topic
from .systems import ALL, NullBroker, System

log = logging.getLogger("bench")
SUFFIX = {"python": "", "c": "_c"}


def one_run(system: System, client: str, partitions: int, s: Settings, res: dict, rep: int) -> None:
    name = f"produce_{partitions}p{SUFFIX[client]}"
    with Group(f"bound-{name}", system, s, res, rep, kill_after=True) as g:
        def run() -> dict:
            topic = f"bound-{partitions}p"
            create_topic(g.run.bootstrap, topic, partitions, timeout=300)
            create_topic(g.run.bootstrap, f"{topic}-warmup", 1)
            load = os.getloadavg()
            before = threads_cpu(g.run.pid)
            r = g.produce(topic, partitions, create=False, client=client)
            broker_threads = threads_delta(before, threads_cpu(g.run.pid))
            return {**r, "partitions": partitions, "client": client, "loadavg": load,
                    "broker_threads_max_s": max((t["cpu_s"] for t in broker_threads), default=None)}

        g.phase(name, run)


def ceilings(r: dict, cores: int) -> dict:
    """The three ceilings of one run (records/s) and the busiest client thread's name. A run
    without per-thread figures (the done-when run's JSON) gets the ceilings of its totals."""
    threads = r.get("client_threads")
    busiest = max(threads, key=lambda t: t["cpu_s"]) if threads else {"name": "?", "cpu_s": 0.0}
    client, broker = r["client_cpu_s"], r.get("broker_oncpu_s", r["broker_cpu_s"])
    broker_thread = r.get("broker_threads_max_s") or 0.0
    n = r["records"]
    return {"rate": n / r["seconds"], "client_cpu_us": 1e6 * client / n, "broker_cpu_us": 1e6 * broker / n,
            "thread_cpu_us": 1e6 * busiest["cpu_s"] / n, "thread": busiest["name"],
            "client_thread_ceiling": n / busiest["cpu_s"] if busiest["cpu_s"] else None,
            "client_ceiling": n / max(busiest["cpu_s"], client / cores),
            "machine_ceiling": n / max(busiest["cpu_s"], broker_thread, (client + broker) / cores),
            "load1": r["loadavg"][0] if "loadavg" in r else None}


def _runs(results: dict, key: str, phase: str) -> dict[int, dict]:
    """Repetition -> ceilings of the runs of ``phase`` on ``key`` that ended ok."""
    recs = results["systems"].get(key, {}).get("phases", {}).get(phase, [])
    return {r["rep"]: ceilings(r, _cores(results)) for r in recs if r["status"] == "ok"}


def _cores(results: dict) -> int:
    return results.get("cores") or results.get("machine", {}).get("cpus_usable") or 2


def _median(values) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def summary(results: dict) -> list[dict]:
    rows = []
    for key, res in results["systems"].items():
        for name, recs in sorted(res["phases"].items()):
            if not name.startswith("produce_") or not name.endswith(("p", "p_c")):
                continue
            ok = list(_runs(results, key, name).values())
            if not ok:
                rows.append({"system": key, "phase": name, "runs": 0, "failed": len(recs)})
                continue
            med = {k: _median(c[k] for c in ok) for k in ok[0] if k != "thread"}
            rows.append({"system": key, "phase": name, "runs": len(ok), "failed": len(recs) - len(ok),
                         "busiest_threads": sorted({c["thread"] for c in ok}), **med})
    return rows


def paired(results: dict, a: tuple[str, str, str], b: tuple[str, str, str]) -> float | None:
    """Median over repetitions of a's figure / b's, each (system, phase, ceilings key), run k with run k."""
    ra, rb = _runs(results, *a[:2]), _runs(results, *b[:2])
    return _median(ra[k][a[2]] / rb[k][b[2]] for k in ra if k in rb and ra[k][a[2]] and rb[k][b[2]])


def ratio_lines(results: dict, base: str = "kafka-shim", peer: str = "noida-db") -> list[str]:
    """The two targets in rates and in ceilings, pair by pair."""
    out = []

    def f(a: tuple, b: tuple) -> str:
        v = paired(results, a, b)
        return "-" if v is None else f"{v:.2f}x"

    for suffix, label in (("", "Python producer"), ("_c", "rdproduce")):
        one, many = f"produce_1p{suffix}", f"produce_1000p{suffix}"
        out.append(f"- {label}, 1p {base} / {peer}: rate {f((base, one, 'rate'), (peer, one, 'rate'))}, machine "
                   f"ceilings {f((base, one, 'machine_ceiling'), (peer, one, 'machine_ceiling'))}; a broker that costs "
                   f"nothing (client ceiling) / {peer}'s machine ceiling "
                   f"{f((base, one, 'client_ceiling'), (peer, one, 'machine_ceiling'))}")
        for key in (base, peer):
            out.append(f"- {label}, {key} 1,000p / 1p: rate {f((key, many, 'rate'), (key, one, 'rate'))}, machine "
                       f"ceilings {f((key, many, 'machine_ceiling'), (key, one, 'machine_ceiling'))}; client ceiling "
                       f"at 1,000p / machine ceiling at 1p "
                       f"{f((key, many, 'client_ceiling'), (key, one, 'machine_ceiling'))}")
    return out


def render(results: dict) -> str:
    head = ("| system | phase | runs | records/s | client µs/rec | busiest client thread µs/rec | broker µs/rec "
            "| client thread ceiling | client ceiling | machine ceiling | rate / client ceiling "
            "| rate / machine ceiling | load (1 min) |")
    load = (f"load averages {results['loadavg_start']} at the start, {results['loadavg_end']} at the end"
            if "loadavg_start" in results else "load: see the file's snapshots")
    out = [f"{_cores(results)} cores; {load}", "", head, "|" + "---|" * 13]
    num = lambda v, fmt: "-" if v is None else format(v, fmt)  # noqa: E731
    for r in summary(results):
        if not r["runs"]:
            out.append(f"| {r['system']} | {r['phase']} | 0 ({r['failed']} failed) |" + " |" * 10)
            continue
        out.append(f"| {r['system']} | {r['phase']} | {r['runs']} | {r['rate']:,.0f} | {r['client_cpu_us']:.2f} "
                   f"| {r['thread_cpu_us']:.2f} ({', '.join(r['busiest_threads'])}) | {r['broker_cpu_us']:.2f} "
                   f"| {num(r['client_thread_ceiling'], ',.0f')} | {r['client_ceiling']:,.0f} "
                   f"| {r['machine_ceiling']:,.0f} | {r['rate'] / r['client_ceiling']:.2f} "
                   f"| {r['rate'] / r['machine_ceiling']:.2f} | {num(r['load1'], '.1f')} |")
    return "\n".join(out + ["", "Pair by pair (medians of run k / run k):", *ratio_lines(results)])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.bound", description=__doc__.split("\n\n")[0])
    ap.add_argument("--systems", default="kafka-shim,noida-db", help="comma-separated; 'null' for bench/null_broker")
    ap.add_argument("--clients", default="python,c")
    ap.add_argument("--partitions", default="1,1000")
    ap.add_argument("--repeat", type=int, default=5, help="runs of each system, alternating")
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--out", type=Path, default=Path("bench/results-bound.json"))
    ap.add_argument("--render", type=Path, help="print the table of an earlier results file and exit")
    a = ap.parse_args(argv)
    if a.render:
        print(render(json.loads(a.render.read_text())))
        return 0
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    systems = {k: NullBroker() if k == "null" else ALL[k] for k in a.systems.split(",")}
    for sys_ in systems.values():
        sys_.prepare()
    s = Settings(records=a.records)
    results = {"cores": os.cpu_count(), "records": a.records, "loadavg_start": os.getloadavg(),
               "systems": {k: {"launches": [], "phases": {}} for k in systems}}
    keys = list(systems)
    for k in range(a.repeat):
        for client in a.clients.split(","):
            for parts in (int(p) for p in a.partitions.split(",")):
                for key in keys[k % len(keys):] + keys[:k % len(keys)]:
                    one_run(systems[key], client, parts, s, results["systems"][key], k)
    results["loadavg_end"] = os.getloadavg()
    results["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    a.out.write_text(json.dumps(results, indent=1))
    print(render(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
