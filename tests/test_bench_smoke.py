"""`python -m bench --smoke`: the benchmark's every phase still runs against kafka-shim.

A tiny run (20,000 records, kafka-shim only, about 15 s) that checks the harness, not speed: each
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
RECORDS = 20_000


def test_bench_smoke_run(tmp_path):
    out = tmp_path / "smoke.json"
    run = subprocess.run([sys.executable, "-m", "bench", "--smoke", "-q", "--out", str(out)],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.exists(), f"no results written (exit {run.returncode}): {run.stderr[-2000:]}"
    data = json.loads(out.read_text())
    shim = data["systems"]["kafka-shim"]
    phases = shim["phases"]
    kcat = shutil.which("kcat") or shutil.which("kafkacat")
    failed = {name: [r.get("error") for r in runs if r["status"] != "ok"] for name, runs in phases.items()}
    failed = {name: errors for name, errors in failed.items() if errors}
    if kcat:
        assert not failed, failed
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    else:  # the kcat reads fail, and say why; everything else must pass
        assert failed and all(name.endswith("_kcat") for name in failed), failed
        assert all("kcat is not on PATH" in e for errors in failed.values() for e in errors)

    assert {"produce_1p", "produce_8p", "produce_1p_idempotent", "produce_1p_txn", "consume_plain_ru",
            "consume_plain_rc", "consume_txn_ru", "consume_txn_rc", "e2e_latency", "endtxn_latency",
            "growth_1x", "growth_2x"} <= set(phases)
    for name in ("produce_1p", "produce_8p", "produce_1p_idempotent", "produce_1p_txn",
                 "consume_plain_ru", "consume_plain_rc", "consume_txn_ru", "consume_txn_rc"):
        (r,) = phases[name]
        assert r["records"] == RECORDS and r["seconds"] > 0, (name, r)
    (txn,) = phases["produce_1p_txn"]
    assert txn["transactions"] >= 1
    assert shim["launches"] and all(launch["ready_s"] > 0 for launch in shim["launches"])
    assert data["settings"]["smoke"] is True and data["settings"]["records"] == RECORDS
