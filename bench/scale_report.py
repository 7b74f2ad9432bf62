"""The scale group's table and plots: medians over repetitions, per system, per size.

``python -m bench.scale_report results.json [out.png]`` prints the table of a results file and
draws its curves (matplotlib, from the bench extra) into one PNG.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

MB = 1e6


def _oks(res: dict, name: str) -> list[dict]:
    return [p for p in res["phases"].get(name, []) if p.get("status") == "ok"]


def _med(values) -> float | None:
    v = [x for x in values if x is not None]
    return statistics.median(v) if v else None


def _spread(values) -> float | None:
    v = [x for x in values if x]
    return max(v) / min(v) if len(v) > 1 else None


def _sizes(res: dict, prefix: str, suffix: str) -> list[int]:
    out = set()
    for name in res["phases"]:
        if name.startswith(prefix) and name.endswith(suffix):
            core = name[len(prefix):len(name) - len(suffix)]
            if core.isdigit():
                out.add(int(core))
    return sorted(out)


def series(res: dict) -> dict:
    """Curves as {metric: [(size, median), ...]}, plus the single figures under their names."""
    rate = lambda n: _med(p["records"] / p["seconds"] for p in _oks(res, n))  # noqa: E731
    out: dict = {}
    parts = _sizes(res, "scale_produce_", "p")
    out["produce_rate"] = [(n, rate(f"scale_produce_{n}p")) for n in parts]
    out["produce_spread"] = [(n, _spread(p["records"] / p["seconds"] for p in _oks(res, f"scale_produce_{n}p")))
                             for n in parts]
    out["consume_rate"] = [(n, rate(f"scale_consume_{n}p")) for n in parts]
    out["produce_p99_ms"] = [(n, _med(p["p99_ms"] for p in _oks(res, f"scale_latency_{n}p"))) for n in parts]
    out["metadata_p50_ms"] = [(n, _med(p["p50_ms"] for p in _oks(res, f"scale_metadata_{n}p"))) for n in parts]
    out["rss_after_topic_mb"] = [(n, _med(p["rss_after_bytes"] / MB for p in _oks(res, f"scale_topic_{n}p")))
                                 for n in parts]
    clients = _sizes(res, "scale_producers_", "c")
    out["producers_rate"] = [(n, rate(f"scale_producers_{n}c")) for n in clients]
    out["consumers_rate"] = [(n, rate(f"scale_consumers_{n}c")) for n in clients]
    txn_parts = _sizes(res, "scale_endtxn_", "p")
    out["endtxn_p50_ms"] = [(n, _med(p["p50_ms"] for p in _oks(res, f"scale_endtxn_{n}p"))) for n in txn_parts]
    out["endtxn_p99_ms"] = [(n, _med(p["p99_ms"] for p in _oks(res, f"scale_endtxn_{n}p"))) for n in txn_parts]
    for kind in ("connections", "open_txns"):
        out[f"bytes_per_{kind}"] = _med(p["bytes_each"] for p in _oks(res, f"scale_mem_{kind}"))
    topics = {n: v for n, v in out["rss_after_topic_mb"] if v is not None}
    if len(topics) > 1:
        lo, hi = min(topics), max(topics)
        out["bytes_per_partition"] = (topics[hi] - topics[lo]) * MB / (hi - lo)
    for how in ("clean", "kill9"):
        out[f"ready_{how}"] = sorted(
            (name.rsplit("_", 1)[1], _med(p["ready_s"] for p in _oks(res, name)))
            for name in res["phases"] if name.startswith(f"scale_ready_{how}_"))
    return out


def _fmt(v, unit: str) -> str:
    if v is None:
        return "-"
    if unit == "rate":
        return f"{v:,.0f}/s"
    if unit == "ms":
        return f"{v:.1f} ms"
    if unit == "s":
        return f"{v:.2f} s"
    if unit == "mb":
        return f"{v:.1f} MB"
    if unit == "b":
        return f"{v:,.0f} B"
    if unit == "x":
        return f"{v:.2f}"
    return str(v)


ROWS = (("produce_rate", "produce (records/s, rdproduce)", "rate"),
        ("produce_spread", "produce max/min over repetitions", "x"),
        ("consume_rate", "consume read_committed (rdconsume)", "rate"),
        ("produce_p99_ms", "produce ack p99 at a fixed rate", "ms"),
        ("metadata_p50_ms", "Metadata of every topic, p50", "ms"),
        ("rss_after_topic_mb", "RSS with the topic created", "mb"),
        ("producers_rate", "concurrent producers, total", "rate"),
        ("consumers_rate", "concurrent consumers, total", "rate"),
        ("endtxn_p50_ms", "EndTxn p50, partitions in the transaction", "ms"),
        ("endtxn_p99_ms", "EndTxn p99", "ms"),
        ("ready_clean", "ready after a clean stop", "s"),
        ("ready_kill9", "ready after kill -9", "s"))


def render(results: dict) -> str:
    systems = {k: series(v) for k, v in results["systems"].items() if any(
        n.startswith("scale_") for n in v["phases"])}
    if not systems:
        return ""
    labels = [results["systems"][k]["label"] for k in systems]
    lines = ["| scale | size | " + " | ".join(labels) + " |", "|---|---:|" + "---:|" * len(labels)]
    for key, title, unit in ROWS:
        sizes = sorted({n for s in systems.values() for n, _ in s.get(key, [])}, key=lambda x: (str(type(x)), x))
        for size in sizes:
            cells = [_fmt(dict(s.get(key, [])).get(size), unit) for s in systems.values()]
            lines.append(f"| {title} | {size} | " + " | ".join(cells) + " |")
    for key, title in (("bytes_per_partition", "memory per partition"), ("bytes_per_connections", "memory per connection"),
                       ("bytes_per_open_txns", "memory per open transaction")):
        lines.append(f"| {title} | | " + " | ".join(_fmt(s.get(key), "b") for s in systems.values()) + " |")
    return "\n".join(lines)


PLOTS = (("produce_rate", "produce, records/s", "partitions", True),
         ("consume_rate", "consume read_committed, records/s", "partitions", True),
         ("produce_p99_ms", "produce ack p99, ms", "partitions", True),
         ("metadata_p50_ms", "Metadata, all topics, p50 ms", "partitions", True),
         ("producers_rate", "concurrent producers, records/s", "producers", True),
         ("consumers_rate", "concurrent consumers, records/s", "consumers", True),
         ("endtxn_p50_ms", "EndTxn p50, ms", "partitions per transaction", True),
         ("rss_after_topic_mb", "RSS with the topic, MB", "partitions", True))


def plot(results: dict, out: Path) -> Path | None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    systems = {results["systems"][k]["label"]: series(v) for k, v in results["systems"].items()
               if any(n.startswith("scale_") for n in v["phases"])}
    if not systems:
        return None
    fig, axes = plt.subplots(3, 3, figsize=(15, 12))
    for ax, (key, title, xlabel, logx) in zip(axes.flat, PLOTS):
        for label, s in systems.items():
            pts = [(n, v) for n, v in s.get(key, []) if v is not None]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        if logx:
            ax.set_xscale("log")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    ax = axes.flat[-1]
    for how, marker in (("clean", "o"), ("kill9", "x")):
        for label, s in systems.items():
            pts = [(n, v) for n, v in s.get(f"ready_{how}", []) if v is not None]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker, linestyle="", label=f"{label} {how}")
    ax.set_title("ready after restart, s (persistent systems)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    m = results.get("machine", {})
    fig.suptitle(f"kafka-shim scale curves, {results.get('started_at', '')}; "
                 f"{m.get('cpu_model', '')}, {m.get('cpus_usable', '')} cores, {m.get('python', '')}", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=80)
    plt.close(fig)
    return out


def main(argv: list[str]) -> int:
    results = json.loads(Path(argv[0]).read_text())
    print(render(results))
    if len(argv) > 1:
        print(f"plots: {plot(results, Path(argv[1]))}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
