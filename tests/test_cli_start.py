"""What a kafka-shim process imports before it serves."""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_the_command_line_does_not_load_hypothesis_through_kio():
    # kio imports hypothesis.strategies whenever it can; in a test environment that is a quarter
    # of a second of every broker start
    run = subprocess.run([sys.executable, "-X", "importtime", "-m", "shim", "serve", "--help"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and "usage:" in run.stdout
    imported = [line.rsplit("|", 1)[-1].strip() for line in run.stderr.splitlines() if line.startswith("import time:")]
    assert "kio.schema.errors" in imported  # the command line did load kio
    # kio's attempt is refused at once: the one line it leaves is the refused hypothesis.strategies
    assert {name for name in imported if name.startswith("hypothesis")} <= {"hypothesis.strategies"}
    assert "hypothesis.core" not in imported and "hypothesis" not in imported


_FREEZE_PROBE = """
import asyncio, contextlib, gc, io, os, signal, tempfile
from shim import cli

async def main():
    args = cli._parser().parse_args(["serve", "--listen", "127.0.0.1:0", "--data-dir", tempfile.mkdtemp()])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        task = asyncio.create_task(cli.serve(cli.config_from_args(args)))
        while "kafka-shim ready" not in out.getvalue() and not task.done():
            await asyncio.sleep(0.01)
    print("frozen", gc.get_freeze_count(), flush=True)
    os.kill(os.getpid(), signal.SIGTERM)  # the broker's own clean stop
    await task

asyncio.run(main())
"""


def test_a_serving_broker_keeps_its_start_up_objects_out_of_the_collector():
    # a full collection over the start-up heap stalls the loop for tens of milliseconds
    run = subprocess.run([sys.executable, "-c", _FREEZE_PROBE], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    frozen = [int(line.split()[1]) for line in run.stdout.splitlines() if line.startswith("frozen")]
    assert frozen and frozen[0] > 10_000, run.stdout


_STALE_WALK_PROBE = """
import sys, types
import kafka_codecs._walk as built
stale = types.ModuleType("kafka_codecs._walk")  # as a build from a _walk.c before _produce.c
stale.ABI, stale.walk, stale.scan, stale.seek_timestamp = 2, built.walk, built.scan, built.seek_timestamp
sys.modules["kafka_codecs._walk"] = stale
del sys.modules["kafka_codecs"]
for name in [m for m in sys.modules if m.startswith("kafka_codecs.")]:
    if name != "kafka_codecs._walk":
        del sys.modules[name]
""" + _FREEZE_PROBE


def test_a_build_older_than_the_produce_reader_is_named_at_start():
    """A stale kafka_codecs._walk still serves (Python reads the requests) and says so once."""
    run = subprocess.run([sys.executable, "-c", _STALE_WALK_PROBE], capture_output=True, text=True, timeout=120)
    if "No module named 'kafka_codecs._walk'" in run.stderr:
        pytest.skip("kafka_codecs._walk is not built: the other warning's case")
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stderr.count("Produce requests are read and their batch headers checked in Python") == 1
