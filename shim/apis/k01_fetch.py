"""Fetch (1), v0-18 (v17 adds only ReplicaDirectoryId, KIP-853, and v18 only the replica's HighWatermark:
tagged fields of follower fetches, which consumers do not send).

Incremental fetch sessions (KIP-227) from v7: shim.fetch_sessions decides which partitions a
request reads (the session's, for an incremental one) and which of them the answer carries; a
session error is the whole answer's error_code. Topics by name before v13, by topic id from v13.
In a simulated cluster each broker keeps its own sessions, as each Kafka broker does.
read_committed reads up to the last stable offset and lists every aborted transaction that overlaps
the returned range (never null); read_uncommitted reads to the high watermark with a null list.
The first partition with data returns at least one whole batch even above the limits (KIP-74).
The broker's fetch.max.bytes caps what one request reads (and its min_bytes), whatever its MaxBytes
(Kafka's KafkaApis); a partition named twice is read and answered once. A request that has less
than min_bytes parks until a log changes (append or marker, so LSO moves wake it too) or max_wait
passes.
v0-3 (deprecated in Kafka 3.9, gone in 4.0) get the records down-converted to messages of magic 0
(v0-1) or 1 (v2-3), as Kafka's LazyDownConversionRecords does: control batches left out, headers
lost, from the fetch offset on (a read holding only control batches answers no messages, as Kafka's
does; the consumer moves past them once records follow); a read over 256 KiB is converted on a
worker thread, so a large one does not hold the loop.
In a simulated cluster (shim.cluster) only the leader serves a consumer's fetch (no follower
fetching, KIP-392 is not built): another broker answers NOT_LEADER_OR_FOLLOWER; a current leader
epoch below the partition's is FENCED_LEADER_EPOCH, above it UNKNOWN_LEADER_EPOCH; from v16 both
errors carry the current leader and its address (KIP-951). Reads stop at the high watermark, which
a slowed follower holds back.
A consumer_byte_rate quota counts the record bytes of each answer; a client over it gets an empty
answer with throttle_time_ms and its connection is not read for that long, as Kafka answers. A
consumer's MaxBytes is capped to what its quota allows over the window (KAFKA-9677).
A partition of the offline data directory (a failed fsync, shim.storage.group_commit) is
KAFKA_STORAGE_ERROR before any leader check (Kafka: ReplicaManager's HostedPartition.Offline).
A partition answered with any error (OFFSET_OUT_OF_RANGE, NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH,
KAFKA_STORAGE_ERROR ...) carries unknown (-1) high watermark, last stable and log start offsets, as
Kafka's readFromLog answers every failed read (without tiered storage, OFFSET_OUT_OF_RANGE too).
"""

import asyncio
import dataclasses
import time

from kafka_codecs.legacy import down_convert

from ..errors import ErrorCode, KafkaError
from ..fetch_sessions import TOPIC_ID_VERSION, CachedPartition, SessionlessFetchContext
from ..node import now_ms
from ..protocol.messages import SENDFILE_MIN_BYTES
from ..security.acls import AclOperation as O
from ..storage.segment import FileRecords, OpenedRecords
from ._authz import denied_topics
from ._leaders import NOT_LEADER, leader_hint, node_endpoints
from ._pace import SLICE_S, Pacer
from .registry import api

READ_COMMITTED = 1
SESSION_VERSION = 7  # KIP-227: older requests have no session fields
MAGIC_2_VERSION = 4  # older fetches read messages of magic 0/1 only
_UNSEEN = object()
PACE_EVERY = 64  # partitions between looks at the clock
SLICE_ITEMS = 1024  # request entries gathered between looks at the clock (about 0.2 ms)
WATCH_LIMIT = WATCH_TOPICS_LIMIT = 1000  # partitions, else topics, a parked Fetch watches one by one
DOWN_CONVERT_INLINE_BYTES = 256 * 1024  # larger reads of Fetch v0-3 are down-converted off the loop


