"""Position sweeps of hostile lengths, varints and tagged fields through every request, in process.

The mutation fuzzer (run.py) flips bytes of recorded frames at random; most of its cases never put
an absurd length where a compact array's count is. This one is exhaustive instead: for every API
and version each emulated release serves, a well-formed request (stateful.py's Builder,
no hostile values) is encoded and, at every byte position after the request header, a compact
length is put in (inserted, or replacing the byte there) from ``VARINTS``: counts and lengths of
2^31-1, 2^32-1, 2^28, 2^21, 2^14, a 6-byte varint and a varint cut by the frame's end. Then the
frame's last tagged-field section (the request body's own) is replaced by ``TAG_SECTIONS``: counts
up to 2^32, unknown and known tags, sizes past the frame, a megabyte of data in one tag, the same
tag thousands of times, tags nested inside a known tag's data. Versions before flexible versions
get int32 counts and lengths (2^31-1, -2, 2^28, 2^16) and int16 string lengths written over every
position instead.

Each frame goes through ``dispatch`` on a node of the release (``fsync never``), as a connection's
frame does. A case fails when ``dispatch`` raises anything but FrameError (a closed connection),
when one frame takes more than ``FRAME_LIMIT`` CPU seconds, or when the process's peak RSS grows
by more than ``RSS_LIMIT_MIB`` over the run (an allocation sized by a claimed count).

``python -m compat.fuzz.wire [--release 4.1] [--seed N]``: one sweep of every release takes a few
minutes on a shared machine; the seed picks the Builder's requests, so new seeds meet new shapes.
"""

from __future__ import annotations

import asyncio
import random
import resource
import struct
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from shim.apis.dispatch import dispatch
from shim.apis.registry import served
from shim.config import BrokerConfig
from shim.node import Node
from shim.protocol.framing import FrameError
from shim.protocol.kafka_releases import RELEASES
from shim.protocol.messages import RequestHeader, encode_request, request_class

from .stateful import Builder, Pools
from .vocabulary import TOPICS


def uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


VARINTS = (uvarint(2**31 - 1), uvarint(2**32 - 1), uvarint(2**28), uvarint(2**21), uvarint(2**14), uvarint(300),
           b"\xff\xff\xff\xff\xff\x01", b"\xff")
LEGACY = tuple(struct.pack(">i", n) for n in (2**31 - 1, -2, 2**28, 0x10000)) + tuple(
    struct.pack(">h", n) for n in (0x7FFF, -2))  # int32 counts and lengths, int16 string lengths
MIB = 1 << 20
TAG_SECTIONS = (
    uvarint(2**32 - 1),  # a count past anything
    uvarint(1) + uvarint(0) + uvarint(2**31 - 1),  # a known tag whose size runs past the frame
    uvarint(1) + uvarint(9999) + uvarint(3) + b"abc",  # an unknown tag
    uvarint(1) + uvarint(0) + uvarint(MIB) + bytes(MIB),  # a megabyte in one tag
    uvarint(1) + uvarint(0) + uvarint(MIB) + b"\xff" * MIB,
    uvarint(5000) + (uvarint(0) + uvarint(0)) * 5000,  # the same tag, thousands of times
    uvarint(2) + uvarint(1) + uvarint(0) + uvarint(0) + uvarint(0),  # out of order
    # a known tag's data that is itself a tag section, nested 500 deep
    uvarint(1) + uvarint(0) + uvarint(1500) + (uvarint(1) + uvarint(0) + uvarint(0)) * 500,
)
CLIENT_ID = "fuzz-wire"
HEADER_BYTES = 8 + 2 + len(CLIENT_ID) + 1  # request header v2: key, version, correlation id, client id, tags
FRAME_LIMIT = 0.5  # CPU seconds one frame may take through dispatch
RSS_LIMIT_MIB = 300
WAIT_S = 1.0  # a request still waiting after this (a long poll a mutation made) is let go


@dataclass
class Result:
    release: str
    seed: int
    frames: int = 0
    answered: int = 0
    closed: int = 0
    slowest: float = 0.0
    slowest_case: str = ""
    peak_rss_mib: int = 0
    failures: list = field(default_factory=list)

    def fail(self, message: str) -> None:
        kind = message.split("\n")[0][:120]
        if not any(f.split("\n")[0][:120] == kind for f in self.failures):
            self.failures.append(message)


def _peak_rss_mib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


class _SaneBuilder(Builder):
    """The Builder without hostile values: every hostile byte here is the sweep's own."""

    @property
    def sane(self) -> bool:
        return True

    @sane.setter
    def sane(self, value: bool) -> None:
        pass


