"""What the share-group APIs (76-79) have in common: the feature gate and topic ids."""

from ..errors import ErrorCode, KafkaError
from ..protocol.kafka_releases import SHARE_VERSION
from ..security.acls import AclOperation as O
from ..security.acls import ResourceType as R


def share_groups_enabled(ctx) -> bool:
    """Kafka 4.1: isShareGroupProtocolEnabled -- a finalized share.version of 1 or more
    (``kafka-features upgrade --feature share.version=1``; 0 after a default format)."""
    return ctx.node.quorum.level(SHARE_VERSION) >= 1


def is_share_group(ctx, group_id) -> bool:
    """Kafka keeps one namespace of group ids (GroupMetadataManager's one map of groups): a share
    group's id is no classic or consumer group's, and the other way round."""
    return group_id in ctx.node.share.groups


def is_other_group(ctx, group_id) -> bool:
    """A classic or consumer group has the id (and so no share group can)."""
    groups = ctx.node.groups
    return group_id not in ctx.node.share.groups and (group_id in groups.groups or group_id in groups.consumer.groups)


def topic_name(ctx, topic_id):
    info = ctx.node.logs.topic_by_id(topic_id)
    return info.name if info is not None else None


def topic_id(ctx, name):
    info = ctx.node.logs.topics.get(name)
    return info.topic_id if info is not None else None


def current_leader(ctx, topic, partition):
    s = ctx.node.cluster.state(topic, partition) if topic is not None else None
    if s is None:
        return ctx.make("LeaderIdAndEpoch", leader_id=-1, leader_epoch=-1)
    return ctx.make("LeaderIdAndEpoch", leader_id=s.leader, leader_epoch=s.leader_epoch)


def partition_error(ctx, topic, partition, allowed: bool):
    """The error of one requested partition before any share state is touched, or None."""
    if topic is None:
        return ErrorCode.unknown_topic_id
    if not allowed:
        return ErrorCode.topic_authorization_failed
    info = ctx.node.logs.topics[topic]
    if not 0 <= partition < info.partitions:
        return ErrorCode.unknown_topic_or_partition
    try:
        ctx.leader_of(topic, partition)
    except KafkaError as e:
        return e.code
    return None


ACK_TYPES = range(0, 4)  # Gap, Accept, Release, Reject (Renew is v2, not served)


def request_error(ctx, request):
    """The top-level error of a ShareFetch/ShareAcknowledge before its session is looked at."""
    if not share_groups_enabled(ctx):
        return ErrorCode.unsupported_version, None
    if not request.group_id:
        return ErrorCode.invalid_request, "group id is required"
    if not ctx.authorize(O.READ, R.GROUP, request.group_id):
        return ErrorCode.group_authorization_failed, None
    if not request.member_id:
        return ErrorCode.invalid_request, "member id is required"
    return None


async def resolve(ctx, topics, pace):
    """[(topic id, name or None, partition, acknowledgement batches, error or None)] of a request,
    each topic id looked up once; paced (a 2 MiB request names 350,000 partitions)."""
    names = {}
    async for t in pace.each(topics):
        if t.topic_id not in names:
            names[t.topic_id] = topic_name(ctx, t.topic_id)
    allowed = await ctx.authorized_paced(O.READ, R.TOPIC, [n for n in names.values() if n], pace)
    out = []
    async for t, p in pace.each((t, p) for t in topics for p in t.partitions):
        name = names[t.topic_id]
        error = partition_error(ctx, name, p.partition_index, name in allowed)
        out.append((t.topic_id, name, p.partition_index, p.acknowledgement_batches, error))
    return out


# Kafka 4.1: the persister's answer once its retries of the share coordinator's NOT_COORDINATOR
# (a coordinator append's KAFKA_STORAGE_ERROR) run out (PersisterStateManager.WriteStateHandler)
WRITE_LOST = "Error in write state RPC. Exhausted max retries to complete write state RPC without success."


class Acknowledgements:
    """The acknowledgements of one ShareFetch or ShareAcknowledge, answered once their share-state
    writes are on disk. Under --fsync always a write is fsynced by a group-commit job; one the job
    lost is rolled back and its partition answered COORDINATOR_NOT_AVAILABLE (Kafka 4.1:
    SharePartition.rollbackOrProcessStateUpdates, fetchPersisterError mapping the persister's
    NOT_COORDINATOR), never the request's NOT_COORDINATOR: ShareFetch and ShareAcknowledge are the
    partition leader's, and reach the share coordinator through the persister."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.commit = ctx.node.logs.group_commit
        self.written = []  # (answer key, Undo, the coordinator appends counted once it was written)

    def apply(self, key, group_id, member_id, topic, partition, batches, now) -> tuple[ErrorCode, str | None]:
        """Apply one partition's acknowledgement batches; the partition's acknowledge error code and
        message."""
        for b in batches:
            if b.last_offset < b.first_offset or not b.acknowledge_types or any(t not in ACK_TYPES
                                                                                 for t in b.acknowledge_types):
                return ErrorCode.invalid_request, None
        try:
            undo = self.ctx.node.share.acknowledge(group_id, member_id, topic, partition, [
                (b.first_offset, b.last_offset, b.acknowledge_types) for b in batches], now)
        except KafkaError as e:
            if e.code == ErrorCode.kafka_storage_error:  # its write failed at once (nothing was applied)
                return ErrorCode.coordinator_not_available, WRITE_LOST
            return e.code, None
        if self.commit is not None:  # None: each write is on disk (or not asked to be) once made
            self.written.append((key, undo, self.commit.coordinator_written))
        return ErrorCode.none, None

    async def lost(self) -> list:
        """The answer keys of the acknowledgements whose writes a failed job lost, rolled back."""
        commit = self.commit
        if commit is None:
            return []
        if self.written and commit.failed is None and commit.coordinator_synced < self.written[-1][2]:
            try:
                await commit.barrier()
            except OSError:
                pass
        if commit.failed is None:
            return []
        # the directory is offline: each partition carries its own error, the request none
        self.ctx.coordinator_seen = None
        synced, written = commit.lost
        lost = [(key, undo) for key, undo, index in self.written if synced < index <= written]
        for _, undo in lost:
            self.ctx.node.share.roll_back(undo)
        return [key for key, _ in lost]
