"""The compiled-regex caches stay within a byte budget (shim.regexes): 256 distinct long
subscription regexes, each holding 0.3-1.3 MiB compiled, were all kept by a cache bounded by
count, and google-re2 kept its last 128 besides; what a pattern compiles to, or why it is refused,
is the same cached or not."""

from __future__ import annotations

import ctypes

import pytest
import re2

from shim import regexes
from shim.coordinators.group import consumer_coordinator


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]


def _heap_in_use() -> int:
    """Bytes malloc has handed out and not had back (RSS keeps what is freed)."""
    try:
        mallinfo2 = ctypes.CDLL("libc.so.6").mallinfo2
    except (OSError, AttributeError):
        pytest.skip("needs glibc's mallinfo2")
    mallinfo2.restype = _MallInfo2
    info = mallinfo2()
    return info.uordblks + info.hblkhd


def test_the_subscription_regex_cache_stays_within_its_budget(monkeypatch):
    cache = consumer_coordinator.compile_regex
    cache.clear()
    monkeypatch.setattr(cache, "_budget", 8 << 20)
    before = _heap_in_use()
    for i in range(256):
        pattern = f"{i}" + "(a)" * 2000  # 6 KB: 0.3 MiB compiled
        assert cache(pattern).fullmatch(f"{i}" + "a" * 2000)
        assert cache.held <= 8 << 20
    assert 0 < len(cache) <= (8 << 20) // regexes.cost(pattern)
    held = _heap_in_use() - before
    cache.clear()
    assert held < 16 << 20, held  # all kept: 77 MiB; google-re2's own 128: 38 MiB


def test_the_least_recently_used_is_forgotten_and_a_hit_is_the_same_object():
    built = []
    cache = regexes.RegexCache(lambda r: built.append(r) or object(), budget=3 * regexes.cost("a"))
    first = cache("a")
    cache("b"), cache("c")
    assert cache("a") is first and built == ["a", "b", "c"]  # a hit: not built again
    cache("d")  # over the budget: b, the least recently used, goes
    cache("b")
    assert built == ["a", "b", "c", "d", "b"] and len(cache) == 3


def test_a_refused_pattern_is_refused_again_and_not_cached():
    cache = consumer_coordinator.compile_regex
    for _ in range(2):
        with pytest.raises(re2.error, match="pattern too large"):
            cache(".{1000}" * 29)
    assert ".{1000}" * 29 not in cache._entries
