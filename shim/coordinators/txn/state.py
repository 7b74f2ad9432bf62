"""Transaction states and the one table of valid previous states (Kafka: TransactionMetadata.scala)."""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field

NO_PRODUCER_ID = -1
NO_EPOCH = -1
EPOCH_EXHAUSTED = 2**15 - 2  # Kafka: TransactionMetadata.isEpochExhausted (Short.MaxValue - 1)


class TxnState(enum.IntEnum):
    EMPTY = 0
    ONGOING = 1
    PREPARE_COMMIT = 2
    PREPARE_ABORT = 3
    COMPLETE_COMMIT = 4
    COMPLETE_ABORT = 5
    DEAD = 6
    PREPARE_EPOCH_FENCE = 7

    @property
    def kafka_name(self) -> str:
        """The name DescribeTransactions/ListTransactions report (Kafka: TransactionState.name)."""
        return "".join(part.capitalize() for part in self.name.split("_"))


S = TxnState
VALID_PREVIOUS: dict[TxnState, frozenset[TxnState]] = {
    S.EMPTY: frozenset({S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}),
    S.ONGOING: frozenset({S.ONGOING, S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}),
    S.PREPARE_COMMIT: frozenset({S.ONGOING}),
    S.PREPARE_ABORT: frozenset({S.ONGOING, S.PREPARE_EPOCH_FENCE}),
    S.COMPLETE_COMMIT: frozenset({S.PREPARE_COMMIT}),
    S.COMPLETE_ABORT: frozenset({S.PREPARE_ABORT}),
    S.DEAD: frozenset({S.EMPTY, S.COMPLETE_ABORT, S.COMPLETE_COMMIT}),
    S.PREPARE_EPOCH_FENCE: frozenset({S.ONGOING}),
}


class IllegalTransition(RuntimeError):
    """A transition the table forbids: a bug, never a client-facing outcome."""


@dataclass(slots=True)
class TxnMetadata:
    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: TxnState = TxnState.EMPTY
    last_producer_id: int = NO_PRODUCER_ID
    last_producer_epoch: int = NO_EPOCH
    partitions: set[tuple[str, int]] = field(default_factory=set)
    txn_start_ms: int = -1
    last_update_ms: int = -1

    def transition(self, new: TxnState, now_ms: int) -> None:
        if self.state not in VALID_PREVIOUS[new]:
            raise IllegalTransition(f"{self.transactional_id}: {self.state.name} -> {new.name}")
        if new is TxnState.ONGOING and self.state is not TxnState.ONGOING:
            self.txn_start_ms = now_ms
        if new in (TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT):
            self.partitions = set()
        if new is TxnState.EMPTY:
            self.txn_start_ms = -1
        self.state = new
        self.last_update_ms = now_ms

    def copy(self) -> "TxnMetadata":
        return dataclasses.replace(self, partitions=set(self.partitions))

    @property
    def epoch_exhausted(self) -> bool:
        return self.producer_epoch >= EPOCH_EXHAUSTED
