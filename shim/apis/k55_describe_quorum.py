"""DescribeQuorum (55), v0-2 (KIP-595, KIP-836, KIP-853): the metadata quorum, as a Kafka
single-node cluster formatted ``--standalone`` describes it.

Kafka's broker forwards the request to the active controller (KafkaRaftClient
.handleDescribeQuorumRequest); in a combined single node that is the node itself: the only voter
and the leader of ``__cluster_metadata``-0, with no observers. The leader's own fetch and catch-up
times are "now" (RaftUtil.toReplicaState), its log end offset is the high watermark; v2 adds the
voter's directory id and its endpoints. A request for anything but exactly that one partition is
answered UNKNOWN_TOPIC_OR_PARTITION on each partition it names
(DescribeQuorumRequest.getPartitionLevelErrorResponse). The voter's endpoints are its controller
listeners (controller.listener.names; shim.apis.controller); without one, the first listener's. With an authorizer it needs
DESCRIBE on the cluster (CLUSTER_AUTHORIZATION_FAILED, the top-level error alone).
"""

from ..errors import ErrorCode
from ..node import now_ms
from ..quorum import LEADER_EPOCH
from ._pace import Pacer
from .registry import api

METADATA_TOPIC = "__cluster_metadata"
NODES_VERSION = 2


@api(55, "DescribeQuorum", 0, 2)
async def handle(ctx, request):
    topics = request.topics
    if len(topics) != 1 or topics[0].topic_name != METADATA_TOPIC or \
            [p.partition_index for p in topics[0].partitions] != [0]:
        return ctx.response(error_code=ErrorCode.none, error_message=None, nodes=(), topics=await _unknown(ctx, topics))
    node_id, quorum, now = ctx.node.config.node_id, ctx.node.quorum, now_ms()
    voter = ctx.make("ReplicaState", replica_id=node_id, replica_directory_id=quorum.directory_id,
                     log_end_offset=quorum.high_watermark, last_fetch_timestamp=now, last_caught_up_timestamp=now)
    partition = _partition(ctx, 0, ErrorCode.none, leader_id=node_id, leader_epoch=LEADER_EPOCH,
                           high_watermark=quorum.high_watermark, current_voters=(voter,))
    topic = ctx.make("TopicData", topic_name=METADATA_TOPIC, partitions=(partition,))
    return ctx.response(error_code=ErrorCode.none, error_message=None, topics=(topic,), nodes=_nodes(ctx, node_id))


async def _unknown(ctx, topics):
    """Each partition named answered UNKNOWN_TOPIC_OR_PARTITION, paced: 2 MiB of them took 2.8 CPU s
    in one turn of the loop."""
    pace = Pacer()
    return tuple([ctx.make("TopicData", topic_name=t.topic_name, partitions=tuple([
        _partition(ctx, p.partition_index, ErrorCode.unknown_topic_or_partition)
        async for p in pace.each(t.partitions)]))
        async for t in pace.each(topics)])


def _partition(ctx, index, code, leader_id=-1, leader_epoch=-1, high_watermark=-1, current_voters=()):
    return ctx.make("PartitionData", partition_index=index, error_code=code, error_message=None, leader_id=leader_id,
                    leader_epoch=leader_epoch, high_watermark=high_watermark, current_voters=current_voters,
                    observers=())


def _nodes(ctx, node_id):
    """v2: the voter's endpoints."""
    if ctx.version < NODES_VERSION:
        return ()
    listeners = tuple(ctx.make("Listener", name=name, host=host, port=port)
                      for name in ctx.node.quorum_listeners for host, port in (ctx.node.endpoint(name),))
    return (ctx.make("Node", node_id=node_id, listeners=listeners),)


def error_response(ctx, request, code):
    """Kafka: DescribeQuorumRequest.getErrorResponse -- the top-level error alone."""
    return ctx.response(error_code=code, error_message=None, topics=(), nodes=())
