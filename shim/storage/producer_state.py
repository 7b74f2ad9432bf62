"""Per-partition producer state: idempotence, epochs and open transactions.

Kafka: storage/internals/log/ProducerStateManager, ProducerStateEntry, ProducerAppendInfo.
Validation computes a :class:`ProducerAppend` without touching state; the partition log applies it
only after the batch is written ("compute the change, persist it, then apply it").
"""

from __future__ import annotations

import enum
from collections import deque
from dataclasses import dataclass, field
from typing import NamedTuple

from kafka_codecs.batch import BatchHeader

from ..errors import ErrorCode, KafkaError

NUM_BATCHES_TO_RETAIN = 5  # Kafka: ProducerStateEntry.NUM_BATCHES_TO_RETAIN
NO_EPOCH = -1
NO_SEQUENCE = -1
INT32_MAX = 2**31 - 1


class Origin(enum.Enum):
    CLIENT = "client"
    COORDINATOR = "coordinator"
    REPLAY = "replay"  # Kafka's REPLICATION: rebuilding state from our own log, no checks


class BatchMetadata(NamedTuple):
    last_seq: int
    last_offset: int
    offset_delta: int
    timestamp: int

    @property
    def first_seq(self) -> int:
        return decrement_sequence(self.last_seq, self.offset_delta)

    @property
    def first_offset(self) -> int:
        return self.last_offset - self.offset_delta


def decrement_sequence(seq: int, delta: int) -> int:
    # Kafka: DefaultRecordBatch.decrementSequence (sequences wrap at INT32_MAX)
    return seq - delta if seq >= delta else INT32_MAX - (delta - seq) + 1


def in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == INT32_MAX)


@dataclass(slots=True)
class ProducerStateEntry:
    producer_id: int
    producer_epoch: int = NO_EPOCH
    coordinator_epoch: int = -1
    last_timestamp: int = -1
    current_txn_first_offset: int | None = None
    batches: deque = field(default_factory=lambda: deque(maxlen=NUM_BATCHES_TO_RETAIN))

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else NO_SEQUENCE

    @property
    def last_data_offset(self) -> int:
        return self.batches[-1].last_offset if self.batches else -1

    def find_duplicate(self, epoch: int, first_seq: int, last_seq: int) -> BatchMetadata | None:
        if epoch != self.producer_epoch:
            return None
        for b in self.batches:
            if b.first_seq == first_seq and b.last_seq == last_seq:
                return b
        return None

    def update_epoch(self, epoch: int) -> None:
        # Kafka: maybeUpdateProducerEpoch -- a new epoch forgets the old epoch's batches
        if epoch != self.producer_epoch:
            self.batches.clear()
            self.producer_epoch = epoch


class CompletedTxn(NamedTuple):
    producer_id: int
    first_offset: int
    last_offset: int  # offset of the marker
    is_aborted: bool


class AbortedTxn(NamedTuple):
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


class ProducerAppend(NamedTuple):
    """A validated data batch, to be applied once it is in the log."""

    producer_id: int
    epoch: int
    last_seq: int
    last_timestamp: int
    offset_delta: int
    is_transactional: bool


