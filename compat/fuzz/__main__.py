"""``python -m compat.fuzz --duration 1800 --seed 7``: a fuzz run of any length (see run.py).

Prints a JSON summary; the failing cases (with the bytes sent, hex) go to ``--findings`` as JSON
lines, ready to become regression tests. Exits 1 when anything failed. The seed also comes from
KAFKA_SHIM_FUZZ_SEED and the duration from KAFKA_SHIM_FUZZ_SECONDS.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from .run import fuzz
from .flood import flood_fuzz
from .secure import secure_fuzz


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m compat.fuzz")
    parser.add_argument("--duration", type=float, default=float(os.environ.get("KAFKA_SHIM_FUZZ_SECONDS", 60)),
                        help="seconds of fuzzing (default 60)")  # fmt: skip
    parser.add_argument("--seed", type=int, default=int(os.environ.get("KAFKA_SHIM_FUZZ_SEED", 1)))
    parser.add_argument("--workdir", type=Path, default=None, help="keep the data dir and broker.log here")
    parser.add_argument("--findings", type=Path, default=None, help="append failing cases here (JSON lines)")
    parser.add_argument("--rss-limit-mib", type=int, default=400, help="the broker's peak RSS limit")
    parser.add_argument("--secure", action="store_true",
                        help="fuzz the SASL exchange and the TLS listeners instead (secure.py)")
    parser.add_argument("--flood", action="store_true",
                        help="hold hundreds of partial or unread connections and fuzz the control listener (flood.py)")
    args = parser.parse_args(argv)
    run = secure_fuzz if args.secure else flood_fuzz if args.flood else fuzz
    result = run(args.duration, args.seed, args.workdir, args.rss_limit_mib)
    summary = {k: v for k, v in vars(result).items() if k != "findings"}
    print(json.dumps(summary, indent=1))
    if args.findings is not None and result.findings:
        with args.findings.open("a") as out:
            for finding in result.findings:
                out.write(json.dumps({"seed": result.seed, **finding}) + "\n")
    return 1 if result.failures else 0


if __name__ == "__main__":
    sys.exit(main())
