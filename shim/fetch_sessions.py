"""Incremental fetch sessions (KIP-227), as Kafka's FetchManager and FetchSessionCache keep them.

A Fetch names a session id and epoch. A full request (epoch 0, INITIAL_EPOCH) closes the session it
names and asks for a new one holding its partitions; epoch -1 (FINAL_EPOCH) closes it and stays
sessionless. An incremental request (any other epoch) must name a live session at the epoch the
broker expects (FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH otherwise), and sessions
made from topic names (v7-12) or topic ids (v13+) are only continued by the same kind
(FETCH_SESSION_TOPIC_ID_ERROR). Its partitions are added to or update the session's, its forgotten
topics leave it; the broker then reads every partition of the session and answers only those with
something to say: records, an error, a changed high watermark, log start offset or last stable
offset (Kafka's never moves alone; reading it costs nothing). The cached state is updated only for
the partitions answered, and a partition that returned records goes to the end of the session's
order so the others get their turn under max_bytes.

The cache follows Kafka 3.9's: max.incremental.fetch.session.cache.slots divided over 8 shards,
each holding its own range of session ids, new sessions given to the shards in turn. A full shard
first evicts a session unused for 2 minutes (MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS); else a
follower's (privileged) session may evict the smallest consumer session, and a consumer's session
the smallest session that has lived 2 minutes, if its own partition count is larger. A session
that cannot be made is answered with session id 0 (the client goes on with full requests).

Kafka bounds only the number of sessions; kafka-shim bounds their partitions too, as each costs a few
hundred bytes and every incremental request walks all of its session's in one turn: a session holds
at most MAX_SESSION_PARTITIONS and all sessions of a broker MAX_CACHED_PARTITIONS. A full request over
either is answered without a session (session id 0, as when the cache has no room) once sessions
unused for 2 minutes are evicted to make room; an incremental request that would grow its session
over either ends the session and is answered FETCH_SESSION_ID_NOT_FOUND, as after an eviction (the
client starts over with a full request).

Clock-free: every call takes ``now_ms``.
"""

from __future__ import annotations

import random
from collections import OrderedDict
from dataclasses import dataclass, field

from .errors import ErrorCode

INVALID_SESSION_ID = 0
INITIAL_EPOCH = 0
FINAL_EPOCH = -1
EVICTION_MS = 120_000  # Kafka: KafkaServer.MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS
SHARDS = 8  # Kafka: KafkaBroker.NumFetchSessionCacheShards
INT32_MAX = 2**31 - 1
SLOTS_CONFIG = "max.incremental.fetch.session.cache.slots"
TOPIC_ID_VERSION = 13
MAX_SESSION_PARTITIONS = 10_000  # kafka-shim's: updated in a turn by each incremental request (~15 ms)
MAX_CACHED_PARTITIONS = 200_000  # kafka-shim's: about 100 MB of sessions at most


def next_epoch(epoch: int) -> int:
    """Kafka: FetchMetadata.nextEpoch (FINAL stays FINAL; after INT32_MAX comes 1, never 0)."""
    if epoch < 0:
        return FINAL_EPOCH
    return 1 if epoch == INT32_MAX else epoch + 1


class CachedPartition:
    """A partition's request fields (named as the request's, so the reader takes either) and what
    the broker last answered for it."""

    __slots__ = ("partition", "fetch_offset", "partition_max_bytes", "current_leader_epoch",
                 "log_start_offset", "last_fetched_epoch", "high_watermark", "last_stable_offset",
                 "local_log_start_offset", "topic")

    def __init__(self, p, topic: str | None = None) -> None:
        self.partition = p.partition
        self.topic = topic  # a topic id's name when first resolved: kept (Kafka: maybeResolveUnknownName)
        self.update_request(p)
        self.high_watermark = self.last_stable_offset = self.local_log_start_offset = -1

    def update_request(self, p) -> None:
        self.fetch_offset, self.partition_max_bytes = p.fetch_offset, p.partition_max_bytes
        self.current_leader_epoch = getattr(p, "current_leader_epoch", -1)
        self.log_start_offset = getattr(p, "log_start_offset", -1)
        self.last_fetched_epoch = getattr(p, "last_fetched_epoch", -1)

    def must_respond(self, data, update: bool) -> bool:
        """Kafka: CachedPartition.maybeUpdateResponseData. An error also forgets the high watermark,
        so the partition is answered again once the error is gone."""
        changed = (len(data.records) > 0 or data.error_code != ErrorCode.none
                   or getattr(data, "preferred_read_replica", -1) >= 0
                   or self.high_watermark != data.high_watermark
                   or self.local_log_start_offset != data.log_start_offset
                   or self.last_stable_offset != data.last_stable_offset)
        if update:
            self.high_watermark = -1 if data.error_code != ErrorCode.none else data.high_watermark
            self.local_log_start_offset, self.last_stable_offset = data.log_start_offset, data.last_stable_offset
        return changed


