"""The fetch session cache on a fake clock: Kafka's eviction order, epochs and superseded requests."""

from __future__ import annotations

import time
from types import SimpleNamespace

from shim.errors import ErrorCode as E
from shim.fetch_sessions import (EVICTION_MS, FINAL_EPOCH, INT32_MAX, SHARDS, FetchSessionCache,
                                 IncrementalFetchContext, next_epoch)

T0 = 1_700_000_000_000


def part(i: int, offset: int = 0):
    return SimpleNamespace(partition=i, fetch_offset=offset, partition_max_bytes=1 << 20)


def data(hw: int, records: bytes = b"", error=E.none):
    return SimpleNamespace(records=records, error_code=error, high_watermark=hw, last_stable_offset=hw,
                           log_start_offset=0, preferred_read_replica=-1)


def full(cache, n: int, now: int, privileged=False) -> int:
    """A full fetch of ``n`` partitions answered with nothing new; the session id."""
    entries = [(("t", i), part(i)) for i in range(n)]
    context = cache.new_context(12, 0, 0, privileged, entries, [], now)
    return context.respond([(k, p, data(0)) for k, p in context.partitions()], now, {})[1]


def one_shard_cache(slots_per_shard: int) -> FetchSessionCache:
    """Every new session in shard 0: the cache's turn is reset before each creation."""
    cache = FetchSessionCache(slots_per_shard * SHARDS)
    cache.next_shard = lambda: cache.shards[0]
    return cache


def test_next_epoch_skips_zero_and_keeps_the_final_epoch():
    assert (next_epoch(0), next_epoch(41), next_epoch(INT32_MAX), next_epoch(FINAL_EPOCH)) == (1, 42, 1, FINAL_EPOCH)


def test_a_stale_session_is_evicted_first():
    cache = one_shard_cache(2)
    big, small = full(cache, 5, T0), full(cache, 1, T0 + 1)
    # a consumer can evict nothing young; once `big` is unused for over 2 minutes it goes, whatever its size
    assert full(cache, 9, T0 + 2) == 0
    cache.new_context(12, small, 1, False, [], [], T0 + EVICTION_MS)  # small is used again
    assert full(cache, 1, T0 + EVICTION_MS + 1) != 0
    shard = cache.shards[0]
    assert big not in shard.sessions and small in shard.sessions and shard.evictions == 1


def test_a_consumer_evicts_only_an_aged_smaller_session():
    cache = one_shard_cache(1)
    old = full(cache, 3, T0)
    later = T0 + EVICTION_MS + 1
    assert full(cache, 5, T0 + EVICTION_MS) == 0  # `old` was last touched young: not evictable yet
    cache.new_context(12, old, 1, False, [], [], later)  # used again, now aged: evictable by all
    assert full(cache, 3, later + 1) == 0  # not worth more than `old` (ties keep the old one)
    new = full(cache, 4, later + 2)
    assert new != 0 and list(cache.shards[0].sessions) == [new]


def test_a_follower_evicts_the_smallest_consumer_session_at_once_but_not_a_young_follower():
    cache = one_shard_cache(2)
    follower, consumer = full(cache, 50, T0, privileged=True), full(cache, 100, T0)
    assert full(cache, 1, T0 + 1, privileged=True) != 0
    assert set(cache.shards[0].sessions) >= {follower} and consumer not in cache.shards[0].sessions
    assert full(cache, 200, T0 + 2, privileged=True) == 0  # two young followers: nothing to evict


def test_an_incremental_request_superseded_while_it_waited_gets_invalid_epoch():
    cache = FetchSessionCache()
    session = full(cache, 2, T0)
    first = cache.new_context(12, session, 1, False, [], [], T0)
    second = cache.new_context(12, session, 2, False, [], [], T0)
    results = [(k, p, data(5, b"x")) for k, p in first.partitions()]
    assert first.respond(results, T0, {}) == (E.invalid_fetch_session_epoch, session, [])
    assert first.throttled() == (E.invalid_fetch_session_epoch, session)
    error, sid, kept = second.respond(results, T0, {})
    assert (error, sid, len(kept)) == (E.none, session, 2)


