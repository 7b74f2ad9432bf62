"""Produce (0), v0-13 (each emulated Kafka release serves its own range: v0-11 for 3.9, from v3 for 4.x).

One batch per partition, validated as Kafka does (shim.storage.validation), appended as received
with only the base offset and leader epoch stamped, and MaxTimestamp (with the CRC) where the
producer's header disagrees with its records' largest timestamp (Kafka: LogValidator). Idempotent duplicates of one of the last five
batches succeed with the original base offset. acks=0 gets no response at all; when any of its
partitions failed the connection is closed instead, as Kafka does (its producer's only sign). Appends to the
internal topics (__consumer_offsets, __transaction_state) are refused with INVALID_TOPIC_EXCEPTION.
A partition named more than once counts once, with its last copy (shim.apis._produce_keys).
Under fsync="always" the answer waits until an fsync on the flusher's thread that started after
the appends is done (shim.storage.group_commit).

v0-2 (deprecated in Kafka 3.9, gone in 4.0) may carry message sets of magic 0 or 1: they are
converted to one v2 batch, as Kafka's LogValidator does since message format v2 is the only one it
writes; a message failing its CRC is CORRUPT_MESSAGE, a malformed one INVALID_RECORD.

A request's compressed batches decompress within its shim.storage.validation.DecompressionBudget
(32 times its size, 64 MiB at least; a magic 0/1 message set 8 MiB): the batch past it is
INVALID_RECORD, where Kafka streams the batch (see the ledger).

A producer_byte_rate quota counts each request's size; a client over it gets throttle_time_ms and
its connection is not read for that long (shim.coordinators.quota_enforcement), acks=0 included.

The first transactional batch of a producer in a partition is verified against the transaction
coordinator (KIP-890 part 1), with the leader's error mapping of Kafka 3.9
(AddPartitionsToTxnManager / ReplicaManager): PRODUCER_FENCED -> INVALID_PRODUCER_EPOCH,
TRANSACTION_ABORTABLE -> INVALID_TXN_STATE before v11, CONCURRENT_TRANSACTIONS -> NOT_ENOUGH_REPLICAS
(retriable); INVALID_PRODUCER_ID_MAPPING is passed through.

v12 (transaction version 2, KIP-890 part 2; Kafka 4.0+): instead of verifying, the broker adds
the partition to the producer's transaction itself (AddPartitionsToTxn v5 from the leader in
Kafka, here a call to the coordinator), so the client sends no AddPartitionsToTxn; errors as for
v11 except CONCURRENT_TRANSACTIONS, which is answered as it is (Kafka: ReplicaManager leaves it to
clients that bump epochs). v13 (Kafka 4.1) names topics by id; an unknown id gets
UNKNOWN_TOPIC_ID for each of its partitions.

In a simulated cluster (shim.cluster) only the partition's leader appends; any other broker answers
NOT_LEADER_OR_FOLLOWER, from v10 with the current leader and its address (KIP-951). acks=all is
answered once the high watermark passes the batch (a slowed follower in the ISR holds it back), or
REQUEST_TIMED_OUT after the request's timeout (Kafka: DelayedProduce); an ISR smaller than
min.insync.replicas refuses acks=all with NOT_ENOUGH_REPLICAS before the append, and answers
NOT_ENOUGH_REPLICAS_AFTER_APPEND when it shrank below it while waiting.

Topic configs: min.insync.replicas above the ISR size answers acks=all with NOT_ENOUGH_REPLICAS;
compression.type other than producer recompresses the batch when its codec differs, and
message.timestamp.before/after.max.ms refuse a batch with INVALID_TIMESTAMP and one RecordError per
bad record (KIP-467), both in shim.storage.log_validator; segment.ms and segment.index.bytes roll
the segment first (shim.storage.roll).
"""

import asyncio
import dataclasses
import operator
import time

from kafka_codecs.batch import TRANSACTIONAL_FLAG
from kafka_codecs.legacy import CorruptMessage, InvalidBatch, is_legacy, up_convert
from kafka_codecs.records import PayloadTooLarge

from ..errors import ErrorCode, KafkaError
from ..protocol import produce_wire
from ..protocol.framing import CloseConnection
from ..protocol.messages import factory
from ..node import now_ms
from ..storage.log_manager import INTERNAL_TOPICS
from ..storage.log_validator import RecordErrors, RecordPass, run_off_loop
from ..storage.producer_state import Origin
from ..storage.roll import maybe_roll
from ..storage.validation import LEGACY_DECOMPRESSED_BYTES, DecompressionBudget, validate_client_batch
from ._leaders import Replication, leader_hint, node_endpoints
from ._authz import denied_topics
from ._produce_keys import RefusedCopy, keyed
from ._pace import SLICE_S, Pacer
from .registry import api

