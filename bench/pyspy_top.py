"""Top functions of a py-spy raw (collapsed stacks) profile.

    python -m bench.pyspy_top PROFILE.txt [--top 20]

Self time is the share of samples in which the function is the innermost frame; inclusive time
the share in which it is anywhere on the stack. py-spy drops idle samples by default, so the
percentages are of the time the broker was busy (on CPU or in a system call).
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

_LINE = re.compile(r":\d+\)$")


def _key(frame: str) -> str:
    return _LINE.sub(")", frame.strip())


def load(path: Path) -> tuple[Counter, Counter, Counter, int]:
    self_c, incl_c, file_c, total = Counter(), Counter(), Counter(), 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        frames = [_key(f) for f in stack.split(";") if f]
        if not frames:
            continue
        total += n
        self_c[frames[-1]] += n
        for f in set(frames):
            incl_c[f] += n
        m = re.search(r"\(([^()]*)\)$", frames[-1])
        file_c[m.group(1) if m else frames[-1]] += n
    return self_c, incl_c, file_c, total


def report(path: Path, top: int = 20) -> str:
    self_c, incl_c, file_c, total = load(path)
    if not total:
        return f"{path}: no samples"
    out = [f"{path.name}: {total} samples", "", "self %  function"]
    out += [f"{100 * n / total:6.1f}  {f}" for f, n in self_c.most_common(top)]
    out += ["", "incl %  function"]
    out += [f"{100 * n / total:6.1f}  {f}" for f, n in incl_c.most_common(top)]
    out += ["", "self %  file"]
    out += [f"{100 * n / total:6.1f}  {f}" for f, n in file_c.most_common(top)]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.pyspy_top", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("profiles", nargs="+", type=Path)
    p.add_argument("--top", type=int, default=20)
    args = p.parse_args(argv)
    print("\n\n".join(report(f, args.top) for f in args.profiles))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
