"""A segment roll's file work under fsync "always", off the event loop (Kafka: UnifiedLog.roll).

Kafka writes the producer snapshot unforced under the log's lock, then schedules "flush-log" on
its scheduler thread: the snapshot fsynced, the old segment flushed (log, offset and time
indexes), and only then the recovery point moved to the new segment's base offset
(flushUptoOffsetExclusive). kafka-shim does the same on one thread of its own (a roll's jobs, of
every partition, in the order they rolled): the sealed segment's index files and the snapshot at
the new segment's base are written atomically (temporary file fsynced, then renamed), older
snapshots pruned, and the directory fsynced once. The old segment's records were fsynced by each
append before its answer, and the new segment's name is fsynced with the directory by the append
that follows the roll, so no answer depends on these files: they only spare a restart work.

What a restart trusts is the recovery point, so while a partition's roll is pending its recovery
point stays at the old segment's end (as Kafka's stays below the new segment until its flush): a
restart after a crash meanwhile reads the old segment's index files as they were (the ones a
checkpoint fsynced, or the new ones, whole: each is renamed only once fsynced) and recovers every
later segment from its records, rebuilding what the job had not made durable. A job that fails
(the disk full, say) is logged, and the point stays there until the broker restarts.

Changes to a partition's sealed segments (retention, DeleteRecords, the cleaner's swap, deletion,
close) first wait for its pending rolls (:meth:`PendingRolls.settle`), a wait of a few fsyncs at
most and only when they overlap a roll.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor

log = logging.getLogger(__name__)


class Flusher:
    """The thread the rolls' file work runs on, in order (Kafka's scheduler runs "flush-log")."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="kafka-shim-flush-log")

    def submit(self, job) -> Future:
        return self._pool.submit(job)

    def close(self) -> None:
        self._pool.shutdown(wait=True)


class PendingRolls:
    """One partition's rolls whose file work is not yet done, and the recovery point held meanwhile."""

    __slots__ = ("_futures", "_held", "_lock")

    def __init__(self) -> None:
        self._futures: list[Future] = []
        self._held = None  # the recovery point at the first pending roll: the old segment's end
        self._lock = threading.Lock()

    def add(self, future: Future, point, where: str) -> None:
        with self._lock:
            if not self._futures:
                self._held = point
            self._futures.append(future)
        future.add_done_callback(lambda f: self._done(f, where))

    def _done(self, future: Future, where: str) -> None:
        error = future.exception()
        if error is not None:  # the point stays held: what the job wrote may not be on disk
            log.error("%s: writing a rolled segment's index files and producer snapshot failed", where,
                      exc_info=error)
            return
        with self._lock:
            self._futures.remove(future)
            if not self._futures:
                self._held = None

    def held(self):
        """The recovery point to report while a roll is pending, else None."""
        return self._held

    def settle(self) -> None:
        """Wait for the pending rolls' file work (errors were logged by the job's callback)."""
        for future in list(self._futures):
            future.exception()