@dataclass(eq=False)
class FetchSession:
    id: int
    privileged: bool
    uses_topic_ids: bool
    creation_ms: int
    last_used_ms: int
    epoch: int
    partitions: OrderedDict = field(default_factory=OrderedDict)  # (topic key, partition) -> CachedPartition
    cached_size: int = -1  # the size at the last touch, as the eviction order sees it
    by_all: bool = False  # evictable by any new session (Kafka's evictableByAll)
    by_privileged: bool = False  # evictable by a follower's (evictableByPrivileged)

    def evictable_key(self) -> tuple:
        return (self.privileged, self.cached_size, self.id)

    def size_after(self, fetch_data, to_forget) -> int:
        """How many partitions :meth:`update` would leave (it adds, then forgets). ``to_forget``
        may be a dict of keys: then a long one is not walked, the session's keys are looked up in it."""
        held = self.partitions
        added = {key for key, _ in fetch_data if key not in held}
        if to_forget.__class__ is dict and len(to_forget) > len(held) + len(added):
            gone = sum(key in to_forget for key in held) + sum(key in to_forget for key in added)
        else:
            gone = len({key for key in to_forget if key in held or key in added})
        return len(held) + len(added) - gone

    def update(self, fetch_data, to_forget) -> None:
        """Kafka: FetchSession.update."""
        for key, p in fetch_data:
            cached = self.partitions.get(key)
            if cached is None:
                self.partitions[key] = CachedPartition(p)
            else:
                cached.update_request(p)
        if to_forget.__class__ is dict and len(to_forget) > len(self.partitions):
            to_forget = [key for key in self.partitions if key in to_forget]
        for key in to_forget:
            self.partitions.pop(key, None)


class _Shard:
    """Kafka: FetchSessionCacheShard. Its session ids lie in [number * id_range, (number + 1) * id_range)."""

    def __init__(self, max_entries: int, number: int, id_range: int, rng: random.Random) -> None:
        self.max_entries, self.number, self.id_range, self.rng = max_entries, number, id_range, rng
        self.sessions: dict[int, FetchSession] = {}
        self.partitions_cached = 0
        self.evictions = 0

    def _new_id(self) -> int:
        low, high = max(1, self.number * self.id_range), (self.number + 1) * self.id_range
        while True:
            session_id = self.rng.randrange(low, high)
            if session_id not in self.sessions:
                return session_id

    def maybe_create(self, now_ms: int, privileged: bool, uses_topic_ids: bool, partitions: OrderedDict) -> int:
        if len(self.sessions) >= self.max_entries and not self._try_evict(privileged, len(partitions), now_ms):
            return INVALID_SESSION_ID
        session = FetchSession(self._new_id(), privileged, uses_topic_ids, now_ms, now_ms,
                               next_epoch(INITIAL_EPOCH), partitions)
        self.sessions[session.id] = session
        self.touch(session, now_ms)
        return session.id

    def _try_evict(self, privileged: bool, size: int, now_ms: int) -> bool:
        """Kafka: FetchSessionCacheShard.tryEvict: the least recently used session if it is stale,
        else the smallest evictable one when it is worth less than the session asked for."""
        if not self.sessions:
            return False
        lru = min(self.sessions.values(), key=lambda s: (s.last_used_ms, s.id))
        if now_ms - lru.last_used_ms > EVICTION_MS:
            return self._evict(lru)
        candidates = [s for s in self.sessions.values() if (s.by_privileged if privileged else s.by_all)]
        if not candidates:
            return False
        victim = min(candidates, key=FetchSession.evictable_key)
        if (privileged, size, 0) < victim.evictable_key():
            return False
        return self._evict(victim)

    def _evict(self, session: FetchSession) -> bool:
        self.remove(session.id)
        self.evictions += 1
        return True

    def remove(self, session_id: int) -> FetchSession | None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            self.partitions_cached -= session.cached_size
        return session

    def touch(self, session: FetchSession, now_ms: int) -> None:
        """Kafka: FetchSessionCacheShard.touch. Evictability is decided here, at the last use."""
        session.last_used_ms = now_ms
        if session.cached_size != -1:
            self.partitions_cached -= session.cached_size
        session.cached_size = len(session.partitions)
        self.partitions_cached += session.cached_size
        aged = now_ms - session.creation_ms > EVICTION_MS
        session.by_privileged, session.by_all = (not session.privileged) or aged, aged


