"""Summaries, the results table, the ratios against the targets."""

from __future__ import annotations

import statistics

from .machine import describe, describe_load
from .workloads import RECORD_SIZE

MB = 1e6


PRODUCE = ("produce_1p", "produce_8p", "produce_1p_idempotent", "produce_1p_txn")
# The cproduce group: the 1-partition produces again with rdproduce (librdkafka from C)
PRODUCE_C = ("produce_1p_c", "produce_1p_idempotent_c", "produce_1p_txn_c")
# The jproduce group: the same with Apache Kafka's Java producer (JProduce)
PRODUCE_J = ("produce_1p_j", "produce_1p_idempotent_j", "produce_1p_txn_j")
CONSUME = ("consume_plain_ru", "consume_plain_rc", "consume_txn_ru", "consume_txn_rc")
# The three reads of each topic: phase-name suffix, consumer named in the ratios
READERS = (("", ""), ("_kcat", "kcat"), ("_c", "rdconsume"))
READS = tuple(c + suffix for suffix, _ in READERS for c in CONSUME)


def _oks(res: dict, phase: str) -> list[dict]:
    return [p for p in res["phases"].get(phase, []) if p.get("status") == "ok"]


def _median(values) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def summary(res: dict) -> dict:
    """The numbers the table and the ratios are made of: medians over the repetitions that
    succeeded (None where every repetition of a phase failed)."""
    launches = [l for l in res["launches"] if "ready_s" in l]
    out: dict = {
        "ready_s": _median(l["ready_s"] for l in launches),
        "listen_s": _median(l["listen_s"] for l in launches),
        "ready_s_all": [round(l["ready_s"], 4) for l in launches],
        "idle_rss_mb": _median(l["idle_rss_bytes"] / MB for l in launches if "idle_rss_bytes" in l),
        "machine_busy_before": _median(l.get("machine_busy_before") for l in res["launches"]),
    }
    per_rep: dict[int, int] = {}
    for n in PRODUCE + PRODUCE_C + PRODUCE_J:
        for p in res["phases"].get(n, []):
            if "rss_peak_bytes" in p:
                per_rep[p["rep"]] = max(per_rep.get(p["rep"], 0), p["rss_peak_bytes"])
    out["rss_load_mb"] = _median(v / MB for v in per_rep.values())
    for n in ("growth_1x", "growth_2x"):
        out[f"rss_{n}_mb"] = _median(p["rss_after_bytes"] / MB for p in _oks(res, n))
    for n in PRODUCE + PRODUCE_C + PRODUCE_J + READS + ("growth_1x", "growth_2x"):
        rates = [p["records"] / p["seconds"] for p in _oks(res, n)]
        out[n] = _median(rates)
        out[f"{n}_samples"] = [round(r) for r in rates]
    for n in ("produce_1p", "produce_8p", "consume_plain_ru", "consume_plain_ru_kcat", "consume_plain_ru_c",
              "produce_1p_j", "produce_1p_txn_j"):
        out[f"{n}_broker_cores"] = _median(p["broker_cpu_s"] / p["seconds"] for p in _oks(res, n))
        out[f"{n}_client_cores"] = _median(p["client_cpu_s"] / p["seconds"] for p in _oks(res, n)
                                           if "client_cpu_s" in p)
        out[f"{n}_broker_wait"] = _median(p["broker_runqueue_wait_s"] / p["seconds"] for p in _oks(res, n)
                                          if "broker_runqueue_wait_s" in p)
    for n in PRODUCE + PRODUCE_C + PRODUCE_J + READS:
        out[f"{n}_broker_us_per_record"] = _median(1e6 * p["broker_cpu_s"] / p["records"] for p in _oks(res, n)
                                                   if "broker_cpu_s" in p)
    for n in ("e2e_latency", "endtxn_latency"):
        out[f"{n}_p50_ms"] = _median(p["p50_ms"] for p in _oks(res, n))
        out[f"{n}_p99_ms"] = _median(p["p99_ms"] for p in _oks(res, n))
    for phase, prefix in (("produce_1p_txn", "txn"), ("produce_1p_txn_c", "txn_c"), ("produce_1p_txn_j", "txn_j")):
        txn = [p for p in _oks(res, phase) if "commit_flush_seconds" in p]
        out[f"{prefix}_count"] = _median(p["transactions"] for p in _oks(res, phase))
        out[f"{prefix}_pause_share"] = _median(p["commit_seconds"] / p["seconds"] for p in txn)
        out[f"{prefix}_flush_ms"] = _median(1000 * p["commit_flush_seconds"] / p["transactions"] for p in txn)
        out[f"{prefix}_endtxn_ms"] = _median(1000 * (p["commit_seconds"] - p["commit_flush_seconds"])
                                             / p["transactions"] for p in txn)
        out[f"{prefix}_queued"] = _median(p["commit_queued_records"] / p["transactions"] for p in txn)
    return out