@api(1, "Fetch", 0, 18)
async def handle(ctx, request):
    deadline = time.monotonic() + max(request.max_wait.total_seconds(), 0)
    pace = Pacer()
    context = await _context(ctx, request, pace)
    entries = context.partitions()
    gone = getattr(ctx.session, "gone", None)  # the client closed its connection: no answer is due
    watched = _UNSEEN
    while True:
        results, names, total, errors, hinted = await _collect(ctx, request, entries)
        remaining = deadline - time.monotonic()
        if not entries or total >= min(request.min_bytes, ctx.node.fetch_max_bytes) or errors or remaining <= 0 or (gone is not None and gone.done()):
            response = await _respond(ctx, context, results, names, total, hinted)
            await _release(pace, results, getattr(context, "fetch_data", None))
            return response
        watched = _watched(entries, names) if watched is _UNSEEN else watched
        await _release(pace, results)
        await ctx.node.changes.wait(remaining, gone, watched)


async def _context(ctx, request, pace):
    """Kafka: FetchManager.newContext; partitions are keyed by topic name before v13, by topic id
    from it. The request's partitions are Kafka's request map (FetchRequest.fetchData, a
    LinkedHashMap: one entry per partition, where it first came, with its last fields)."""
    field = "topic_id" if ctx.version >= TOPIC_ID_VERSION else "topic"
    topics = ((getattr(t, field), t.partitions) for t in request.topics)
    data = await _gather(pace, topics, _partition_key, {})
    if ctx.version < SESSION_VERSION:
        return SessionlessFetchContext(data)
    forget = await _gather(pace, ((getattr(f, field), f.partitions) for f in request.forgotten_topics_data),
                           _forgotten_key, {})
    cache = ctx.node.fetch_sessions.of(ctx.node_id)
    return cache.new_context(ctx.version, request.session_id, request.session_epoch, _replica_id(request) >= 0, data,
                             forget, now_ms())


def _partition_key(key, p):
    return (key, p.partition), p


def _forgotten_key(key, index):
    return (key, index), None


async def _gather(pace, topics, pair, out):
    """``pair(topic key, item)`` for every item of every topic, in order, into ``out`` (a list, or
    a dict keeping each key where it first came with its last value), SLICE_ITEMS at a time between
    looks at the clock."""
    add = out.extend if out.__class__ is list else out.update
    for key, items in topics:
        for start in range(0, len(items), SLICE_ITEMS):
            add([pair(key, item) for item in items[start:start + SLICE_ITEMS]])
            await pace()
    return out


def _watched(entries, names) -> set | None:
    """The (topic, partition) pairs whose change wakes a parked Fetch, as Kafka's purgatory watches
    a delayed fetch's partitions; past WATCH_LIMIT of them its topics, and past WATCH_TOPICS_LIMIT
    topics None (any change): registering each of 100,000 partitions would hold the loop."""
    if len(entries) <= WATCH_LIMIT:
        return {(names.get(key[0]), key[1]) for key, _p in entries}
    topics = set(names.values())
    return topics if len(topics) <= WATCH_TOPICS_LIMIT else None


async def _release(pace, *containers) -> None:
    """Empties the request's big lists and maps a slice at a time: freeing 100,000 entries is
    about 10 ms of one turn."""
    for c in containers:
        while c:
            if c.__class__ is dict:
                for _ in range(min(SLICE_ITEMS, len(c))):
                    c.popitem()
            else:
                del c[-SLICE_ITEMS:]
            await pace()


async def _respond(ctx, context, results, names, total, hinted):
    """Kafka: a Fetch over consumer_byte_rate is answered empty with its throttle time, and not counted."""
    quota, client_id, now = ctx.node.fetch_quota, ctx.header.client_id, now_ms()
    throttle = ctx.throttle(quota.record(client_id, total, now, ctx.quota_user))
    if throttle > 0:
        quota.unrecord(client_id, total, now, ctx.quota_user)
        (error, session_id), results = context.throttled(), ()
    else:
        error, session_id, results = context.respond(results, now, names)
    return ctx.response(error_code=error, session_id=session_id, responses=await _topics(ctx, results),
                        node_endpoints=node_endpoints(ctx, hinted),
                        throttle_time=throttle)


