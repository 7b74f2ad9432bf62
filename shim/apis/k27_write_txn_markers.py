"""WriteTxnMarkers (27), v1 (kio, like Kafka 4, has no v0).

Writes COMMIT/ABORT control batches for any producer id and epoch, as the coordinator does and as
Admin.abortTransaction asks (kafka-transactions.sh --abort). Same code path as the built-in
coordinator (shim.coordinators.txn.markers). While the data directory is offline (a failed fsync)
every partition is UNKNOWN_TOPIC_OR_PARTITION: Kafka's handler finds no online log to read the
record format of (ReplicaManager.getMagic).
"""

from ..coordinators.txn.markers import write_markers
from ..errors import ErrorCode
from ..node import now_ms
from ..security.acls import AclOperation as O
from .registry import api


@api(27, "WriteTxnMarkers", 1, 1)
def handle(ctx, request):
    node = ctx.node
    results = []
    # Kafka: ALTER or CLUSTER_ACTION on the cluster, else CLUSTER_AUTHORIZATION_FAILED on every partition
    allowed = ctx.authorize_cluster(O.ALTER) or ctx.authorize_cluster(O.CLUSTER_ACTION)
    for marker in request.markers:
        # Kafka keys a marker's partitions by TopicPartition: one named twice gets one marker
        wanted = list(dict.fromkeys((t.name, p) for t in marker.topics for p in t.partition_indexes))
        if not allowed:
            codes = dict.fromkeys(wanted, ErrorCode.cluster_authorization_failed)
        elif node.logs.offline:  # Kafka: getMagic finds no online log (ReplicaManager.localLog)
            codes = dict.fromkeys(wanted, ErrorCode.unknown_topic_or_partition)
        else:
            codes = write_markers(
                node.logs, node.txn.marker_listeners, marker.producer_id, marker.producer_epoch,
                marker.coordinator_epoch, marker.transaction_result, wanted, now_ms(), node.cluster.check_min_isr)
        topics = {}
        for (topic, p), code in codes.items():
            topics.setdefault(topic, []).append(
                ctx.make("WritableTxnMarkerPartitionResult", partition_index=p, error_code=code))
        results.append(ctx.make(
            "WritableTxnMarkerResult", producer_id=marker.producer_id,
            topics=tuple(ctx.make("WritableTxnMarkerTopicResult", name=t, partitions=tuple(ps)) for t, ps in topics.items()),
        ))
    return ctx.response(markers=tuple(results))