def _rate(v):
    return f"{v:,.0f}/s ({v * RECORD_SIZE / 2**20:.1f} MiB/s)"


def _note(notes: list[str], text: str) -> int:
    if text not in notes:
        notes.append(text)
    return notes.index(text) + 1


def _cell(res: dict, sm: dict, key, fmt, phases: tuple[str, ...], notes: list[str]) -> str:
    keys = key if isinstance(key, tuple) else (key,)
    failed = [p for ph in phases for p in res["phases"].get(ph, []) if p.get("status") != "ok"]
    total = sum(len(res["phases"].get(ph, [])) for ph in phases)
    refs = sorted({_note(notes, f"{res['label']} {ph}: {p.get('error')}")
                   for ph in phases for p in res["phases"].get(ph, []) if p.get("status") != "ok"})
    if not phases:
        refs = sorted({_note(notes, f"{res['label']} did not start: {l['error']}")
                       for l in res["launches"] if "error" in l})
    marks = "".join(f"[{r}]" for r in refs)
    if all(sm.get(k) is not None for k in keys):
        text = fmt(*(sm[k] for k in keys))
        if refs:
            text += f" ({len(failed) or len(refs)} of {total or len(res['launches'])} failed {marks})"
        return text
    return f"FAILED {marks}" if refs else "n/a"


def _cores(a, b, w):
    return f"{a:.2f} / {b:.2f}, wait {100 * w:.0f}%"


def _us(a, b):
    return f"{a:.1f} / {b:.1f}"


def _ms(a, b):
    return f"{a:.2f} / {b:.2f} ms"


def _commits(share, flush_ms, endtxn_ms, queued):
    return f"{100 * share:.1f}%; {flush_ms:.1f} / {endtxn_ms:.1f} ms; {queued:,.0f}"


def _ran(results: dict, phases: tuple[str, ...]) -> bool:
    """Whether any system has a record of one of ``phases`` (false when their group was not run)."""
    return not phases or any(ph in res["phases"] for res in results["systems"].values() for ph in phases)


def rows(settings: dict) -> list[tuple]:
    """The table's rows, in order: (label, summary key or keys, format, phases that must have run)."""
    return [*_memory_rows(settings), *_python_client_rows(settings), *_c_client_rows(settings),
            *_java_client_rows(settings), *_latency_and_cost_rows(settings)]


def _memory_rows(settings: dict) -> list[tuple]:
    n = settings["records"]
    return [
        ("ready: launch to first list_topics (median of launches)", "ready_s", lambda v: f"{v:.3f} s", ()),
        ("listening: launch to first TCP accept (median)", "listen_s", lambda v: f"{v:.3f} s", ()),
        ("idle RSS, 1 s after ready (median of launches)", "idle_rss_mb", lambda v: f"{v:.1f} MB", ()),
        (f"RSS peak during the produce phases ({n:,} records each, from a fresh start)", "rss_load_mb",
         lambda v: f"{v:.1f} MB", ()),
        (f"RSS after {n:,} records", "rss_growth_1x_mb", lambda v: f"{v:.1f} MB", ("growth_1x",)),
        (f"RSS after {2 * n:,} records", "rss_growth_2x_mb", lambda v: f"{v:.1f} MB", ("growth_2x", "growth_1x")),
    ]


