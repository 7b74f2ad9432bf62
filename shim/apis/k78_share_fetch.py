"""ShareFetch (78), v1: fetch records for a share group, acquiring them (KIP-932).

The request names the member's share session by epoch (:mod:`shim.coordinators.share.sessions`):
0 opens one over the listed partitions (no acknowledgements allowed: INVALID_REQUEST), n > 0 adds the
listed partitions and drops the forgotten ones, -1 only acknowledges and closes the session,
releasing what the member still holds of its partitions; so does the client's connection closing
while the session it opened is open (Kafka 4.1's member-leave listener), and a fetch parked in a
session closed meanwhile acquires nothing. Piggybacked acknowledgements (Accept, Release, Reject,
Gap) are applied first; each partition answers its own acknowledge error (INVALID_RECORD_STATE for
records the member does not hold; COORDINATOR_NOT_AVAILABLE, rolled back, for acknowledgements
whose share-state write a failed --fsync always job lost: shim.apis._share.Acknowledgements). Then
every partition of the session is asked for records to acquire: whole batches are returned with
the acquired ranges (first, last offset, delivery count)
and the acquisition lock time; the request parks until something is acquired or MaxWaitMs passes
(an append, an acknowledgement or an expired lock wakes it). MaxRecords bounds the acquired records
at a batch boundary; MinBytes is treated as 1 and BatchSize is not used.
A partition fetched first is initialized from the group's share.auto.offset.reset; under
``by_duration`` with no record that recent it answers OFFSET_NOT_AVAILABLE with Kafka's message and
is not tried again within the request, which still parks as usual: Kafka's initialization reads
the share coordinator asynchronously, so its failure reaches a request already in the delayed
share fetch purgatory, where the failed partition is never acquirable (SharePartitionManager's
handleInitializationException, ShareFetch.addErroneous, DelayedShareFetch).
Unknown topic ids are UNKNOWN_TOPIC_ID, topics without READ TOPIC_AUTHORIZATION_FAILED, per
partition; a group without READ is GROUP_AUTHORIZATION_FAILED for the whole request.
A consumer_byte_rate quota applies as to Fetch (Kafka's KafkaApis.processShareFetchResponse, the
same sensor): MaxBytes is capped to what the quota allows over its window, the answer's record
bytes are counted, and an answer over the quota is not counted and goes out with throttle_time_ms
and no partitions but those with acknowledgement results; the records it acquired stay acquired
until their locks expire, as in Kafka.
"""

import time

from ..errors import ErrorCode, KafkaError
from ..node import now_ms
from ._share import WRITE_LOST, Acknowledgements, current_leader, request_error, resolve, topic_name
from ._pace import Pacer
from .registry import api

INITIAL_EPOCH, FINAL_EPOCH = 0, -1


@api(78, "ShareFetch", 1, 1)
async def handle(ctx, request):
    refused = request_error(ctx, request)
    if refused is not None:
        return _top_error(ctx, *refused)
    group, member, epoch = request.group_id, request.member_id, request.share_session_epoch
    pace = Pacer()  # a 2 MiB request names 350,000 partitions
    requested = await resolve(ctx, request.topics, pace)
    valid, acknowledging = {}, False  # the partitions without error, once each, in the order named
    async for _, name, p, batches, error in pace.each(requested):
        if error is None:
            valid[(name, p)] = None
        acknowledging = acknowledging or bool(batches)
    share, now = ctx.node.share, now_ms()
    try:
        session = _session(ctx, group, member, epoch, acknowledging, valid, await _forgotten(ctx, request, pace))
    except KafkaError as e:
        return _top_error(ctx, e.code, e.message)
    answers, acknowledged = {}, set()  # (topic id, partition) -> dict of PartitionData fields; those acknowledged
    acks = Acknowledgements(ctx)
    async for tid, name, p, batches, error in pace.each(requested):  # paced, as ShareAcknowledge
        answer = answers[(tid, p)] = _answer(ctx, name, p, error)
        if batches and error is None:
            answer["acknowledge_error_code"], answer["acknowledge_error_message"] = acks.apply(
                (tid, p), group, member, name, p, batches, now)
            acknowledged.add((tid, p))
    for key in await acks.lost():
        answers[key].update(acknowledge_error_code=ErrorCode.coordinator_not_available,
                            acknowledge_error_message=WRITE_LOST)
    size = 0  # the bytes of records acquired
    if session is None:
        share.close_session(group, member, ctx.node_id)
    else:
        size = await _fetch(ctx, request, session, answers, epoch == INITIAL_EPOCH)
    throttle = _throttle(ctx, answers, acknowledged, size)
    lock_ms = share.configs.int(group, "share.record.lock.duration.ms", share.settings.record_lock_duration_ms)
    return ctx.response(throttle_time=throttle, error_code=ErrorCode.none, error_message=None,
                        acquisition_lock_timeout=lock_ms, responses=await _topics(ctx, answers, pace),
                        node_endpoints=())


