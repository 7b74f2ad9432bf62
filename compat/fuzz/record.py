"""Record the fuzz corpus: the request frames the stock clients send, kept in corpus.bin.

``python -m compat.fuzz.record`` serves a broker in this process with a hook on the dispatcher
that keeps every request frame, and runs a produce / consume / group / transaction / admin
workload with kafka-python, confluent-kafka (librdkafka), aiokafka and, when the Java jars and a
JDK are there, Apache Kafka's Java client (compat/java/KafkaDriver.java scenarios). It keeps a
few distinct frames per (api key, version, client) and writes them zlib-compressed, each as an
int32 size and the frame. Run it again when a client starts sending a new API or version.
"""

from __future__ import annotations

import asyncio
import struct
import sys
import tempfile
import uuid
import zlib
from pathlib import Path

CORPUS = Path(__file__).with_name("corpus.bin")
PER_KEY = 3  # distinct frames kept per (api key, version, client id)
MAX_FRAME = 8192  # large Produce frames add bytes, not shapes


def load(path: Path = CORPUS) -> list[bytes]:
    data = zlib.decompress(path.read_bytes())
    frames, pos = [], 0
    while pos < len(data):
        (size,) = struct.unpack_from(">i", data, pos)
        frames.append(data[pos + 4 : pos + 4 + size])
        pos += 4 + size
    return frames


def save(frames: list[bytes], path: Path = CORPUS) -> None:
    path.write_bytes(zlib.compress(b"".join(struct.pack(">i", len(f)) + f for f in frames), 9))


def _client_id(frame: bytes) -> bytes:
    (size,) = struct.unpack_from(">h", frame, 8)
    return frame[10 : 10 + max(size, 0)]


class Recorder:
    def __init__(self) -> None:
        self.kept: dict[tuple, list[bytes]] = {}

    def keep(self, frame) -> None:
        frame = bytes(frame)
        if len(frame) > MAX_FRAME or len(frame) < 10:
            return
        key = (*struct.unpack_from(">hh", frame), _client_id(frame).split(b"-")[0])
        kept = self.kept.setdefault(key, [])
        if len(kept) < PER_KEY and frame not in kept:
            kept.append(frame)

    def frames(self) -> list[bytes]:
        return [f for key in sorted(self.kept) for f in self.kept[key]]


def hook(recorder: Recorder) -> None:
    from shim.apis import dispatch

    original = dispatch.dispatch_request  # what the server calls for every request

    async def recording(node, frame, *args, **kwargs):
        recorder.keep(frame)
        return await original(node, frame, *args, **kwargs)

    dispatch.dispatch_request = recording


def main() -> int:
    import shim
    from compat.fuzz import workloads

    recorder = Recorder()
    hook(recorder)
    with tempfile.TemporaryDirectory() as tmp, shim.BrokerThread(data_dir=Path(tmp) / "data", listen="127.0.0.1:0") as b:
        run = uuid.uuid4().hex[:6]
        for name, workload in workloads.ALL.items():
            print(f"workload {name} ...", flush=True)
            try:
                workload(b.bootstrap_servers, f"{name.replace('-', '_')}_{run}")
            except Exception as exc:  # noqa: BLE001 - a missing client records nothing, said here
                print(f"  {name} failed: {exc!r}", flush=True)
    frames = recorder.frames()
    save(frames)
    keys = sorted({struct.unpack_from(">hh", f) for f in frames})
    print(f"{len(frames)} frames, {len(keys)} (api, version) pairs: {keys}")
    return 0


if __name__ == "__main__":
    asyncio.set_event_loop_policy(None)
    sys.exit(main())