ZSTD_MIN_VERSION = 7
LEGACY_BELOW = 3  # v0-2 may carry message sets of magic 0/1
TRANSACTION_ABORTABLE_VERSION = 11
TOPIC_ID_VERSION = 13
# Partitions between looks at the clock: a Produce of a few partitions never looks. Under
# flush.messages=1 (--fsync always) each append fsynced on the loop, several ms on a busy disk: at
# 64 the first slice ran 128 appends, and a Produce of 1,000 partitions held the loop 0.8 s. The
# fsyncs now run on the flusher's thread (shim.storage.group_commit); the pace stays for the rest.
PACE_EVERY = 8
ADD_PARTITION_VERSION = 12  # Kafka: AddPartitionsToTxnManager.produceRequestVersionToTransactionSupportedOperation
# Enum members read once: from their class each read costs a lookup of EnumType's (0.2-0.3 us on
# Python 3.11), and every partition appended reads both.
_NONE = ErrorCode.none
_CLIENT = Origin.CLIENT
_NAME = operator.attrgetter("name")


class _VerificationError(KafkaError):
    """A transaction verification failure, the one error besides record errors whose message Kafka
    puts in the answer (ReplicaManager: LogAppendResult.hasCustomErrorMessage); every other refusal
    goes out without one, so clients show their own text for the code."""

    @classmethod
    def of(cls, code: ErrorCode) -> "_VerificationError":
        if code == ErrorCode.invalid_txn_state:
            return cls(code, "Partition was not added to the transaction")
        return cls(code, None)


def _verification_error(code: ErrorCode, version: int) -> KafkaError:
    """What a Produce answers for the coordinator's verification error ``code``, with Kafka's message
    (ReplicaManager's postVerificationCallback, AddPartitionsToTxnManager)."""
    if code == ErrorCode.producer_fenced:
        return _VerificationError(ErrorCode.invalid_producer_epoch)
    if (code == ErrorCode.concurrent_transactions and version < ADD_PARTITION_VERSION
            or code == ErrorCode.coordinator_load_in_progress):
        return _VerificationError(ErrorCode.not_enough_replicas, "Unable to verify the partition has been added to "
                                  f"the transaction. Underlying error: {code.name.upper()}")
    if code == ErrorCode.transaction_abortable and version < TRANSACTION_ABORTABLE_VERSION:
        code = ErrorCode.invalid_txn_state
    return _VerificationError.of(code)


def decode(frame, version: int):
    """The dispatcher reads Produce frames of the plain shape itself (one pass, no kio objects,
    a large frame on a worker thread); the others go through kio. Either way the handler sees the
    same attributes, keyed by partition (shim.apis._produce_keys): here, off the loop with the
    reading where the frame is large, or by the handler for kio's."""
    decoded = produce_wire.decode(frame, version)
    return decoded if decoded is None else (decoded[0], keyed(decoded[1], version))


@api(0, "Produce", 0, 13)
def handle(ctx, request):
    walk = _Walk(ctx, request)
    partition, pending, topics, count = walk.partition, _later.pending, [], 0
    for ti, t in enumerate(walk.request.topic_data):
        parts: list = []
        topics.append((walk.names[ti], getattr(t, "topic_id", None), parts))
        for i, p in enumerate(t.partition_data):
            count += 1
            if not count & PACE_EVERY - 1 and walk.out_of_time():
                return _paced(walk, topics, ti, i)
            parts.append(partition(ti, t, i, p, pending))
    return walk.finish(topics)


