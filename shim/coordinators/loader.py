"""The coordinators' load, after the listeners open (Kafka: the group coordinator's
CoordinatorRuntime.scheduleLoadOperation and TransactionStateManager.loadTransactionsForTxnTopicPartition,
each run on a background thread once the broker leads the partition).

Until it is done the group and transaction APIs answer ``COORDINATOR_LOAD_IN_PROGRESS`` (or what
Kafka answers in its place: shim.apis._loading), clients retry, and the coordinators' timers wait.
FindCoordinator answers as before, and Produce and Fetch of other topics never wait for it: a
partition's last stable offset comes from its own log's producer state, recovered when the log was
opened. The steps run on the event loop, a slice of SLICE_S at a time, so the
state is built where it is used and no second thread touches the logs.

Every partition of both topics is loading until the whole load is done (Kafka loads each on its
own): the transaction state first, as the group load replays the markers its completion of
prepared transactions writes to ``__consumer_offsets``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter

from .steps import Steps, drain

log = logging.getLogger(__name__)

SLICE_S = 0.005  # of work per turn of the loop, as the paced handlers (shim.apis._pace)

LOADED_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})


class CoordinatorLoad:
    """One load of the group and transaction coordinators: ``done`` once their state is built."""

    def __init__(self, steps: "Steps[None]") -> None:
        self._steps = steps
        self.done = False
        self.failed: BaseException | None = None
        self.refused: Counter[int] = Counter()  # API key -> requests answered the load error (tests read it)
        self.took_s: float | None = None
        self._held: asyncio.Future | None = None
        self._finished: list[asyncio.Future] = []

    def run_now(self) -> None:
        """The whole load at once (a broker embedded without a server, or nothing to load)."""
        started = time.monotonic()
        drain(self._steps)
        self._done(started)

    def hold(self) -> None:
        """Tests: keep the coordinators loading until :meth:`release` (called on the loop)."""
        if not self.done and self._held is None:
            self._held = asyncio.get_running_loop().create_future()

    def release(self) -> None:
        held, self._held = self._held, None
        if held is not None and not held.done():
            held.set_result(None)

    async def run(self) -> None:
        """The steps, SLICE_S of work per turn of the loop; a failure is logged and the
        coordinators stay loading, as a Kafka partition whose load failed is never served."""
        started = time.monotonic()
        try:
            if self._held is not None:
                await self._held
            deadline = time.monotonic() + SLICE_S
            for _ in self._steps:
                if time.monotonic() >= deadline:
                    await asyncio.sleep(0)
                    deadline = time.monotonic() + SLICE_S
        except Exception as e:
            self.failed = e
            log.exception("loading the coordinators failed; their APIs answer COORDINATOR_LOAD_IN_PROGRESS")
            return
        self._done(started)

    def _done(self, started: float) -> None:
        self.done = True
        self.took_s = time.monotonic() - started
        log.info("coordinators loaded in %.3f s", self.took_s)
        for waiter in self._finished:
            if not waiter.done():
                waiter.set_result(None)
        self._finished.clear()

    async def wait(self) -> None:
        """Return once the coordinators are loaded."""
        if not self.done:
            waiter = asyncio.get_running_loop().create_future()
            self._finished.append(waiter)
            await waiter

    def close(self) -> None:
        self.release()
        self._steps.close()