def base_frames(rng: random.Random, release: str):
    """(key, version, frame, header length, flexible) of a well-formed request per served version."""
    builder = _SaneBuilder(rng, Pools())
    for spec, low, high in served(RELEASES[release]):
        for version in range(low, high + 1):
            for _ in range(10):  # a draw kio cannot encode: another
                try:
                    request = builder.request(spec.key, version)
                    frame = encode_request(RequestHeader(spec.key, version, 7, CLIENT_ID), request)
                except Exception:  # noqa: BLE001 - kio refuses a value this version cannot carry
                    continue
                flexible = request_class(spec.key, version).__flexible__
                yield spec.key, version, frame, HEADER_BYTES if flexible else HEADER_BYTES - 1, flexible
                break


def cases(frame: bytes, start: int, flexible: bool = True):
    """(label, frame): each varint at each position, inserted and replacing; then the body's tag
    section (its last byte, empty in a well-formed request) replaced by each of TAG_SECTIONS. A
    version before flexible versions gets LEGACY counts and lengths written over each position."""
    if not flexible:
        for at in range(start, len(frame)):
            for i, v in enumerate(LEGACY):
                yield f"legacy {i} at {at}", frame[:at] + v + frame[at + len(v):]
        return
    for at in range(start, len(frame) + 1):
        for i, v in enumerate(VARINTS):
            yield f"insert varint {i} at {at}", frame[:at] + v + frame[at:]
            if at < len(frame):
                yield f"replace byte {at} with varint {i}", frame[:at] + v + frame[at + 1:]
    if frame.endswith(b"\x00"):
        for i, section in enumerate(TAG_SECTIONS):
            yield f"tag section {i}", frame[:-1] + section


class WireRun:
    def __init__(self, seed: int, release: str, data_dir: Path) -> None:
        self.rng = random.Random(seed)
        self.release = release
        self.result = Result(release, seed)
        self.node = Node(BrokerConfig(data_dir=data_dir, kafka_version=release, group_initial_rebalance_delay_ms=0))

    async def run(self) -> Result:
        rss_before = _peak_rss_mib()
        try:
            for t in TOPICS:
                self.node.logs.create_topic(t, 3)
            if self.release >= "4.1":
                self.node.finalize_features({"share.version": 1})
            for key, version, frame, start, flexible in base_frames(self.rng, self.release):
                for label, case in cases(frame, start, flexible):
                    await self.one(key, version, label, case)
        finally:
            self.node.close()
        self.result.peak_rss_mib = _peak_rss_mib()
        if self.result.peak_rss_mib - rss_before > RSS_LIMIT_MIB:
            self.result.fail(f"peak RSS grew {self.result.peak_rss_mib - rss_before} MiB over the sweep")
        return self.result

    async def one(self, key: int, version: int, label: str, frame: bytes) -> None:
        self.result.frames += 1
        started = time.process_time()
        try:
            await asyncio.wait_for(dispatch(self.node, frame), WAIT_S)
            self.result.answered += 1
        except FrameError:
            self.result.closed += 1
        except asyncio.TimeoutError:
            pass  # a request that waits (a long poll): not a failure of the wire
        except Exception:  # noqa: BLE001 - the finding
            self.result.fail(f"{key} v{version} {label} raised under {self.release}: "
                             f"{traceback.format_exc(limit=-4)}\nframe: {frame[:400].hex()}")  # fmt: skip
        spent = time.process_time() - started
        if spent > self.result.slowest:
            self.result.slowest, self.result.slowest_case = spent, f"{key} v{version} {label}"
        if spent > FRAME_LIMIT:
            self.result.fail(f"{key} v{version} {label} took {spent:.2f} CPU s under {self.release}\n"
                             f"frame: {frame[:400].hex()}")  # fmt: skip


ALL_RELEASES = ("3.7", "3.8", "3.9", "4.0", "4.1")


def each_release(run_class, seed: int, releases, prefix: str) -> list:
    """``run_class(seed, release, data_dir).run()`` for each release, each on a fresh data directory."""
    results = []
    for i, release in enumerate(releases):
        with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
            run = run_class(seed * 31 + i, release, Path(tmp) / "data")
            results.append(asyncio.run(run.run()))
    return results


def sweep_arguments(doc: str, *extra):
    """The command line both sweeps take: --seed, --release (repeatable), and ``extra`` (args, kwargs) pairs."""
    import argparse

    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--release", action="append")
    for args, kwargs in extra:
        parser.add_argument(*args, **kwargs)
    parsed = parser.parse_args()
    return parsed, tuple(parsed.release or ALL_RELEASES)


def wire_fuzz(seed: int, releases=ALL_RELEASES) -> list[Result]:
    return each_release(WireRun, seed, releases, "kafka-shim-wire-")


if __name__ == "__main__":
    import json

    args, releases = sweep_arguments(__doc__)
    print(json.dumps([vars(r) for r in wire_fuzz(args.seed, releases)], indent=1))
