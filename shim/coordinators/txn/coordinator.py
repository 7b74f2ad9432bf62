"""The transaction coordinator (Kafka: TransactionCoordinator, TransactionStateManager).

Synchronous and clock-free: every method takes ``now_ms``. State is persisted to
``__transaction_state`` before it is applied, and markers are written synchronously before EndTxn
answers (a stronger guarantee than Kafka's asynchronous markers, with the same outcome). Both are
COORDINATOR appends of the log. Under fsync "always" every write is fsynced by the group commit off
the loop; the steps of ending a transaction (Prepare state, markers, Complete state) each wait for
the job that has the one before on disk: an EndTxn's in its handler (shim.apis.k26_end_txn), those
the coordinator takes by itself (aborts of timed-out or fenced transactions, released or retried
markers) in shim.txn_steps. Without a loop to wait on, each step is durable before it returns.
One coordinator, coordinator epoch 0.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from typing import Callable

from kafka_codecs.batch import parse_header
from kafka_codecs.records import encode_batch

from ...errors import ErrorCode, KafkaError
from ...storage.log_manager import LogManager
from ...storage.producer_state import Origin
from ..partitioning import partition_for
from ..producer_ids import ProducerIdManager
from ..steps import Steps, drain
from .markers import MarkerListener, write_markers
from .state import (
    END_TXN_V2, EPOCH_EXHAUSTED, EXPIRATION_ALLOWED, NO_EPOCH, NO_PRODUCER_ID, EndTxnAction, IllegalTransition, TxnMetadata, TxnState,
    end_txn_v2_epoch_valid, end_txn_v2_retry,
)
from .state_manager import TXN_TOPIC, append_error, append_tombstones, read_transactions
from .txn_log import encode_key, encode_value

log = logging.getLogger(__name__)

OFFSETS_TOPIC = "__consumer_offsets"
COORDINATOR_EPOCH = 0
S = TxnState


def _no_probe(name: str) -> None:
    pass


def _no_replica_check(topic: str, partition: int, min_isr: int) -> None:
    pass


def _inline() -> bool:
    return False


_ENDING = frozenset({S.PREPARE_COMMIT, S.PREPARE_ABORT, S.COMPLETE_COMMIT, S.COMPLETE_ABORT})


class TransactionCoordinator:
    def __init__(self, logs: LogManager, producer_ids: ProducerIdManager, *, num_partitions: int,
                 offsets_partitions: int, max_timeout_ms: int, abort_check_interval_ms: int,
                 transaction_version: int = 0, id_expiration_ms: int = 7 * 24 * 3600 * 1000,
                 id_expiration_check_interval_ms: int = 3_600_000) -> None:
        self.logs = logs
        self.finalized_transaction_version(transaction_version)
        self.producer_ids = producer_ids
        self.num_partitions = num_partitions
        self.offsets_partitions = offsets_partitions
        self.max_timeout_ms = max_timeout_ms
        self.abort_check_interval_ms = abort_check_interval_ms
        self.id_expiration_ms = id_expiration_ms  # transactional.id.expiration.ms
        self.id_expiration_check_interval_ms = id_expiration_check_interval_ms
        self.txns: dict[str, TxnMetadata] = {}
        self.marker_listeners: list[MarkerListener] = []
        self._next_check = 0
        self._next_expiration = id_expiration_check_interval_ms  # from load(): one interval after the start
        # Kafka writes the markers after EndTxn is answered (TransactionMarkerChannelManager); holding
        # them keeps a prepared transaction open until released (shim.control: hold_markers).
        self.markers_held = False
        self.held: dict[str, bool] = {}  # transactional id -> commit, prepared with markers held
        self.probe: Callable[[str], None] = _no_probe  # named crash points (shim.control)
        # (topic, partition, min.insync.replicas) -> None, or NOT_ENOUGH_REPLICAS: the simulated
        # cluster's ISR of the coordinator's partition (shim.cluster.Cluster.check_min_isr)
        self.check_min_isr: Callable[[str, int, int], None] = _no_replica_check
        # transactional id -> commit: markers written, the Complete state's write failed; retried by tick
        self.incomplete: dict[str, bool] = {}
        # transactional id -> (commit, markers written): an EndTxn whose steps wait for the group
        # commit between them (staged=True under fsync "always"), advanced by :meth:`advance`
        self.staged: dict[str, tuple[bool, bool]] = {}
        # transactional id -> (commit, the partitions whose markers were refused): retried by tick
        self.unmarked: dict[str, tuple[bool, list[tuple[str, int]]]] = {}
        # True when the steps the coordinator takes by itself wait for the group commit between them
        # (fsync "always" on a running loop); each one staged is then handed to ``on_staged``, whose
        # driver (shim.txn_steps) calls :meth:`advance` once the step before is on disk
        self.stage_steps: Callable[[], bool] = _inline
        self.on_staged: Callable[[str], None] = _no_probe

    def finalized_transaction_version(self, transaction_version: int) -> None:
        """The cluster's finalized transaction.version, at start and when UpdateFeatures changes it.
        From 1 the state records are written as value v1 (Kafka:
        TransactionVersion.transactionLogValueVersion); aborts the coordinator starts itself
        (timeouts, fencing) follow it. Which EndTxn rules apply is the client's choice, by request
        version (Kafka: transactionVersionForEndTxn)."""
        self.log_value_version = 1 if transaction_version >= 1 else 0
        self.transaction_version = transaction_version

    # -- persistence ------------------------------------------------------------------------

    def _persist(self, m: TxnMetadata, durable: bool | None = None) -> None:
        """Append ``m`` as an acks=all write (Kafka: TransactionLog.EnforcedRequiredAcks), refused
        while the partition's ISR is below its min.insync.replicas; KafkaError with the code the
        client is answered."""
        self.logs.ensure_topic(TXN_TOPIC, self.num_partitions)
        partition = partition_for(m.transactional_id, self.num_partitions)
        plog = self.logs.get(TXN_TOPIC, partition)
        try:
            self.check_min_isr(TXN_TOPIC, partition, plog.config.min_insync_replicas)
        except KafkaError as e:
            raise KafkaError(append_error(e.code), e.message) from None
        value = encode_value(m, self.log_value_version)
        batch = encode_batch([(encode_key(m.transactional_id), value, (), max(m.last_update_ms, 0))])
        # a Prepare state is on disk before any marker is written, a Complete state before the
        # answer that follows it; the others wait with the answer for the group commit
        try:
            plog.append(batch, parse_header(batch), m.last_update_ms, origin=Origin.COORDINATOR,
                        durable=m.state in _ENDING if durable is None else durable)
        except KafkaError as e:  # a failed fsync's KAFKA_STORAGE_ERROR is NOT_COORDINATOR
            raise KafkaError(append_error(e.code), e.message) from None

    def _move(self, m: TxnMetadata, state: TxnState, now_ms: int, durable: bool | None = None) -> None:
        """Compute the next state, persist it, then keep it (Kafka: prepareTransitionTo/complete)."""
        nxt = m.copy()
        nxt.transition(state, now_ms)
        self._persist(nxt, durable)
        self.txns[m.transactional_id] = nxt

    def load(self, now_ms: int) -> None:
        drain(self.load_steps(lambda: now_ms))

    def load_steps(self, clock: Callable[[], int]) -> "Steps[None]":
        """Replay ``__transaction_state``, then finish what was being prepared when the broker
        stopped; ``clock`` is read once the replay is done."""
        self.txns = yield from read_transactions(self.logs)
        now_ms = clock()
        self._next_expiration = now_ms + self.id_expiration_check_interval_ms  # enableTransactionalIdExpiration
        for m in list(self.txns.values()):
            if m.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
                log.info("completing %s of %s after restart", m.state.kafka_name, m.transactional_id)
                self._complete(self.txns[m.transactional_id], m.state is S.PREPARE_COMMIT, now_ms)

    # -- lookups ----------------------------------------------------------------------------

    def _existing(self, txn_id: str, producer_id: int) -> TxnMetadata:
        if not txn_id:
            raise KafkaError(ErrorCode.invalid_request, "transactional id must not be empty")
        m = self.txns.get(txn_id)
        if m is None or m.state is S.DEAD or m.producer_id != producer_id:
            raise KafkaError(ErrorCode.invalid_producer_id_mapping,
                             f"producer id {producer_id} does not belong to transactional id {txn_id!r}")
        return m

    def by_producer_id(self, producer_id: int) -> TxnMetadata | None:
        return next((m for m in self.txns.values() if m.producer_id == producer_id), None)

    # -- InitProducerId ---------------------------------------------------------------------

    def init_producer_id(self, txn_id: str, timeout_ms: float, expected_pid: int, expected_epoch: int,
                         now_ms: int) -> tuple[int, int]:
        """Kafka: TransactionCoordinator.handleInitProducerId."""
        if txn_id == "":
            raise KafkaError(ErrorCode.invalid_request, "transactional id must not be empty")
        timeout_ms = int(timeout_ms)
        if timeout_ms <= 0 or timeout_ms > self.max_timeout_ms:
            raise KafkaError(ErrorCode.invalid_transaction_timeout,
                             f"transaction timeout {timeout_ms} ms is outside (0, {self.max_timeout_ms}]")
        m = self.txns.get(txn_id)
        if m is None or m.state is S.DEAD:
            m = TxnMetadata(txn_id, self.producer_ids.next_id(), NO_EPOCH, timeout_ms, last_update_ms=now_ms)
            self.txns[txn_id] = m
        expected = expected_pid != -1
        # Kafka: isValidProducerId. A retry after a rotation names the previous id with its exhausted epoch.
        if expected and not (m.producer_epoch == NO_EPOCH or expected_pid == m.producer_id
                             or (expected_pid == m.last_producer_id and expected_epoch >= EPOCH_EXHAUSTED)):
            raise KafkaError(ErrorCode.producer_fenced, f"producer {expected_pid} was fenced")
        if m.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
            raise KafkaError(ErrorCode.concurrent_transactions)
        if m.state is S.ONGOING:
            # Kafka: prepareFenceProducerEpoch, then abort; the client retries after CONCURRENT_TRANSACTIONS.
            self._fence_and_abort(m, now_ms)
            raise KafkaError(ErrorCode.concurrent_transactions, "the ongoing transaction was aborted; retry")
        return self._next_producer_identity(self.txns[txn_id], timeout_ms, expected, expected_epoch, now_ms)

    def _next_producer_identity(self, m: TxnMetadata, timeout_ms: int, expected: bool, expected_epoch: int,
                                now_ms: int) -> tuple[int, int]:
        nxt = m.copy()
        if m.epoch_exhausted and (not expected or expected_epoch == m.producer_epoch):
            # Kafka: prepareProducerIdRotation(recordLastEpoch = an expectation was given)
            nxt.last_producer_id, nxt.producer_id = m.producer_id, self.producer_ids.next_id()
            nxt.producer_epoch, nxt.last_producer_epoch = 0, m.producer_epoch if expected else NO_EPOCH
        elif not expected:
            nxt.producer_epoch, nxt.last_producer_epoch = m.producer_epoch + 1, NO_EPOCH
        elif m.producer_epoch == NO_EPOCH or expected_epoch == m.producer_epoch:
            # Kafka: prepareIncrementProducerEpoch
            nxt.producer_epoch, nxt.last_producer_epoch = m.producer_epoch + 1, m.producer_epoch
        elif expected_epoch == m.last_producer_epoch:
            pass  # a retry of the bump that already happened: answer with the current epoch
        else:
            raise KafkaError(ErrorCode.producer_fenced, f"epoch {expected_epoch} is not current")
        nxt.timeout_ms = timeout_ms
        nxt.transition(S.EMPTY, now_ms)
        self._persist(nxt)
        self.txns[m.transactional_id] = nxt
        return nxt.producer_id, nxt.producer_epoch

    # -- AddPartitionsToTxn / AddOffsetsToTxn -----------------------------------------------

    def _check_current(self, m: TxnMetadata, producer_epoch: int) -> None:
        if producer_epoch != m.producer_epoch:
            raise KafkaError(ErrorCode.producer_fenced,
                             f"epoch {producer_epoch} is not the current epoch {m.producer_epoch}")

    def add_partitions(self, txn_id: str, producer_id: int, producer_epoch: int,
                       partitions: set[tuple[str, int]], now_ms: int, transaction_version: int = 0) -> None:
        """Kafka: handleAddPartitionsToTransaction. ``transaction_version`` is the client's: 2 when the
        partitions come from AddPartitionsToTxn v4+ (Produce v12, TxnOffsetCommit v5), else 0."""
        m = self._existing(txn_id, producer_id)
        self._check_current(m, producer_epoch)
        if m.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
            raise KafkaError(ErrorCode.concurrent_transactions)
        if m.state is S.ONGOING and partitions <= m.partitions:
            return
        nxt = m.copy()
        nxt.transition(S.ONGOING, now_ms)
        nxt.partitions = set(m.partitions if m.state is S.ONGOING else ()) | partitions
        nxt.client_transaction_version = transaction_version
        self._persist(nxt)
        self.txns[txn_id] = nxt

    def offsets_partition(self, group_id: str) -> tuple[str, int]:
        return OFFSETS_TOPIC, partition_for(group_id, self.offsets_partitions)

    def add_offsets(self, txn_id: str, producer_id: int, producer_epoch: int, group_id: str, now_ms: int,
                    transaction_version: int = 0) -> None:
        self.logs.ensure_topic(OFFSETS_TOPIC, self.offsets_partitions)
        self.add_partitions(txn_id, producer_id, producer_epoch, {self.offsets_partition(group_id)}, now_ms,
                            transaction_version)

    # -- EndTxn -----------------------------------------------------------------------------

    def end_txn(self, txn_id: str, producer_id: int, producer_epoch: int, commit: bool, now_ms: int,
                transaction_version: int = 0, staged: bool = False) -> tuple[int, int]:
        """Kafka: TransactionCoordinator.endTransaction; returns the producer id and epoch the
        producer goes on with (EndTxn v5). Transaction version 2 bumps the epoch every time.
        ``staged``: the Prepare state is left to the group commit and the markers and the Complete
        state wait for :meth:`advance`, each once the step before is on disk."""
        if transaction_version >= 2:
            return self._end_txn_v2(txn_id, producer_id, producer_epoch, commit, now_ms, staged)
        m = self._existing(txn_id, producer_id)
        if producer_epoch != m.producer_epoch:
            raise KafkaError(ErrorCode.producer_fenced, f"epoch {producer_epoch} is not current ({m.producer_epoch})")
        if m.state is S.ONGOING:
            self._move(m, S.PREPARE_COMMIT if commit else S.PREPARE_ABORT, now_ms, durable=not staged)
            self._complete_or_stage(txn_id, commit, now_ms, staged)
        elif (m.state, commit) in ((S.COMPLETE_COMMIT, True), (S.COMPLETE_ABORT, False)):
            pass  # a retry of an EndTxn that already completed
        elif (m.state, commit) in ((S.PREPARE_COMMIT, True), (S.PREPARE_ABORT, False)):
            raise KafkaError(ErrorCode.concurrent_transactions)
        else:
            raise KafkaError(ErrorCode.invalid_txn_state,
                             f"cannot {'commit' if commit else 'abort'} in state {m.state.kafka_name}")
        done = self.txns[txn_id]
        return done.producer_id, done.producer_epoch

    def _end_txn_v2(self, txn_id: str, producer_id: int, producer_epoch: int, commit: bool,
                    now_ms: int, staged: bool) -> tuple[int, int]:
        """Kafka 4.x: endTransaction with a client on transaction version 2 (EndTxn v5)."""
        if not txn_id:
            raise KafkaError(ErrorCode.invalid_request, "transactional id must not be empty")
        m = self.txns.get(txn_id)
        if m is None or m.state is S.DEAD:
            raise KafkaError(ErrorCode.invalid_producer_id_mapping, f"no transactional id {txn_id!r}")
        bumped, rotated = end_txn_v2_retry(m, producer_id, producer_epoch)
        if m.producer_id != producer_id and not rotated:
            raise KafkaError(ErrorCode.invalid_producer_id_mapping,
                             f"producer id {producer_id} does not belong to transactional id {txn_id!r}")
        if not end_txn_v2_epoch_valid(m, producer_epoch, bumped or rotated):
            raise KafkaError(ErrorCode.producer_fenced, f"epoch {producer_epoch} is not current ({m.producer_epoch})")
        outcome = END_TXN_V2.get((m.state, commit, bumped or rotated))
        if outcome is None:
            raise IllegalTransition(f"{txn_id}: EndTxn v5 in state {m.state.name}")
        if isinstance(outcome, ErrorCode):
            raise KafkaError(outcome, f"cannot {'commit' if commit else 'abort'} in state {m.state.kafka_name}")
        if outcome is EndTxnAction.PREPARE:
            self._prepare_v2(m, commit, now_ms, durable=not staged)
            self._complete_or_stage(txn_id, commit, now_ms, staged)
        return self.identity(txn_id)

    def _prepare_v2(self, m: TxnMetadata, commit: bool, now_ms: int, durable: bool = True) -> None:
        """Kafka: prepareAbortOrCommit with transaction version 2 -- the epoch is bumped, and a new
        producer id is reserved when the bumped epoch would be exhausted."""
        nxt = m.copy()
        if m.epoch_exhausted:
            nxt.next_producer_id = self.producer_ids.next_id()
        nxt.producer_epoch, nxt.last_producer_epoch = m.producer_epoch + 1, m.producer_epoch
        nxt.client_transaction_version = 2
        nxt.transition(S.PREPARE_COMMIT if commit else S.PREPARE_ABORT, now_ms)
        if m.state is not S.ONGOING:  # an abort with no partition added starts now
            nxt.txn_start_ms = now_ms
        self._persist(nxt, durable)
        self.txns[m.transactional_id] = nxt

    def _complete_or_stage(self, txn_id: str, commit: bool, now_ms: int, staged: bool) -> None:
        if staged:
            self.staged[txn_id] = (commit, False)
        else:
            self._complete(self.txns[txn_id], commit, now_ms)

    def _stage_own(self, txn_id: str, commit: bool, marked: bool) -> None:
        """A transaction the coordinator ends by itself waits for the group commit before its next
        step (``marked``: its Complete state, else its markers): shim.txn_steps advances it."""
        self.staged[txn_id] = (commit, marked)
        self.on_staged(txn_id)

    def advance(self, txn_id: str, now_ms: int) -> bool:
        """The next step of a staged transaction whose last write is now on disk: its markers once
        its Prepare state is, its Complete state once every marker is. True when a step was written
        (its fsync is then awaited before the next)."""
        commit, marked = self.staged.pop(txn_id, (None, None))
        m = self.txns.get(txn_id)
        if commit is None or m is None or m.state not in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
            return False
        if not marked:
            if self._complete(m, commit, now_ms, durable=False):
                self.staged[txn_id] = (commit, True)
            return True
        self.probe("txn.markers_written")
        self._write_complete(m, commit, now_ms, durable=False)
        return True

    def unstage(self, txn_id: str) -> None:
        """A staged EndTxn goes no further (its fsync failed); the transaction stays prepared."""
        self.staged.pop(txn_id, None)

    def identity(self, txn_id: str) -> tuple[int, int]:
        """The producer id and epoch an EndTxn answers: the Complete state's, whether or not it is
        written yet (transaction version 2 moves an exhausted epoch to the reserved id, epoch 0)."""
        m = self.txns[txn_id]
        if m.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT) and m.client_transaction_version >= 2 \
                and m.next_producer_id != NO_PRODUCER_ID:
            return m.next_producer_id, 0
        return m.producer_id, m.producer_epoch

    def _complete(self, m: TxnMetadata, commit: bool, now_ms: int, durable: bool = True) -> bool:
        """Markers to every partition, then CompleteCommit/CompleteAbort (Kafka: prepareComplete;
        with transaction version 2 an exhausted epoch moves to the reserved producer id, epoch 0).
        Not ``durable``: the markers only, left to the group commit (:meth:`advance`). True when
        every partition has its marker."""
        if self.markers_held:
            self.held[m.transactional_id] = commit
            return False
        self.probe("txn.prepared")
        return self._write_markers(m, commit, sorted(m.partitions), now_ms, durable)

    def _write_markers(self, m: TxnMetadata, commit: bool, partitions: list[tuple[str, int]], now_ms: int,
                       durable: bool = True) -> bool:
        """Markers to ``partitions``, then (``durable``) the Complete state once every one has its
        marker. A marker refused for its partition's ISR (NOT_ENOUGH_REPLICAS) is retried by
        :meth:`tick` and the transaction stays prepared meanwhile, as Kafka's marker channel retries it."""
        codes = write_markers(self.logs, self.marker_listeners, m.producer_id, m.producer_epoch, COORDINATOR_EPOCH,
                              commit, partitions, now_ms, self.check_min_isr, durable=durable)
        refused = sorted(tp for tp, code in codes.items() if code is ErrorCode.not_enough_replicas)
        if refused:
            log.info("markers of %s refused for %s; retrying", m.transactional_id, refused)
            self.unmarked[m.transactional_id] = (commit, refused)
            return False
        self.unmarked.pop(m.transactional_id, None)
        if durable:
            self.probe("txn.markers_written")
            self._write_complete(m, commit, now_ms)
        return True

    def _write_complete(self, m: TxnMetadata, commit: bool, now_ms: int, durable: bool = True) -> None:
        """CompleteCommit/CompleteAbort after the markers. A write refused (the ISR below
        min.insync.replicas) leaves the transaction prepared and is retried by :meth:`tick`, as
        Kafka's marker channel retries it (appendTransactionToLog's retryOnError)."""
        nxt = m.copy()
        if m.client_transaction_version >= 2 and m.next_producer_id != NO_PRODUCER_ID:
            nxt.last_producer_id, nxt.producer_id, nxt.producer_epoch = m.producer_id, m.next_producer_id, 0
        nxt.next_producer_id = NO_PRODUCER_ID
        nxt.failed_epoch_fence = False  # Kafka: prepareComplete
        nxt.transition(S.COMPLETE_COMMIT if commit else S.COMPLETE_ABORT, now_ms)
        try:
            self._persist(nxt, durable)
        except KafkaError as e:
            log.info("%s of %s not written (%s); retrying", nxt.state.kafka_name, m.transactional_id, e.code.name)
            self.incomplete[m.transactional_id] = commit
            return
        self.incomplete.pop(m.transactional_id, None)
        self.txns[m.transactional_id] = nxt

    def _retry_unmarked(self, now_ms: int) -> None:
        """The markers a partition refused, again (the Prepare state is on disk already); staged,
        the Complete state waits for their fsync."""
        for txn_id, (commit, partitions) in list(self.unmarked.items()):
            m = self.txns.get(txn_id)
            if m is None or m.state not in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
                del self.unmarked[txn_id]
            elif txn_id not in self.staged:  # else its steps are under way
                self._markers_then_complete(m, commit, partitions, now_ms)

    def _markers_then_complete(self, m: TxnMetadata, commit: bool, partitions: list[tuple[str, int]],
                               now_ms: int) -> None:
        """Markers to ``partitions`` of a transaction whose Prepare state is on disk, then its
        Complete state: at once, or (staged) once a job has the markers on disk."""
        if not self.stage_steps():
            self._write_markers(m, commit, partitions, now_ms)
        elif self._write_markers(m, commit, partitions, now_ms, durable=False):
            self._stage_own(m.transactional_id, commit, True)

    def _retry_incomplete(self, now_ms: int) -> None:
        """A Complete state whose write was refused, again: its markers are on disk already."""
        for txn_id, commit in list(self.incomplete.items()):
            m = self.txns.get(txn_id)
            if m is None or m.state not in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
                del self.incomplete[txn_id]
            elif txn_id not in self.staged:
                self._write_complete(m, commit, now_ms, durable=not self.stage_steps())

    def _fence_and_abort(self, m: TxnMetadata, now_ms: int) -> None:
        """Bump the epoch (fencing the producer), then abort with the bumped epoch (Kafka:
        prepareFenceProducerEpoch + endTransaction(ABORT, isFromClient=false))."""
        fenced = m.copy()
        fenced.transition(S.PREPARE_EPOCH_FENCE, now_ms)  # transient, never persisted (as in Kafka)
        # Kafka: prepareFenceProducerEpoch does not bump again after a fence whose write failed
        fenced.producer_epoch = m.producer_epoch if m.failed_epoch_fence else m.producer_epoch + 1
        fenced.last_producer_epoch = NO_EPOCH
        staged = self.stage_steps()
        if self.transaction_version >= 2:
            # Kafka 4.x: the coordinator's own aborts use the finalized version ("not from client, use
            # server TV"): prepareAbortOrCommit's bump keeps the epoch it bumped from, so the producer
            # can bump from it again (InitProducerId) instead of being fenced for good.
            fenced.last_producer_epoch, fenced.client_transaction_version = m.producer_epoch, 2
        try:
            self._move(fenced, S.PREPARE_ABORT, now_ms, durable=not staged)
        except KafkaError:
            # Kafka: endTransaction keeps a failed fence's epoch in memory (hasFailedEpochFence), never
            # returned to a client: the fenced producer stays fenced, the transaction stays Ongoing
            m.producer_epoch, m.last_producer_epoch = fenced.producer_epoch, fenced.last_producer_epoch
            m.failed_epoch_fence = True
            raise
        if staged:  # the markers once the PrepareAbort is on disk (shim.txn_steps)
            self._stage_own(m.transactional_id, False, False)
        else:
            self._complete(self.txns[m.transactional_id], False, now_ms)

    # -- the control plane's levers ----------------------------------------------------------

    def release_markers(self, now_ms: int, txn_id: str | None = None) -> list[str]:
        """Write the markers held back for ``txn_id`` (or all) and complete those transactions."""
        released = [t for t in self.held if txn_id is None or t == txn_id]
        for t in released:
            commit = self.held.pop(t)
            m = self.txns.get(t)
            if m is None or m.state not in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
                continue
            if not self.stage_steps():
                self._complete(m, commit, now_ms)
            elif self._complete(m, commit, now_ms, durable=False):  # its Prepare state is on disk already
                self._stage_own(t, commit, True)
        return released

    def fence(self, txn_id: str, now_ms: int) -> tuple[int, int]:
        """Bump the epoch of ``txn_id`` as a new producer's InitProducerId would: an ongoing transaction
        is aborted; the old producer gets PRODUCER_FENCED (INVALID_PRODUCER_EPOCH on older versions)."""
        m = self.txns.get(txn_id)
        if m is None or m.state is S.DEAD:
            raise KafkaError(ErrorCode.transactional_id_not_found, f"no transactional id {txn_id!r}")
        if m.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
            raise KafkaError(ErrorCode.concurrent_transactions, f"{txn_id!r} is completing a transaction")
        if m.state is S.ONGOING:
            self._fence_and_abort(m, now_ms)
        else:
            self._next_producer_identity(m, m.timeout_ms, False, NO_EPOCH, now_ms)
        done = self.txns[txn_id]
        return done.producer_id, done.producer_epoch

    # -- timeouts ---------------------------------------------------------------------------

    def abort_timed_out(self, now_ms: int, advanced_ms: int = 0) -> list[str]:
        """Abort every Ongoing transaction older than its timeout, or that will be within
        ``advanced_ms`` (the clock advanced by the control plane); returns their ids."""
        expired = [m for m in self.txns.values()
                   if m.state is S.ONGOING and m.txn_start_ms + m.timeout_ms < now_ms + advanced_ms]
        aborted = []
        for m in expired:
            log.info("aborting transaction %s: open for more than %d ms", m.transactional_id, m.timeout_ms)
            try:
                self._fence_and_abort(m, now_ms)
            except KafkaError as e:  # Kafka: abortTimedOutTransactions logs it; the next check tries again
                log.info("aborting %s failed: %s", m.transactional_id, e.code.name)
                continue
            aborted.append(m.transactional_id)
        return aborted

    def tick(self, now_ms: int) -> int:
        if now_ms >= self._next_check:
            self._retry_unmarked(now_ms)
            self._retry_incomplete(now_ms)
            self.abort_timed_out(now_ms)
            self._next_check = now_ms + self.abort_check_interval_ms
        if now_ms >= self._next_expiration:
            self.remove_expired_transactional_ids(now_ms)
            self._next_expiration = now_ms + self.id_expiration_check_interval_ms
        return self.next_deadline()

    def next_deadline(self) -> int:
        """When :meth:`tick` next has work: transactions are checked at intervals, as in Kafka."""
        return min(self._next_check, self._next_expiration)

    # -- transactional id expiration ---------------------------------------------------------

    def advance_expiration(self, now_ms: int, advanced_ms: int) -> list[str]:
        """What the expiration checks due within ``advanced_ms`` would expire, expired now, judged at
        the last check time up to ``now_ms + advanced_ms`` (shim.control's advance_clock)."""
        later = now_ms + advanced_ms
        if self._next_expiration > later:
            return []
        interval = self.id_expiration_check_interval_ms
        last = self._next_expiration + (later - self._next_expiration) // interval * interval
        return self.remove_expired_transactional_ids(now_ms, max(last, now_ms))

    def remove_expired_transactional_ids(self, now_ms: int, as_of_ms: int | None = None) -> list[str]:
        """Kafka: TransactionStateManager.removeExpiredTransactionalIds. An id in Empty, CompleteCommit
        or CompleteAbort whose state last changed transactional.id.expiration.ms ago or more moves to
        Dead: its tombstone is written to its ``__transaction_state`` partition (the ids of one partition
        in as few batches as max.message.bytes allows), then it is forgotten, so a restart does not bring
        it back. Its producer id then gets INVALID_PRODUCER_ID_MAPPING; InitProducerId starts it afresh.
        ``as_of_ms``: the time the ages are judged at (default ``now_ms``, when the tombstones are written)."""
        as_of = now_ms if as_of_ms is None else as_of_ms
        by_partition: dict[int, list[str]] = defaultdict(list)
        for m in list(self.txns.values()):
            if (m.state in EXPIRATION_ALLOWED and m.transactional_id not in self.held
                    and m.last_update_ms <= as_of - self.id_expiration_ms):
                m.copy().transition(S.DEAD, now_ms)  # the table's check (Kafka: prepareDead)
                by_partition[partition_for(m.transactional_id, self.num_partitions)].append(m.transactional_id)
        expired: list[str] = []
        if by_partition:
            self.logs.ensure_topic(TXN_TOPIC, self.num_partitions)
        for partition, ids in sorted(by_partition.items()):
            plog = self.logs.get(TXN_TOPIC, partition)
            try:
                self.check_min_isr(TXN_TOPIC, partition, plog.config.min_insync_replicas)
            except KafkaError as e:  # Kafka: the ids stay, and the next check tries again
                log.info("expired transactional ids of %s-%d kept: %s", TXN_TOPIC, partition, e.code.name)
                continue
            try:
                for chunk in append_tombstones(plog, ids, now_ms):
                    for t in chunk:
                        del self.txns[t]
                    expired += chunk
            except KafkaError as e:  # Kafka: removeFromCacheCallback keeps the ids of a failed append
                log.warning("expired transactional ids of %s-%d kept: %s", TXN_TOPIC, partition, e.code.name)
        for t in expired:
            log.info("transactional id %s expired: unchanged for %d ms or more", t, self.id_expiration_ms)
        return expired

    # -- produce-time verification (KIP-890 part 1, done synchronously) ---------------------

    def verify_partitions(self, txn_id: str | None, producer_id: int, producer_epoch: int,
                          partitions: set[tuple[str, int]]) -> dict[tuple[str, int], ErrorCode]:
        """Kafka: handleVerifyPartitionsInTransaction (AddPartitionsToTxn VerifyOnly): NONE for each
        partition in the ongoing transaction, TRANSACTION_ABORTABLE for the others; a whole-transaction
        error (INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED, CONCURRENT_TRANSACTIONS) is raised."""
        if not txn_id:
            raise KafkaError(ErrorCode.invalid_request, "transactional id must not be empty")
        m = self.txns.get(txn_id)
        if m is None or m.producer_id != producer_id:
            raise KafkaError(ErrorCode.invalid_producer_id_mapping, f"producer {producer_id} has no transaction here")
        if producer_epoch != m.producer_epoch:
            raise KafkaError(ErrorCode.producer_fenced, f"epoch {producer_epoch} is not current ({m.producer_epoch})")
        if m.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
            raise KafkaError(ErrorCode.concurrent_transactions)
        return {tp: ErrorCode.none if tp in m.partitions else ErrorCode.transaction_abortable for tp in partitions}

    def verify_partition(self, txn_id: str | None, producer_id: int, producer_epoch: int,
                         topic: str, partition: int) -> None:
        """A transactional batch that starts a transaction in a partition must belong to an ongoing
        transaction that added it (KIP-890 part 1, asked synchronously). The callers map the
        coordinator's answers for their request version (AddPartitionsToTxnManager)."""
        code = self.verify_partitions(txn_id, producer_id, producer_epoch, {(topic, partition)})[(topic, partition)]
        if code != ErrorCode.none:
            raise KafkaError(code, f"{topic}-{partition} was not added to the transaction of {txn_id!r}")
