"""Group commit of client appends under fsync "always", off the event loop.

Under flush.messages=1 Kafka's UnifiedLog.append flushes the log before the append returns, on the
request handler thread, and a Produce is answered only after it. kafka-shim's appends run on the
event loop, where an fsync (3.8 ms, up to 67 ms on a busy disk) holds every other connection.
So a client append writes its bytes on the loop as before and marks its segment dirty here; an
fsync job on the log manager's flusher thread (shim.storage.roll_flush.Flusher, the thread a
roll's files are written on) then syncs every segment written since the last job started (and a
directory a new segment was created in), and a Produce is answered once a job that started after
its appends is done (:meth:`GroupCommit.barrier`): appends waiting meanwhile share one fsync.

Nothing acknowledged weakens: each segment's ``durable`` (the recovery point under "always") and
the partition's ``synced_end`` (the high watermark's bound, so no consumer reads a record before
it is on disk, as none does in Kafka before the flush that precedes the high watermark's move)
advance only when the job that covered the bytes returns. A segment deleted while its job runs
(retention) has nothing left to sync. A job that fails fails its waiters and moves nothing, and
takes the data directory offline (Kafka: LocalLog.flush's IOException goes to
LogDirFailureChannel.maybeAddOfflineLogDir): a Produce waiting for it is answered
KAFKA_STORAGE_ERROR for the partitions it appended (Kafka: ReplicaManager.appendToLocalLog), and
every later append is refused with it until a restart, which recovers from the recovery point the
failed job did not move. A later fsync of the same file may well succeed without the lost pages
(Linux marks them clean after a failed writeback), so nothing written before the failure, a
producer's retry of the same batch included, is ever acknowledged. Kafka, whose broker then has
no live log directory left, halts; kafka-shim stays up and answers the error.

The coordinators' appends (group metadata and offsets, consumer- and share-group records, share
state, transaction states, expired transactional ids) take the same path: written on the loop,
counted in ``coordinator_written``, and the coordinator API's answer waits for a job
(shim.apis._coordinator_sync). The steps of ending a transaction wait for a job between them (a
marker is written only once the Prepare state is on disk, the Complete state once every marker is):
an EndTxn's in its handler (shim.apis.k26_end_txn), those the coordinator takes on its own (aborts of
timed-out or fenced transactions, released and retried markers) in shim.txn_steps; WriteTxnMarkers
is answered after the job that has its markers on disk. An append asked to be ``durable`` (without
a running loop to wait on: a start-up's completion of prepared transactions) is fsynced before it
returns, a failure there taking the directory offline too (:meth:`GroupCommit.fail`).
"""

from __future__ import annotations

import asyncio
import errno
import logging

from . import fs

log = logging.getLogger(__name__)


