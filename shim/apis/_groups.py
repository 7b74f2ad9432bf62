"""Helpers shared by the group APIs: awaiting a long-poll, milliseconds, offsets to commit, per-partition results."""

from __future__ import annotations

import asyncio
import datetime

from ..cluster import GROUP
from ..coordinators.group import OffsetAndMetadata
from ..errors import ErrorCode
from ._authz import denied_topics_paced
from ._loading import offsets_code
from ._share import is_share_group

_MS = datetime.timedelta(milliseconds=1)


async def settle(pending):
    """The result of a coordinator :class:`~shim.coordinators.group.Pending`, waiting if needed
    (a parked JoinGroup or SyncGroup holds only its own connection, like a parked Fetch)."""
    if pending.done:
        return pending.result
    fut = asyncio.get_running_loop().create_future()
    pending.add_done_callback(lambda result: None if fut.done() else fut.set_result(result))
    return await fut


def ms(value) -> int:
    """kio's timedelta (or an int already in ms) as integer milliseconds."""
    return round(value / _MS) if isinstance(value, datetime.timedelta) else int(value)


def by_topic(ctx, results: dict, topic_entity: str, partition_entity: str, **partition_fields):
    """Per-partition error codes grouped into the response's topic entities, in request order."""
    topics: dict[str, list] = {}
    for (topic, partition), code in results.items():
        topics.setdefault(topic, []).append(
            ctx.make(partition_entity, partition_index=partition, error_code=code, **partition_fields))
    return tuple(ctx.make(topic_entity, name=t, partitions=tuple(ps)) for t, ps in topics.items())


async def paced_by_topic(ctx, results: dict, topic_entity: str, partition_entity: str, pace) -> tuple:
    """:func:`by_topic`, awaiting ``pace`` per partition and per topic."""
    topics: dict[str, list] = {}
    async for (topic, partition), code in pace.each(results.items()):
        topics.setdefault(topic, []).append(ctx.make(partition_entity, partition_index=partition, error_code=code))
    return tuple([ctx.make(topic_entity, name=t, partitions=tuple(ps)) async for t, ps in pace.each(topics.items())])


async def requested_offsets(ctx, topics, now: int, pace, expire_timestamp: int = -1) -> tuple[dict, dict]:
    """The offsets an OffsetCommit or TxnOffsetCommit asks for, of known partitions only, and the
    unknown partitions' errors (UNKNOWN_TOPIC_OR_PARTITION, as KafkaApis checks them), giving the loop up as it walks them: 100,000
    partitions held it 0.8 s."""
    logs = ctx.node.logs.logs
    offsets, unknown = {}, {}
    for t in topics:
        for p in t.partitions:
            await pace()
            tp = (t.name, p.partition_index)
            if tp in logs:
                committed = getattr(p, "commit_timestamp", -1)  # OffsetCommit v1's; -1: the commit time
                offsets[tp] = OffsetAndMetadata(p.committed_offset, getattr(p, "committed_leader_epoch", -1),
                                                p.committed_metadata or "", now if committed == -1 else committed,
                                                expire_timestamp)
            else:
                unknown[tp] = ErrorCode.unknown_topic_or_partition
    return offsets, unknown


async def offsets_to_commit(ctx, request, now: int, pace) -> tuple[dict, dict]:
    """What an OffsetCommit or TxnOffsetCommit may hand its group coordinator, and the error of
    every other partition: denied topics (TOPIC_AUTHORIZATION_FAILED), unknown partitions, all of
    them where another broker coordinates the group (NOT_COORDINATOR), the rest's while the
    coordinators load (shim.apis._loading), and a share group's offsets (GROUP_ID_NOT_FOUND, Kafka:
    ShareGroup.validateOffsetCommit)."""
    denied = await denied_topics_paced(ctx, [t.name for t in request.topics], pace)
    offsets, unknown = await requested_offsets(ctx, [t for t in request.topics if t.name not in denied], now, pace,
                                               expire_timestamp(request, now))
    unknown.update({(t.name, p.partition_index): ErrorCode.topic_authorization_failed
                    for t in request.topics if t.name in denied for p in t.partitions})
    if not ctx.coordinates(GROUP, request.group_id):  # shim.cluster: another broker coordinates it
        offsets, unknown = {}, {tp: ErrorCode.not_coordinator for tp in [*offsets, *unknown]}
    loading = offsets_code(ctx, request) if offsets else None  # KafkaApis hands the coordinator the rest
    if loading is not None:
        offsets, unknown = {}, {**unknown, **dict.fromkeys(offsets, loading)}
    if offsets and is_share_group(ctx, request.group_id):
        offsets, unknown = {}, {**unknown, **{tp: ErrorCode.group_id_not_found for tp in offsets}}
    return offsets, unknown


def expire_timestamp(request, now: int) -> int:
    """OffsetCommit v2-4's RetentionTimeMs as an explicit expire timestamp, -1 (the default, and
    every other request) for none (Kafka: OffsetMetadataManager.expireTimestampMs; KafkaApis
    before 4.0). Any other value counts, as in Kafka, a negative one too; the sum wraps as Java's
    long does (Long.MAX_VALUE: a timestamp long past, so the offsets expire at the next check)."""
    retention = getattr(request, "retention_time", None)
    if retention is None or ms(retention) == -1:
        return -1
    return (now + ms(retention) + 2**63) % 2**64 - 2**63


def commit_response(ctx, request, code_of, entity_prefix: str):
    """An (Txn)OffsetCommit response: ``code_of((topic, partition))`` for each partition requested,
    in request order, in the ``{entity_prefix}ResponseTopic``/``...Partition`` entities."""
    requested = {(t.name, p.partition_index): None for t in request.topics for p in t.partitions}
    codes = {tp: code_of(tp) for tp in requested}
    return ctx.response(topics=by_topic(ctx, codes, f"{entity_prefix}ResponseTopic",
                                        f"{entity_prefix}ResponsePartition"))


async def paced_commit_response(ctx, request, code_of, entity_prefix: str, pace):
    """commit_response, giving the loop up as it walks the partitions."""
    codes: dict = {}
    for t in request.topics:
        for p in t.partitions:
            await pace()
            tp = (t.name, p.partition_index)
            codes[tp] = code_of(tp)
    topics: dict[str, list] = {}
    partition_entity = f"{entity_prefix}ResponsePartition"
    for (topic, partition), code in codes.items():
        await pace()
        topics.setdefault(topic, []).append(ctx.make(partition_entity, partition_index=partition, error_code=code))
    return ctx.response(topics=tuple(ctx.make(f"{entity_prefix}ResponseTopic", name=t, partitions=tuple(ps))
                                     for t, ps in topics.items()))
