"""Produce requests and record batches, whole and damaged, for the differential tests of the C
readers in kafka_codecs/_produce.c against their Python twins (test_codecs_native_produce.py), and
the corpus its AddressSanitizer run feeds a sanitized build. Deterministic: a seed gives a corpus."""

from __future__ import annotations

import datetime
import random
import struct
import uuid

from kafka_codecs import encode_batch
from kafka_codecs.batch import CRC_OFFSET, compute_crc
from shim.protocol.messages import RequestHeader, encode_request, request_module

VERSIONS = range(0, 14)


def request(version: int, topics, acks: int = -1, timeout_ms: int = 30_000, client_id: str | None = "c",
            transactional_id: str | None = None, correlation_id: int = 1) -> bytes:
    """A ProduceRequest frame as kio encodes it; ``topics``: (name or topic id, {index: records}) each."""
    m = request_module(0, version)
    data = []
    for key, parts in topics:
        kw = {"topic_id": key} if version >= 13 else {"name": key}
        data.append(m.TopicProduceData(**kw, partition_data=tuple(
            m.PartitionProduceData(index=i, records=r) for i, r in parts.items())))
    fields = dict(acks=acks, timeout=datetime.timedelta(milliseconds=timeout_ms), topic_data=tuple(data))
    if version >= 3:
        fields["transactional_id"] = transactional_id
    return encode_request(RequestHeader(0, version, correlation_id, client_id), m.ProduceRequest(**fields))


def batch(rng: random.Random, records: int | None = None, producer_id: int = -1, base_sequence: int = -1) -> bytes:
    """An uncompressed batch of random records (keys, values, headers, timestamps)."""
    n = rng.randint(1, 6) if records is None else records
    base = 1_700_000_000_000
    recs = [(rng.choice([None, b"k%d" % i]), rng.choice([None, rng.randbytes(rng.randint(0, 40))]),
             [("h%d" % j, rng.choice([None, b"v"])) for j in range(rng.randint(0, 2))],
             base + rng.randint(-5, 5)) for i in range(n)]
    return encode_batch(recs, producer_id=producer_id, producer_epoch=0 if producer_id >= 0 else -1,
                        base_sequence=base_sequence)


def with_crc(raw: bytes | bytearray) -> bytes:
    """``raw`` with its CRC written again (when it is long enough to hold one), so that the checks
    after the CRC's are reached."""
    raw = bytearray(raw)
    if len(raw) >= 61:
        struct.pack_into(">I", raw, CRC_OFFSET, compute_crc(raw))
    return bytes(raw)


def damaged(rng: random.Random, raw: bytes, edits: int = 3) -> bytes:
    """``raw`` cut, overwritten, stretched or extended in up to ``edits`` places."""
    out = bytearray(raw)
    for _ in range(rng.randint(1, edits)):
        action = rng.choice(["cut", "set", "set", "insert", "append", "field"])
        at = rng.randint(0, max(len(out) - 1, 0))
        if action == "cut":
            del out[at:]
        elif action == "set" and out:
            out[at] = rng.randrange(256)
        elif action == "insert":
            out[at:at] = rng.randbytes(rng.randint(1, 4))
        elif action == "append":
            out += rng.randbytes(rng.randint(1, 4))
        elif len(out) >= at + 4:  # a length or count set to an edge value
            struct.pack_into(">i", out, at, rng.choice([-2, -1, 0, 1, 0x7FFFFFFF, -0x80000000, len(out)]))
    return bytes(out)


def requests(seed: int, count: int) -> list[tuple[int, bytes]]:
    """(version, frame): whole requests of every version, and damaged ones."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        version = VERSIONS[i % len(VERSIONS)]
        topics = []
        for t in range(rng.randint(0, 3)):
            key = (rng.choice([uuid.UUID(int=0), uuid.UUID(int=rng.getrandbits(128))]) if version >= 13
                   else rng.choice(["t", "topic-%d" % t, "\u00e9t\u00e9", ""]))
            parts = {rng.randint(-2, 5): rng.choice([None, b"", batch(rng)]) for _ in range(rng.randint(0, 3))}
            topics.append((key, parts))
        frame = request(version, topics, acks=rng.choice([-1, 0, 1, 7]), client_id=rng.choice([None, "c", "\u00fc", ""]),
                        transactional_id=rng.choice([None, "tx", "\u00e9"]), correlation_id=rng.getrandbits(31))
        out.append((version, frame))
        out.append((version, damaged(rng, frame)))
    return out


def batches(seed: int, count: int) -> list[bytes]:
    """Whole batches and damaged ones, a damaged one with its CRC written again half the time."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        raw = batch(rng, producer_id=rng.choice([-1, 7]), base_sequence=rng.choice([-1, 0, 3]))
        out.append(raw)
        bad = damaged(rng, raw)
        out.append(with_crc(bad) if rng.random() < 0.5 else bad)
    return out


def small_requests() -> list[tuple[int, bytes]]:
    """(version, frame): one small request of each version, of every shape the reader takes (null
    and set transactional and client ids, two topics, an empty partition list, batches)."""
    out = []
    for version in VERSIONS:
        keys = (uuid.UUID(int=1), uuid.UUID(int=0)) if version >= 13 else ("ab", "")
        out.append((version, request(version, [(keys[0], {1: b"xyz", 2: b""}), (keys[1], {})], client_id=None,
                                     transactional_id="t" if version >= 3 else None)))
        out.append((version, request(version, [(keys[0], {0: b"\x00" * 5})], client_id="cl")))
    return out


def edge_edits(frame: bytes):
    """``frame`` cut at every length, with every byte set to edge values in turn, and with every
    byte below 0x80 written again as an overlong two-byte varint (b | 0x80, 0)."""
    for cut in range(len(frame)):
        yield frame[:cut]
    for at, b in enumerate(frame):
        for value in (0x00, 0x01, 0x02, 0x7F, 0x80, 0xFF, b ^ 0x01):
            if value != b:
                yield frame[:at] + bytes([value]) + frame[at + 1:]
        if b < 0x80:
            yield frame[:at] + bytes([b | 0x80, 0]) + frame[at + 1:]