def _python_client_rows(settings: dict) -> list[tuple]:
    """confluent-kafka's produce and consume, the same reads with kcat and rdconsume, then the
    transactional produce's commits."""
    return [
        ("produce, 1 partition", "produce_1p", _rate, ("produce_1p",)),
        ("produce, 8 partitions", "produce_8p", _rate, ("produce_8p",)),
        ("produce, 1 partition, idempotent", "produce_1p_idempotent", _rate, ("produce_1p_idempotent",)),
        (f"produce, 1 partition, transactional (commit every {settings['commit_interval_ms']} ms)",
         "produce_1p_txn", _rate, ("produce_1p_txn",)),
        ("consume plain topic, read_uncommitted", "consume_plain_ru", _rate, ("consume_plain_ru",)),
        ("consume plain topic, read_committed", "consume_plain_rc", _rate, ("consume_plain_rc",)),
        ("consume transactional topic, read_uncommitted", "consume_txn_ru", _rate, ("consume_txn_ru",)),
        ("consume transactional topic, read_committed", "consume_txn_rc", _rate, ("consume_txn_rc",)),
        ("consume with kcat (librdkafka in C): plain topic, read_uncommitted", "consume_plain_ru_kcat", _rate,
         ("consume_plain_ru_kcat",)),
        ("... plain topic, read_committed", "consume_plain_rc_kcat", _rate, ("consume_plain_rc_kcat",)),
        ("... transactional topic, read_uncommitted", "consume_txn_ru_kcat", _rate, ("consume_txn_ru_kcat",)),
        ("... transactional topic, read_committed", "consume_txn_rc_kcat", _rate, ("consume_txn_rc_kcat",)),
        ("consume with rdconsume (librdkafka from C, timed from assign): plain topic, read_uncommitted",
         "consume_plain_ru_c", _rate, ("consume_plain_ru_c",)),
        ("... plain topic, read_committed", "consume_plain_rc_c", _rate, ("consume_plain_rc_c",)),
        ("... transactional topic, read_uncommitted", "consume_txn_ru_c", _rate, ("consume_txn_ru_c",)),
        ("... transactional topic, read_committed", "consume_txn_rc_c", _rate, ("consume_txn_rc_c",)),
        ("transactional produce: share of the time in commit_transaction(); a commit's flush of the "
         "queued records / the rest (EndTxn); records queued at a commit (per commit, median of repetitions)",
         ("txn_pause_share", "txn_flush_ms", "txn_endtxn_ms", "txn_queued"), _commits, ("produce_1p_txn",)),
    ]


def _c_client_rows(settings: dict) -> list[tuple]:
    """rdproduce: librdkafka from C."""
    return [
        ("produce with rdproduce (librdkafka from C): 1 partition", "produce_1p_c", _rate, ("produce_1p_c",)),
        ("... 1 partition, idempotent", "produce_1p_idempotent_c", _rate, ("produce_1p_idempotent_c",)),
        (f"... 1 partition, transactional (commit every {settings['commit_interval_ms']} ms)", "produce_1p_txn_c",
         _rate, ("produce_1p_txn_c",)),
        ("... transactional: share of the time in commits; flush / EndTxn per commit; records queued at a commit",
         ("txn_c_pause_share", "txn_c_flush_ms", "txn_c_endtxn_ms", "txn_c_queued"), _commits,
         ("produce_1p_txn_c",)),
        ("... broker CPU per record, plain / transactional (µs)",
         ("produce_1p_c_broker_us_per_record", "produce_1p_txn_c_broker_us_per_record"), _us,
         ("produce_1p_c", "produce_1p_txn_c")),
    ]


def _java_client_rows(settings: dict) -> list[tuple]:
    return [
        ("produce with JProduce (Apache Kafka's Java producer): 1 partition", "produce_1p_j", _rate,
         ("produce_1p_j",)),
        ("... 1 partition, idempotent", "produce_1p_idempotent_j", _rate, ("produce_1p_idempotent_j",)),
        (f"... 1 partition, transactional (commit every {settings['commit_interval_ms']} ms)", "produce_1p_txn_j",
         _rate, ("produce_1p_txn_j",)),
        ("... transactional: share of the time in commits; flush / EndTxn per commit; records unacknowledged "
         "at a commit", ("txn_j_pause_share", "txn_j_flush_ms", "txn_j_endtxn_ms", "txn_j_queued"), _commits,
         ("produce_1p_txn_j",)),
        ("... client CPU cores, plain / transactional", ("produce_1p_j_client_cores", "produce_1p_txn_j_client_cores"),
         lambda a, b: f"{a:.2f} / {b:.2f}", ("produce_1p_j", "produce_1p_txn_j")),
    ]