class FetchSessionCache:
    """Kafka: FetchSessionCache plus FetchManager.newContext."""

    def __init__(self, slots: int = 1000, rng: random.Random | None = None,
                 max_session_partitions: int = MAX_SESSION_PARTITIONS,
                 max_cached_partitions: int = MAX_CACHED_PARTITIONS) -> None:
        self.max_session_partitions, self.max_cached_partitions = max_session_partitions, max_cached_partitions
        self.id_range = INT32_MAX // SHARDS
        rng = rng or random.Random()
        self.shards = [_Shard(slots // SHARDS, n, self.id_range, rng) for n in range(SHARDS)]
        self._turn = 0
        self.incremental_fetches = 0  # incremental requests answered from a session

    def shard_of(self, session_id: int) -> _Shard | None:
        index = session_id // self.id_range
        return self.shards[index] if 0 <= index < SHARDS else None

    def next_shard(self) -> _Shard:
        """Kafka: FetchSessionCache.getNextCacheShard (round robin over every full fetch)."""
        shard, self._turn = self.shards[self._turn % SHARDS], self._turn + 1
        return shard

    def room_for(self, size: int, now_ms: int, own: FetchSession | None = None) -> bool:
        """Whether a session of ``size`` partitions fits (``own``: the session growing to it, its
        partitions counted already): others unused for 2 minutes are evicted, least recently used
        first, to make room."""
        if size > self.max_session_partitions:
            return False
        cached = sum(s.partitions_cached for s in self.shards) - (max(own.cached_size, 0) if own else 0)
        if cached + size <= self.max_cached_partitions:
            return True
        stale = sorted(((s.last_used_ms, s.id, shard, s) for shard in self.shards for s in shard.sessions.values()
                        if s is not own and now_ms - s.last_used_ms > EVICTION_MS), key=lambda e: e[:2])
        if cached + size - sum(max(e[3].cached_size, 0) for e in stale) > self.max_cached_partitions:
            return False  # evicting every stale session would not be enough: none is
        for _, _, shard, session in stale:
            if cached + size <= self.max_cached_partitions:
                break
            cached -= max(session.cached_size, 0)
            shard._evict(session)
        return True

    def stats(self) -> dict:
        """Kafka's gauges NumIncrementalFetchSessions and NumIncrementalFetchPartitionsCached, the
        evictions counted by IncrementalFetchSessionEvictionsPerSec, and incremental fetches served."""
        return {"sessions": sum(len(s.sessions) for s in self.shards),
                "partitions_cached": sum(s.partitions_cached for s in self.shards),
                "evictions": sum(s.evictions for s in self.shards),
                "incremental_fetches": self.incremental_fetches}

    def new_context(self, version: int, session_id: int, epoch: int, privileged: bool,
                    fetch_data: list | dict, to_forget: list | dict, now_ms: int):
        """Kafka: FetchManager.newContext. ``fetch_data``: ((topic key, partition), request
        partition) in request order, or the request's map of them (one entry per partition);
        ``to_forget``: (topic key, partition) keys, or a dict of them."""
        if epoch in (INITIAL_EPOCH, FINAL_EPOCH):  # a full request closes the session it names
            if session_id != INVALID_SESSION_ID:
                shard = self.shard_of(session_id)
                if shard is not None:
                    shard.remove(session_id)
            if epoch == FINAL_EPOCH:
                return SessionlessFetchContext(fetch_data)
            return FullFetchContext(self, fetch_data, privileged, version >= TOPIC_ID_VERSION)
        shard = self.shard_of(session_id)
        session = shard.sessions.get(session_id) if shard is not None else None
        if session is None:
            return SessionErrorContext(ErrorCode.fetch_session_id_not_found)
        if session.epoch != epoch:
            return SessionErrorContext(ErrorCode.invalid_fetch_session_epoch)
        if session.uses_topic_ids != (version >= TOPIC_ID_VERSION):
            return SessionErrorContext(ErrorCode.fetch_session_topic_id_error)
        if fetch_data.__class__ is dict:
            if len(fetch_data) - len(to_forget) > self.max_session_partitions:  # too many, however many overlap
                shard.remove(session.id)
                return SessionErrorContext(ErrorCode.fetch_session_id_not_found)
            fetch_data = fetch_data.items()
        if not self.room_for(session.size_after(fetch_data, to_forget), now_ms, session):
            shard.remove(session.id)  # before the update: a refused request's partitions are never made
            return SessionErrorContext(ErrorCode.fetch_session_id_not_found)
        session.update(fetch_data, to_forget)
        if not session.partitions:
            shard.remove(session.id)
            return SessionlessFetchContext(fetch_data)
        shard.touch(session, now_ms)
        session.epoch = next_epoch(session.epoch)
        self.incremental_fetches += 1
        return IncrementalFetchContext(session, session.epoch)


class BrokerFetchSessions:
    """Each broker's own FetchSessionCache: in a simulated cluster (shim.cluster) every broker keeps
    its sessions as each Kafka broker keeps its FetchManager's, so a session id one broker gave is
    unknown to another (FETCH_SESSION_ID_NOT_FOUND), and each has its own slots and bounds. A
    broker's cache is made at its first Fetch and dropped when the broker is stopped (node_down)."""

    def __init__(self, slots: int = 1000, **bounds) -> None:
        self.slots, self.bounds = slots, bounds
        self.caches: dict[int, FetchSessionCache] = {}

    def of(self, node_id: int) -> FetchSessionCache:
        cache = self.caches.get(node_id)
        if cache is None:
            cache = self.caches[node_id] = FetchSessionCache(self.slots, **self.bounds)
        return cache

    def forget(self, node_id: int) -> None:
        """Broker ``node_id`` stopped: its sessions are gone when it comes back."""
        self.caches.pop(node_id, None)

    def stats(self) -> dict:
        """FetchSessionCache.stats summed over the brokers, and each broker's under ``brokers``."""
        per_broker = {node_id: cache.stats() for node_id, cache in sorted(self.caches.items())}
        total = {key: sum(s[key] for s in per_broker.values())
                 for key in ("sessions", "partitions_cached", "evictions", "incremental_fetches")}
        return total | {"brokers": per_broker}


class SessionErrorContext:
    """The session named cannot be used: the whole answer is the error, no partitions, session id 0."""

    def __init__(self, error: int) -> None:
        self.error = error

    def partitions(self) -> list:
        return []

    def respond(self, results: list, now_ms: int, names: dict) -> tuple[int, int, list]:
        """``results``: ((topic key, partition), request partition, PartitionData) as read;
        ``names``: topic key -> the name it resolved to (None: unknown)."""
        return self.error, INVALID_SESSION_ID, []

    def throttled(self) -> tuple[int, int]:
        return ErrorCode.none, INVALID_SESSION_ID  # Kafka: FetchContext.getThrottledResponse's default


class SessionlessFetchContext(SessionErrorContext):
    """Epoch -1, or a request before v7: every partition asked for, answered, no session."""

    def __init__(self, fetch_data) -> None:
        super().__init__(ErrorCode.none)
        # Kafka's request map: a partition named twice is read and answered once (its last entry)
        self.fetch_data = fetch_data if fetch_data.__class__ is dict else dict(fetch_data)

    def partitions(self):
        return self.fetch_data.items()

    def respond(self, results: list, now_ms: int, names: dict) -> tuple[int, int, list]:
        return ErrorCode.none, INVALID_SESSION_ID, results


class FullFetchContext(SessionlessFetchContext):
    """Epoch 0: every partition answered, and a session made of them if the cache has room."""

    def __init__(self, cache: FetchSessionCache, fetch_data: list | dict, privileged: bool, uses_topic_ids: bool) -> None:
        super().__init__(fetch_data)
        self.cache, self.privileged, self.uses_topic_ids = cache, privileged, uses_topic_ids

    def respond(self, results: list, now_ms: int, names: dict) -> tuple[int, int, list]:
        if not self.cache.room_for(len(results), now_ms):
            return ErrorCode.none, INVALID_SESSION_ID, results
        partitions = OrderedDict()
        for key, p, data in results:
            cached = partitions[key] = CachedPartition(p, names.get(key[0]))
            cached.must_respond(data, True)
        session_id = self.cache.next_shard().maybe_create(now_ms, self.privileged, self.uses_topic_ids, partitions)
        return ErrorCode.none, session_id, results


class IncrementalFetchContext:
    """A live session: every partition of it read, only those with news answered."""

    def __init__(self, session: FetchSession, expected_epoch: int) -> None:
        self.session, self.expected_epoch = session, expected_epoch

    def partitions(self) -> list:
        return list(self.session.partitions.items())

    def _superseded(self) -> bool:
        """Kafka: another request of the session came in while this one waited."""
        return self.session.epoch != self.expected_epoch

    def respond(self, results: list, now_ms: int, names: dict) -> tuple[int, int, list]:
        session = self.session
        if self._superseded():
            return ErrorCode.invalid_fetch_session_epoch, session.id, []
        kept = []
        for key, p, data in results:
            cached = session.partitions.get(key)
            if cached is None or cached.must_respond(data, True):
                kept.append((key, p, data))
                if cached is not None and len(data.records) > 0:
                    session.partitions.move_to_end(key)  # Kafka: the others go first next time
        return ErrorCode.none, session.id, kept

    def throttled(self) -> tuple[int, int]:
        error = ErrorCode.invalid_fetch_session_epoch if self._superseded() else ErrorCode.none
        return error, self.session.id
