"""RE2 regexes compiled once and kept within a byte budget: KIP-848 subscription regexes and
client-metrics ``match`` patterns.

RE2, as Kafka's RE2/J, matches in linear time, so no pattern can stall the broker. Each compiled
regex may use REGEX_MAX_MEM for its programs and the DFA states it caches as it matches (RE2 gives
the forward program and its DFAs two thirds of it, the reverse program the rest); a pattern whose
program does not fit is refused ("pattern too large"). Outside that budget RE2 keeps the parsed
pattern, which grows with its length: 17-46 bytes of heap per pattern byte measured (a 30,000-byte
"(a)" * 10000 held 1.3 MiB, a 32,500-byte "[a-z]" * 6500 1.0 MiB). A cache of 256 regexes by count
could so hold 300 MiB for whoever sent 256 distinct long ones; :class:`RegexCache` charges each
entry its whole RE2 budget plus ``BYTES_PER_PATTERN_BYTE`` per pattern byte and forgets the least
recently used past ``CACHE_BYTES``, and :func:`compile` bypasses google-re2's own cache of 128 by
count. What a pattern compiles to, or why it is refused, is the same whether it was cached or not.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Callable

import re2

REGEX_MAX_MEM = 1024 * 1024  # see shim.coordinators.group.consumer_coordinator for the measure
BYTES_PER_PATTERN_BYTE = 64  # the parsed pattern RE2 keeps beside its budget: 46 at most measured
CACHE_BYTES = 64 * 1024 * 1024


def options() -> re2.Options:
    opts = re2.Options()
    opts.log_errors = False  # an invalid regex is the client's answer, not a broker log line
    opts.max_mem = REGEX_MAX_MEM
    return opts


def compile(pattern: str, opts: re2.Options):
    """``re2.compile``, without the module's own cache: google-re2 keeps its last 128 compiled
    regexes (an lru_cache by count), which would hold 170 MiB of long ones beside ours."""
    return re2._Regexp(pattern, opts)  # raises re2.error as re2.compile does


def cost(pattern: str) -> int:
    """An upper bound of the bytes a compiled ``pattern`` holds, its DFA caches grown to their budget."""
    return REGEX_MAX_MEM + BYTES_PER_PATTERN_BYTE * len(pattern.encode("utf-8", "surrogatepass"))


def cache() -> "RegexCache":
    """A RegexCache of patterns compiled with :func:`options` (KIP-848 subscription regexes,
    ListTransactions' transactional id patterns): each feature its own budget."""
    opts = options()
    return RegexCache(lambda pattern: compile(pattern, opts))


class RegexCache:
    """``build(pattern)``'s results, the most recently used first kept, their :func:`cost` at most
    ``budget`` together (one entry always kept). A build that raises is not cached."""

    def __init__(self, build: Callable[[str], object], budget: int = CACHE_BYTES) -> None:
        self._build = build
        self._budget = budget
        self._entries: OrderedDict[str, object] = OrderedDict()
        self.held = 0  # the cost of the entries kept

    def __call__(self, pattern: str):
        try:
            self._entries.move_to_end(pattern)
            return self._entries[pattern]
        except KeyError:
            pass
        value = self._build(pattern)
        self._entries[pattern] = value
        self.held += cost(pattern)
        while self.held > self._budget and len(self._entries) > 1:
            gone, _ = self._entries.popitem(last=False)
            self.held -= cost(gone)
        return value

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        self._entries.clear()
        self.held = 0
