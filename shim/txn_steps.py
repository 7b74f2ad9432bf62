"""The steps of the transactions the coordinator ends by itself, each once the one before is on disk.

Under --fsync always the transaction coordinator's writes are fsynced by the group commit's job on
the flusher's thread (shim.storage.group_commit), not on the loop. An EndTxn's handler waits for a
job between its steps (shim.apis.k26_end_txn). The coordinator also ends transactions no request
waits for: it aborts a transaction that timed out or whose producer a new InitProducerId fenced,
writes the markers the control plane released, and retries markers a partition refused. It writes
the first step of each (the PrepareAbort, or the markers once the Prepare state is on disk) and
stages the transaction (TransactionCoordinator.stage_steps / on_staged); this drives the rest: the
markers once a job that started after the PrepareAbort was written is done, the Complete state once
one has the markers on disk -- Kafka's order (TransactionMarkerChannelManager sends the markers
after the PrepareAbort's append completed, and appends the Complete state after every marker's
answer). Transactions staged together share each job.

A job that fails took the data directory offline: the transactions waiting for it go no further
and stay prepared, as after a crash, and a restart completes them (TransactionCoordinator.load).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Callable

log = logging.getLogger(__name__)


class TxnSteps:
    """The staged transactions waiting for the next job, and the task that waits for it."""

    def __init__(self, txn, commit, clock: Callable[[], int]) -> None:
        self.txn, self.commit, self.clock = txn, commit, clock
        self._waiting: list[str] = []  # staged since the last job's wait began
        self._task: asyncio.Task | None = None

    def attach(self) -> bool:
        """True when the coordinator's own steps may wait for the group commit: on a running loop."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return False
        return self.commit.attach()

    def staged(self, txn_id: str) -> None:
        self._waiting.append(txn_id)
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        try:
            while self._waiting:
                ids, self._waiting = self._waiting, []
                try:
                    await self.commit.barrier()  # a job that started after their last step was written
                except OSError:  # the directory is offline: they stay prepared for a restart
                    for txn_id in ids:
                        self.txn.unstage(txn_id)
                    continue
                now = self.clock()
                for txn_id in ids:
                    self._advance(txn_id, now)
        finally:
            self._task = None

    def _advance(self, txn_id: str, now: int) -> None:
        try:
            if self.txn.advance(txn_id, now) and txn_id in self.txn.staged:
                self._waiting.append(txn_id)  # its Complete state once a job has its markers on disk
        except Exception:  # one transaction's failure does not strand the others
            log.exception("completing transaction %s failed; it stays prepared", txn_id)
            self.txn.unstage(txn_id)

    def close(self) -> None:
        """The broker stops: the steps not taken are taken by the next start (as after a crash)."""
        if self._task is not None and not self._task.get_loop().is_closed():
            self._task.cancel()
