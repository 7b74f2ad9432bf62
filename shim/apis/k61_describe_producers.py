"""DescribeProducers (61), v0 (KIP-664): the active producers of each partition.

Errors and their messages are Kafka's (KafkaApis.handleDescribeProducersRequest): a topic-level
error is given with a message -- an invalid name INVALID_TOPIC_EXCEPTION in Topic.validate's words,
no READ TOPIC_AUTHORIZATION_FAILED and a topic that does not exist UNKNOWN_TOPIC_OR_PARTITION, each
with Kafka's default message -- while a partition's own error (a partition the topic does not have,
NOT_LEADER_OR_FOLLOWER, KAFKA_STORAGE_ERROR for the offline data directory) has none, as
ReplicaManager.activeProducerState answers getPartitionOrError's code alone.

Any replica answers, not only the leader: a Kafka follower describes the producers of its own log.
In a simulated cluster (shim.cluster) a follower holds the leader's log end, so its producers are
the shared log's, except a slowed follower's, frozen where it stopped fetching; a broker with no
replica of the partition answers NOT_LEADER_OR_FOLLOWER.

A partition named again in the request is answered again, as Kafka does, with the same answer
built once; an answer that would list more than MAX_LISTED_PRODUCERS producers closes the
connection instead (a warning, as for an answer that cannot be encoded): 300 producers on one
partition named 40,000 times, 160 KB of request, took 65 CPU seconds and 1.6 GiB to answer, and a
megabyte of it would have taken the broker's memory (Kafka would build it, or fail with an
OutOfMemoryError).
"""

from ..errors import ErrorCode, KafkaError
from ..protocol.framing import FrameError
from ..storage.log_manager import invalid_topic_name
from ._authz import denied_topics_paced
from ._pace import Pacer
from ._share_offsets import message
from .registry import api


MAX_LISTED_PRODUCERS = 1_000_000  # producer states in one answer (34 bytes each on the wire)


@api(61, "DescribeProducers", 0, 0)
async def handle(ctx, request):
    topics, pace, built, listed = [], Pacer(), {}, 0
    denied = await denied_topics_paced(ctx, [t.name for t in request.topics], pace)
    for t in request.topics:
        error = _topic_error(ctx, t.name, t.name in denied)
        parts = []
        async for p in pace.each(t.partition_indexes):
            part = built.get((t.name, p))
            if part is None:
                part = built[(t.name, p)] = _error(ctx, p, *error) if error else _partition(ctx, t.name, p)
            listed += len(part.active_producers)
            if listed > MAX_LISTED_PRODUCERS:
                raise FrameError(f"cannot encode the DescribeProducers response: more than {MAX_LISTED_PRODUCERS} "
                                 f"producer states")
            parts.append(part)
        topics.append(ctx.make("TopicResponse", name=t.name, partitions=tuple(parts)))
    return ctx.response(topics=tuple(topics))


def _topic_error(ctx, topic, denied):
    """Kafka: the name's validity, then READ, then the topic's existence; each with a message."""
    invalid = invalid_topic_name(topic)
    if invalid is not None:
        return ErrorCode.invalid_topic_exception, invalid
    if denied:
        return ErrorCode.topic_authorization_failed, message(ErrorCode.topic_authorization_failed)
    if topic not in ctx.node.logs.topics:
        return ErrorCode.unknown_topic_or_partition, message(ErrorCode.unknown_topic_or_partition)
    return None


def _error(ctx, index, code, text=None):
    return ctx.make("PartitionResponse", partition_index=index, error_code=code, error_message=text,
                    active_producers=())


def _partition(ctx, topic, index):
    try:
        plog = ctx.node.logs.get(topic, index)
        ctx.replica_of(topic, index)
    except KafkaError as e:  # Kafka: getPartitionOrError's code, without a message
        return _error(ctx, index, e.code)
    state = ctx.node.cluster.follower_producer_state(ctx.node_id, topic, index)
    state = plog.producer_state if state is None else state
    producers = tuple(
        ctx.make("ProducerState", producer_id=e.producer_id, producer_epoch=e.producer_epoch, last_sequence=e.last_seq,
                 last_timestamp=e.last_timestamp, coordinator_epoch=e.coordinator_epoch,
                 current_txn_start_offset=-1 if e.current_txn_first_offset is None else e.current_txn_first_offset)
        for e in state.active_producers()
    )
    return ctx.make("PartitionResponse", partition_index=index, error_code=ErrorCode.none, error_message=None,
                    active_producers=producers)