def _throttle(ctx, answers, acknowledged, size) -> int:
    """Kafka: a ShareFetch over consumer_byte_rate is not counted and is answered empty but for the
    acknowledgement results, with its throttle time."""
    quota, client_id, now = ctx.node.fetch_quota, ctx.header.client_id, now_ms()
    throttle = ctx.throttle(quota.record(client_id, size, now, ctx.quota_user))
    if throttle > 0:
        quota.unrecord(client_id, size, now, ctx.quota_user)
        for key in [k for k in answers if k not in acknowledged]:
            del answers[key]
        for a in answers.values():
            a.update(records=b"", acquired_records=(), error_code=ErrorCode.none)
    return throttle


def _session(ctx, group, member, epoch, acknowledging, valid, forgotten):
    share, node = ctx.node.share, ctx.node_id
    if epoch == INITIAL_EPOCH:
        if acknowledging:
            raise KafkaError(ErrorCode.invalid_request, "acknowledgements in the request that opens a share session")
        return share.sessions.open(group, member, valid, node, connection=ctx.session)
    if epoch == FINAL_EPOCH:
        share.sessions.get(group, member, node)
        return None
    return share.sessions.advance(group, member, epoch, valid, forgotten, node)


async def _forgotten(ctx, request, pace) -> dict:
    """The forgotten partitions of known topics, once each (a topic id looked up once)."""
    names, forgotten = {}, {}
    async for t in pace.each(request.forgotten_topics_data):
        if t.topic_id not in names:
            names[t.topic_id] = topic_name(ctx, t.topic_id)
        if names[t.topic_id]:
            async for p in pace.each(t.partitions):
                forgotten[(names[t.topic_id], p)] = None
    return forgotten


async def _fetch(ctx, request, session, answers, full) -> int:
    """Acquire from the session's partitions; park until something is acquired or max_wait passes.
    The bytes of records acquired."""
    deadline = time.monotonic() + max(request.max_wait.total_seconds(), 0)
    ids = {name: info.topic_id for name, info in ctx.node.logs.topics.items()}
    gone = getattr(ctx.session, "gone", None)  # its client closed the connection (shim.connection)
    failed: dict = {}  # (topic, partition) -> the KafkaError its initialization met; not retried in this request
    while True:
        got = _acquire(ctx, request, session, ids, failed)
        remaining = deadline - time.monotonic()
        if got or remaining <= 0 or (gone is not None and gone.done()):
            break
        await ctx.node.changes.wait(remaining, gone, list(session.partitions))  # its partitions, or anything
    for (name, p), (records, ranges) in got.items():
        answer = answers.setdefault((ids[name], p), _answer(ctx, name, p, None))
        answer["records"] = records
        answer["acquired_records"] = tuple(ctx.make("AcquiredRecords", first_offset=f, last_offset=l, delivery_count=c)
                                           for f, l, c in ranges)
    for (name, p), e in failed.items():  # Kafka: ShareFetch.addErroneousToResponse
        answers.setdefault((ids[name], p), _answer(ctx, name, p, None)).update(error_code=e.code,
                                                                                error_message=e.message)
    if full:
        for name, p in session.partitions:
            answers.setdefault((ids[name], p), _answer(ctx, name, p, None))
    return sum(len(records) for records, _ in got.values())


def _acquire(ctx, request, session, ids, failed: dict) -> dict:
    """What each partition of the session acquires; a partition whose share state cannot be
    initialized goes into ``failed`` (Kafka 4.1: SharePartitionManager's
    handleInitializationException, ShareFetch.addErroneous)."""
    share, now = ctx.node.share, now_ms()
    if not share.sessions.is_open(session):  # closed while parked (its connection closed): acquire nothing
        return {}
    budget_records = request.max_records if request.max_records > 0 else 2**31 - 1
    cap = ctx.node.fetch_quota.window_bytes(ctx.header.client_id, ctx.quota_user)
    budget_bytes = request.max_bytes if cap >= request.max_bytes else int(cap)
    got = {}
    for name, p in list(session.partitions):
        plog = ctx.node.logs.logs.get((name, p))
        if plog is None or name not in ids or budget_records <= 0 or budget_bytes <= 0 or (name, p) in failed:
            continue
        try:
            a = share.acquire(session.group_id, session.member_id, name, p, plog, budget_records, budget_bytes, now)
        except KafkaError as e:
            failed[(name, p)] = e
            continue
        if a.ranges:
            got[(name, p)] = (a.records, a.ranges)
            budget_records -= sum(last - first + 1 for first, last, _ in a.ranges)
            budget_bytes -= len(a.records)
    return got


def _answer(ctx, name, p, error) -> dict:
    return dict(partition_index=p, error_code=error or ErrorCode.none, error_message=None,
                acknowledge_error_code=ErrorCode.none, acknowledge_error_message=None,
                current_leader=current_leader(ctx, name, p), records=b"", acquired_records=())


async def _topics(ctx, answers, pace):
    by_topic: dict = {}
    async for (tid, _), fields in pace.each(answers.items()):
        by_topic.setdefault(tid, []).append(ctx.make("PartitionData", **fields))
    return tuple(ctx.make("ShareFetchableTopicResponse", topic_id=tid, partitions=tuple(parts))
                 for tid, parts in by_topic.items())


def _top_error(ctx, code, message=None):
    return ctx.response(error_code=code, error_message=message, acquisition_lock_timeout=0, responses=(),
                        node_endpoints=())