class _Walk:
    """One Produce's walk over its partitions, and what its answer gathers on the way."""

    __slots__ = ("ctx", "request", "now", "hinted", "replication", "budget", "names", "denied", "deadline")

    def __init__(self, ctx, request) -> None:
        if request.__class__ is not produce_wire.ProduceRequest:  # kio's: decode() keys only its own
            request = keyed(request, ctx.header.api_version)
        self.ctx, self.request, self.now, self.hinted = ctx, request, now_ms(), set()
        self.replication = Replication() if request.acks == -1 and not ctx.node.cluster.single else None
        self.budget = DecompressionBudget(ctx.request_size)
        if ctx.header.api_version < TOPIC_ID_VERSION:
            self.names = list(map(_NAME, request.topic_data))
        else:
            self.names = [_topic_name(ctx, t) for t in request.topic_data]
        self.denied = () if ctx.node.authorizer is None else denied_topics(ctx, [n for n in self.names if n])
        self.deadline = None

    def out_of_time(self) -> bool:
        """Looked at every PACE_EVERY partitions: the slice starts at the first look, so a Produce
        of a few partitions never reads the clock."""
        if self.deadline is None:
            self.deadline = time.monotonic() + SLICE_S
            return False
        return time.monotonic() >= self.deadline

    def partition(self, ti, t, i, p, pending):
        name = self.names[ti]
        if name in self.denied:
            return _error(self.ctx, p.index, KafkaError(ErrorCode.topic_authorization_failed))
        if name is None:
            return _error(self.ctx, p.index, KafkaError(ErrorCode.unknown_topic_id, f"unknown topic id {t.topic_id}"))
        if p.__class__ is RefusedCopy and (name, p.index) in self.ctx.node.logs.logs:
            return self._refused(ti, i, p, pending)
        return _partition(self, name, p, (ti, i), pending)

    def _refused(self, ti, i, p, pending):
        """A partition named more than once, one of whose copies ProduceRequest.validateRecords
        refused: Kafka appends the last copy that passed, if any, and answers the refusal."""
        if p.append is not None:
            _partition(self, self.names[ti], p.append, (ti, i), pending)
        return _error(self.ctx, p.index, p.refusal)

    def finish(self, topics):
        if _later.pending and any(p.__class__ is _Later for t in topics for p in t[2]):
            return _answer_later(self.ctx, self.request, topics, self.hinted, self.replication)
        return _answer(self.ctx, self.request, topics, self.hinted, self.replication)


async def _paced(walk, topics, ti, i):
    """The rest of a Produce that took more than a slice of the loop (from partition ``i`` of topic
    ``ti``), walked a slice at a time while other connections are served. Before the first yield
    every partition still to append is reserved in _later.pending, so a request arriving meanwhile
    appends to it after this one, as for a recompression on a worker thread; the appends here wait
    for those that were pending before. The rest runs as a task of its own, to its end even if the
    answer is no longer awaited."""
    request = walk.request
    topics.extend((walk.names[tj], getattr(t, "topic_id", None), [])
                  for tj, t in enumerate(request.topic_data) if tj > ti)
    rest = [(tj, t, j, p) for tj, t in enumerate(request.topic_data) if tj >= ti
            for j, p in enumerate(t.partition_data) if tj > ti or j >= i]
    shared = asyncio.get_running_loop().create_future()
    reserved, befores = _reserve(walk, rest, shared)
    await asyncio.shield(asyncio.ensure_future(_rest(walk, topics, rest, reserved, shared, befores)))
    return await _answer_later(walk.ctx, request, topics, walk.hinted, walk.replication)


def _reserve(walk, rest, shared) -> tuple[list, list]:
    """Mark each partition of ``rest`` as appended to by ``shared`` in _later.pending: (the logs
    marked, the futures of the appends pending before)."""
    logs, pending, names = walk.ctx.node.logs.logs, _later.pending, walk.names
    reserved, befores = [], []
    for tj, _, _, p in rest:
        plog = logs.get((names[tj], p.index))
        if plog is None:
            continue
        before = pending.get(plog)
        if before is shared:
            continue
        if before is not None:
            befores.append(before)
        pending[plog] = shared
        reserved.append(plog)
    return reserved, befores


async def _rest(walk, topics, rest, reserved, shared, befores) -> None:
    own: dict = {}  # this request's own appends waiting in order behind a recompression
    try:
        for before in befores:
            await before
        pace = Pacer()
        for tj, t, j, p in rest:
            await pace()
            topics[tj][2].append(walk.partition(tj, t, j, p, own))
        for _, _, parts in topics:
            for k, part in enumerate(parts):
                if part.__class__ is _Later:
                    parts[k] = await part.task
    finally:
        shared.set_result(None)
        pending = _later.pending
        for plog in reserved:
            if pending.get(plog) is shared:
                del pending[plog]


