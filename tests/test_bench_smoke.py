"""`python -m bench --smoke`: the benchmark's every phase still runs against kafka-shim.

A tiny run (5,000 records, kafka-shim only, about 25 s) that checks the harness, not speed: each
phase ends "ok" with the records it was given, the JSON has the table's inputs, and the exit
status is 0. Nothing here times anything.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("confluent_kafka")

ROOT = Path(__file__).resolve().parents[1]
RECORDS = 5_000


def _java_missing() -> str | None:
    """Why JProduce cannot run here (the text its phases fail with), or None."""
    from compat.javarun import JavaUnavailable, find_jars, find_tools

    try:
        find_tools()
        find_jars()
    except JavaUnavailable as e:
        return str(e)
    return None


def _excused() -> dict[str, str]:
    """Phase name suffix -> why those phases may fail here: without kcat the kcat reads fail,
    without a C compiler the rdconsume reads do, without a JDK or the Java client's jars the
    JProduce phases do, and say why; everything else must pass."""
    excused = {}
    if not (shutil.which("kcat") or shutil.which("kafkacat")):
        excused["_kcat"] = "kcat is not on PATH"
    if not (shutil.which("cc") or shutil.which("gcc")):
        excused["_c"] = "no C compiler"
    java_missing = _java_missing()
    if java_missing:
        excused["_j"] = java_missing
    return excused


def test_bench_smoke_run(tmp_path):
    out = tmp_path / "smoke.json"
    run = subprocess.run([sys.executable, "-m", "bench", "--smoke", "-q", "--out", str(out)],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.exists(), f"no results written (exit {run.returncode}): {run.stderr[-2000:]}"
    data = json.loads(out.read_text())
    shim = data["systems"]["kafka-shim"]
    phases = shim["phases"]
    # the scale group has its own sizes and its own toy run below; a smoke leaves it out
    assert phases and not [name for name in phases if name.startswith("scale_")]
    failed = {name: [r.get("error") for r in runs if r["status"] != "ok"] for name, runs in phases.items()}
    failed = {name: errors for name, errors in failed.items() if errors}
    excused = _excused()
    for suffix, reason in excused.items():
        gone = {name: errors for name, errors in failed.items() if name.endswith(suffix)}
        assert gone and all(reason in e for errors in gone.values() for e in errors), failed
        failed = {name: errors for name, errors in failed.items() if name not in gone}
    assert not failed, failed
    assert excused or run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]

    c_produce = ("produce_1p_c", "produce_1p_idempotent_c", "produce_1p_txn_c")
    j_produce = ("produce_1p_j", "produce_1p_idempotent_j", "produce_1p_txn_j")
    assert {"produce_1p", "produce_8p", "produce_1p_idempotent", "produce_1p_txn", "consume_plain_ru",
            "consume_plain_rc", "consume_txn_ru", "consume_txn_rc", "e2e_latency", "endtxn_latency",
            "growth_1x", "growth_2x", *c_produce, *j_produce} <= set(phases)
    reads = ("consume_plain_ru", "consume_plain_rc", "consume_txn_ru", "consume_txn_rc")
    ran = ("produce_1p", "produce_8p", "produce_1p_idempotent", "produce_1p_txn", *reads,
           *(f"{name}{suffix}" for name in reads for suffix in ("_kcat", "_c") if suffix not in excused),
           *(c_produce if "_c" not in excused else ()), *(j_produce if "_j" not in excused else ()))
    for name in ran:
        (r,) = phases[name]
        assert r["records"] == RECORDS and r["seconds"] > 0, (name, r)
    for suffix in ("", *(s for s in ("_c", "_j") if s not in excused)):
        (txn,) = phases[f"produce_1p_txn{suffix}"]
        assert txn["transactions"] >= 1, txn
        assert 0 < txn["commit_flush_seconds"] <= txn["commit_seconds"] < txn["seconds"], txn
    # every produce phase on an instance of its own
    assert {launch["group"] for launch in shim["launches"]} >= {
        "throughput", "throughput-8p", "throughput-idempotent", "throughput-txn", "latency", "growth",
        "cproduce-plain", "cproduce-idempotent", "cproduce-txn", "jproduce-plain", "jproduce-idempotent",
        "jproduce-txn"}
    assert shim["launches"] and all(launch["ready_s"] > 0 for launch in shim["launches"])
    assert data["settings"]["smoke"] is True and data["settings"]["records"] == RECORDS
    assert data["settings"]["settle_s"] == 0.2  # a smoke reads RSS soon after a start: it times nothing


class _RecordingGroup:
    """Stands in for bench.suite.Group: notes each instance and phase instead of running it."""

    order: list[str] = []

    def __init__(self, name, system, settings, result, rep=0) -> None:
        self.order.append(f"[{name}]")

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass

    def phase(self, name, fn, needs=()) -> None:
        self.order.append(name)


@pytest.mark.parametrize("rep", range(4))
def test_throughput_order_rotates_with_the_repetition(monkeypatch, rep):
    from bench import suite

    _RecordingGroup.order = []
    monkeypatch.setattr(suite, "Group", _RecordingGroup)
    suite.throughput_group(None, None, {}, rep)
    order = _RecordingGroup.order
    instances = [o for o in order if o.startswith("[")]
    base = ["[throughput]", "[throughput-8p]", "[throughput-idempotent]", "[throughput-txn]"]
    assert instances == base[rep:] + base[:rep]
    # every phase once, whatever the order
    assert len(order) == len(set(order)) == 4 + 1 + 1 + 1 + 1 + 12
    first, second = ("consume_txn_rc_c", "consume_txn_ru_c") if rep % 2 else ("consume_txn_ru_c", "consume_txn_rc_c")
    assert order.index(first) < order.index(second)
    assert order.index("produce_1p_txn") < order.index("consume_txn_ru")


@pytest.mark.parametrize("rep", range(3))
@pytest.mark.parametrize("group, prefix, suffix", [("cproduce_group", "cproduce", "_c"),
                                                   ("jproduce_group", "jproduce", "_j")])
def test_client_producer_instances_rotate_with_the_repetition(monkeypatch, rep, group, prefix, suffix):
    from bench import suite

    _RecordingGroup.order = []
    monkeypatch.setattr(suite, "Group", _RecordingGroup)
    getattr(suite, group)(None, None, {}, rep)
    base = [[f"[{prefix}-plain]", f"produce_1p{suffix}"], [f"[{prefix}-idempotent]", f"produce_1p_idempotent{suffix}"],
            [f"[{prefix}-txn]", f"produce_1p_txn{suffix}"]]
    assert _RecordingGroup.order == [x for pair in base[rep:] + base[:rep] for x in pair]


def test_java_producer_settings_say_what_each_kind_is():
    """The Java client is idempotent unless told otherwise: its plain producer must say so, or the
    plain / transactional ratio would compare two idempotent producers."""
    from bench.workloads import java_producer_config

    plain, idem, txn = (java_producer_config(20_000, k) for k in ("plain", "idempotent", "txn"))
    assert plain["enable.idempotence"] == "false" and "transactional.id" not in plain
    assert idem["enable.idempotence"] == "true" and "transactional.id" not in idem
    assert txn["enable.idempotence"] == "true" and txn["transactional.id"].startswith("bench-")
    assert plain["buffer.memory"] >= 20_000 * 1024 and plain["batch.size"] == 1_000_000
    assert {k: v for k, v in plain.items() if k != "enable.idempotence"} == {
        k: v for k, v in idem.items() if k != "enable.idempotence"}


def _shim_results(plain: str, txn: str, plain_rates: tuple, txn_rates: tuple) -> dict:
    """Results of a run in which only kafka-shim ran, and only the phases ``plain`` and ``txn``
    (one repetition per rate; the client used 1.5 cores throughout)."""
    from bench import report

    def rec(rep, rate, **extra):
        return {"status": "ok", "rep": rep, "records": 1000, "seconds": 1000 / rate, "broker_cpu_s": 0.001,
                "client_cpu_s": 1.5 * 1000 / rate, **extra}

    commits = {"transactions": 2, "commit_seconds": 0.002, "commit_flush_seconds": 0.001, "commit_queued_records": 50}
    shim = {"label": "kafka-shim", "version": "test", "launches": [{"ready_s": 0.2, "listen_s": 0.1, "idle_rss_bytes": 28e6}],
            "phases": {plain: [rec(k, r) for k, r in enumerate(plain_rates)],
                       txn: [rec(k, r, **commits) for k, r in enumerate(txn_rates)]}}
    shim["summary"] = report.summary(shim)
    return {"settings": {"records": 1000, "commit_interval_ms": 100, "latency_rate": 2000, "latency_seconds": 5,
                         "records_per_txn": 5}, "systems": {"kafka-shim": shim}}


def test_the_table_leaves_out_what_was_not_run():
    from bench import report

    results = _shim_results("produce_1p_c", "produce_1p_txn_c", (500_000, 600_000), (450_000, 480_000))
    table, notes = report.table(results)
    assert "produce with rdproduce (librdkafka from C): 1 partition | 550,000/s" in table
    assert "transactional (commit every 100 ms) | 465,000/s" in table
    assert "| produce, 1 partition |" not in table and "consume" not in table and "latency" not in table
    assert "| ... 1 partition, idempotent |" not in table
    assert not notes
    ratios = {r["ratio"]: r for r in report.ratios(results)}
    txn = ratios["kafka-shim transactional / plain produce 1p, rdproduce"]
    assert txn["value"] == pytest.approx((0.9 + 0.8) / 2) and txn["met"] is False
    assert "kafka-shim transactional / plain produce 1p" not in ratios
    assert not [r for r in ratios if "broker CPU per record" in r]  # their phases did not run


def test_java_producer_rows_and_ratios_have_no_targets():
    from bench import report

    results = _shim_results("produce_1p_j", "produce_1p_txn_j", (200_000, 220_000), (180_000, 220_000))
    table, notes = report.table(results)
    assert "| produce with JProduce (Apache Kafka's Java producer): 1 partition | 210,000/s" in table
    assert "| ... client CPU cores, plain / transactional | 1.50 / 1.50 |" in table
    assert "| ... transactional: share of the time in commits; flush / EndTxn per commit; records unacknowledged " \
           "at a commit | " in table
    assert "rdproduce" not in table and not notes
    ratios = {r["ratio"]: r for r in report.ratios(results)}
    txn = ratios["kafka-shim transactional / plain produce 1p, JProduce"]
    assert txn["value"] == pytest.approx((0.9 + 1.0) / 2) and txn["target"] is None and txn["met"] is None


@pytest.mark.skipif(not (shutil.which("cc") or shutil.which("gcc")), reason="rdproduce/rdconsume need a C compiler")
def test_bench_scale_group_runs(tmp_path):
    """The scale group at toy sizes: every step runs, the table and the curves come out."""
    out = tmp_path / "scale.json"
    run = subprocess.run([sys.executable, "-m", "bench", "--systems", "kafka-shim", "--groups", "scale", "-q",
                          "--records", "3000", "--repeat", "1", "--scale-partitions", "1,10", "--scale-clients", "1,3",
                          "--scale-log-gb", "0.003", "--scale-connections", "20", "--scale-open-txns", "20",
                          "--scale-latency-seconds", "0.5", "--settle", "0.2", "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.exists(), f"no results written (exit {run.returncode}): {run.stderr[-2000:]}"
    phases = json.loads(out.read_text())["systems"]["kafka-shim"]["phases"]
    failed = {n: [r.get("error") for r in runs if r["status"] != "ok"] for n, runs in phases.items()}
    assert not {n: e for n, e in failed.items() if e}, failed
    expected = {f"scale_{k}_{n}p" for k in ("topic", "metadata", "produce", "consume", "latency") for n in (1, 10)}
    expected |= {f"scale_{k}_{n}c" for k in ("producers", "consumers") for n in (1, 3)}
    expected |= {"scale_mem_connections", "scale_mem_open_txns", "scale_ready_clean_0.003gb", "scale_ready_kill9_10p"}
    assert expected <= set(phases)
    held = phases["scale_mem_open_txns"][0]
    assert held["count"] == 20 and held["rss_during_bytes"] > 0
    assert run.returncode == 0 and "memory per connection" in run.stdout
    assert out.with_suffix(".png").stat().st_size > 10_000
