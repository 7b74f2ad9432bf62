"""`python -m bench.bound`: every run ends ok against kafka-shim and the null broker, each producer
reports its threads' CPU over its window, and the ceilings are read from those figures. A toy run
(2,000 records); nothing here times anything."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("confluent_kafka")

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(not (shutil.which("cc") or shutil.which("gcc")), reason="rdproduce needs a C compiler")
def test_a_toy_run_reports_every_producers_threads_against_kafka_shim_and_the_null_broker(tmp_path):
    out = tmp_path / "bound.json"
    run = subprocess.run([sys.executable, "-m", "bench.bound", "--systems", "kafka-shim,null", "--repeat", "1",
                          "--records", "2000", "--out", str(out)],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    data = json.loads(out.read_text())
    for key in ("kafka-shim", "null"):
        phases = data["systems"][key]["phases"]
        assert sorted(phases) == ["produce_1000p", "produce_1000p_c", "produce_1p", "produce_1p_c"]
        for name, (rec,) in phases.items():
            assert rec["status"] == "ok", (key, name, rec.get("error"))
            assert rec["records"] == 2000
            names = {t["name"] for t in rec["client_threads"]}
            # librdkafka's broker thread for the broker's node (1 for the null broker)
            assert any(n.startswith("rdk:broker") and n[-1].isdigit() for n in names), names
            # each thread's CPU is over the timed window: together no more than the process's
            total = sum(t["cpu_s"] for t in rec["client_threads"])
            assert 0 < total <= rec["client_cpu_s"] + 0.02, (key, name, total, rec["client_cpu_s"])
            assert rec["broker_threads_max_s"] > 0
    table = run.stdout
    assert "| null | produce_1000p_c | 1 |" in table and "| kafka-shim | produce_1p | 1 |" in table


def test_ceilings_come_from_the_busiest_thread_and_the_cores():
    from bench.bound import ceilings

    run = {"records": 100_000, "seconds": 0.5, "client_cpu_s": 0.3, "broker_oncpu_s": 0.2, "broker_cpu_s": 0.2,
           "broker_threads_max_s": 0.15,
           "client_threads": [{"name": "python", "cpu_s": 0.1}, {"name": "rdk:broker1", "cpu_s": 0.16}]}
    c = ceilings(run, cores=2)
    assert c["thread"] == "rdk:broker1"
    assert c["client_thread_ceiling"] == pytest.approx(100_000 / 0.16)
    assert c["client_ceiling"] == pytest.approx(100_000 / 0.16)  # 0.3 s over two cores is less than one thread's
    assert c["machine_ceiling"] == pytest.approx(100_000 / 0.25)  # (0.3 + 0.2) / 2
    assert c["rate"] == pytest.approx(200_000)
    one_core = ceilings(run, cores=1)
    assert one_core["client_ceiling"] == pytest.approx(100_000 / 0.3)
