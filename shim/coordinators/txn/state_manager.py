"""The transaction coordinator's log (Kafka: TransactionStateManager's side of ``__transaction_state``):
reading every transactional id's latest state back, the tombstones of expired ids, and what a failed
write of the topic answers the client. The records' format is :mod:`.txn_log`."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Iterator

from kafka_codecs.batch import parse_header
from kafka_codecs.records import decode_batch, encode_batch

from ...errors import ErrorCode
from ...storage.log_manager import LogManager
from ...storage.producer_state import Origin
from ..partitioning import CURRENT, LEGACY, replay_phase
from ..steps import Steps
from .state import TxnMetadata
from .txn_log import UnreadableRecord, decode_key, decode_value, encode_key

if TYPE_CHECKING:
    from ...storage.partition_log import PartitionLog

log = logging.getLogger(__name__)

TXN_TOPIC = "__transaction_state"


def append_error(code: ErrorCode) -> ErrorCode:
    """What a failed write of ``__transaction_state`` answers the client (Kafka:
    TransactionStateManager.appendTransactionToLog's mapping of the append's error)."""
    if code in (ErrorCode.unknown_topic_or_partition, ErrorCode.not_enough_replicas,
                ErrorCode.not_enough_replicas_after_append, ErrorCode.request_timed_out):
        return ErrorCode.coordinator_not_available
    if code in (ErrorCode.not_leader_or_follower, ErrorCode.kafka_storage_error):
        return ErrorCode.not_coordinator
    if code in (ErrorCode.message_too_large, ErrorCode.record_list_too_large):
        return ErrorCode.unknown_server_error
    return code


def read_transactions(logs: LogManager) -> "Steps[dict[str, TxnMetadata]]":
    """The latest state of every transactional id in ``__transaction_state`` (tombstones drop it).
    A transactional id's records in its legacy partition (older data directories) are replayed
    before those of its Kafka partition, which are newer. A step ends after each batch
    (shim.coordinators.steps)."""
    info = logs.topics.get(TXN_TOPIC)
    n = info.partitions if info else 0
    phases: tuple[list, list] = ([], [])  # (transactional id, state or None) in replay order, per phase
    for p in range(n):
        phase_of: dict[str, int] = {}  # one id has many records in its partition: hash it once
        for raw in logs.get(TXN_TOPIC, p).iter_batches():
            for r in decode_batch(raw)[1]:
                try:
                    txn_id = decode_key(r.key)
                    value = None if r.value is None else decode_value(txn_id, r.value)
                except UnreadableRecord as e:
                    log.warning("skipping a record of %s: %s", TXN_TOPIC, e)
                    continue
                phase = phase_of.get(txn_id)
                if phase is None:
                    phase = phase_of[txn_id] = replay_phase(txn_id, p, n)
                phases[phase].append((txn_id, value))
            yield
    txns: dict[str, TxnMetadata] = {}
    for txn_id, value in phases[LEGACY] + phases[CURRENT]:
        if value is None:
            txns.pop(txn_id, None)
        else:
            txns[txn_id] = value
    return txns


_RECORD_OVERHEAD = 26  # at most, beside the key: a record's varints, attributes and empty headers
_BATCH_OVERHEAD = 61


def tombstone_chunks(ids: list[str], max_batch_bytes: int) -> list[list[str]]:
    """``ids`` in runs whose tombstones fit one batch of ``max_batch_bytes`` (Kafka: a full
    MemoryRecordsBuilder is appended and a new one started)."""
    chunks: list[list[str]] = [[]]
    size = _BATCH_OVERHEAD
    for t in ids:
        need = _RECORD_OVERHEAD + len(encode_key(t))
        if chunks[-1] and size + need > max_batch_bytes:
            chunks.append([])
            size = _BATCH_OVERHEAD
        chunks[-1].append(t)
        size += need
    return chunks


def append_tombstones(plog: PartitionLog, ids: list[str], now_ms: int) -> Iterator[list[str]]:
    """Append the tombstones of ``ids`` to ``plog`` as COORDINATOR writes, in as few batches as its
    max.message.bytes allows; yields each run once its batch is appended."""
    for chunk in tombstone_chunks(ids, plog.config.max_message_bytes):
        batch = encode_batch([(encode_key(t), None, (), now_ms) for t in chunk])
        plog.append(batch, parse_header(batch), now_ms, origin=Origin.COORDINATOR)
        yield chunk
