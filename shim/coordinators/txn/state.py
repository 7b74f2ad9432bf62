"""Transaction states, the one table of valid previous states (Kafka: TransactionState.java) and
the table of EndTxn outcomes under transaction version 2 (Kafka 4.x: TransactionCoordinator.endTransaction)."""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field

from ...errors import ErrorCode

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
    # Kafka 4.x: transaction version 2 may abort from Empty/Complete* (an abort with no partition added)
    S.PREPARE_ABORT: frozenset({S.ONGOING, S.PREPARE_EPOCH_FENCE, S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}),
    S.COMPLETE_COMMIT: frozenset({S.PREPARE_COMMIT}),
    S.COMPLETE_ABORT: frozenset({S.PREPARE_ABORT}),
    S.DEAD: frozenset({S.EMPTY, S.COMPLETE_ABORT, S.COMPLETE_COMMIT}),
    S.PREPARE_EPOCH_FENCE: frozenset({S.ONGOING}),
}


# Kafka: TransactionState.isExpirationAllowed -- the states a transactional id may expire in (and so
# the states Dead may follow)
EXPIRATION_ALLOWED = VALID_PREVIOUS[S.DEAD]


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
    next_producer_id: int = NO_PRODUCER_ID
    """Transaction version 2: the producer id the transaction moves to when its epoch is exhausted."""
    client_transaction_version: int = 0
    """The transaction version the producer used for the transaction (2: an epoch bump per EndTxn)."""
    failed_epoch_fence: bool = False
    """In memory only: a fence's bumped epoch was kept but never written (Kafka: hasFailedEpochFence)."""

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


# -- EndTxn under transaction version 2 (KIP-890 part 2) --------------------------------------

class EndTxnAction(enum.Enum):
    PREPARE = "prepare"   # PrepareCommit/PrepareAbort with the epoch bumped, markers, Complete*
    RETRY = "retry"       # the EndTxn already completed: NONE with the current producer id and epoch


# (state, commit, is a retry of a completed EndTxn) -> what EndTxn v5 does. States absent here
# (Dead, PrepareEpochFence) are never current.
END_TXN_V2: dict[tuple[TxnState, bool, bool], EndTxnAction | ErrorCode] = {
    **{(S.ONGOING, commit, retry): EndTxnAction.PREPARE for commit in (True, False) for retry in (True, False)},
    (S.COMPLETE_COMMIT, True, True): EndTxnAction.RETRY,
    (S.COMPLETE_COMMIT, True, False): ErrorCode.invalid_txn_state,
    (S.COMPLETE_COMMIT, False, True): ErrorCode.invalid_txn_state,
    (S.COMPLETE_COMMIT, False, False): EndTxnAction.PREPARE,  # abort with no partition added
    (S.COMPLETE_ABORT, False, True): EndTxnAction.RETRY,
    (S.COMPLETE_ABORT, False, False): EndTxnAction.PREPARE,
    (S.COMPLETE_ABORT, True, True): ErrorCode.invalid_txn_state,
    (S.COMPLETE_ABORT, True, False): ErrorCode.invalid_txn_state,
    (S.PREPARE_COMMIT, True, True): ErrorCode.concurrent_transactions,
    (S.PREPARE_COMMIT, False, True): ErrorCode.invalid_txn_state,
    (S.PREPARE_ABORT, False, True): ErrorCode.concurrent_transactions,
    (S.PREPARE_ABORT, True, True): ErrorCode.invalid_txn_state,
    (S.EMPTY, False, False): EndTxnAction.PREPARE,
    (S.EMPTY, True, False): ErrorCode.invalid_txn_state,
}


def end_txn_v2_epoch_valid(m: TxnMetadata, producer_epoch: int, retry: bool) -> bool:
    """Kafka 4.x endTransaction's isValidEpoch: the same epoch starts the next EndTxn, so a retry
    is recognised by the epoch the previous EndTxn bumped from (or rotated away from)."""
    if m.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
        return retry
    if m.state in (S.COMPLETE_COMMIT, S.COMPLETE_ABORT):
        return retry or producer_epoch == m.producer_epoch
    return producer_epoch == m.producer_epoch


def end_txn_v2_retry(m: TxnMetadata, producer_id: int, producer_epoch: int) -> tuple[bool, bool]:
    """(retry after an epoch bump, retry after a producer id rotation) of an EndTxn v5."""
    bumped = m.producer_epoch == producer_epoch + 1
    rotated = (m.last_producer_id == producer_id and producer_epoch == EPOCH_EXHAUSTED
               and m.producer_epoch == 0)
    return bumped, rotated
