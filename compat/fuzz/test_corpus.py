"""The recorded corpus against the length checker: what the stock clients send passes it, and
every truncation and every huge count written over one of its lengths is refused."""

from __future__ import annotations

import struct

import pytest

from shim.apis import REGISTRY
from shim.protocol.framing import FrameError
from shim.protocol.messages import decode_request, peek, request_checker, request_class
from shim.protocol.wirecheck import MalformedRequest

from .record import load

FRAMES = load()


def test_the_corpus_spans_the_clients_and_apis():
    pairs = {peek(f)[:2] for f in FRAMES}
    assert {k for k, _ in pairs} >= {0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 18, 19, 20, 22, 24, 25, 26, 28}
    clients = {f[10 : 10 + struct.unpack_from(">h", f, 8)[0]].split(b"-")[0] for f in FRAMES}
    assert len(clients) >= 4, clients


@pytest.mark.parametrize("frame", FRAMES, ids=lambda f: "k%d-v%d-%d" % (*peek(f)[:2], len(f)))
def test_a_recorded_request_passes_and_its_truncations_do_not(frame):
    key, version, _ = peek(frame)
    assert REGISTRY[key].min_version <= version <= REGISTRY[key].max_version
    check = request_checker(key, version)
    check(frame)
    decode_request(frame, key, version)
    for cut in range(len(frame)):
        with pytest.raises(MalformedRequest):
            check(frame[:cut])


@pytest.mark.parametrize("frame", FRAMES, ids=lambda f: "k%d-v%d-%d" % (*peek(f)[:2], len(f)))
def test_a_recorded_request_with_a_huge_count_anywhere_is_refused_or_parses_small(frame):
    """A huge varint or int32 at each position: refused, or it landed in a plain number and kio
    builds a request no bigger than a few times the frame (counted by its repr)."""
    key, version, _ = peek(frame)
    check = request_checker(key, version)
    huge = [b"\xff\xff\xff\xff\x0f", struct.pack(">i", 0x7FFFFFFF)] if request_class(key, version).__flexible__ \
        else [struct.pack(">i", 0x7FFFFFFF), struct.pack(">h", 0x7FFF)]  # fmt: skip
    for i in range(len(frame)):
        for value in huge:
            variant = frame[:i] + value + frame[i + len(value) - (len(value) == 5) * 4 :]
            try:
                check(variant)
            except MalformedRequest:
                continue
            try:
                _, request = decode_request(variant, key, version)
            except FrameError:  # kio may refuse what the checker let through (bad UTF-8, a bad boolean)
                continue
            assert len(repr(request)) < 64 * len(variant) + 4096
