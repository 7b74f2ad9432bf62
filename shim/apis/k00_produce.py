"""Produce (0), v3-11.

One batch per partition, validated as Kafka does (shim.storage.validation), appended as received
with only the base offset and leader epoch stamped. Idempotent duplicates of one of the last five
batches succeed with the original base offset. acks=0 gets no response at all. Appends to the
internal topics (__consumer_offsets, __transaction_state) are refused with INVALID_TOPIC_EXCEPTION.
fsync="always" flushes before answering acks=1/all.

The first transactional batch of a producer in a partition is verified against the transaction
coordinator (KIP-890 part 1), with the leader's error mapping of Kafka 3.9
(AddPartitionsToTxnManager / ReplicaManager): PRODUCER_FENCED -> INVALID_PRODUCER_EPOCH,
TRANSACTION_ABORTABLE -> INVALID_TXN_STATE before v11, CONCURRENT_TRANSACTIONS -> NOT_ENOUGH_REPLICAS
(retriable); INVALID_PRODUCER_ID_MAPPING is passed through.
"""

from ..errors import ErrorCode, KafkaError
from ..node import now_ms
from ..storage.log_manager import INTERNAL_TOPICS
from ..storage.validation import validate_client_batch
from .registry import api

ZSTD_MIN_VERSION = 7
TRANSACTION_ABORTABLE_VERSION = 11


def _verification_error(code: ErrorCode, version: int) -> ErrorCode:
    if code == ErrorCode.producer_fenced:
        return ErrorCode.invalid_producer_epoch
    if code == ErrorCode.concurrent_transactions:
        return ErrorCode.not_enough_replicas
    if code == ErrorCode.transaction_abortable and version < TRANSACTION_ABORTABLE_VERSION:
        return ErrorCode.invalid_txn_state
    return code


@api(0, "Produce", 3, 11)
def handle(ctx, request):
    node = ctx.node
    now = now_ms()
    topics = []
    for t in request.topic_data:
        parts = tuple(_partition(ctx, request, t.name, p, now) for p in t.partition_data)
        topics.append(ctx.make("TopicProduceResponse", name=t.name, partition_responses=parts))
    if request.acks == 0:
        return None
    if node.config.fsync == "always":
        for t in request.topic_data:
            for p in t.partition_data:
                if (t.name, p.index) in node.logs.logs:
                    node.logs.logs[(t.name, p.index)].flush()
    return ctx.response(responses=tuple(topics), node_endpoints=())


def _verify_transaction(ctx, txn_id, plog, h, topic, partition):
    if txn_id is None:
        raise KafkaError(ErrorCode.transactional_id_authorization_failed, "transactional batch without a transactional id")
    if h.producer_id not in plog.producer_state.ongoing_txns:
        # The first batch of a transaction in this partition: the coordinator must know it (KIP-890 part 1).
        try:
            ctx.node.txn.verify_partition(txn_id, h.producer_id, h.producer_epoch, topic, partition)
        except KafkaError as e:
            raise KafkaError(_verification_error(e.code, ctx.version), e.message) from None


def _partition(ctx, request, topic, p, now):
    try:
        if request.acks not in (-1, 0, 1):
            raise KafkaError(ErrorCode.invalid_required_acks, f"acks must be -1, 0 or 1, not {request.acks}")
        if topic in INTERNAL_TOPICS:
            # Kafka: ReplicaManager refuses client appends to internal topics; their records are
            # the coordinators' state, replayed at every start.
            raise KafkaError(ErrorCode.invalid_topic_exception, f"Cannot append to internal topic {topic}")
        plog = ctx.node.logs.get(topic, p.index)
        if p.records is None:
            raise KafkaError(ErrorCode.invalid_record, "no records")
        batch = p.records
        h = validate_client_batch(batch, plog.config.max_message_bytes, ctx.version >= ZSTD_MIN_VERSION)
        if h.is_transactional:
            _verify_transaction(ctx, request.transactional_id, plog, h, topic, p.index)
        result = plog.append_client_batch(batch, h, now)
    except KafkaError as e:
        return ctx.make("PartitionProduceResponse", index=p.index, error_code=e.code, base_offset=-1,
                        log_append_time=-1, log_start_offset=-1, record_errors=(), error_message=e.message)
    return ctx.make("PartitionProduceResponse", index=p.index, error_code=ErrorCode.none,
                    base_offset=result.base_offset, log_append_time=result.log_append_time,
                    log_start_offset=result.log_start_offset, record_errors=(), error_message=None)
