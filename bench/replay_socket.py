"""A recorded producer's requests sent again over TCP into fresh broker processes, the broker's CPU counted.

``python -m bench.replay_socket REC --passes 5 --window 1 [--pythonpath-b DIR]`` takes a stream
``python -m bench.replay record`` wrote and, once per pass, starts ``kafka-shim serve`` over a
fresh data directory, creates the recorded topics, and sends the requests on one connection
with at most ``--window`` unanswered, reading every answer. It prints the broker's CPU (its
process CPU clock, read around the requests) for each pass. With ``--pythonpath-b`` the passes
alternate between this checkout and another one, A, B, A, B, ... (``--abba``: A, B, B, A, ...,
so a pair's first pass is A as often as B), and the summary puts each A pass against its pair's
B: on a machine others keep busy, two identical checkouts paired this way differed by 0.72x to
1.69x pair by pair, so only the median of many pairs says which is cheaper.

Unlike ``bench.replay run`` (no socket, the broker's connection fed in process) this keeps the
kernel's part: the copies out of the socket and into the page cache, whose cost depends on where
the bytes land. The same bytes every pass, so what differs between passes is the broker process
and the timing, not the input: ``--window 1`` answers each request before the next is sent (the
broker always caught up, as on an idle machine), a larger window lets requests queue.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import socket
import struct
import sys
import time
from pathlib import Path

from .procs import oncpu_seconds
from .replay import load
from .suite import create_topic
from .systems import KafkaShim, launch


class _Tree(KafkaShim):
    """kafka-shim as found in ``root`` (its shim/ and codecs/), whatever the working directory."""

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root

    def command(self, port, data_dir):
        cmd = super().command(port, data_dir)
        paths = os.pathsep.join((str(self.root), str(self.root / "codecs")))
        return ["env", f"PYTHONPATH={paths}", cmd[0], "-P", *cmd[1:]]  # -P: not the directory it runs in


def _exactly(sock: socket.socket, n: int) -> bytes:
    buf = bytearray(n)
    view, got = memoryview(buf), 0
    while got < n:
        k = sock.recv_into(view[got:])
        if not k:
            raise ConnectionError(f"the broker closed the connection after {got} of {n} bytes")
        got += k
    return bytes(buf)


def _answer(sock: socket.socket) -> int:
    """Reads one answer; returns 1."""
    (size,) = struct.unpack(">i", _exactly(sock, 4))
    _exactly(sock, size)
    if size < 4:
        raise ConnectionError(f"an answer of {size} bytes, without a correlation id")
    return 1


def frames(stream: bytes) -> list[bytes]:
    out, p = [], 0
    while p + 4 <= len(stream):
        (n,) = struct.unpack_from(">i", stream, p)
        out.append(stream[p : p + 4 + n])
        p += 4 + n
    return out


def socket_pass(path: Path, window: int, root: Path) -> dict:
    """One fresh broker from ``root``; the recorded requests into it, ``window`` at most unanswered."""
    header, stream = load(path)
    requests = frames(stream)
    run = launch(_Tree(root))
    try:
        for name, n in header["topics"]:
            create_topic(run.bootstrap, name, n)
        with socket.create_connection(("127.0.0.1", run.port)) as sock:
            cpu0, t0, sent, answered = oncpu_seconds(run.pid), time.perf_counter(), 0, 0
            for request in requests:
                sock.sendall(request)
                sent += 1
                if sent - answered >= window:
                    answered += _answer(sock)
            while answered < sent:
                answered += _answer(sock)
            cpu, wall = oncpu_seconds(run.pid) - cpu0, time.perf_counter() - t0
        return {"requests": len(requests), "answers": answered, "cpu_s": cpu, "wall_s": wall}
    finally:
        run.kill9()
        run.stop()


def pairs_summary(a: list[float], b: list[float]) -> str:
    """The broker CPU of A against B, pair by pair: the median and range of A/B, and how often A was lower."""
    ratios = [x / y for x, y in zip(a, b)]
    return (f"A/B pair by pair: median {statistics.median(ratios):.3f}, range {min(ratios):.3f}-{max(ratios):.3f}, "
            f"A lower in {sum(r < 1 for r in ratios)} of {len(ratios)}; A median {statistics.median(a):.4f} s "
            f"({min(a):.4f}-{max(a):.4f}), B median {statistics.median(b):.4f} s ({min(b):.4f}-{max(b):.4f})")


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.replay_socket", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("stream", type=Path)
    p.add_argument("--passes", type=int, default=5)
    p.add_argument("--window", type=int, default=1, help="requests sent before their answers are read")
    p.add_argument("--pythonpath-b", type=Path, default=None, help="alternate passes with this checkout")
    p.add_argument("--abba", action="store_true", help="with --pythonpath-b: every other pair runs B first")
    args = p.parse_args(argv)
    trees = [("A", Path(__file__).resolve().parents[1])]
    if args.pythonpath_b:
        trees.append(("B", args.pythonpath_b.resolve()))
    cpu: dict[str, list[float]] = {"A": [], "B": []}
    for k in range(args.passes):
        for label, root in (trees[::-1] if args.abba and k % 2 else trees):
            res = socket_pass(args.stream, args.window, root)
            cpu[label].append(res["cpu_s"])
            print(f"pass {k + 1} {label}: {res['requests']} requests, broker CPU {res['cpu_s']:.4f} s, "
                  f"{res['wall_s']:.3f} s", flush=True)
            print(json.dumps({"pass": k + 1, "tree": label, **res}), file=sys.stderr)
    if args.pythonpath_b:
        print(pairs_summary(cpu["A"], cpu["B"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