def _answer(ctx, request, topics, hinted, replication):
    # Kafka records the request's size against producer_byte_rate after the append, acks=0 included;
    # with no quota stored nothing is recorded (and 1-3 us a request are not spent finding that out)
    quota = ctx.node.produce_quota
    throttle = ctx.throttle(quota.record(ctx.header.client_id, ctx.request_size, now_ms(), ctx.quota_user)
                            ) if quota.active else 0
    if request.acks == 0:
        _close_on_error(t[2] for t in topics)
        return None
    commit = ctx.node.logs.group_commit
    if commit is not None and (commit.pending() or commit.failed is not None and _appended(topics)):
        # fsync "always": answered once its appends are on disk; a job that failed while a paced
        # walk yielded left nothing pending, and its barrier fails the appends it did not sync
        return _synced(commit.barrier(), ctx, request, topics, hinted, replication, throttle)
    return _answered(ctx, request, topics, hinted, replication, throttle)


def _appended(topics) -> bool:
    return any(p.__class__ is tuple for _, _, parts in topics for p in parts)


def _all_appended(topics) -> bool:
    for _, _, parts in topics:
        for p in parts:
            if p.__class__ is not tuple:
                return False
    return True


async def _synced(barrier, ctx, request, topics, hinted, replication, throttle):
    """The answer after an fsync job that started after the appends (shim.storage.group_commit),
    shared with every append written meanwhile: the Produce is answered only once they are on disk
    (Kafka: UnifiedLog.append flushes before it returns under flush.messages=1)."""
    try:
        await barrier
    except OSError as e:  # nothing acknowledged: the data directory is offline (shim.storage.group_commit)
        topics, replication = _storage_failed(ctx, topics, e), None
    result = _answered(ctx, request, topics, hinted, replication, throttle)
    return await result if asyncio.iscoroutine(result) else result


def _storage_failed(ctx, topics, error: OSError) -> list:
    """Each partition appended and not known on disk answered KAFKA_STORAGE_ERROR (Kafka:
    ReplicaManager.appendToLocalLog on a KafkaStorageException); one a job synced before the failure
    (a paced walk's first partitions) keeps its answer, and the others their own error."""
    failed = KafkaError(ErrorCode.kafka_storage_error, f"fsync failed: {error}")
    logs = ctx.node.logs.logs

    def unsynced(name, p) -> bool:  # its batch, at base offset p[2], is not below what a job synced
        plog = logs.get((name, p[0]))
        return plog is None or plog.synced_end <= p[2]
    return [(name, topic_id, [_error(ctx, p[0], failed) if p.__class__ is tuple and unsynced(name, p) else p
                              for p in parts])
            for name, topic_id, parts in topics]


def _answered(ctx, request, topics, hinted, replication, throttle):
    if replication is not None and replication.waiting:
        return _replicated(ctx, request, _entities(ctx, topics), hinted, replication, throttle)
    if not hinted and not ctx.node.control.active and _all_appended(topics):
        # Every partition appended (the common answer): written as kio would write it, without
        # building its entities (the control plane's request log reads entities, so not then).
        header = ctx.header
        return produce_wire.encode_answer(header.correlation_id, header.api_version, topics, throttle)
    return ctx.response(responses=_entities(ctx, topics), node_endpoints=node_endpoints(ctx, hinted),
                        throttle_time=throttle)


def _entities(ctx, topics) -> tuple:
    """kio's TopicProduceResponses of (name, topic_id, partitions), a partition appended given as
    its (index, error_code, base_offset, log_append_time, log_start_offset)."""
    topic_response = factory(ctx.m.TopicProduceResponse, ("name", "topic_id", "partition_responses"))
    response = _response(ctx)
    return tuple(topic_response(name, topic_id, tuple(response(*p, (), None) if p.__class__ is tuple else p
                                                      for p in parts))
                 for name, topic_id, parts in topics)


async def _replicated(ctx, request, topics, hinted, replication, throttle):
    """The answer once acks=all is satisfied for each partition that appended (or timed out)."""
    codes = await replication.wait(ctx, max(request.timeout.total_seconds(), 0))
    parts = [list(t.partition_responses) for t in topics]
    for (ti, pi), code in codes.items():
        if code != ErrorCode.none and parts[ti][pi].error_code == ErrorCode.none:
            parts[ti][pi] = dataclasses.replace(parts[ti][pi], error_code=code)
    responses = tuple(dataclasses.replace(t, partition_responses=tuple(ps)) for t, ps in zip(topics, parts))
    return ctx.response(responses=responses, node_endpoints=node_endpoints(ctx, hinted), throttle_time=throttle)


def _topic_name(ctx, t) -> str | None:
    """v13+ names topics by id (Kafka 4.1; UNKNOWN_TOPIC_ID when the id is not known)."""
    if ctx.version < TOPIC_ID_VERSION:
        return t.name
    info = ctx.node.logs.topic_by_id(t.topic_id)
    return info.name if info else None