class GroupCommit:
    """The appends waiting for an fsync and the one job in flight (on the flusher's thread)."""

    def __init__(self, flusher) -> None:
        self._flusher = flusher
        self._loop: asyncio.AbstractEventLoop | None = None
        self._dirty: dict[int, tuple] = {}  # id(segment) -> (partition log, segment)
        self._waiters: list[asyncio.Future] = []  # for the next job to start
        self._running = False
        self._scheduled = False
        self.jobs = 0  # fsync jobs run (shared by every append written before each started)
        # coordinator appends left to a job, and how many of them a finished job covered: an answer
        # that may reflect one not yet on disk waits for a job (shim.apis._coordinator_sync)
        self.coordinator_written = 0
        self.coordinator_synced = 0
        self.failed: OSError | None = None  # the first failed job's error: the data directory is offline
        # the coordinator appends (counted as coordinator_written counts them) the first failure
        # left off disk: no append is written after it (the directory is offline)
        self.lost = (0, 0)
        self.on_offline: list = []  # called once, on the loop, when the directory goes offline

    def attach(self) -> bool:
        """True when appends may be left to a job: only with a running event loop to answer on."""
        if not fs.disk.parallel:  # a substitute disk modelling the order of changes: inline
            return False
        if self._loop is None:
            try:
                self._loop = asyncio.get_running_loop()
            except RuntimeError:
                return False
        return True

    def wrote(self, plog, seg, coordinator: bool = False) -> None:
        """``seg`` of ``plog`` was written on the loop (by a coordinator's append): a job is due."""
        self._dirty[id(seg)] = (plog, seg)
        if coordinator:
            self.coordinator_written += 1
        self._schedule()

    def fail(self, error: OSError) -> None:
        """An fsync failed (a job's, or one a coordinator's step made before returning): the data
        directory is offline from now on."""
        log.error("fsync failed: the data directory is offline", exc_info=error)
        first = self.failed is None
        if first:
            self.lost = (self.coordinator_synced, self.coordinator_written)
        self.failed = self.failed or error
        self.coordinator_synced = self.coordinator_written  # no answer waits for a job any more
        if first:
            for resign in self.on_offline:  # the coordinators of the offline partitions (shim.node)
                resign()

    def coordinator_unsynced(self) -> bool:
        """A coordinator append is not yet known to be on disk."""
        return self.coordinator_synced < self.coordinator_written

    def lost_since(self, synced: int) -> bool:
        """A coordinator append not yet on disk when ``coordinator_synced`` was ``synced`` (one a
        request may have made or read since) was lost by a failed fsync."""
        return self.lost[1] > max(synced, self.lost[0])

    def pending(self) -> bool:
        """Something written is not yet known to be on disk."""
        return bool(self._dirty) or self._running

    def barrier(self) -> asyncio.Future:
        """Done when an fsync job that starts after this call (so after every write before it) is."""
        waiter = self._loop.create_future()
        self._waiters.append(waiter)
        self._schedule()
        return waiter

    def _schedule(self) -> None:
        # after this turn's callbacks: a Produce's partitions, and the other requests read in the
        # same turn, share the job
        if not self._running and not self._scheduled:
            self._scheduled = True
            self._loop.call_soon(self._start)

    def _start(self) -> None:
        self._scheduled = False
        if self._running or not (self._dirty or self._waiters):
            return
        items = []
        for plog, seg in self._dirty.values():
            if seg.closed:  # deleted (retention, a swap, its topic's deletion) or abandoned offline
                continue  # since it was written: nothing left to sync (os.fsync(-1) raises ValueError)
            directory = plog.directory if plog._dir_dirty else None
            plog._dir_dirty = False
            items.append((plog, seg, seg.fileno(), seg.size, seg.next_offset, directory))
        self._dirty.clear()
        waiters, self._waiters = self._waiters, []
        self._running = True
        self.jobs += 1
        written = self.coordinator_written
        future = self._flusher.submit(lambda: _sync(items))
        future.add_done_callback(lambda f: self._call_loop(self._done, f, items, waiters, written))

    def _call_loop(self, *args) -> None:
        try:
            self._loop.call_soon_threadsafe(*args)
        except RuntimeError:  # the loop closed first (a broker stopping): nothing is answered
            pass

    def _done(self, future, items, waiters, written) -> None:
        self._running = False
        # an fsync that failed meanwhile on the loop (shim.storage.partition_log's durable appends)
        # took the directory offline: nothing this job covered is acknowledged either
        error = future.exception() or self.failed
        if error is None:
            self.coordinator_synced = max(self.coordinator_synced, written)
            for plog, seg, _, size, next_offset, _ in items:
                if (size, next_offset) > seg.durable:
                    seg.durable = (size, next_offset)
                plog.synced(next_offset)
        else:  # nothing moves: the bytes may not be on disk
            if error is not self.failed:
                self.fail(error)
            for plog, _, _, _, _, directory in items:
                plog._dir_dirty = plog._dir_dirty or directory is not None
        for waiter in waiters:
            if not waiter.done():
                if error is None:
                    waiter.set_result(None)
                else:
                    waiter.set_exception(error)
        self._schedule()


def _sync(items) -> None:
    """On the flusher's thread: each segment's bytes written so far, then the directories."""
    for _, seg, fd, _, _, _ in items:
        try:
            fs.disk.fsync(fd)
        except OSError as e:
            if e.errno != errno.EBADF or seg.fileno() == fd:
                raise  # else the segment was deleted meanwhile (retention): nothing left to sync
    for directory in {d for *_, d in items if d is not None}:
        fs.disk.fsync_dir(directory)