async def _topics(ctx, results):
    """Kafka (FetchResponse.toMessage): consecutive partitions of one topic share its entry."""
    grouped, pace, last = [], Pacer(), _UNSEEN
    for start in range(0, len(results), SLICE_ITEMS):
        for (topic_key, _), _p, data in results[start:start + SLICE_ITEMS]:
            if topic_key is not last and topic_key != last:  # one key object a topic, mostly
                grouped.append((topic_key, []))
                last = topic_key
            grouped[-1][1].append(data)
        await pace()
    field = "topic_id" if ctx.version >= TOPIC_ID_VERSION else "topic"
    return tuple(ctx.make("FetchableTopicResponse", partitions=tuple(parts), **{field: key}) for key, parts in grouped)


async def _collect(ctx, request, entries):
    committed = getattr(request, "isolation_level", 0) == READ_COMMITTED
    # Kafka: a fetch reads at most fetch.max.bytes (55 MiB), whatever its MaxBytes asks for
    budget = min(request.max_bytes if ctx.version >= 3 else 2**31 - 1, ctx.node.fetch_max_bytes)
    if _replica_id(request) < 0:  # Kafka (KAFKA-9677): a consumer asks for no more than its quota's window allows
        cap = ctx.node.fetch_quota.window_bytes(ctx.header.client_id, ctx.quota_user)
        budget = int(cap) if cap < budget else budget
    names, denied, last_key, last_name = {}, set(), _UNSEEN, None
    total, errors, results, hinted, walk = 0, False, [], set(), None
    for count, (key, p) in enumerate(entries, 1):
        if not count & PACE_EVERY - 1:
            walk = walk or _Walk(results)
            await walk.pace()
        if key[0] is not last_key:  # a topic's partitions come together, under one key object
            last_key = key[0]
            last_name = _resolved(ctx, request, last_key, names, denied)
        name, code = last_name, ErrorCode.none
        if p.__class__ is CachedPartition and ctx.version >= TOPIC_ID_VERSION:
            name, code = _session_topic(ctx, p, name)
        if code != ErrorCode.none or (name is not None and name in denied):
            code = code or ErrorCode.topic_authorization_failed
            data = _data(ctx, p.partition, code, -1, -1, -1, None, b"")
        else:
            data = _partition(ctx, name, p, committed, min(p.partition_max_bytes, max(budget - total, 0)),
                              total == 0, hinted)
            if data.records.__class__ is _Unconverted:
                data = await data.records.converted(data)
        errors |= data.error_code != ErrorCode.none
        total += len(data.records)
        results.append((key, p, data))
    paced = walk is not None and walk.paced
    if paced:
        walk.pin()
    # every region of a paced walk holds its file: the answer may be encoded on a worker thread
    ctx.large_answer = ctx.records_pinned = paced
    return results, names, total, errors, hinted


def _resolved(ctx, request, topic_key, names: dict, denied: set):
    """The topic's name (None: unknown), resolved and authorized once a request."""
    if topic_key in names:
        return names[topic_key]
    name = names[topic_key] = _topic_name(ctx, topic_key)
    if name is not None:
        denied |= _denied(ctx, request, [name])
    return name


def _session_topic(ctx, p, name):
    """Kafka: a session's partition keeps the name its topic id first resolved to
    (CachedPartition.maybeResolveUnknownName). Once that topic is deleted the partition is
    UNKNOWN_TOPIC_OR_PARTITION, or INCONSISTENT_TOPIC_ID when a topic of that name was created
    again (ReplicaManager's topic id check)."""
    if p.topic is None or p.topic == name:
        p.topic = name
        return name, ErrorCode.none
    if p.topic in ctx.node.logs.topics:
        return None, ErrorCode.inconsistent_topic_id
    return None, ErrorCode.unknown_topic_or_partition


