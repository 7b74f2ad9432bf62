"""Mutations of recorded request frames, drawn from one seeded ``random.Random``.

A case is the bytes one fuzz connection sends: one to three frames, each a corpus request intact,
with hostile field values (semantic.py), or after one to four byte mutations (bit flips, interesting bytes, huge and negative int32/int16 counts and
lengths, varint garbage, truncation, splices with another request, inserted and deleted runs,
header fields), each behind a size prefix that is sometimes wrong (short, long, negative, huge).
"""

from __future__ import annotations

import random
import struct
from typing import NamedTuple

from . import semantic

CANARY_TOPIC = "fuzz-canary"  # never named by a mutation: deleting it would be the client's doing

INT32S = (0x7FFFFFFF, -1, -2, -0x80000000, 0x10000000, 0x01000000, 0xFFFF, 0x7FFF, 1 << 20, 0)
INT16S = (0x7FFF, -1, -2, -0x8000, 0x100, 0)
VARINTS = (b"\xff\xff\xff\xff\x0f", b"\xff\xff\xff\xff\xff\xff", b"\x80\x80\x80\x80\x80", b"\xff\xff\xff\x7f",
           b"\x80\x80\x80\x80\x10", b"\xff\xff\x7f", b"\x00", b"\x80", b"\xfe\xff\xff\xff\x07")
BYTES = (0x00, 0x01, 0x7F, 0x80, 0xFF, 0xFE)


class Frame(NamedTuple):
    payload: bytes
    size: int  # what the prefix declares; len(payload) unless the mutation lies


class Case(NamedTuple):
    frames: tuple[Frame, ...]
    ops: tuple[str, ...]

    def wire(self) -> bytes:
        return b"".join(struct.pack(">i", f.size) + f.payload for f in self.frames)


def _pos(rng: random.Random, data: bytearray, width: int = 1) -> int:
    return rng.randrange(max(1, len(data) - width + 1))


def bitflip(rng, data, corpus):
    for _ in range(rng.randint(1, 4)):
        if data:
            i = _pos(rng, data)
            data[i] ^= 1 << rng.randrange(8)


def interesting_byte(rng, data, corpus):
    if data:
        data[_pos(rng, data)] = rng.choice(BYTES)


def int32_count(rng, data, corpus):
    i = _pos(rng, data, 4)
    data[i : i + 4] = struct.pack(">i", _signed32(rng.choice(INT32S)))


def int16_length(rng, data, corpus):
    i = _pos(rng, data, 2)
    data[i : i + 2] = struct.pack(">h", rng.choice(INT16S))


def varint_garbage(rng, data, corpus):
    i = _pos(rng, data)
    data[i : i + rng.choice((0, 1))] = rng.choice(VARINTS)


def truncate(rng, data, corpus):
    del data[rng.randrange(len(data) + 1):]


def splice(rng, data, corpus):
    other = rng.choice(corpus)
    data[_pos(rng, data):] = other[rng.randrange(len(other) + 1):]


def insert_run(rng, data, corpus):
    i = _pos(rng, data)
    data[i:i] = bytes(rng.choice(BYTES) for _ in range(rng.randint(1, 16)))


def delete_run(rng, data, corpus):
    i = _pos(rng, data)
    del data[i : i + rng.randint(1, 16)]


def duplicate_run(rng, data, corpus):
    i = _pos(rng, data)
    data[i:i] = data[i : i + rng.randint(1, 64)]


def header_field(rng, data, corpus):
    """api_key, api_version, correlation_id or the client_id length of the request header."""
    if len(data) < 10:
        return
    field = rng.randrange(4)
    if field == 0:
        data[0:2] = struct.pack(">h", rng.choice((rng.randrange(70), -1, 0x7FFF, rng.randrange(-0x8000, 0x8000))))
    elif field == 1:
        data[2:4] = struct.pack(">h", rng.choice((rng.randrange(20), -1, 0x7FFF, rng.randrange(-0x8000, 0x8000))))
    elif field == 2:
        data[4:8] = struct.pack(">i", _signed32(rng.getrandbits(32)))
    else:
        data[8:10] = struct.pack(">h", rng.choice(INT16S))


OPS = (bitflip, interesting_byte, int32_count, int16_length, varint_garbage, truncate, splice, insert_run, delete_run,
       duplicate_run, header_field)


def _signed32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


def _size(rng: random.Random, n: int) -> tuple[int, str | None]:
    if rng.random() >= 0.08:
        return n, None
    choice = rng.randrange(5)
    size = (n - rng.randint(1, 8), n + rng.randint(1, 8), -rng.randint(1, 1 << 31), rng.randint(1 << 20, 1 << 31 - 1),
            0)[choice]  # fmt: skip
    return max(size, -(1 << 31)), f"size:{('short', 'long', 'negative', 'huge', 'zero')[choice]}"


def mutate_one(rng: random.Random, corpus: list[bytes], payload: bytes | None = None) -> tuple[Frame, list[str]]:
    data = bytearray(rng.choice(corpus) if payload is None else payload)
    ops = []
    for _ in range(rng.randint(1, 4)):
        op = rng.choice(OPS)
        op(rng, data, corpus)
        ops.append(op.__name__)
    size, lie = _size(rng, len(data))
    if lie:
        ops.append(lie)
    return Frame(bytes(data), size), ops


def case(rng: random.Random, corpus: list[bytes]) -> Case:
    frames, ops = [], []
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        draw = rng.random()
        if draw < 0.15:  # an intact request before or between the mutated ones
            payload = rng.choice(corpus)
            frames.append(Frame(payload, len(payload)))
            ops.append("intact")
            continue
        if draw < 0.55:  # well formed, hostile values: reaches the handlers
            payload = semantic.mutate(rng, rng.choice(corpus), CANARY_TOPIC)
            if payload is not None:
                frames.append(Frame(payload, len(payload)))
                ops.append("semantic")
                continue
        frame, frame_ops = mutate_one(rng, corpus)
        frames.append(frame)
        ops.append("+".join(frame_ops))
    return Case(tuple(frames), tuple(ops))


def sweep(rng: random.Random, corpus: list[bytes]) -> list[Case]:
    """A case per corpus frame, for a run to begin with: the frame intact, with hostile field values
    and byte-mutated, in that order (the frame most likely to close the connection last), so that
    every recorded (API, version) and client reaches the broker each of the three ways, however
    short the run."""
    cases = []
    for payload in corpus:
        frames, ops = [Frame(payload, len(payload))], ["intact"]
        hostile = semantic.mutate(rng, payload, CANARY_TOPIC)
        if hostile is not None:
            frames.append(Frame(hostile, len(hostile)))
            ops.append("semantic")
        frame, frame_ops = mutate_one(rng, corpus, payload)
        frames.append(frame)
        ops.append("+".join(frame_ops))
        cases.append(Case(tuple(frames), tuple(ops)))
    return cases
