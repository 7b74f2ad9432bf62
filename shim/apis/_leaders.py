"""Helpers for the partition APIs of a simulated cluster (shim.cluster): leader hints and acks=all.

KIP-951: a NOT_LEADER_OR_FOLLOWER answer to Produce (v10+), and a NOT_LEADER_OR_FOLLOWER or
FENCED_LEADER_EPOCH answer to Fetch (v16+), carry the partition's current leader and epoch, and the
response lists that leader's address on the request's listener, so the client need not wait for a
Metadata refresh (Kafka: KafkaApis.handleProduceRequest / handleFetchRequest).
"""

from __future__ import annotations

import time

from ..errors import ErrorCode

NOT_LEADER = ErrorCode.not_leader_or_follower


def leader_hint(ctx, topic: str, partition: int, code, hinted: set, codes=(NOT_LEADER,)) -> dict:
    """The ``current_leader`` field for a partition answered ``code`` (empty when the version has
    none); a known leader is added to ``hinted`` for :func:`node_endpoints`."""
    if code not in codes or not hasattr(ctx.m, "LeaderIdAndEpoch") or topic is None:
        return {}
    s = ctx.node.cluster.state(topic, partition)
    if s.leader >= 0:
        hinted.add(s.leader)
    return {"current_leader": ctx.make("LeaderIdAndEpoch", leader_id=s.leader, leader_epoch=s.leader_epoch)}


def node_endpoints(ctx, hinted: set) -> tuple:
    if not hinted or not hasattr(ctx.m, "NodeEndpoint"):
        return ()
    return tuple(ctx.make("NodeEndpoint", node_id=n, host=host, port=port, rack=ctx.node.racks.get(n))
                 for n in sorted(hinted) for host, port in (ctx.endpoint_of(n),))


class Replication:
    """The acks=all appends of one Produce that wait for the high watermark (Kafka: DelayedProduce)."""

    def __init__(self) -> None:
        self.waiting: list = []  # (index in the response, topic, partition, plog, required offset)

    def add(self, slot: int, topic: str, partition: int, plog, required: int) -> None:
        self.waiting.append((slot, topic, partition, plog, required))

    def outcome(self, ctx, topic: str, partition: int, plog, required: int):
        """None while waiting, else the error code (Kafka: Partition.checkEnoughReplicasReachOffset)."""
        s = ctx.node.cluster.state(topic, partition)
        if s.leader != ctx.node_id:
            return NOT_LEADER
        if plog.high_watermark < required:
            return None
        if len(s.isr) < plog.config.min_insync_replicas:
            return ErrorCode.not_enough_replicas_after_append
        return ErrorCode.none

    async def wait(self, ctx, timeout_s: float) -> dict:
        """{slot: error code} once every append is replicated or the request timeout passed."""
        deadline = time.monotonic() + timeout_s
        done: dict = {}
        while True:
            for slot, topic, partition, plog, required in self.waiting:
                if slot not in done:
                    code = self.outcome(ctx, topic, partition, plog, required)
                    if code is not None:
                        done[slot] = code
            remaining = deadline - time.monotonic()
            if len(done) == len(self.waiting) or remaining <= 0:
                return {slot: done.get(slot, ErrorCode.request_timed_out) for slot, *_ in self.waiting}
            await ctx.node.changes.wait(remaining)
