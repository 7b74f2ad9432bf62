"""`python -m bench --done-when`: the run that produces the figures the performance targets are
judged by. A toy-sized run checks the harness (every part runs, the data directories are removed,
the load is recorded); the report's arithmetic is checked on made-up results."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("confluent_kafka")

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(not (shutil.which("cc") or shutil.which("gcc")), reason="rdproduce needs a C compiler")
def test_done_when_smoke_runs_every_part_and_leaves_no_data(tmp_path):
    out, data = tmp_path / "dw.json", tmp_path / "data"
    data.mkdir()
    # one producer (the Python one) keeps this under 20 s; the fill and the tails use rdproduce
    run = subprocess.run([sys.executable, "-m", "bench", "--done-when", "--smoke", "-q", "--out", str(out),
                          "--tmp-dir", str(data), "--done-when-clients", "python"], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert out.exists(), f"no results written (exit {run.returncode}): {run.stderr[-2000:]}"
    results = json.loads(out.read_text())
    shim = results["systems"]["kafka-shim"]
    failed = {n: [r.get("error") for r in recs if r["status"] != "ok"] for n, recs in shim["phases"].items()}
    assert not {n: e for n, e in failed.items() if e}, failed
    assert run.returncode == 0, run.stderr[-2000:]
    assert {"produce_1p", "scale_topic_50p", "scale_metadata_50p", "produce_10p", "ready_kill9_0.002gb",
            "ready_kill9_0.01gb"} == set(shim["phases"])
    (small,), (big,) = shim["phases"]["ready_kill9_0.002gb"], shim["phases"]["ready_kill9_0.01gb"]
    # the log written is on disk when the broker starts over it, and only its last segments are re-read
    assert big["log_bytes_on_disk"] >= 0.01 * 2**30 > small["log_bytes_on_disk"] >= 0.002 * 2**30
    assert 0 < big["active_segment_bytes"] <= big["log_bytes_on_disk"]
    assert big["ready_s"] > 0 and small["ready_s"] > 0 and 0 <= big["machine_busy_before"] <= 1
    # every instance stopped, every directory removed, the 10 GB one included
    assert list(data.iterdir()) == []
    assert [s["label"] for s in results["load"]] == ["start", "round 1", "ready after kill -9", "end"]
    assert all(0 <= s["busy"] <= 1 and len(s["loadavg"]) == 3 for s in results["load"])
    assert results["machine"]["cpu_count"] >= 1
    criteria = {v["criterion"] for v in results["verdicts"]}
    assert "idle RSS with 50 partitions (MB)" in criteria and "produce 10p / 1p, Python producer" in criteria
    assert "ready after kill -9, 0.01 GB / 0.002 GB of log" in criteria
    assert "Machine:" in run.stdout and "load, start" in run.stdout and "ready after kill -9" in run.stdout
    assert out.with_suffix(".png").stat().st_size > 10_000


def _results(shim: dict, peers: dict[str, dict], rounds: int, launches_busy: float = 0.0) -> dict:
    """Made-up results: ``{phase: [value per round]}`` for kafka-shim and each peer, rates as
    records/s (1,000 records), RSS in MB, Metadata p50 in ms, ready in s."""
    def recs(phase: str, values: list) -> list[dict]:
        out = []
        for k, v in enumerate(values):
            if v is None:
                out.append({"status": "failed", "rep": k, "error": "boom"})
            elif phase.startswith("produce_"):
                rate, cpu = v if isinstance(v, tuple) else (v, None)
                out.append({"status": "ok", "rep": k, "records": 1000, "seconds": 1000 / rate,
                            **({} if cpu is None else {"broker_cpu_s": round(cpu, 2), "broker_oncpu_s": cpu})})
            elif phase.startswith("scale_topic_"):
                out.append({"status": "ok", "rep": k, "rss_after_bytes": v * 1e6})
            elif phase.startswith("scale_metadata_"):
                out.append({"status": "ok", "rep": k, "p50_ms": v, "max_ms": 2 * v})
            else:
                out.append({"status": "ok", "rep": k, "ready_s": v, "active_segment_bytes": 10**7,
                            "log_bytes_on_disk": 10**9})
        return out

    def system(label: str, phases: dict, persistent: bool) -> dict:
        return {"label": label, "version": "test", "persistent": persistent,
                "launches": [{"group": "dw-produce-1p", "rep": k, "ready_s": 0.2, "machine_busy_before": launches_busy}
                             for k in range(rounds)],
                "phases": {n: recs(n, v) for n, v in phases.items()}}

    systems = {"kafka-shim": system("kafka-shim", shim, True)}
    systems.update({k: system({"tansu": "Tansu"}.get(k, k), v, False) for k, v in peers.items()})
    return {"started_at": "2026-01-01T00:00:00+00:00", "machine": {"cpu_model": "test", "cpu_count": 2,
                                                                   "cpus_usable": 2, "mem_total_bytes": 2**30,
                                                                   "os": "test", "kernel": "0", "python": "3",
                                                                   "confluent_kafka": "0", "librdkafka": "0"},
            "load": [{"label": "start", "at": "t", "loadavg": [0.1, 0.1, 0.1], "busy": 0.02, "steal": 0.0,
                      "cores_busy": 0.04, "others_cores": 0.0, "top": []}],
            "settings": {"records": 1000, "smoke": False,
                         "done_when": {"rounds": rounds, "clients": ["python"], "partitions": 10_000,
                                       "spread_partitions": 1000, "log_gb": [1.0, 10.0], "tail_records": 10,
                                       "metadata_samples": 20}},
            "systems": systems}


def test_ratios_are_taken_pair_by_pair_and_the_spread_is_kafka_shims_own():
    from bench import done_when_report as r

    shim = {"produce_1p": [100, 200, 300], "produce_1000p": [60, 90, 90], "scale_topic_10000p": [90, 95, 100],
            "scale_metadata_10000p": [10, 20, 60], "ready_kill9_1gb": [0.5, 0.5, 1.0],
            "ready_kill9_10gb": [0.6, 0.5, 1.0]}
    results = _results(shim, {"noida-db": {"produce_1p": [100, 100, 100]},
                              "tansu": {"produce_1p": [40, 200, None]}}, rounds=3)
    v = {x["criterion"]: x for x in r.verdicts(results)}
    noida = v["produce 1p, Python producer: kafka-shim / noida-db"]
    assert (noida["value"], noida["min"], noida["max"], noida["met"]) == (2.0, 1.0, 3.0, True)
    # the failed third Tansu run leaves two pairs, 2.5x and 1x: median 1.75x, not the ratio of medians
    tansu = v["produce 1p, Python producer: kafka-shim / Tansu"]
    assert tansu["value"] == pytest.approx(1.75) and tansu["n"] == 2 and tansu["met"] is False
    spread = v["produce 1p, Python producer: kafka-shim's max / min over 3 runs"]
    assert spread["value"] == pytest.approx(3.0) and spread["met"] is False
    assert v["idle RSS with 10,000 partitions (MB)"]["value"] == pytest.approx(95) and \
        v["idle RSS with 10,000 partitions (MB)"]["met"] is True
    assert v["Metadata of every topic with 10,000 partitions, p50 (ms)"]["value"] == 20
    # 0.6, 0.45, 0.3 pair by pair
    assert v["produce 1,000p / 1p, Python producer"]["value"] == pytest.approx(0.45)
    assert v["produce 1,000p / 1p, Python producer"]["met"] is False
    assert v["ready after kill -9 with 10 GB of log (s)"]["met"] is True
    assert v["ready after kill -9, 10 GB / 1 GB of log"]["value"] == pytest.approx(1.0)
    text = r.render({**results, "verdicts": list(v.values())})
    assert "| 1 | 100/s (0 MiB/s) | 100/s (0 MiB/s) | 40/s (0 MiB/s) | 1.00x | 2.50x | — | 0% |" in text
    assert "| 3 | 300/s (0 MiB/s) | 100/s (0 MiB/s) | FAILED | 3.00x | — | — | 0% |" in text
    assert "Tansu produce_1p #3: boom" in text
    assert "BUSY" not in text


def test_the_broker_cpu_of_each_run_is_shown_with_its_spread_next_to_the_throughputs():
    from bench import done_when_report as r

    # run 3 twice as fast for the same CPU: a spread of throughput that is not the broker's work
    results = _results({"produce_1p": [(100, 0.1004), (110, 0.1103), (200, 0.1051)]},
                       {"noida-db": {"produce_1p": [100, 100, 100]}}, rounds=3)
    text = r.render(results)
    assert "| 1 | 100/s (0 MiB/s) | 100/s (0 MiB/s) | 1.00x | 0.100 s | 0% |" in text
    assert "| 3 | 200/s (0 MiB/s) | 100/s (0 MiB/s) | 2.00x | 0.105 s | 0% |" in text
    assert "| max / min | 2.00 | 1.00 |  | 1.10 | |" in text
    # the CPU to the nanosecond where a run has it, not the ticks (0.11 / 0.10 would say 1.10 too)
    line = r.spread_line(results, "python")
    assert "throughput 2.00, broker CPU per run 1.10 (median 0.105 s" in line
    assert line in text and line in r.readme_block(results)
    ticks_only = _results({"produce_1p": [100, 200]}, {}, rounds=2)
    for rec, cpu in zip(ticks_only["systems"]["kafka-shim"]["phases"]["produce_1p"], (0.12, 0.10)):
        rec["broker_cpu_s"] = cpu
    assert "broker CPU per run 1.20 (median 0.110 s" in r.spread_line(ticks_only, "python")
    # a results file from before the CPU was recorded still renders
    assert "broker CPU per run — (median —" in r.spread_line(_results({"produce_1p": [100, 200]}, {}, rounds=2),
                                                             "python")


def test_the_broker_cpu_is_read_to_better_than_a_clock_tick():
    import time

    from bench.procs import cpu_seconds, oncpu_seconds

    proc = subprocess.Popen([sys.executable, "-c", "x = 0\nwhile True: x += 1"])
    try:
        deadline = time.monotonic() + 60
        readings = [oncpu_seconds(proc.pid)]
        while (len(set(readings)) < 4 or readings[-1] < 0.05) and time.monotonic() < deadline:
            readings.append(oncpu_seconds(proc.pid))  # until the spinner has run a while, between readings too
        ticks, after = cpu_seconds(proc.pid), oncpu_seconds(proc.pid)
    finally:
        proc.kill()
        proc.wait()
    assert readings == sorted(readings) and after >= readings[-1] >= 0.05
    # clock ticks (/proc/<pid>/stat) move in steps of 10 ms; these readings fall between them
    assert any(abs(r * 100 - round(r * 100)) > 1e-3 for r in set(readings))
    assert abs(after - ticks) < 0.05
    assert oncpu_seconds(proc.pid) is None  # gone: no figure rather than zero


def test_a_busy_machine_says_so():
    from bench import done_when_report as r

    results = _results({"produce_1p": [100]}, {}, rounds=1, launches_busy=0.6)
    was, text = r.busy(results)
    assert was and "median 60%" in text
    assert "THE MACHINE WAS BUSY" in r.render(results)
    quiet = _results({"produce_1p": [100]}, {}, rounds=1, launches_busy=0.05)
    assert not r.busy(quiet)[0]


def test_load_snapshot_counts_other_processes_and_not_the_excluded(tmp_path):
    from bench.machine import describe_load, load_snapshot

    spinner = tmp_path / "dw-spinner"
    spinner.write_text("#!/bin/sh\nwhile :; do :; done\n")
    spinner.chmod(0o755)
    proc = subprocess.Popen([str(spinner)])
    try:
        seen = load_snapshot(0.5)
        hidden = load_snapshot(0.5, exclude={proc.pid})
    finally:
        proc.kill()
        proc.wait()
    assert dict(seen["top"]).get("dw-spinner", 0) > 0
    assert "dw-spinner" not in dict(hidden["top"])
    assert 0 <= hidden["busy"] <= 1 and hidden["others_cores"] >= 0
    assert "other processes visible here" in describe_load(seen, os.cpu_count())


def test_the_readme_block_is_rewritten_from_the_results(tmp_path):
    from bench import done_when_report as r

    results = _results({"produce_1p": [300, 310, 320], "scale_topic_10000p": [90, 95, 100]},
                       {"noida-db": {"produce_1p": [200, 200, 200]}}, rounds=3)
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{r.README_START}\nold figures\n{r.README_END}\nrest\n")
    r.update_readme(results, readme)
    text = readme.read_text()
    assert text.startswith(f"intro\n{r.README_START}\n") and text.endswith(f"{r.README_END}\nrest\n")
    assert "old figures" not in text
    assert "| the Python producer (confluent-kafka) | 310/s (0 MiB/s) | 200/s (0 MiB/s) |" in text
    assert "| produce 1p, Python producer: kafka-shim / noida-db | 1.55x | 1.50–1.60 | >= 1.2x | yes |" in text
    assert "a busy machine" not in text
    readme.write_text("no markers\n")
    with pytest.raises(SystemExit):
        r.update_readme(results, readme)
