"""`python -m bench.replay`: a producer's requests recorded as the broker received them, then fed
again into an in-process broker whose CPU is counted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("confluent_kafka")

ROOT = Path(__file__).resolve().parents[1]


def test_a_recorded_produce_is_replayed_request_for_request(tmp_path):
    from bench.replay import best_of, frames_of, load, replay_pass

    out = tmp_path / "1p.rec"
    run = subprocess.run([sys.executable, "-m", "bench.replay", "record", str(out), "--records", "3000",
                          "--client", "python"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    header, stream = load(out)
    assert header == {**json.loads(run.stdout.strip().splitlines()[-1])}
    sizes = frames_of(stream)
    # the producer's connection: its metadata and warm-up, then 3 MB of records in Produce requests
    assert len(sizes) == header["requests"] and sum(4 + n for n in sizes) == len(stream) == header["bytes"]
    assert len(stream) > 3000 * 1024
    result = replay_pass(out, 64 * 1024)
    assert result["answers"] == result["requests"] == len(sizes)
    assert result["records_in_log"] == {"replay-1p": 3000, "replay-1p-warmup": 1}
    assert result["cpu_s"] > 0
    framing = best_of(out, 64 * 1024, 2, framing=True)  # the frame decoder alone
    assert framing["answers"] == len(sizes) and len(framing["cpu_s_all"]) == 2  # every frame decoded


def test_a_recorded_produce_is_sent_again_over_a_socket_into_a_fresh_broker(tmp_path):
    """bench.replay_socket: the same requests, one connection, every answer read, the broker
    started from the checkout named (here this one)."""
    from bench.replay import frames_of, load
    from bench.replay_socket import socket_pass

    out = tmp_path / "1p.rec"
    run = subprocess.run([sys.executable, "-m", "bench.replay", "record", str(out), "--records", "2000"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    requests = len(frames_of(load(out)[1]))
    for window in (1, 4):
        result = socket_pass(out, window, ROOT)
        assert result["answers"] == result["requests"] == requests
        assert result["cpu_s"] > 0


def test_the_pairs_summary_puts_each_a_pass_against_its_own_b():
    from bench.replay_socket import pairs_summary

    # pair by pair 0.5, 1.5 and 0.9, whatever the passes of other pairs were
    line = pairs_summary([0.2, 0.6, 0.27], [0.4, 0.4, 0.3])
    assert line.startswith("A/B pair by pair: median 0.900, range 0.500-1.500, A lower in 2 of 3;")
    assert "A median 0.2700 s (0.2000-0.6000), B median 0.4000 s (0.3000-0.4000)" in line
