"""ListOffsets (2), v0-10.

v0 (deprecated in Kafka 3.9, gone in 4.0) answers Kafka's old-style list: up to max_num_offsets
segment start offsets, newest first, of the segments last modified at or before the timestamp (plus
the log end while the active segment holds data); -1 starts from the latest, -2 gives the earliest
(UnifiedLog.legacyFetchOffsetsBefore).

LATEST (-1) is the last stable offset under read_committed, else the high watermark; EARLIEST (-2)
and EARLIEST_LOCAL (-4, v8) the log start offset; LATEST_TIERED (-5, v9, KIP-1005) offset and
timestamp -1, as Kafka answers for a topic without tiered storage; MAX_TIMESTAMP (-3, v7) the record with the
largest timestamp and a timestamp the first record at or after it, each only when below the fetchable
end (the LSO under read_committed, else the high watermark), else offset -1 with no error (Kafka:
Partition.fetchOffsetForTimestamp, ReplicaManager.fetchOffset). A timestamp search reads batch
headers only (shim.storage.time_search); one with more than a megabyte to walk runs on a worker
thread, so a segment of out-of-order timestamps never holds the event loop.

In a simulated cluster (shim.cluster) only the leader answers (v1+; NOT_LEADER_OR_FOLLOWER
elsewhere, FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH for a stale or future current leader epoch);
LATEST carries the current leader epoch, other offsets the epoch they were written in.
A partition of the offline data directory (a failed fsync, shim.storage.group_commit) is
KAFKA_STORAGE_ERROR before any leader check (Kafka: ReplicaManager's HostedPartition.Offline).
"""

import asyncio

from ..errors import ErrorCode, KafkaError
from ..node import now_ms
from ._authz import denied_topics_paced
from ._pace import Pacer
from .registry import api
from ..storage.time_search import INLINE_BYTES

LATEST, EARLIEST, MAX_TIMESTAMP, EARLIEST_LOCAL, LATEST_TIERED = -1, -2, -3, -4, -5
MIN_VERSION = {MAX_TIMESTAMP: 7, EARLIEST_LOCAL: 8, LATEST_TIERED: 9}


@api(2, "ListOffsets", 0, 10)  # v10 adds timeout_ms (KIP-1075), for remote storage: nothing waits here
async def handle(ctx, request):
    if ctx.version == 0:
        return await _legacy(ctx, request, Pacer())
    committed = getattr(request, "isolation_level", 0) == 1
    pace = Pacer()  # the ACLs asked paced too: 110,000 distinct topics of 2 MiB took 0.29 CPU s of one turn
    denied = await denied_topics_paced(ctx, [t.name for t in request.topics], pace)
    searches = []  # (search, finish) of the partitions asked by timestamp
    twice = _duplicates(request)
    try:
        topics = [(t.name, await _partitions(ctx, t, committed, t.name in denied, searches, pace, twice))
                  for t in request.topics]
    except BaseException:
        for search, _ in searches:
            search.close()
        raise
    await _run(searches)
    return ctx.response(topics=tuple([ctx.make("ListOffsetsTopicResponse", name=name, partitions=tuple(
        [p() if callable(p) else p async for p in pace.each(parts)])) async for name, parts in pace.each(topics)]))


def _duplicates(request) -> set:
    """Kafka: ListOffsetsRequest.duplicatePartitions -- a partition named more than once anywhere in
    the request (in one topic entry or in several); every mention of it is INVALID_REQUEST. Counted
    within each topic entry only, a request naming one partition in 100,000 topic entries planned
    as many timestamp searches, each holding a duplicated file descriptor, and ran the broker out of
    them (EMFILE, an internal error)."""
    seen, twice = set(), set()
    for t in request.topics:
        for p in t.partitions:
            tp = (t.name, p.partition_index)
            (twice if tp in seen else seen).add(tp)
    return twice


async def _partitions(ctx, t, committed, denied, searches, pace, twice) -> list:
    parts = []
    for p in t.partitions:
        await pace()
        duplicate = (t.name, p.partition_index) in twice
        parts.append(_partition(ctx, t.name, p, committed, duplicate, denied, searches))
    return parts