def _latency_and_cost_rows(settings: dict) -> list[tuple]:
    """Latencies, CPU cores and CPU per record, and how busy the machine was."""
    return [
        (f"end-to-end latency p50 / p99 at {settings['latency_rate']:,} msg/s for {settings['latency_seconds']:g} s",
         ("e2e_latency_p50_ms", "e2e_latency_p99_ms"), _ms, ("e2e_latency",)),
        (f"commit_transaction (EndTxn) p50 / p99, {settings['records_per_txn']} records/txn",
         ("endtxn_latency_p50_ms", "endtxn_latency_p99_ms"), _ms, ("endtxn_latency",)),
        ("CPU cores, broker / client, broker run-queue wait: produce 1p", ("produce_1p_broker_cores", "produce_1p_client_cores", "produce_1p_broker_wait"),
         _cores, ("produce_1p",)),
        ("... produce 8p", ("produce_8p_broker_cores", "produce_8p_client_cores", "produce_8p_broker_wait"),
         _cores, ("produce_8p",)),
        ("... consume plain ru",
         ("consume_plain_ru_broker_cores", "consume_plain_ru_client_cores", "consume_plain_ru_broker_wait"), _cores,
         ("consume_plain_ru",)),
        ("... consume plain ru with kcat",
         ("consume_plain_ru_kcat_broker_cores", "consume_plain_ru_kcat_client_cores",
          "consume_plain_ru_kcat_broker_wait"), _cores, ("consume_plain_ru_kcat",)),
        ("... consume plain ru with rdconsume",
         ("consume_plain_ru_c_broker_cores", "consume_plain_ru_c_client_cores",
          "consume_plain_ru_c_broker_wait"), _cores, ("consume_plain_ru_c",)),
        ("broker CPU per record, produce 1p / 8p (µs)",
         ("produce_1p_broker_us_per_record", "produce_8p_broker_us_per_record"), _us, ("produce_1p", "produce_8p")),
        ("broker CPU per record, produce idempotent / transactional (µs)",
         ("produce_1p_idempotent_broker_us_per_record", "produce_1p_txn_broker_us_per_record"), _us,
         ("produce_1p_idempotent", "produce_1p_txn")),
        ("broker CPU per record, consume plain ru / txn rc (µs)",
         ("consume_plain_ru_broker_us_per_record", "consume_txn_rc_broker_us_per_record"), _us,
         ("consume_plain_ru", "consume_txn_rc")),
        ("other work on the machine before each start (share of all CPUs busy, median)", "machine_busy_before",
         lambda v: f"{100 * v:.0f}%", ()),
    ]


def table(results: dict) -> tuple[str, list[str]]:
    systems = results["systems"]
    names = list(systems)
    notes: list[str] = []
    lines = ["| metric | " + " | ".join(systems[k]["label"] for k in names) + " |",
             "|---|" + "---:|" * len(names)]
    for title, key, fmt, phases in rows(results["settings"]):
        if not _ran(results, phases):
            continue
        cells = [_cell(systems[k], systems[k]["summary"], key, fmt, phases, notes) for k in names]
        lines.append(f"| {title} | " + " | ".join(cells) + " |")
    return "\n".join(lines), notes


