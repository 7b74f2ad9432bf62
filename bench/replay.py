"""Record a producer's requests once, then replay them into an in-process broker and count its CPU.

``python -m bench.replay record OUT --partitions 1 --records 100000 [--client c|python]`` runs a
broker in this process, drives it with rdproduce (or the Python producer) as the benchmark does,
and writes to OUT the bytes the producer's connection sent, as received, with the topics it wrote
to.

``python -m bench.replay run OUT [OUT_B] --passes 5`` feeds those bytes, a read of ``--read-bytes``
at a time as a busy socket delivers them, into a broker's connection (shim.connection.Connection
with a transport that counts the answers), over a fresh data directory each pass, and prints the
CPU (user+system of this process) and the CPU per request of each pass. No sockets and no
client: what is measured is the broker's own work, framing, dispatch, append and the answers, so
two versions of it can be compared pass by pass on a machine that other work keeps busy, where
the wall clock of a real run says little. Each pass counts the best of ``--inner`` replays in one
process. With ``--pythonpath-b DIR`` every pass runs in a child process alternately on this tree
and on ``DIR`` (another checkout), A, B, A, B, ... With ``--framing`` only the connection's frame
decoder runs (:func:`framing_pass`).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MAGIC = b"kafka-shim replay 1\n"


def record(out: Path, partitions: int, records: int, client: str) -> dict:
    from shim.broker import BrokerThread
    from shim.connection import Connection

    from . import runner
    from .suite import Settings, create_topic

    streams: dict[int, bytearray] = {}
    get_buffer, buffer_updated = Connection.get_buffer, Connection.buffer_updated

    def recording_get_buffer(self, sizehint):
        self._recorded_view = get_buffer(self, sizehint)
        return self._recorded_view

    def recording_buffer_updated(self, nbytes):
        streams.setdefault(id(self), bytearray()).extend(self._recorded_view[:nbytes])
        return buffer_updated(self, nbytes)

    Connection.get_buffer, Connection.buffer_updated = recording_get_buffer, recording_buffer_updated
    topic = f"replay-{partitions}p"
    try:
        with tempfile.TemporaryDirectory() as tmp, BrokerThread(data_dir=Path(tmp) / "data",
                                                                listen="127.0.0.1:0") as broker:
            create_topic(broker.bootstrap_servers, topic, partitions)
            create_topic(broker.bootstrap_servers, f"{topic}-warmup", 1)
            streams.clear()  # the admin client's connections
            name = "produce_c" if client == "c" else "produce"
            result = runner.run(name, 300, bootstrap=broker.bootstrap_servers, topic=topic, partitions=partitions,
                                records=records, queue_messages=Settings().queue_messages,
                                warmup_topic=f"{topic}-warmup")
    finally:
        Connection.get_buffer, Connection.buffer_updated = get_buffer, buffer_updated
    stream = max(streams.values(), key=len)
    header = {"topics": [[topic, partitions], [f"{topic}-warmup", 1]], "client": client, "records": records,
              "requests": len(frames_of(stream)), "bytes": len(stream), "recorded_run": result}
    out.write_bytes(MAGIC + json.dumps(header).encode() + b"\n" + stream)
    return header


def load(path: Path) -> tuple[dict, bytes]:
    data = path.read_bytes()
    if not data.startswith(MAGIC):
        raise SystemExit(f"{path}: not a recorded stream")
    line_end = data.index(b"\n", len(MAGIC))
    return json.loads(data[len(MAGIC):line_end]), data[line_end + 1:]


def frames_of(stream) -> list[int]:
    """The sizes of the length-prefixed frames in ``stream``."""
    sizes, p = [], 0
    while p + 4 <= len(stream):
        (n,) = struct.unpack_from(">i", stream, p)
        sizes.append(n)
        p += 4 + n
    return sizes


class _Sink(asyncio.Transport):
    """A transport that keeps nothing: it counts the answers' frames as they are written."""

    def __init__(self, done: asyncio.Future, expected: int) -> None:
        super().__init__()
        self._left = 0  # bytes of the current answer still to come
        self._head = b""
        self.answers = 0
        self._done, self._expected = done, expected
        self.paused = False
        self.closed = False

    def get_extra_info(self, name, default=None):
        return ("127.0.0.1", 1) if name == "peername" else default

    def write(self, data) -> None:
        view, p = memoryview(data), 0
        while p < len(view):
            if self._left:
                step = min(self._left, len(view) - p)
                self._left -= step
                p += step
                if not self._left:
                    self._answered()
                continue
            need = 4 - len(self._head)
            self._head += bytes(view[p:p + need])
            p += need
            if len(self._head) == 4:
                (self._left,) = struct.unpack(">i", self._head)
                self._head = b""
                if not self._left:
                    self._answered()

    def _answered(self) -> None:
        self.answers += 1
        if self.answers == self._expected and not self._done.done():
            self._done.set_result(None)

    def writelines(self, parts) -> None:
        for part in parts:
            self.write(part)

    def is_closing(self) -> bool:
        return self.closed

    def get_write_buffer_size(self) -> int:
        return 0

    def pause_reading(self) -> None:
        self.paused = True

    def resume_reading(self) -> None:
        self.paused = False

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.closed = True