async def _run(searches) -> None:
    """Run the planned timestamp searches, on a worker thread when they have much to walk."""
    if not searches:
        return
    planned = [search for search, _ in searches]
    if sum(search.cost for search in planned) <= INLINE_BYTES:
        found = _run_all(planned)
    else:
        found = await asyncio.get_running_loop().run_in_executor(None, _run_all, planned)
    for (_, finish), answer in zip(searches, found):
        finish.found = answer


def _run_all(searches) -> list:
    try:
        return [search.run() for search in searches]
    finally:  # a search that raised leaves the rest to be closed
        for search in searches:
            search.close()


def _partition(ctx, topic, p, committed, duplicate, denied, searches):
    try:
        if denied:
            raise KafkaError(ErrorCode.topic_authorization_failed)
        if duplicate:
            raise KafkaError(ErrorCode.invalid_request, "partition listed twice")
        plog = ctx.node.logs.get(topic, p.partition_index)
        state = ctx.leader_of(topic, p.partition_index, getattr(p, "current_leader_epoch", -1))
        found = _lookup(ctx, plog, p.timestamp, committed)
    except KafkaError as e:
        return ctx.make("ListOffsetsPartitionResponse", partition_index=p.partition_index, error_code=e.code,
                        timestamp=-1, offset=-1, leader_epoch=-1)
    if not isinstance(found, tuple):  # a search to run first
        finish = _Finish(ctx, p, state)
        searches.append((found, finish))
        return finish
    return _answer(ctx, p, state, found)


class _Finish:
    """A partition's answer once its timestamp search has run."""

    def __init__(self, ctx, p, state) -> None:
        self.ctx, self.p, self.state, self.found = ctx, p, state, None

    def __call__(self):
        return _answer(self.ctx, self.p, self.state, self.found or (-1, -1))


def _answer(ctx, p, state, found):
    offset, ts = found
    return ctx.make("ListOffsetsPartitionResponse", partition_index=p.partition_index, error_code=ErrorCode.none,
                    timestamp=ts, offset=offset, leader_epoch=_epoch(state, p.timestamp, offset))


def _epoch(state, ts, offset) -> int:
    if offset < 0:
        return -1
    return state.leader_epoch if ts == LATEST else state.epoch_for(offset)


def _lookup(ctx, plog, ts, committed):
    if ts in MIN_VERSION and ctx.version < MIN_VERSION[ts] or ts < LATEST_TIERED:
        raise KafkaError(ErrorCode.unsupported_version, f"timestamp {ts} is not supported by ListOffsets v{ctx.version}")
    if ts == LATEST:
        return (plog.last_stable_offset if committed else plog.high_watermark), -1
    if ts in (EARLIEST, EARLIEST_LOCAL):
        return plog.log_start_offset, -1
    if ts == LATEST_TIERED:  # Kafka: UnifiedLog.fetchOffsetByTimestamp without remote storage
        return -1, -1
    if ts == MAX_TIMESTAMP:
        found = plog.max_timestamp_offset()
        # Kafka: ReplicaManager.fetchOffset drops what it found at or past the last fetchable offset
        if found and found[0] >= (plog.last_stable_offset if committed else plog.high_watermark):
            found = None
        return found or (-1, -1)
    return plog.timestamp_search(ts, committed) or (-1, -1)


async def _legacy(ctx, request, pace):
    """v0. Paced: a 2 MiB request's 260,000 partitions took 1.1 CPU s of one turn."""
    topics = []
    denied = await denied_topics_paced(ctx, [t.name for t in request.topics], pace)
    async for t in pace.each(request.topics):
        parts = []
        async for p in pace.each(t.partitions):
            code, offsets = ErrorCode.none, ()
            if t.name in denied:
                code = ErrorCode.topic_authorization_failed
            elif p.timestamp < EARLIEST:
                code = ErrorCode.unsupported_version
            else:
                try:
                    ctx.leader_of(t.name, p.partition_index)
                    offsets = tuple(ctx.node.logs.get(t.name, p.partition_index).legacy_offsets_before(
                        p.timestamp, p.max_num_offsets, now_ms()))
                except KafkaError as e:
                    code = e.code
            parts.append(ctx.make("ListOffsetsPartitionResponse", partition_index=p.partition_index, error_code=code,
                                  old_style_offsets=offsets))
        topics.append(ctx.make("ListOffsetsTopicResponse", name=t.name, partitions=tuple(parts)))
    return ctx.response(topics=tuple(topics))