def test_partitions_that_returned_records_go_to_the_end_and_errors_reset_the_high_watermark():
    cache = FetchSessionCache()
    session = full(cache, 3, T0)
    context = cache.new_context(12, session, 1, False, [], [], T0)
    (k0, p0), (k1, p1), (k2, p2) = context.partitions()
    _, _, kept = context.respond([(k0, p0, data(1, b"r")), (k1, p1, data(0, error=E.not_leader_or_follower)),
                                  (k2, p2, data(0))], T0, {})
    assert [k for k, _, _ in kept] == [k0, k1]
    context = cache.new_context(12, session, 2, False, [], [], T0)
    assert [k for k, _ in context.partitions()] == [k1, k2, k0]
    # the error is gone and nothing changed, yet partition 1 is answered: its high watermark was forgotten
    _, _, kept = context.respond([(k, p, data(1 if k == k0 else 0)) for k, p in context.partitions()], T0, {})
    assert [k for k, _, _ in kept] == [k1]


def test_a_session_growing_past_its_partition_limit_ends_as_if_evicted():
    cache = FetchSessionCache(max_session_partitions=4)
    session = full(cache, 3, T0)
    grow = [(("t", 3), part(3))]
    assert isinstance(cache.new_context(12, session, 1, False, grow, [], T0), IncrementalFetchContext)
    more = [(("u", 0), part(0))]
    context = cache.new_context(12, session, 2, False, more, [], T0)
    assert context.respond([], T0, {}) == (E.fetch_session_id_not_found, 0, [])
    assert cache.stats()["sessions"] == 0 and cache.stats()["partitions_cached"] == 0
    assert full(cache, 5, T0) == 0 and full(cache, 4, T0) != 0  # a full request over it gets no session


def test_sessions_share_a_partition_budget_and_stale_ones_make_room():
    cache = FetchSessionCache(max_cached_partitions=10)
    first, second = full(cache, 6, T0), full(cache, 4, T0 + 1)
    assert full(cache, 1, T0 + 2) == 0  # the budget is spent and nobody is stale
    assert cache.new_context(12, second, 1, False, [(("t", 9), part(9))], [], T0 + 3).error == \
        E.fetch_session_id_not_found  # growing past the budget ends the session
    fourth = full(cache, 4, T0 + 4)
    cache.new_context(12, first, 1, False, [], [], T0 + 5)
    late = T0 + 5 + EVICTION_MS  # `fourth` is stale, `first` not quite
    assert full(cache, 5, late) == 0  # evicting `fourth` is not enough
    third = full(cache, 4, late)  # it is for this one
    live = {s for shard in cache.shards for s in shard.sessions}
    assert third != 0 and live == {first, third} and fourth not in live and cache.stats()["partitions_cached"] == 10


def test_the_size_a_request_would_leave_counts_what_it_forgets_after_adding():
    cache = FetchSessionCache(max_session_partitions=3)
    session = full(cache, 3, T0)
    # two added, two forgotten (one of them just added): three left, the limit
    context = cache.new_context(12, session, 1, False, [(("t", 3), part(3)), (("t", 4), part(4))],
                                [("t", 0), ("t", 4)], T0)
    assert [k for k, _ in context.partitions()] == [("t", 1), ("t", 2), ("t", 3)]
    over = cache.new_context(12, session, 2, False, [(("t", 5), part(5))], [("t", 9)], T0)
    assert over.error == E.fetch_session_id_not_found and cache.stats()["partitions_cached"] == 0


def test_making_room_evicts_many_stale_sessions_in_one_pass():
    """Each eviction looked for the least recently used session among all of them again: 4,000
    stale sessions to evict took 16 million comparisons (seconds of the loop)."""
    cache = FetchSessionCache(slots=8 * 5_000, max_cached_partitions=5_000)
    for i in range(4_000):
        full(cache, 1, T0 + i)
    late = T0 + 4_000 + EVICTION_MS
    started = time.thread_time()
    assert full(cache, 5_000, late) != 0
    assert time.thread_time() - started < 0.5
    assert cache.stats()["sessions"] == 1 and cache.stats()["evictions"] == 4_000
