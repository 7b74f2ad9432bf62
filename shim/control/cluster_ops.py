"""Control operations on the simulated cluster (shim.cluster, ``--brokers N``): brokers down and
up, partition leaders and coordinators moved, followers slowed. Each is applied before it answers:
the next Metadata or FindCoordinator already tells clients the new state."""

from __future__ import annotations

from ..cluster import GROUP, TRANSACTION
from ..node import now_ms
from .args import Arg, ControlError
from .ops import op

NODE = Arg("node", "int", "the broker's node id", required=True, minimum=0)
TOPIC = Arg("topic", "str", "the topic", required=True)
PARTITION = Arg("partition", "int", "the partition", required=True, minimum=0)
KINDS = {"group": GROUP, "transaction": TRANSACTION}


def _applied(fn, *args):
    try:
        return fn(*args, now_ms())
    except ValueError as exc:  # an unknown node, a replica outside the ISR ...
        raise ControlError(str(exc), status=409) from None


def _state(control, topic: str, partition: int) -> dict:
    s = control.node.cluster.state(topic, partition)
    return {"topic": topic, "partition": partition, "leader": s.leader, "leader_epoch": s.leader_epoch,
            "replicas": list(s.replicas), "isr": list(s.isr)}


def _replication_state(control, topic: str, partition: int) -> dict:
    """The partition's state with its high watermark and log end offset (a slowed follower holds
    the one below the other)."""
    plog = control.node.logs.get(topic, partition)
    return {**_state(control, topic, partition), "high_watermark": plog.high_watermark,
            "log_end_offset": plog.log_end_offset}


def _partition_known(control, topic: str, partition: int) -> None:
    if (topic, partition) not in control.node.logs.logs:
        raise ControlError(f"no partition {topic}-{partition}", status=404)


@op("node_down", "stop a broker: partitions it leads elect another ISR member (leader epoch + 1), "
    "coordinators move with them, then its listeners and connections close", NODE)
async def _node_down(control, node):
    return await _nodes_down_after(control, _serving(control).node_down(node))


@op("node_up", "start a stopped broker again on its ports; it catches up at once (a follower slowed before "
    "it went down is no longer slowed) and rejoins the ISR of its partitions", NODE)
async def _node_up(control, node):
    return await _nodes_down_after(control, _serving(control).node_up(node))


def _serving(control):
    if control.server is None:
        raise ControlError("the broker is not serving", status=409)
    return control.server


async def _nodes_down_after(control, change) -> dict:
    """The brokers down once the server's ``change`` is done; a change it refuses is a 409."""
    try:
        await change
    except ValueError as exc:
        raise ControlError(str(exc), status=409) from None
    return {"down": sorted(control.node.cluster.down)}


@op("move_leader", "elect an in-sync replica leader of a partition (leader epoch + 1)", TOPIC, PARTITION, NODE)
def _move_leader(control, topic, partition, node):
    _partition_known(control, topic, partition)
    _applied(control.node.cluster.move_leader, topic, partition, node)
    return _state(control, topic, partition)


@op("move_coordinator", "move the coordinator of a group or transactional id to a broker (the leader of "
    "the internal partition its key hashes to moves)",
    Arg("coordinator", "choice", "which coordinator", required=True, choices=tuple(KINDS)),
    Arg("key", "str", "the group id or transactional id", required=True), NODE)
def _move_coordinator(control, coordinator, key, node):
    cluster = control.node.cluster
    epoch = _applied(cluster.move_coordinator, KINDS[coordinator], key, node)
    topic, partition = cluster.coordinator_partition(KINDS[coordinator], key)
    return {"coordinator": coordinator, "key": key, "node": cluster.coordinator(KINDS[coordinator], key),
            "partition": f"{topic}-{partition}", "leader_epoch": epoch}


@op("slow_follower", "a follower stops replicating: the high watermark stays at its log end (acks=all "
    "waits, consumers stop there) until it leaves the ISR after replica.lag.time.max.ms", TOPIC, PARTITION, NODE)
def _slow_follower(control, topic, partition, node):
    _partition_known(control, topic, partition)
    _applied(control.node.cluster.slow_follower, topic, partition, node)
    return _replication_state(control, topic, partition)


@op("unslow_follower", "a slowed follower catches up at once and rejoins the ISR", TOPIC, PARTITION, NODE)
def _unslow_follower(control, topic, partition, node):
    _partition_known(control, topic, partition)
    _applied(control.node.cluster.unslow_follower, topic, partition, node)
    return _replication_state(control, topic, partition)


@op("cluster", "the brokers and, for a topic (or every topic), each partition's leader, epoch, replicas "
    "and ISR", Arg("topic", "str", "only this topic"))
def _cluster(control, topic):
    node = control.node
    wanted = [topic] if topic is not None else sorted(node.logs.topics)
    if topic is not None and topic not in node.logs.topics:
        raise ControlError(f"no topic {topic}", status=404)
    return {"nodes": list(node.node_ids), "down": sorted(node.cluster.down), "controller": node.cluster.controller(),
            "partitions": [_state(control, t, p) for t in wanted for p in range(node.logs.topics[t].partitions)]}