async def _one_pass(stream: bytes, topics: list, read_bytes: int, data_dir: Path) -> dict:
    from shim.broker import Broker
    from shim.connection import Connection

    broker = await Broker(data_dir=data_dir, listen="127.0.0.1:0").start()
    try:
        for name, n in topics:
            await broker.node.logs.create_topic_async(name, n)
        gc.freeze()  # as `shim serve` does once started: the collector leaves start-up's objects alone
        loop = asyncio.get_running_loop()
        expected = len(frames_of(stream))
        done = loop.create_future()
        sink = _Sink(done, expected)
        server = broker._server
        conn = Connection(server, "127.0.0.1", broker.node.listeners[0], broker.node.config.node_id)
        conn.connection_made(sink)
        view, p = memoryview(stream), 0
        cpu0, t0 = time.process_time(), time.perf_counter()
        while p < len(view):
            while sink.paused:  # the connection stopped reading: its requests are answered first
                await asyncio.sleep(0)
            target = conn.get_buffer(-1)
            n = min(len(target), read_bytes, len(view) - p)
            target[:n] = view[p:p + n]  # what the kernel's copy into the buffer does
            del target  # as a socket's read, whose hold on the buffer ends with it
            p += n
            conn.buffer_updated(n)
            await asyncio.sleep(0)  # the loop's turn: the connection's task answers
        await asyncio.wait_for(done, 600)
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - t0
        conn.close()
        logs = broker.node.logs
        offsets = {name: sum(logs.get(name, i).segments[-1].next_offset for i in range(n)) for name, n in topics}
        return {"requests": expected, "answers": sink.answers, "cpu_s": cpu, "wall_s": wall,
                "cpu_us_per_request": 1e6 * cpu / expected, "records_in_log": offsets}
    finally:
        await broker.stop()


def replay_pass(path: Path, read_bytes: int) -> dict:
    from shim.event_loops import loop_factory

    header, stream = load(path)
    with tempfile.TemporaryDirectory() as tmp:
        loop = loop_factory("auto")()
        try:
            return loop.run_until_complete(_one_pass(stream, header["topics"], read_bytes, Path(tmp) / "data"))
        finally:
            loop.close()


def framing_pass(path: Path, read_bytes: int, behind: int = 1) -> dict:
    """The stream through a connection's frame decoder alone (shim.protocol.framing), reads of
    ``read_bytes`` with the socket's copy simulated, each frame dropped ``behind`` frames later,
    as an answering task that far behind would: the CPU of framing without the rest."""
    from shim.protocol.framing import BufferPool, FrameDecoder

    _, stream = load(path)
    view, p, held, decoded = memoryview(stream), 0, [], 0
    decoder = FrameDecoder(1 << 30, BufferPool())
    cpu0 = time.process_time()
    while p < len(view):
        target = decoder.buffer()
        n = min(len(target), read_bytes, len(view) - p)
        target[:n] = view[p:p + n]
        del target
        p += n
        frames = decoder.received(n)
        decoded += len(frames)
        held += frames
        del frames, held[:max(len(held) - behind, 0)]
    cpu = time.process_time() - cpu0
    requests = len(frames_of(stream))
    return {"requests": requests, "answers": decoded, "cpu_s": cpu, "wall_s": cpu,
            "cpu_us_per_request": 1e6 * cpu / requests}


def best_of(path: Path, read_bytes: int, inner: int, framing: bool = False) -> dict:
    """``inner`` passes in this process; the one with the least CPU, with every pass's CPU."""
    one = framing_pass if framing else replay_pass
    runs = [one(path, read_bytes) for _ in range(inner)]
    return {**min(runs, key=lambda r: r["cpu_s"]), "cpu_s_all": [r["cpu_s"] for r in runs]}


def _child_pass(path: Path, read_bytes: int, inner: int, pythonpath: str, framing: bool) -> dict:
    env = {**os.environ, "PYTHONPATH": pythonpath}
    run = subprocess.run([sys.executable, "-m", "bench.replay", "pass", str(path), "--read-bytes", str(read_bytes),
                          "--inner", str(inner)] + (["--framing"] if framing else []),
                         env=env, capture_output=True, text=True, cwd=pythonpath.split(os.pathsep)[0])
    if run.returncode:
        raise SystemExit(f"pass failed under {pythonpath}: {run.stderr[-2000:]}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.replay", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("out", type=Path)
    r.add_argument("--partitions", type=int, default=1)
    r.add_argument("--records", type=int, default=100_000)
    r.add_argument("--client", choices=("c", "python"), default="c")
    for name in ("run", "pass"):
        x = sub.add_parser(name)
        x.add_argument("stream", type=Path)
        x.add_argument("--read-bytes", type=int, default=256 * 1024)
        x.add_argument("--inner", type=int, default=3, help="passes in one process, the best one counted")
        x.add_argument("--framing", action="store_true", help="the frame decoder alone (framing_pass)")
        if name == "run":
            x.add_argument("--passes", type=int, default=5)
            x.add_argument("--pythonpath-b", default=None,
                           help="alternate passes with this checkout (its root and its codecs/), each in a child")
    args = p.parse_args(argv)
    if args.cmd == "record":
        print(json.dumps(record(args.out, args.partitions, args.records, args.client)))
        return 0
    if args.cmd == "pass":
        print(json.dumps(best_of(args.stream, args.read_bytes, args.inner, args.framing)))
        return 0
    here = str(Path(__file__).resolve().parents[1])
    trees = [("A", os.pathsep.join((here, os.path.join(here, "codecs"))))]
    if args.pythonpath_b:
        b = str(Path(args.pythonpath_b).resolve())
        trees.append(("B", os.pathsep.join((b, os.path.join(b, "codecs")))))
    for k in range(args.passes):
        for label, path in trees:
            res = _child_pass(args.stream, args.read_bytes, args.inner, path, args.framing) if args.pythonpath_b \
                else best_of(args.stream, args.read_bytes, args.inner, args.framing)
            print(f"pass {k + 1} {label}: {res['requests']} requests, best of {args.inner}: CPU {res['cpu_s']:.4f} s "
                  f"({res['cpu_us_per_request']:.1f} us a request; all: "
                  f"{', '.join(f'{c:.4f}' for c in res['cpu_s_all'])})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
