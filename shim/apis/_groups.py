"""Helpers shared by the group APIs: awaiting a long-poll, milliseconds, per-partition results."""

from __future__ import annotations

import asyncio
import datetime

from ..coordinators.group import OffsetAndMetadata
from ..errors import ErrorCode

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


def split_unknown(ctx, topics, partitions_of=lambda t: [p.partition_index for p in t.partitions]):
    """(known (topic, partition) list, {unknown tp: UNKNOWN_TOPIC_OR_PARTITION}) as KafkaApis checks
    OffsetCommit, TxnOffsetCommit and OffsetDelete before the coordinator sees them."""
    known, unknown = [], {}
    for t in topics:
        for p in partitions_of(t):
            if (t.name, p) in ctx.node.logs.logs:
                known.append((t.name, p))
            else:
                unknown[(t.name, p)] = ErrorCode.unknown_topic_or_partition
    return known, unknown


def by_topic(ctx, results: dict, topic_entity: str, partition_entity: str, **partition_fields):
    """Per-partition error codes grouped into the response's topic entities, in request order."""
    topics: dict[str, list] = {}
    for (topic, partition), code in results.items():
        topics.setdefault(topic, []).append(
            ctx.make(partition_entity, partition_index=partition, error_code=code, **partition_fields))
    return tuple(ctx.make(topic_entity, name=t, partitions=tuple(ps)) for t, ps in topics.items())


def requested_offsets(ctx, topics, now: int) -> tuple[dict, dict]:
    """The offsets an OffsetCommit or TxnOffsetCommit asks for, of known partitions only, and the
    unknown partitions' errors."""
    known, unknown = split_unknown(ctx, topics)
    offsets = {}
    for t in topics:
        for p in t.partitions:
            if (t.name, p.partition_index) in known:
                offsets[(t.name, p.partition_index)] = OffsetAndMetadata(
                    p.committed_offset, getattr(p, "committed_leader_epoch", -1), p.committed_metadata or "", now)
    return offsets, unknown
