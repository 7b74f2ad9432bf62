"""AlterReplicaLogDirs (34), v0-2.

There is one log directory, so no replica ever moves. Per partition, as Kafka's
ReplicaManager.alterReplicaLogDirs answers: LOG_DIR_NOT_FOUND for a directory that is not the data
directory (checked first), INVALID_TOPIC_EXCEPTION when the future directory name would pass 255
characters, KAFKA_STORAGE_ERROR while the data directory is offline (a failed fsync),
UNKNOWN_TOPIC_OR_PARTITION for a partition that does not exist, and no error when the
directory is the one the partition already lives in. A partition named under several directories
is answered once, for the last. v0 is v1 on the wire (kio generates v1 only).
"""

from ..errors import ErrorCode, KafkaError
from ._pace import Pacer
from .registry import api

# Kafka: UnifiedLog.logFutureDirName is "<topic>-<partition>.<32 hex digits>-future"
FUTURE_SUFFIX = len(".") + 32 + len("-future")


@api(34, "AlterReplicaLogDirs", 0, 2)
async def handle(ctx, request):
    # Paced: 140,000 distinct topics (2 MiB) were each checked and answered in one turn (0.8-1.4 CPU
    # s). Nothing moves, so what is read between slices is only each partition's existence.
    pace = Pacer()
    target: dict[tuple[str, int], str] = {}
    async for path, topic, index in pace.each((d.path, t.name, p) for d in request.dirs for t in d.topics
                                              for p in t.partitions):
        target[(topic, index)] = path
    codes = {tp: _alter(ctx, *tp, path) async for tp, path in pace.each(target.items())}
    return ctx.response(results=await _by_topic(ctx, codes.items(), pace))


async def _by_topic(ctx, codes, pace):
    """The partitions' results grouped by topic, in the order the topics were first named."""
    by_topic: dict[str, list] = {}
    async for (topic, index), code in pace.each(codes):
        by_topic.setdefault(topic, []).append(
            ctx.make("AlterReplicaLogDirPartitionResult", partition_index=index, error_code=code))
    return tuple([ctx.make("AlterReplicaLogDirTopicResult", topic_name=t, partitions=tuple(p))
                  async for t, p in pace.each(by_topic.items())])


def _alter(ctx, topic, index, path):
    try:
        if len(f"{topic}-{index}") + FUTURE_SUFFIX > 255:
            raise KafkaError(ErrorCode.invalid_topic_exception, "The topic name is too long.")
        if path != str(ctx.node.logs.data_dir.absolute()):
            raise KafkaError(ErrorCode.log_dir_not_found, f"Log dir {path} is not found in the config.")
        if ctx.node.logs.offline:  # Kafka: before the partition is looked up
            raise KafkaError(ErrorCode.kafka_storage_error, f"Log directory {path} is offline")
        ctx.node.logs.get(topic, index)
    except KafkaError as e:
        return e.code
    return ErrorCode.none


async def error_response(ctx, request, code):
    """Kafka: the error on every partition named."""
    pace = Pacer()
    return ctx.response(results=await _by_topic(ctx, (
        ((t.name, p), code) for d in request.dirs for t in d.topics for p in t.partitions), pace))