TARGETS = [
    # (label, numerator system, numerator metric, denominator system, denominator metric, op, target)
    ("produce 1p: kafka-shim / Tansu", "kafka-shim", "produce_1p", "tansu", "produce_1p", ">=", 1.5),
    ("produce 8p: kafka-shim / Tansu", "kafka-shim", "produce_8p", "tansu", "produce_8p", ">=", 1.5),
    ("produce 1p: kafka-shim / noida-db", "kafka-shim", "produce_1p", "noida-db", "produce_1p", ">=", 1.0),
    ("produce 8p: kafka-shim / noida-db", "kafka-shim", "produce_8p", "noida-db", "produce_8p", ">=", 1.0),
    *((f"consume {c.removeprefix('consume_').replace('_', ' ')}{', ' + name if name else ''}: kafka-shim / Tansu",
       "kafka-shim", c + suffix, "tansu", c + suffix, ">=", 2.0)
      for suffix, name in READERS for c in CONSUME),
    ("consume plain ru: kafka-shim / noida-db", "kafka-shim", "consume_plain_ru", "noida-db", "consume_plain_ru", None, None),
    ("consume plain rc: kafka-shim / noida-db", "kafka-shim", "consume_plain_rc", "noida-db", "consume_plain_rc", None, None),
    ("consume txn ru: kafka-shim / noida-db", "kafka-shim", "consume_txn_ru", "noida-db", "consume_txn_ru", None, None),
    ("consume txn rc: kafka-shim / noida-db", "kafka-shim", "consume_txn_rc", "noida-db", "consume_txn_rc", None, None),
    ("kafka-shim transactional / plain produce 1p", "kafka-shim", "produce_1p_txn", "kafka-shim", "produce_1p", ">=", 0.97),
    ("kafka-shim transactional / idempotent produce 1p", "kafka-shim", "produce_1p_txn", "kafka-shim",
     "produce_1p_idempotent", None, None),
    ("produce 1p, rdproduce: kafka-shim / Tansu", "kafka-shim", "produce_1p_c", "tansu", "produce_1p_c", ">=", 1.5),
    ("produce 1p, rdproduce: kafka-shim / noida-db", "kafka-shim", "produce_1p_c", "noida-db", "produce_1p_c", ">=", 1.0),
    ("kafka-shim transactional / plain produce 1p, rdproduce", "kafka-shim", "produce_1p_txn_c", "kafka-shim",
     "produce_1p_c", ">=", 0.97),
    ("kafka-shim idempotent / plain produce 1p, rdproduce", "kafka-shim", "produce_1p_idempotent_c", "kafka-shim",
     "produce_1p_c", None, None),
    # Java's producer keeps five requests in flight where librdkafka's transactional one keeps one:
    # what the transactional ratio is without that limit (no targets: they are set for librdkafka)
    ("produce 1p, JProduce: kafka-shim / Tansu", "kafka-shim", "produce_1p_j", "tansu", "produce_1p_j", None, None),
    ("produce 1p, JProduce: kafka-shim / noida-db", "kafka-shim", "produce_1p_j", "noida-db", "produce_1p_j", None,
     None),
    ("kafka-shim transactional / plain produce 1p, JProduce", "kafka-shim", "produce_1p_txn_j", "kafka-shim",
     "produce_1p_j", None, None),
    ("kafka-shim idempotent / plain produce 1p, JProduce", "kafka-shim", "produce_1p_idempotent_j", "kafka-shim",
     "produce_1p_j", None, None),
    ("kafka-shim read_committed / read_uncommitted, plain topic", "kafka-shim", "consume_plain_rc", "kafka-shim",
     "consume_plain_ru", ">=", 0.95),
    ("kafka-shim read_committed / read_uncommitted, txn topic", "kafka-shim", "consume_txn_rc", "kafka-shim",
     "consume_txn_ru", ">=", 0.95),
    *((f"kafka-shim read_committed / read_uncommitted, txn topic, {name}", "kafka-shim", f"consume_txn_rc{suffix}",
       "kafka-shim", f"consume_txn_ru{suffix}", ">=", 0.95) for suffix, name in READERS if name),
]
# Broker CPU per record, peer over kafka-shim: how much more CPU the peer spends on the same work.
# Unlike throughput it hardly depends on who else wants the CPUs or on the client's own limits.
EFFICIENCY = [
    ("broker CPU per record produce 1p: Tansu / kafka-shim", "tansu", "produce_1p"),
    ("broker CPU per record produce 8p: Tansu / kafka-shim", "tansu", "produce_8p"),
    ("broker CPU per record consume plain ru: Tansu / kafka-shim", "tansu", "consume_plain_ru"),
    ("broker CPU per record consume txn rc: Tansu / kafka-shim", "tansu", "consume_txn_rc"),
    ("broker CPU per record produce 1p: noida-db / kafka-shim", "noida-db", "produce_1p"),
    ("broker CPU per record produce 8p: noida-db / kafka-shim", "noida-db", "produce_8p"),
    ("broker CPU per record consume plain ru: noida-db / kafka-shim", "noida-db", "consume_plain_ru"),
    ("broker CPU per record consume txn rc: noida-db / kafka-shim", "noida-db", "consume_txn_rc"),
]
ABSOLUTE = [
    ("kafka-shim ready (s)", "kafka-shim", "ready_s", "<", 0.3),
    ("kafka-shim idle RSS (MB)", "kafka-shim", "idle_rss_mb", "<", 60.0),
]


