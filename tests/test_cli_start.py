"""What a kafka-shim process imports before it serves."""

from __future__ import annotations

import subprocess
import sys


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
