"""The tables, verdicts and plot of a ``--done-when`` run (bench/done_when.py).

``python -m bench.done_when_report bench/results-done-when.json [--plot out.png] [--readme README.md]``
prints them again from a results file, redraws the plot, and writes the run's figures into the
README between its ``<!-- done-when:start -->`` and ``<!-- done-when:end -->`` markers.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

from .done_when import CLIENT_LABEL, SUFFIX
from .machine import describe, describe_load
from .workloads import RECORD_SIZE

SHIM = "kafka-shim"
PEERS = (("noida-db", 1.2), ("tansu", 2.0))  # produce to one partition: kafka-shim / peer >= target
SPREAD_MAX = 1.3          # max / min of kafka-shim's own produce runs: under this
RSS_MB_MAX = 300.0        # idle RSS with the many-partitions topic
METADATA_MS_MAX = 50.0    # Metadata answer with the many-partitions topic
SPREAD_RATIO_MIN = 0.5    # produce spread over many partitions / produce to one
READY_S_MAX = 5.0         # ready after kill -9 with the largest log
READY_GROWTH_MAX = 1.2    # ready with the largest log / with the smallest, pair by pair
BUSY = 0.15               # a snapshot or a launch with more of the CPUs busy than this: a busy machine


def _by_rep(res: dict | None, phase: str, fn) -> dict[int, float]:
    if res is None:
        return {}
    return {p["rep"]: fn(p) for p in res["phases"].get(phase, []) if p.get("status") == "ok"}


def _rate(p: dict) -> float:
    return p["records"] / p["seconds"]


def _cpu(p: dict) -> float | None:
    """The broker's CPU seconds (user+system) over a produce run: to the nanosecond where the run
    could read them so (broker_oncpu_s), else in clock ticks (broker_cpu_s)."""
    return p.get("broker_oncpu_s", p.get("broker_cpu_s"))


def _spread(values) -> float | None:
    v = [x for x in values if x is not None]
    return max(v) / min(v) if len(v) > 1 and min(v) > 0 else None


def _med(values) -> float | None:
    v = [x for x in values if x is not None]
    return statistics.median(v) if v else None


def _pairs(a: dict[int, float], b: dict[int, float]) -> list[float]:
    return [a[k] / b[k] for k in sorted(a.keys() & b.keys()) if b[k]]


def _verdict(label: str, values: list[float], op: str, target: float, unit: str, spread: bool = False) -> dict:
    """The median of ``values`` (with ``spread``: their max / min) against ``target``."""
    if spread:
        v = max(values) / min(values) if len(values) > 1 and min(values) > 0 else None
    else:
        v = _med(values)
    met = None if v is None else (v >= target if op == ">=" else v <= target if op == "<=" else v < target)
    rng = values and not spread
    return {"criterion": label, "value": v, "min": min(values) if rng else None, "max": max(values) if rng else None,
            "n": len(values), "op": op, "target": target, "unit": unit, "met": met}


def _dw(results: dict) -> dict:
    return results["settings"]["done_when"]


def _ran(results: dict, part: str) -> bool:
    return part in _dw(results).get("parts", ("produce", "partitions", "restarts"))


def verdicts(results: dict) -> list[dict]:
    """kafka-shim against each target, medians of its runs or of the pairs of runs."""
    dw, systems = _dw(results), results["systems"]
    shim = systems.get(SHIM)
    out = []
    for client in dw["clients"] if _ran(results, "produce") else ():
        sfx, who = SUFFIX[client], "Python producer" if client == "python" else "rdproduce"
        mine = _by_rep(shim, f"produce_1p{sfx}", _rate)
        for peer, target in PEERS:
            if peer in systems:
                pairs = _pairs(mine, _by_rep(systems[peer], f"produce_1p{sfx}", _rate))
                out.append(_verdict(f"produce 1p, {who}: kafka-shim / {systems[peer]['label']}", pairs, ">=",
                                    target, "x"))
        runs = list(mine.values())
        out.append(_verdict(f"produce 1p, {who}: kafka-shim's max / min over {len(runs)} runs", runs, "<",
                            SPREAD_MAX, "x", spread=True))
    n, m = dw["partitions"], dw["spread_partitions"]
    out += _partition_verdicts(results, shim, n, m) if _ran(results, "partitions") else []
    out += _restart_verdicts(results, shim) if _ran(results, "restarts") else []
    return out


def _partition_verdicts(results: dict, shim: dict | None, n: int, m: int) -> list[dict]:
    out = []
    rss = list(_by_rep(shim, f"scale_topic_{n}p", lambda p: p["rss_after_bytes"] / 1e6).values())
    out.append(_verdict(f"idle RSS with {n:,} partitions (MB)", rss, "<", RSS_MB_MAX, ""))
    md = list(_by_rep(shim, f"scale_metadata_{n}p", lambda p: p["p50_ms"]).values())
    out.append(_verdict(f"Metadata of every topic with {n:,} partitions, p50 (ms)", md, "<", METADATA_MS_MAX, ""))
    for client in _dw(results)["clients"]:
        sfx, who = SUFFIX[client], "Python producer" if client == "python" else "rdproduce"
        pairs = _pairs(_by_rep(shim, f"produce_{m}p{sfx}", _rate), _by_rep(shim, f"produce_1p{sfx}", _rate))
        out.append(_verdict(f"produce {m:,}p / 1p, {who}", pairs, ">=", SPREAD_RATIO_MIN, "x"))
    return out


def _restart_verdicts(results: dict, shim: dict | None) -> list[dict]:
    out = []
    sizes = sorted(_dw(results)["log_gb"])
    if sizes and shim is not None and shim.get("persistent"):
        ready = {gb: _by_rep(shim, f"ready_kill9_{gb:g}gb", lambda p: p["ready_s"]) for gb in sizes}
        big, small = sizes[-1], sizes[0]
        out.append(_verdict(f"ready after kill -9 with {big:g} GB of log (s)", list(ready[big].values()), "<",
                            READY_S_MAX, ""))
        if small != big:
            out.append(_verdict(f"ready after kill -9, {big:g} GB / {small:g} GB of log", _pairs(ready[big], ready[small]),
                                "<=", READY_GROWTH_MAX, "x"))
    return out


def _fmt_rate(v: float | None) -> str:
    return "FAILED" if v is None else f"{v:,.0f}/s ({v * RECORD_SIZE / 2**20:,.0f} MiB/s)"


def _fmt(v: float | None, spec: str, unit: str = "") -> str:
    return "—" if v is None else f"{v:{spec}}{unit}"


def _busy_before(res: dict, group: str, rep: int) -> float | None:
    for launch in res["launches"]:
        if launch.get("group") == group and launch.get("rep") == rep:
            return launch.get("machine_busy_before")
    return None


def _failures(results: dict) -> list[str]:
    return [f"{res['label']} {name} #{p.get('rep', 0) + 1}: {p.get('error')}"
            for res in results["systems"].values() for name, recs in res["phases"].items()
            for p in recs if p.get("status") != "ok"]


def produce_table(results: dict, client: str) -> str:
    """One row a run: each system's rate, kafka-shim's against each peer's, kafka-shim's broker CPU
    over the run and how busy the machine was before its start; then medians, and each column's
    max / min."""
    systems, sfx, rounds = results["systems"], SUFFIX[client], _dw(results)["rounds"]
    rates = {k: _by_rep(v, f"produce_1p{sfx}", _rate) for k, v in systems.items()}
    cpu = _by_rep(systems.get(SHIM), f"produce_1p{sfx}", _cpu)
    peers = [p for p, _ in PEERS if p in systems and SHIM in systems]
    head = ["run"] + [v["label"] for v in systems.values()] + [f"kafka-shim / {systems[p]['label']}" for p in peers]
    head += ["kafka-shim's broker CPU", "CPUs busy before kafka-shim's start"]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for k in range(rounds):
        cells = [_fmt_rate(rates[s].get(k)) for s in systems]
        cells += [_fmt(rates[SHIM][k] / rates[p][k] if k in rates[SHIM] and rates[p].get(k) else None, ".2f", "x")
                  for p in peers]
        cells.append(_fmt(cpu.get(k), ".3f", " s"))
        busy = _busy_before(systems[SHIM], f"dw-produce-1p{sfx}", k) if SHIM in systems else None
        cells.append(_fmt(None if busy is None else 100 * busy, ".0f", "%"))
        lines.append(f"| {k + 1} | " + " | ".join(cells) + " |")
    med = [_fmt_rate(_med(rates[s].values())) for s in systems]
    med += [_fmt(_med(_pairs(rates[SHIM], rates[p])), ".2f", "x (pairs)") for p in peers]
    med.append(_fmt(_med(cpu.values()), ".3f", " s"))
    lines.append("| median | " + " | ".join(med) + " | |")
    spread = [_fmt(_spread(r.values()), ".2f") for r in rates.values()] + [""] * len(peers)
    spread.append(_fmt(_spread(cpu.values()), ".2f"))
    lines.append("| max / min | " + " | ".join(spread) + " | |")
    return "\n".join(lines)


def spread_line(results: dict, client: str) -> str:
    """kafka-shim's max / min over its runs of throughput and of the broker's CPU per run, side by
    side: a spread of throughput the CPU does not share is the machine's (the scheduler, other
    work), one the CPU shares is the broker's own work."""
    shim, sfx = results["systems"].get(SHIM), SUFFIX[client]
    rates, cpu = _by_rep(shim, f"produce_1p{sfx}", _rate), _by_rep(shim, f"produce_1p{sfx}", _cpu)
    return (f"kafka-shim's max / min over its {len(rates)} runs with {CLIENT_LABEL[client]}: throughput "
            f"{_fmt(_spread(rates.values()), '.2f')}, broker CPU per run {_fmt(_spread(cpu.values()), '.2f')} "
            f"(median {_fmt(_med(cpu.values()), '.3f', ' s')}, user+system of the broker process over the run).")


