"""DescribeLogDirs (35), v0-4.

The one log directory (the data directory, as an absolute path) with the size of each partition's
log, offset lag 0 (a leader's log is never behind its high watermark) and is_future_key false (no
replica moves between directories); v4 adds the file system's total and usable bytes. A null topic
list describes every partition; partitions that do not exist are left out, and topics left with no
partition are dropped, as Kafka's ReplicaManager.describeLogDirs answers. The metadata directory
(``__cluster_metadata``) is not a partition, as Kafka's KRaft metadata log is not one of LogManager's.
Once the data directory is offline (a failed fsync, shim.storage.group_commit) it is answered
KAFKA_STORAGE_ERROR with no partitions and unknown sizes (-1), as ReplicaManager.describeLogDirs
answers an offline directory.
v0 is v1 on the wire (kio generates v1 only).
"""

import os

from ..errors import ErrorCode
from .registry import api


@api(35, "DescribeLogDirs", 0, 4)
def handle(ctx, request):
    logs = ctx.node.logs
    if logs.offline:  # Kafka: describeLogDirs' KafkaStorageException, nothing else of the directory
        result = ctx.make("DescribeLogDirsResult", error_code=ErrorCode.kafka_storage_error,
                          log_dir=str(logs.data_dir.absolute()), topics=(), total_bytes=-1, usable_bytes=-1)
        return ctx.response(error_code=ErrorCode.none, results=(result,))
    if request.topics is None:
        wanted = set(logs.logs)
    else:
        wanted = {(t.topic, p) for t in request.topics for p in t.partitions}
    by_topic: dict[str, list] = {}
    for (topic, index), plog in sorted(logs.logs.items()):
        if (topic, index) in wanted:
            by_topic.setdefault(topic, []).append(ctx.make(
                "DescribeLogDirsPartition", partition_index=index, partition_size=plog.size_bytes(), offset_lag=0,
                is_future_key=False))
    topics = tuple(ctx.make("DescribeLogDirsTopic", name=t, partitions=tuple(p)) for t, p in by_topic.items())
    total, usable = _space(logs.data_dir)
    result = ctx.make("DescribeLogDirsResult", error_code=ErrorCode.none, log_dir=str(logs.data_dir.absolute()),
                      topics=topics, total_bytes=total, usable_bytes=usable)
    return ctx.response(error_code=ErrorCode.none, results=(result,))


def _space(path):
    """(total, usable) bytes of the file system, as Java's FileStore.getTotalSpace / getUsableSpace."""
    st = os.statvfs(path)
    return st.f_blocks * st.f_frsize, st.f_bavail * st.f_frsize


def error_response(ctx, request, code):
    return ctx.response(error_code=code, results=())