class _Walk:
    """A Fetch's walk over many partitions (one of a few never makes one): it looks at the clock
    every PACE_EVERY partitions and yields after a slice. Records read from a segment name the
    segment's file, which retention, DeleteRecords or the cleaner may delete while the loop is
    given up; before each yield the records collected since the last are pinned: read into
    memory when small (as the answer's encoding would), else given a file handle of their own (as
    it would too)."""

    __slots__ = ("results", "deadline", "paced", "_next")

    def __init__(self, results: list) -> None:
        self.results, self.deadline, self.paced = results, time.monotonic() + SLICE_S, False
        self._next = 0  # where pin() goes on from

    async def pace(self) -> None:
        if time.monotonic() >= self.deadline:
            self.pin()
            self.paced = True
            await asyncio.sleep(0)
            self.deadline = time.monotonic() + SLICE_S

    def pin(self) -> None:
        results = self.results
        for i in range(self._next, len(results)):
            key, p, data = results[i]
            records = data.records
            if records.__class__ is FileRecords:
                results[i] = key, p, dataclasses.replace(data, records=records.read() if len(
                    records) < SENDFILE_MIN_BYTES else OpenedRecords(records.open()))
        self._next = len(results)


def _denied(ctx, request, names) -> set:
    """Kafka: a follower's fetch needs CLUSTER_ACTION (every partition TOPIC_AUTHORIZATION_FAILED
    without it), a consumer's READ on each topic."""
    if _replica_id(request) >= 0:
        return set() if ctx.authorize_cluster(O.CLUSTER_ACTION) else set(names)
    return denied_topics(ctx, names)


def _replica_id(request) -> int:
    state = getattr(request, "replica_state", None)
    return state.replica_id if state is not None else getattr(request, "replica_id", -1)


def _topic_name(ctx, topic_key):
    if ctx.version < TOPIC_ID_VERSION:
        return topic_key
    info = ctx.node.logs.topic_by_id(topic_key)
    return info.name if info else None


def _partition(ctx, name, p, committed, max_bytes, min_one, hinted):
    try:
        if name is None:
            raise KafkaError(ErrorCode.unknown_topic_id)
        plog = ctx.node.logs.get(name, p.partition)
        ctx.leader_of(name, p.partition, getattr(p, "current_leader_epoch", -1))
        r = plog.read(p.fetch_offset, max_bytes, committed, min_one)
    except KafkaError as e:
        # Kafka: every error of a read, OFFSET_OUT_OF_RANGE too, is a LogReadResult of unknown offsets
        hint = leader_hint(ctx, name, p.partition, e.code, hinted, (NOT_LEADER, ErrorCode.fenced_leader_epoch))
        return _data(ctx, p.partition, e.code, -1, -1, -1, None, b"", **hint)
    records = r.records
    if ctx.version < MAGIC_2_VERSION:
        magic = 0 if ctx.version <= 1 else 1
        if len(records) > DOWN_CONVERT_INLINE_BYTES:  # read now, converted off the loop (_collect)
            records = _Unconverted(r.data, magic, p.fetch_offset)
        else:
            records = down_convert(r.data, magic, p.fetch_offset)
    aborted = None
    if r.aborted is not None:
        aborted = tuple(ctx.make("AbortedTransaction", producer_id=a.producer_id, first_offset=a.first_offset) for a in r.aborted)
    return _data(ctx, p.partition, ErrorCode.none, r.high_watermark, r.last_stable_offset, r.log_start_offset, aborted, records)


class _Unconverted:
    """Records a Fetch v0-3 read that are down-converted on a worker thread: a Python pass over
    every record, about 50 ms a megabyte, that held the loop for seconds on a large read."""

    __slots__ = ("data", "magic", "offset")

    def __init__(self, data: bytes, magic: int, offset: int) -> None:
        self.data, self.magic, self.offset = data, magic, offset

    def __len__(self) -> int:
        return len(self.data)

    async def converted(self, data):
        loop = asyncio.get_running_loop()
        records = await loop.run_in_executor(None, down_convert, self.data, self.magic, self.offset)
        return dataclasses.replace(data, records=records)


def _data(ctx, index, code, hw, lso, start, aborted, records, **hint):
    return ctx.make("PartitionData", partition_index=index, error_code=code, high_watermark=hw,
                    last_stable_offset=lso, log_start_offset=start, aborted_transactions=aborted,
                    preferred_read_replica=-1, records=records, **hint)