def partitions_table(results: dict) -> str:
    systems, dw = results["systems"], _dw(results)
    n, m = dw["partitions"], dw["spread_partitions"]
    cols = [f"idle RSS with {n:,}p", f"Metadata p50 / max, {n:,}p"]
    for client in dw["clients"]:
        who = "Python" if client == "python" else "rdproduce"
        cols.append(f"produce {m:,}p, {who}")
        cols.append(f"{m:,}p / 1p, {who}")
    lines = ["| system | run | " + " | ".join(cols) + " |", "|---|---:|" + "---:|" * len(cols)]
    for key, res in systems.items():
        rss = _by_rep(res, f"scale_topic_{n}p", lambda p: p["rss_after_bytes"] / 1e6)
        md = _by_rep(res, f"scale_metadata_{n}p", lambda p: (p["p50_ms"], p["max_ms"]))
        spread = {c: _by_rep(res, f"produce_{m}p{SUFFIX[c]}", _rate) for c in dw["clients"]}
        one = {c: _by_rep(res, f"produce_1p{SUFFIX[c]}", _rate) for c in dw["clients"]}
        for k in list(range(dw["rounds"])) + ["median"]:
            if k == "median":
                mdk = (_med(v[0] for v in md.values()), _med(v[1] for v in md.values()))
                cells = [_fmt(_med(rss.values()), ".1f", " MB"), f"{_fmt(mdk[0], '.1f')} / {_fmt(mdk[1], '.1f')} ms"]
                for c in dw["clients"]:
                    cells += [_fmt_rate(_med(spread[c].values())), _fmt(_med(_pairs(spread[c], one[c])), ".2f", "x")]
            else:
                cells = [_fmt(rss.get(k), ".1f", " MB"),
                         f"{_fmt(md[k][0], '.1f')} / {_fmt(md[k][1], '.1f')} ms" if k in md else "FAILED"]
                for c in dw["clients"]:
                    r, o = spread[c].get(k), one[c].get(k)
                    cells += [_fmt_rate(r), _fmt(r / o if r and o else None, ".2f", "x")]
            lines.append(f"| {res['label']} | {k if k == 'median' else k + 1} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def recovery_table(results: dict) -> str:
    shim, dw = results["systems"].get(SHIM), _dw(results)
    sizes = sorted(dw["log_gb"])
    if shim is None or not sizes or not any(f"ready_kill9_{gb:g}gb" in shim["phases"] for gb in sizes):
        return ""
    recs = {gb: {p["rep"]: p for p in shim["phases"].get(f"ready_kill9_{gb:g}gb", [])} for gb in sizes}
    head = [f"{gb:g} GB: ready (what was re-read)" for gb in sizes]
    if len(sizes) > 1:
        head.append(f"{sizes[-1]:g} GB / {sizes[0]:g} GB")
    lines = ["| cycle | " + " | ".join(head) + " |", "|---|" + "---:|" * len(head)]

    def cell(p):
        if p is None:
            return "—"
        if p["status"] != "ok":
            return "FAILED"
        rechecked = f"{p['recheck_bytes'] / 1e6:,.0f} MB re-read, " if "recheck_bytes" in p else ""
        return (f"{p['ready_s']:.3f} s ({rechecked}{p['active_segment_bytes'] / 1e6:,.0f} MB in last segments"
                f" of {p['log_bytes_on_disk'] / 1e9:.2f} GB)")

    for k in range(dw["rounds"]):
        row = [cell(recs[gb].get(k)) for gb in sizes]
        if len(sizes) > 1:
            a, b = recs[sizes[-1]].get(k), recs[sizes[0]].get(k)
            ok = a and b and a["status"] == b["status"] == "ok"
            row.append(_fmt(a["ready_s"] / b["ready_s"] if ok else None, ".2f", "x"))
        lines.append(f"| {k + 1} | " + " | ".join(row) + " |")
    ready = {gb: _by_rep(shim, f"ready_kill9_{gb:g}gb", lambda p: p["ready_s"]) for gb in sizes}
    row = [_fmt(_med(ready[gb].values()), ".3f", " s") for gb in sizes]
    if len(sizes) > 1:
        row.append(_fmt(_med(_pairs(ready[sizes[-1]], ready[sizes[0]])), ".2f", "x (pairs)"))
    lines.append("| median | " + " | ".join(row) + " |")
    fresh = _med(l["ready_s"] for l in shim["launches"] if "ready_s" in l)
    if fresh is not None:
        lines.append(f"\nA fresh kafka-shim over an empty directory is ready in {fresh:.3f} s (median of this run's "
                     f"{sum('ready_s' in l for l in shim['launches'])} launches).")
    return "\n".join(lines)


def verdict_table(vs: list[dict]) -> str:
    lines = ["| kafka-shim: target (median) | value | range | target | met |", "|---|---:|---:|---:|---|"]
    for v in vs:
        value = "n/a (too few runs)" if v["value"] is None else f"{v['value']:.2f}{v['unit']}"
        rng = f"{v['min']:.2f}–{v['max']:.2f}" if v["n"] > 1 and v["min"] is not None else ""
        met = "—" if v["met"] is None else ("yes" if v["met"] else "**no**")
        lines.append(f"| {v['criterion']} | {value} | {rng} | {v['op']} {v['target']:g}{v['unit']} | {met} |")
    return "\n".join(lines)


def busy(results: dict) -> tuple[bool, str]:
    """Whether other work shared the machine, and how much, from the snapshots and the launches."""
    starts = [l for r in results["systems"].values() for l in r["launches"]]
    starts += [p for r in results["systems"].values() for name, recs in r["phases"].items()
               if name.startswith("ready_kill9_") for p in recs]  # the restarts of part 3
    launches = [l["machine_busy_before"] for l in starts if l.get("machine_busy_before") is not None]
    snaps = results.get("load", [])
    worst = max((s["busy"] for s in snaps), default=0.0)
    med = _med(launches)
    was = worst > BUSY or (med or 0.0) > BUSY
    text = (f"CPUs busy before the {len(launches)} starts: median {_fmt(None if med is None else 100 * med, '.0f', '%')}, "
            f"max {_fmt(100 * max(launches) if launches else None, '.0f', '%')}; "
            f"in the {len(snaps)} load snapshots: max {100 * worst:.0f}%")
    return was, text


def render(results: dict) -> str:
    s, dw = results["settings"], _dw(results)
    m = results["machine"]
    was_busy, busy_text = busy(results)
    warn = ("THE MACHINE WAS BUSY during this run (" + busy_text + "): other work took CPU from the systems, so "
            "these figures are not a quiet machine's.") if was_busy else ""
    out = [f"Machine: {describe(m)}"]
    for snap in results.get("load", []):
        out.append(f"  load, {snap['label']} ({snap['at']}): {describe_load(snap, m.get('cpu_count'))}")
    out.append("  " + busy_text)
    if warn:
        out += ["", warn]
    for v in results["systems"].values():
        out.append(f"{v['label']}: {v['version']}")
    out.append(f"Run {results['started_at']} to {results.get('finished_at', '?')}{' (SMOKE)' if s.get('smoke') else ''}: "
               f"{dw['rounds']} rounds, systems interleaved (the first in each round rotates), a fresh instance for "
               "every run; ratios are taken pair by pair, run k against run k.")
    if _ran(results, "produce"):
        out += ["", f"1. Produce to one partition: {s['records']:,} records of {RECORD_SIZE} B, one producer, "
                    "linger.ms=5, acks=all"]
        for client in dw["clients"]:
            out += ["", f"With {CLIENT_LABEL[client]}:", "", produce_table(results, client), "",
                    spread_line(results, client)]
    if _ran(results, "partitions"):
        out += ["", f"2. With {dw['partitions']:,} partitions: RSS 1 s after the topic is created, Metadata of every "
                    f"topic ({dw['metadata_samples']} requests, raw protocol), produce spread over "
                    f"{dw['spread_partitions']:,} partitions (fresh instance) against the same round's produce to one",
                "", partitions_table(results)]
    rec = recovery_table(results)
    if rec:
        fill = results["systems"][SHIM].get("recovery_fill", {})
        out += ["", f"3. Ready after kill -9 (first Metadata answer), {dw['rounds']} kill/restart cycles over one data "
                    f"directory per size, each cycle writing {dw['tail_records']:,} records of unflushed tail before "
                    "its kill -9" + (f"; fill: " + ", ".join(f"{k} in {v['fill_s']:.0f} s" for k, v in fill.items())
                                     if fill else ""), "", rec]
    out += ["", verdict_table(results.get("verdicts") or verdicts(results))]
    fails = _failures(results)
    if fails:
        out += ["", "Failures:"] + [f"- {f}" for f in fails]
    if warn:
        out += ["", warn]
    return "\n".join(out)


def _client(client: str) -> tuple[str, str]:
    """A producer's name in the legends and its line style."""
    return ("Python", "-") if client == "python" else ("rdproduce", "--")


def _plot_produce(ax, systems: dict, dw: dict, color: dict) -> None:
    for key, res in systems.items():
        for client in dw["clients"]:
            r = _by_rep(res, f"produce_1p{SUFFIX[client]}", _rate)
            name, style = _client(client)
            if r:
                ax.plot([k + 1 for k in r], list(r.values()), marker="o", linestyle=style, color=color[key],
                        label=f"{res['label']}, {name}")
    ax.set(title="produce to 1 partition, records/s, by run", xlabel="run")


def _plot_ratios(ax, systems: dict, dw: dict, color: dict) -> None:
    shim = systems.get(SHIM)
    for peer, target in PEERS:
        if peer not in systems or not shim:
            continue
        for client in dw["clients"]:
            sfx, (name, style) = SUFFIX[client], _client(client)
            a, b = _by_rep(shim, f"produce_1p{sfx}", _rate), _by_rep(systems[peer], f"produce_1p{sfx}", _rate)
            ks = sorted(a.keys() & b.keys())
            ax.plot([k + 1 for k in ks], [a[k] / b[k] for k in ks], marker="o", linestyle=style, color=color[peer],
                    label=f"/ {systems[peer]['label']}, {name}")
        ax.axhline(target, color="grey", linewidth=0.8, linestyle=":")
    ax.set(title="kafka-shim / peer, produce 1p, pair by pair (targets dotted)", xlabel="run")


def _plot_bars(ax, systems: dict, phase: str, fn, title: str, limit: float) -> None:
    labels = []
    for i, res in enumerate(systems.values()):
        vals = list(_by_rep(res, phase, fn).values())
        if vals:
            ax.bar(i, _med(vals), alpha=0.5, color=f"C{i}")
            ax.plot([i] * len(vals), vals, "k.", markersize=4)
        labels.append(res["label"])
    ax.axhline(limit, color="grey", linewidth=0.8, linestyle=":")
    ax.set_xticks(range(len(labels)), labels)
    ax.set_title(title + " (target dotted)")


def _plot_spread(ax, systems: dict, dw: dict, color: dict) -> None:
    m = dw["spread_partitions"]
    for key, res in systems.items():
        for client in dw["clients"]:
            sfx, (name, style) = SUFFIX[client], _client(client)
            many, one = _by_rep(res, f"produce_{m}p{sfx}", _rate), _by_rep(res, f"produce_1p{sfx}", _rate)
            ks = sorted(many.keys() & one.keys())
            ax.plot([k + 1 for k in ks], [many[k] / one[k] for k in ks], marker="o", linestyle=style,
                    color=color[key], label=f"{res['label']}, {name}")
    ax.axhline(SPREAD_RATIO_MIN, color="grey", linewidth=0.8, linestyle=":")
    ax.set(title=f"produce {m:,}p / 1p, by run (target dotted)", xlabel="run")


def _plot_ready(ax, shim: dict | None, dw: dict) -> None:
    if shim:
        for gb in sorted(dw["log_gb"]):
            r = _by_rep(shim, f"ready_kill9_{gb:g}gb", lambda p: p["ready_s"])
            if r:
                ax.plot([k + 1 for k in r], list(r.values()), marker="o", label=f"{gb:g} GB of log")
        fresh = _med(l["ready_s"] for l in shim["launches"] if "ready_s" in l)
        if fresh is not None:
            ax.axhline(fresh, color="green", linewidth=0.8, linestyle="--", label="empty directory")
    ax.set(title="kafka-shim ready after kill -9, s, by cycle", xlabel="cycle", ylim=(0, None))


def plot(results: dict, path: Path) -> Path | None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    systems, dw = results["systems"], _dw(results)
    n = dw["partitions"]
    color = {key: f"C{i}" for i, key in enumerate(systems)}
    fig, axes = plt.subplots(2, 3, figsize=(16, 9))
    _plot_produce(axes[0][0], systems, dw, color)
    _plot_ratios(axes[0][1], systems, dw, color)
    _plot_bars(axes[0][2], systems, f"scale_topic_{n}p", lambda p: p["rss_after_bytes"] / 1e6,
               f"RSS with {n:,} partitions, MB", RSS_MB_MAX)
    _plot_bars(axes[1][0], systems, f"scale_metadata_{n}p", lambda p: p["p50_ms"],
               f"Metadata p50 with {n:,} partitions, ms", METADATA_MS_MAX)
    _plot_spread(axes[1][1], systems, dw, color)
    _plot_ready(axes[1][2], systems.get(SHIM), dw)
    for ax in (axes[0][0], axes[0][1], axes[1][1], axes[1][2]):
        ax.set_xticks(range(1, dw["rounds"] + 1))
    for ax in axes.flat:
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    mach = results.get("machine", {})
    fig.suptitle(f"kafka-shim done-when figures, {results.get('started_at', '')}; {mach.get('cpu_model', '')}, "
                 f"{mach.get('cpus_usable', '')} cores" + ("; BUSY MACHINE" if busy(results)[0] else ""), fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


README_START, README_END = "<!-- done-when:start -->", "<!-- done-when:end -->"


def readme_block(results: dict, png: str = "bench/results-done-when.png") -> str:
    """The README's figures of a run: the machine and its load, the medians and the verdicts."""
    s, dw, m = results["settings"], _dw(results), results["machine"]
    was_busy, busy_text = busy(results)
    systems = results["systems"]
    lines = [README_START,
             f"![done-when figures: produce by run, ratios, RSS and Metadata with {dw['partitions']:,} partitions, "
             f"ready after kill -9]({png})", "",
             f"Run of {results['started_at'][:10]}, {dw['rounds']} rounds, on {describe(m)}. "
             f"Load: {busy_text}" + (" — **a busy machine**." if was_busy else "."), ""]
    head = ["produce to 1 partition, median of runs"] + [v["label"] for v in systems.values()]
    lines += ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for client in dw["clients"]:
        cells = [_fmt_rate(_med(_by_rep(v, f"produce_1p{SUFFIX[client]}", _rate).values())) for v in systems.values()]
        lines.append(f"| {CLIENT_LABEL[client]} | " + " | ".join(cells) + " |")
    if SHIM in systems:
        lines += [""] + [spread_line(results, client) for client in dw["clients"]]
    lines += ["", verdict_table(results.get("verdicts") or verdicts(results)), "",
              f"Every figure and run is in [bench/results-done-when.json](bench/results-done-when.json) "
              f"({s['records']:,} records a produce run).", README_END]
    return "\n".join(lines)


def update_readme(results: dict, readme: Path) -> None:
    """Replace the block between the done-when markers of ``readme`` with this run's figures."""
    text = readme.read_text()
    start, end = text.find(README_START), text.find(README_END)
    if start < 0 or end < start:
        raise SystemExit(f"{readme}: no {README_START} ... {README_END} block")
    readme.write_text(text[:start] + readme_block(results) + text[end + len(README_END):])


def main(argv: list[str]) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m bench.done_when_report", description=__doc__)
    p.add_argument("results", type=Path)
    p.add_argument("--plot", type=Path, default=None, help="draw the plot again into this PNG")
    p.add_argument("--readme", type=Path, default=None,
                   help="replace the done-when block of this README with the run's figures")
    args = p.parse_args(argv)
    results = json.loads(args.results.read_text())
    print(render(results))
    if args.plot:
        print(f"plot: {plot(results, args.plot)}")
    if args.readme:
        update_readme(results, args.readme)
        print(f"{args.readme}: done-when figures replaced")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