def _rates_by_rep(res: dict, phase: str) -> dict[int, float]:
    return {p["rep"]: p["records"] / p["seconds"] for p in _oks(res, phase)}


def ratios(results: dict) -> list[dict]:
    """Throughput ratios are paired: repetition k of one side against repetition k of the other
    (run back to back), and the median of those per-repetition ratios is the value; their range
    shows how much the machine moved during the run."""
    systems = results["systems"]
    out = []

    def val(sys_key, metric):
        s = systems.get(sys_key)
        return None if s is None else s["summary"].get(metric)

    for label, a, am, b, bm, op, target in TARGETS:
        if a not in systems or b not in systems or not _ran(results, (am, bm)):
            continue
        ra, rb = _rates_by_rep(systems[a], am), _rates_by_rep(systems[b], bm)
        pairs = sorted(ra[k] / rb[k] for k in ra.keys() & rb.keys() if rb[k])
        if pairs:
            v, lo, hi = statistics.median(pairs), pairs[0], pairs[-1]
        else:
            x, y = val(a, am), val(b, bm)
            v, lo, hi = (x / y if x is not None and y else None), None, None
        out.append({"ratio": label, "value": v, "min": lo, "max": hi, "pairs": len(pairs), "op": op,
                    "target": target, "unit": "x", "met": None if v is None or target is None else v >= target})
    for label, peer, metric in EFFICIENCY:
        if peer not in systems or "kafka-shim" not in systems or not _ran(results, (metric,)):
            continue
        x, y = val(peer, f"{metric}_broker_us_per_record"), val("kafka-shim", f"{metric}_broker_us_per_record")
        out.append({"ratio": label, "value": x / y if x is not None and y else None, "op": None, "target": None,
                    "unit": "x", "met": None})
    for label, a, am, op, target in ABSOLUTE:
        if a not in systems:
            continue
        v = val(a, am)
        out.append({"ratio": label, "value": v, "op": op, "target": target, "unit": "",
                    "met": None if v is None else v < target})
    return out


def ratio_table(rs: list[dict]) -> str:
    lines = ["| ratio (median of paired repetitions) | value | range | target | met |", "|---|---:|---:|---:|---|"]
    for r in rs:
        u = r["unit"]
        value = "n/a (a phase failed)" if r["value"] is None else f"{r['value']:.2f}{u}"
        spread = f"{r['min']:.2f}–{r['max']:.2f}" if r.get("min") is not None and r.get("pairs", 0) > 1 else ""
        target = "—" if r["target"] is None else f"{r['op']} {r['target']:g}{u}"
        met = "—" if r["met"] is None else ("yes" if r["met"] else "**no**")
        lines.append(f"| {r['ratio']} | {value} | {spread} | {target} | {met} |")
    return "\n".join(lines)


def render(results: dict) -> str:
    s = results["settings"]
    head = [f"Machine: {describe(results['machine'])}"]
    if results.get("loadavg_start"):
        head[0] += (f"; load average at start {results['loadavg_start'][0]:.2f}"
                    + (f", at end {results['loadavg_end'][0]:.2f}" if results.get("loadavg_end") else ""))
    for snap in results.get("load", []):
        head.append(f"Load at the {snap['label']}: {describe_load(snap, results['machine'].get('cpu_count'))}")
    for k, v in results["systems"].items():
        head.append(f"{v['label']}: {v['version']}"
                    + (f" (at the end of the run: {v['version_at_end']})" if v.get("version_at_end") else ""))
    codec = s.get("compression", "none")
    head.append(f"Records: {s['records']:,} x {RECORD_SIZE} B per phase, acks=all, "
                f"{'no compression' if codec == 'none' else codec + ' compression (text values)'}; "
                f"throughput and latency phases: median of {s.get('repeat', 1)} fresh start(s); run {results['started_at']}{' (SMOKE)' if s.get('smoke') else ''}"
                f"{' (under py-spy)' if s.get('py_spy') else ''}")
    tbl, notes = table(results)
    parts = ["\n".join(head), "", tbl]
    if notes:
        parts += ["", "Failures:"] + [f"[{i + 1}] {n}" for i, n in enumerate(notes)]
    rs = results.get("ratios") or []
    if rs:
        parts += ["", ratio_table(rs)]
    return "\n".join(parts)