class ProducerStateManager:
    def __init__(self) -> None:
        self.producers: dict[int, ProducerStateEntry] = {}
        # producer id -> first offset of its open transaction in this partition (Kafka: ongoingTxns)
        self.ongoing_txns: dict[int, int] = {}

    # -- validation (pure) -------------------------------------------------------------------

    def find_duplicate(self, h: BatchHeader) -> BatchMetadata | None:
        entry = self.producers.get(h.producer_id)
        return entry.find_duplicate(h.producer_epoch, h.base_sequence, h.last_sequence) if entry else None

    def validate_data(self, h: BatchHeader, origin: Origin) -> ProducerAppend:
        """Kafka: ProducerAppendInfo.appendDataBatch checks, for a batch with a producer id."""
        entry = self.producers.get(h.producer_id)
        current_epoch = entry.producer_epoch if entry else NO_EPOCH
        if origin is not Origin.REPLAY:
            if h.producer_epoch < current_epoch:
                raise KafkaError(
                    ErrorCode.invalid_producer_epoch,
                    f"epoch {h.producer_epoch} of producer {h.producer_id} is older than {current_epoch}",
                )
            if origin is Origin.CLIENT:
                self._check_sequence(entry, h)
            open_txn = entry is not None and entry.current_txn_first_offset is not None
            if open_txn and not h.is_transactional:
                raise KafkaError(
                    ErrorCode.invalid_txn_state,
                    f"non-transactional batch from producer {h.producer_id} with an open transaction",
                )
        return ProducerAppend(
            h.producer_id, h.producer_epoch, h.last_sequence, h.max_timestamp,
            h.last_offset_delta, h.is_transactional,
        )

    @staticmethod
    def _check_sequence(entry: ProducerStateEntry | None, h: BatchHeader) -> None:
        # Kafka: ProducerAppendInfo.checkSequence. No state (or epoch -1) accepts any sequence.
        if entry is None or entry.producer_epoch == NO_EPOCH:
            return
        if h.producer_epoch != entry.producer_epoch:
            if h.base_sequence != 0:
                raise KafkaError(
                    ErrorCode.out_of_order_sequence_number,
                    f"new epoch {h.producer_epoch} must start at sequence 0, not {h.base_sequence}",
                )
        elif not in_sequence(entry.last_seq, h.base_sequence):
            raise KafkaError(
                ErrorCode.out_of_order_sequence_number,
                f"sequence {h.base_sequence} does not follow {entry.last_seq} for producer {h.producer_id}",
            )

    def validate_marker(self, producer_id: int, epoch: int, coordinator_epoch: int, origin: Origin) -> None:
        """Kafka: ProducerAppendInfo.appendEndTxnMarker checks (the marker epoch may be higher)."""
        if origin is Origin.REPLAY:
            return
        entry = self.producers.get(producer_id)
        if entry is None:
            return
        if epoch < entry.producer_epoch:
            raise KafkaError(
                ErrorCode.invalid_producer_epoch,
                f"marker epoch {epoch} is older than producer {producer_id}'s epoch {entry.producer_epoch}",
            )
        if entry.coordinator_epoch > coordinator_epoch:
            raise KafkaError(
                ErrorCode.transaction_coordinator_fenced,
                f"coordinator epoch {coordinator_epoch} is older than {entry.coordinator_epoch}",
            )

    # -- application (after the append) ------------------------------------------------------

    def apply_data(self, a: ProducerAppend, first_offset: int, last_offset: int, timestamp: int | None = None) -> None:
        """Record an appended batch; ``timestamp`` is its stored MaxTimestamp when the log rewrote it
        (LogAppendTime topics)."""
        entry = self.producers.get(a.producer_id)
        if entry is None:
            entry = self.producers[a.producer_id] = ProducerStateEntry(a.producer_id)
        ts = a.last_timestamp if timestamp is None else timestamp
        entry.update_epoch(a.epoch)
        entry.batches.append(BatchMetadata(a.last_seq, last_offset, a.offset_delta, ts))
        entry.last_timestamp = ts
        if a.is_transactional and entry.current_txn_first_offset is None:
            entry.current_txn_first_offset = first_offset
            self.ongoing_txns[a.producer_id] = first_offset

    def apply_marker(
        self, producer_id: int, epoch: int, coordinator_epoch: int, is_abort: bool,
        offset: int, timestamp: int,
    ) -> CompletedTxn | None:
        """Record a COMMIT/ABORT marker at ``offset``; returns the completed transaction if one was open."""
        entry = self.producers.get(producer_id)
        if entry is None:
            entry = self.producers[producer_id] = ProducerStateEntry(producer_id)
        completed = None
        if entry.current_txn_first_offset is not None:
            completed = CompletedTxn(producer_id, entry.current_txn_first_offset, offset, is_abort)
        entry.update_epoch(epoch)
        entry.coordinator_epoch = coordinator_epoch
        entry.current_txn_first_offset = None
        entry.last_timestamp = timestamp
        self.ongoing_txns.pop(producer_id, None)
        return completed

    # -- queries -----------------------------------------------------------------------------

    def first_unstable_offset(self) -> int | None:
        return min(self.ongoing_txns.values(), default=None)

    def last_stable_offset_for(self, completed: CompletedTxn) -> int:
        """Kafka: ProducerStateManager.lastStableOffset(completedTxn), stored in the txn index entry."""
        others = [off for pid, off in self.ongoing_txns.items() if pid != completed.producer_id]
        return min(others) if others else completed.last_offset + 1

    def remove_expired_producers(self, now_ms: int, expiration_ms: int) -> list[int]:
        """Kafka: ProducerStateManager.removeExpiredProducers (KIP-854's producer.id.expiration.ms): forget
        every producer without an open transaction whose last batch or marker is ``expiration_ms`` old or
        more (``last_timestamp`` is the batch's MaxTimestamp, the client's clock). Its next batch is then
        taken at any sequence, as from a producer never seen; the next snapshot leaves it out."""
        expired = [pid for pid, e in self.producers.items()
                   if e.current_txn_first_offset is None and now_ms - e.last_timestamp >= expiration_ms]
        for pid in expired:
            del self.producers[pid]
        return expired

    def truncate(self) -> None:
        self.producers.clear()
        self.ongoing_txns.clear()

    def active_producers(self) -> list[ProducerStateEntry]:
        return list(self.producers.values())
