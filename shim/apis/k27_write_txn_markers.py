"""WriteTxnMarkers (27), v0-1 (v0, v1 before flexible versions, under 3.x emulation only: Kafka
4.0 removed it).

Writes COMMIT/ABORT control batches for any producer id and epoch, as the coordinator does and as
Admin.abortTransaction asks (kafka-transactions.sh --abort). Same code path as the built-in
coordinator (shim.coordinators.txn.markers). Under --fsync always the markers are fsynced by the
group commit off the loop (shim.storage.group_commit) and answered once a job that started after
them is done; a job that fails answers each marker written KAFKA_STORAGE_ERROR, the error of
Kafka's append (its flush under flush.messages=1 failed), and takes the directory offline. While
the data directory is offline every partition is UNKNOWN_TOPIC_OR_PARTITION: Kafka's handler finds
no online log to read the record format of (ReplicaManager.getMagic). In a simulated cluster only
the partition's leader writes the marker: a follower answers NOT_LEADER_OR_FOLLOWER (3.9 and 4.x
alike, __consumer_offsets included), a broker with no replica UNKNOWN_TOPIC_OR_PARTITION.
"""

from ..cluster import OFFSETS_TOPIC
from ..coordinators.txn.markers import write_markers
from ..errors import ErrorCode
from ..node import now_ms
from ..security.acls import AclOperation as O
from ._pace import Pacer
from .registry import api

MARKER_SLICE = 1000  # a marker's partitions written between two chances for the loop to run others


@api(27, "WriteTxnMarkers", 0, 1)
async def handle(ctx, request):
    node = ctx.node
    commit = node.logs.group_commit
    staged = commit is not None and commit.attach()  # fsync "always": the markers' fsync off the loop
    # Kafka: ALTER or CLUSTER_ACTION on the cluster, else CLUSTER_AUTHORIZATION_FAILED on every partition
    allowed = ctx.authorize_cluster(O.ALTER) or ctx.authorize_cluster(O.CLUSTER_ACTION)
    # Paced: 2 MiB of markers took 2.9 CPU s in one turn of the loop. Each marker's partitions are
    # still written in the request's order; other requests may append between two slices, as
    # Kafka's other handler threads may between the markers' appends. The barrier is asked for
    # after the last write, so the answer still waits for every marker to be on disk.
    pace = Pacer()
    outcomes = [(marker, await _write(ctx, marker, allowed, staged, pace))
                async for marker in pace.each(request.markers)]
    if staged and any(code == ErrorCode.none for _, codes in outcomes for code in codes.values()):
        return await _synced(ctx, commit.barrier(), outcomes)
    return await _response(ctx, outcomes)


async def _write(ctx, marker, allowed: bool, staged: bool, pace: Pacer) -> dict:
    """Each partition's outcome of one marker, a slice of partitions at a time."""
    node = ctx.node
    wanted = await _wanted(marker, pace)
    if not allowed:
        return dict.fromkeys(wanted, ErrorCode.cluster_authorization_failed)
    if node.logs.offline:  # Kafka: getMagic finds no online log (ReplicaManager.localLog)
        return dict.fromkeys(wanted, ErrorCode.unknown_topic_or_partition)
    outcome, now = {}, now_ms()
    for start in range(0, len(wanted), MARKER_SLICE):
        await pace()
        part, refused = wanted[start:start + MARKER_SLICE], {}
        written = write_markers(node.logs, node.txn.marker_listeners, marker.producer_id, marker.producer_epoch,
                                marker.coordinator_epoch, marker.transaction_result, _led(ctx, part, refused), now,
                                node.cluster.check_min_isr, durable=not staged)
        outcome.update((tp, refused[tp] if tp in refused else written[tp]) for tp in part)
    return outcome


async def _wanted(marker, pace: Pacer) -> list:
    """The marker's partitions, each once (Kafka keys them by TopicPartition: one named twice gets
    one marker), gathered a slice at a time: 524,000 at once took 0.14 CPU s of one turn."""
    wanted: dict = {}
    for t in marker.topics:
        indexes = t.partition_indexes
        for start in range(0, len(indexes), MARKER_SLICE):
            await pace()
            wanted.update(dict.fromkeys((t.name, p) for p in indexes[start:start + MARKER_SLICE]))
    return list(wanted)


def _led(ctx, partitions: list, refused: dict) -> list:
    """The partitions this broker leads; the others' errors into ``refused``. A simulated broker
    with no replica of the partition has no log to read its format from: UNKNOWN_TOPIC_OR_PARTITION
    (ReplicaManager.getMagic); a follower's is NOT_LEADER_OR_FOLLOWER, 3.9's from the append
    (Partition.appendRecordsToLeader), 4.x's for __consumer_offsets the group coordinator's
    NOT_COORDINATOR (it is loaded on the leader only: CoordinatorRuntime.contextOrThrow), which
    KafkaApis.handleWriteTxnMarkersRequest answers NOT_LEADER_OR_FOLLOWER. So does a
    __consumer_offsets partition while the coordinators load (shim.coordinators.loader), from
    Kafka 4's COORDINATOR_LOAD_IN_PROGRESS, which the loading groups would otherwise miss."""
    if not ctx.node.loading.done:
        loading = [tp for tp in partitions if tp[0] == OFFSETS_TOPIC]
        refused.update(dict.fromkeys(loading, ErrorCode.not_leader_or_follower))
        partitions = [tp for tp in partitions if tp[0] != OFFSETS_TOPIC] if loading else partitions
    cluster = ctx.node.cluster
    if cluster.single:
        return partitions
    led = []
    for topic, p in partitions:
        if (topic, p) not in ctx.node.logs.logs:
            led.append((topic, p))  # write_markers answers UNKNOWN_TOPIC_OR_PARTITION
            continue
        s = cluster.state(topic, p)
        if ctx.node_id not in s.replicas:
            refused[(topic, p)] = ErrorCode.unknown_topic_or_partition
        elif s.leader != ctx.node_id:
            refused[(topic, p)] = ErrorCode.not_leader_or_follower
        else:
            led.append((topic, p))
    return led


async def _synced(ctx, barrier, outcomes):
    """The answer once the markers are on disk (Kafka appends them with acks=all, flushed first)."""
    try:
        await barrier
    except OSError:  # Kafka: the append's KafkaStorageException is each partition's error
        outcomes = [(marker, {tp: ErrorCode.kafka_storage_error if code == ErrorCode.none else code
                              for tp, code in codes.items()}) for marker, codes in outcomes]
    return await _response(ctx, outcomes)


async def _response(ctx, outcomes):
    results, pace = [], Pacer()
    async for marker, codes in pace.each(outcomes):
        topics = {}
        async for (topic, p), code in pace.each(codes.items()):
            topics.setdefault(topic, []).append(
                ctx.make("WritableTxnMarkerPartitionResult", partition_index=p, error_code=code))
        results.append(ctx.make(
            "WritableTxnMarkerResult", producer_id=marker.producer_id,
            topics=tuple(ctx.make("WritableTxnMarkerTopicResult", name=t, partitions=tuple(ps)) for t, ps in topics.items()),
        ))
    return ctx.response(markers=tuple(results))