def _error(ctx, index: int, e: KafkaError, **hint):
    message = e.message if isinstance(e, _VerificationError) else None
    return ctx.make("PartitionProduceResponse", index=index, error_code=e.code, base_offset=-1,
                    log_append_time=-1, log_start_offset=-1, record_errors=(), error_message=message, **hint)


def _verify_transaction(ctx, txn_id, plog, h, topic, partition):
    if txn_id is None:
        raise KafkaError(ErrorCode.transactional_id_authorization_failed, "transactional batch without a transactional id")
    if h.producer_id not in plog.producer_state.ongoing_txns:
        # The first batch of a transaction in this partition: the coordinator must know it (KIP-890
        # part 1) or, from v12, is asked to add it (part 2).
        try:
            if not ctx.node.loading.done:  # shim.coordinators.loader: the coordinator cannot say yet
                raise KafkaError(ErrorCode.coordinator_load_in_progress)
            if ctx.version >= ADD_PARTITION_VERSION:
                ctx.node.txn.add_partitions(txn_id, h.producer_id, h.producer_epoch, {(topic, partition)}, now_ms(),
                                            transaction_version=2)
            else:
                ctx.node.txn.verify_partition(txn_id, h.producer_id, h.producer_epoch, topic, partition)
        except KafkaError as e:
            raise _verification_error(e.code, ctx.version) from None


def _up_convert(batch, budget):
    """Kafka's LogValidator converts magic 0/1 messages to one v2 batch (message format v2 only, 3.0+)."""
    try:
        return bytearray(up_convert(batch, min(budget.limit(len(batch)), LEGACY_DECOMPRESSED_BYTES)))
    except PayloadTooLarge as e:
        raise KafkaError(ErrorCode.invalid_record, f"the compressed messages are too large: {e}") from None
    except CorruptMessage as e:
        raise KafkaError(ErrorCode.corrupt_message, str(e)) from None
    except InvalidBatch as e:
        raise KafkaError(ErrorCode.invalid_record, str(e)) from None


_RESPONSE_FIELDS = ("index", "error_code", "base_offset", "log_append_time", "log_start_offset", "record_errors",
                   "error_message")


def _partition(walk, topic, p, slot, pending):
    """One partition's append: its (index, error_code, base_offset, log_append_time,
    log_start_offset) when it appended, else its PartitionProduceResponse with the error."""
    ctx, request, plog = walk.ctx, walk.request, None
    try:
        if request.acks not in (-1, 0, 1):
            raise KafkaError(ErrorCode.invalid_required_acks, f"acks must be -1, 0 or 1, not {request.acks}")
        if topic in INTERNAL_TOPICS:
            # Kafka: ReplicaManager refuses client appends to internal topics; their records are
            # the coordinators' state, replayed at every start.
            raise KafkaError(ErrorCode.invalid_topic_exception, f"Cannot append to internal topic {topic}")
        logs = ctx.node.logs
        plog = logs.logs.get((topic, p.index)) or logs.get(topic, p.index)  # the call raises UNKNOWN_TOPIC_OR_PARTITION
        state = ctx.leader_of(topic, p.index)
        batch = p.records
        if batch is None:
            raise KafkaError(ErrorCode.invalid_record, "no records")
        config = plog.config
        if request.acks == -1 and len(state.isr) < config.min_insync_replicas:  # Partition.appendRecordsToLeader
            raise KafkaError(ErrorCode.not_enough_replicas, None)
        version = ctx.header.api_version
        if version < LEGACY_BELOW and is_legacy(batch):
            batch = _up_convert(batch, walk.budget)
        record_pass = RecordPass.of(config, walk.now)  # None unless a topic config asks for record checks
        h = validate_client_batch(batch, config.max_message_bytes, version >= ZSTD_MIN_VERSION, walk.budget,
                                  record_pass)
        job = None
        if record_pass is not None:
            if record_pass.off_loop(h):  # a large recompression: on a worker thread
                job = record_pass.off_loop_job(batch, h, f"{topic}-{p.index}")
            else:
                batch, h = record_pass.apply(batch, h, f"{topic}-{p.index}")
        if job is not None or pending and plog in pending:
            # appended after the job, and after any append to this partition waiting already, in order
            before = pending.get(plog)
            mine = pending[plog] = asyncio.get_running_loop().create_future()
            return _Later(asyncio.ensure_future(_later(walk, topic, p, plog, job, batch, h, slot, before,
                                                       (pending, mine))))
    except RecordErrors as e:
        return _record_errors(ctx, p.index, plog, e)
    except KafkaError as e:
        return _error(ctx, p.index, e, **leader_hint(ctx, topic, p.index, e.code, walk.hinted))
    return _append(walk, topic, p, plog, batch, h, slot)


