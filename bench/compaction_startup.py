"""Start-up time against the number of group offset commits, with and without the log cleaner.

    python -m bench.compaction_startup [commits ...]

For each count: a fresh data directory, that many OffsetCommits (1,000 groups x 10 partitions,
committed in turn, through the group coordinator), a kill -9 (no clean shutdown), then the time a
new node takes to start (replaying __consumer_offsets); once as written and once after the
cleaner has compacted __consumer_offsets. offsets.topic.segment.bytes is 1 MiB so that the
uncleanable active segment stays small (Kafka's default, 100 MiB, holds about a million commits).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

from shim.config import BrokerConfig
from shim.coordinators.group import OffsetAndMetadata
from shim.node import Node
from shim.storage import cleaner_manager as cm

GROUPS, PARTITIONS = 1000, 10
EXTRA = {"offsets.topic.segment.bytes": str(1 << 20)}


def _config(data: Path) -> BrokerConfig:
    return BrokerConfig(data_dir=data, offsets_topic_num_partitions=1, extra=EXTRA)


def _crash(node: Node) -> None:
    for plog in node.logs.logs.values():
        for seg in plog.segments:
            seg.close()


def _startup_s(data: Path) -> float:
    t = time.perf_counter()
    node = Node(_config(data))
    elapsed = time.perf_counter() - t
    _crash(node)
    return elapsed


def _commit(data: Path, commits: int) -> None:
    node = Node(_config(data))
    node.logs.create_topic("t", PARTITIONS)
    now = int(time.time() * 1000)
    for i in range(commits):
        group, p = (i // PARTITIONS) % GROUPS, i % PARTITIONS
        node.groups.commit_offsets(f"g{group}", "", None, -1, {("t", p): OffsetAndMetadata(i, -1, "", now)}, now)
    _crash(node)


def _compact(data: Path) -> None:
    node = Node(_config(data))
    now = int(time.time() * 1000)
    for plog in node.logs.logs.values():
        ltc = cm.plan(plog, now)
        if cm.should_clean(plog, ltc):
            for _ in cm.clean(plog, ltc, now, cm.CleanerConfig()):
                pass
    _crash(node)


def _size(data: Path) -> int:
    return sum(p.stat().st_size for p in data.glob("__consumer_offsets-*/*.log"))


def run(commits: int) -> tuple[float, int, float, int]:
    data = Path(tempfile.mkdtemp(prefix="kafka-shim-compaction-"))
    try:
        _commit(data, commits)
        before, size_before = _startup_s(data), _size(data)
        _compact(data)
        return before, size_before, _startup_s(data), _size(data)
    finally:
        shutil.rmtree(data, ignore_errors=True)


def main(argv: list[str]) -> None:
    counts = [int(a) for a in argv] or [10_000, 100_000, 1_000_000]
    print(f"{'commits':>10} {'start (s)':>10} {'log (MB)':>9} {'compacted start (s)':>20} {'log (MB)':>9}")
    for n in counts:
        before, size_before, after, size_after = run(n)
        print(f"{n:>10} {before:>10.3f} {size_before / 1e6:>9.1f} {after:>20.3f} {size_after / 1e6:>9.1f}",
              flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
