"""What one recovery-point checkpoint costs the event loop over many written partitions.

    python -m bench.checkpoint_cost [partitions] [rounds]

A fresh data directory of ``partitions`` (1,000) partitions in 1 GiB segments, each filled with
2 MiB (past the size at which an active segment gets index files) and checkpointed once; then, ``rounds`` (30) times, 64 KiB more
appended to every partition (a 64 MiB checkpoint's share of each, in 4 KiB batches, so each crosses
index.interval.bytes about 16 times) and the checkpoint timed (LogManager.checkpoint_recovery_points,
as the node's timer runs it). Prints the median and the range in microseconds per checkpoint.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from kafka_codecs.batch import parse_header
from kafka_codecs.records import encode_batch

from shim.storage.log_manager import LogManager
from shim.storage.partition_log import LogConfig
from shim.storage.producer_state import Origin

TS = 1_700_000_000_000
PREFILL = 2 << 20


def _batch(size: int) -> bytes:
    return encode_batch([(b"k", b"v" * (size - 80), [], TS)])


def run(partitions: int, rounds: int) -> list[tuple[float, float]]:
    """(wall, CPU) microseconds of each round's checkpoint."""
    with tempfile.TemporaryDirectory(prefix="checkpoint-cost-") as tmp:
        logs = LogManager(Path(tmp), LogConfig())
        try:
            logs.create_topic("t", partitions)
            batch = _batch(4096)
            h = parse_header(batch)
            plogs = [logs.get("t", p) for p in range(partitions)]

            def write(nbytes: int) -> None:
                for plog in plogs:
                    for _ in range(nbytes // len(batch) + 1):
                        plog.append(batch, h, TS, origin=Origin.CLIENT)

            write(PREFILL)
            logs.checkpoint_recovery_points()
            times = []
            for _ in range(rounds):
                write(64 << 10)
                start, cpu = time.perf_counter(), time.process_time()
                logs.checkpoint_recovery_points()
                times.append(((time.perf_counter() - start) * 1e6, (time.process_time() - cpu) * 1e6))
            return times
        finally:
            logs.close()


def main(argv: list[str]) -> None:
    partitions = int(argv[0]) if argv else 1000
    rounds = int(argv[1]) if len(argv) > 1 else 30
    measured = run(partitions, rounds)
    print(f"checkpoint of {partitions} partitions, 64 KiB written to each since the last ({rounds} rounds):")
    for name, times in zip(("wall", "CPU"), zip(*measured)):
        print(f"  {name}: median {statistics.median(times):,.0f} us, mean {statistics.mean(times):,.0f}, "
              f"min {min(times):,.0f}, max {max(times):,.0f}")


if __name__ == "__main__":
    main(sys.argv[1:])