def _append(walk, topic, p, plog, batch, h, slot):
    try:
        if h.attributes & TRANSACTIONAL_FLAG:
            _verify_transaction(walk.ctx, getattr(walk.request, "transactional_id", None), plog, h, topic, p.index)
        maybe_roll(plog, h, walk.now)
        result = plog.append(batch, h, walk.now, origin=_CLIENT)
    except KafkaError as e:
        return _error(walk.ctx, p.index, e, **leader_hint(walk.ctx, topic, p.index, e.code, walk.hinted))
    if walk.replication is not None:
        walk.replication.add(slot, topic, p.index, plog, result.base_offset + h.last_offset_delta + 1)
    return p.index, _NONE, result.base_offset, result.log_append_time, result.log_start_offset


def _record_errors(ctx, index, plog, e: RecordErrors):
    errors = tuple(ctx.make("BatchIndexAndErrorMessage", batch_index=i, batch_index_error_message=m)
                   for i, m in e.record_errors) if hasattr(ctx.m, "BatchIndexAndErrorMessage") else ()
    return _response(ctx)(index, e.code, -1, -1, plog.log_start_offset, errors, e.message)


class _Later:
    """A partition appended once its recompression ran on a worker thread (RecordPass.off_loop)."""

    __slots__ = ("task",)

    def __init__(self, task) -> None:
        self.task = task


async def _later(walk, topic, p, plog, job, batch, h, slot, before, slot_of):
    """The batch recompressed off the loop, then appended on it by the one write path, after the
    appends to the same partition that were waiting already (``before``: their last one's future;
    ``slot_of``: (pending, mine), this one's future in ``pending``, _later.pending or a paced
    Produce's own, until a later one takes its place). A task of its own: it runs to its end even
    when the request's answer is no longer awaited."""
    pending, mine = slot_of
    try:
        try:
            if job is not None:
                batch, h = await run_off_loop(job, plog.config, f"{topic}-{p.index}")
        except KafkaError as e:
            return _error(walk.ctx, p.index, e, **leader_hint(walk.ctx, topic, p.index, e.code, walk.hinted))
        if before is not None:
            await before
        return _append(walk, topic, p, plog, batch, h, slot)
    finally:
        mine.set_result(None)
        if pending.get(plog) is mine:
            del pending[plog]


_later.pending = {}  # PartitionLog -> the future its last deferred append sets when done


async def _answer_later(ctx, request, topics, hinted, replication):
    for name, topic_id, parts in topics:
        for i, part in enumerate(parts):
            if part.__class__ is _Later:
                parts[i] = await part.task
    result = _answer(ctx, request, topics, hinted, replication)
    return await result if asyncio.iscoroutine(result) else result


def _response(ctx):
    return factory(ctx.m.PartitionProduceResponse, _RESPONSE_FIELDS)


def _close_on_error(partitions_per_topic) -> None:
    """Kafka closes the connection of an acks=0 Produce that failed anywhere, so the producer
    refreshes its metadata (KafkaApis.handleProduceRequest: errorInResponse with acks 0)."""
    for parts in partitions_per_topic:
        for p in parts:
            code = p[1] if p.__class__ is tuple else p.error_code
            if code != ErrorCode.none:
                raise CloseConnection(f"an acks=0 Produce failed with {ErrorCode(code).name.upper()}")


def error_response(ctx, request, code):
    """Kafka: ProduceRequest.getErrorResponse -- the error on every partition."""
    if request.acks == 0:
        raise CloseConnection(f"an acks=0 Produce failed with {ErrorCode(code).name.upper()}")
    # one entry per partition, as the request is keyed by partition (ProduceRequest.partitionSizes)
    request = keyed(request, ctx.version)
    return ctx.response(node_endpoints=(), responses=tuple(
        ctx.make("TopicProduceResponse", name=t.name if ctx.version < TOPIC_ID_VERSION else None,
                 topic_id=getattr(t, "topic_id", None),
                 partition_responses=tuple(_error(ctx, p.index, KafkaError(code)) for p in t.partition_data))
        for t in request.topic_data))
