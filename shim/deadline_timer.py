"""The shell's timer: the core (storage, coordinators) reports its next deadline and the shell
runs its tick then."""

from __future__ import annotations

import asyncio
import logging

from .node import now_ms

log = logging.getLogger(__name__)
# After a failed tick, try again this much later rather than spinning.
TIMER_RETRY_MS = 1000


class DeadlineTimer:
    """One ``call_at`` armed at the core's next deadline (aioquic's shape, no polling).

    The core tells the timer about deadlines set while it handles a request (``earlier``); a tick
    returns the next one. Requests and deadlines take their turns in the order they happened, as
    Kafka's coordinator runtime queues a request's operation when it arrives and a timer's (a
    session's expiry) when it fires, from a timer thread of its own: the tick runs one loop
    iteration after the deadline, behind the connections with bytes read before it came due, and
    a connection about to handle a request read once it had come due runs the tick first
    (:meth:`catch_up`). Were requests read in the iteration the timer fires always handled first, a
    loop a few milliseconds late would let a DeleteGroups sent just after a static member's session
    ended find the member still there (NON_EMPTY_GROUP, where Kafka deletes the group).
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, node, clock=now_ms) -> None:
        self.loop, self.node, self.clock = loop, node, clock
        self.armed_at: int | None = None  # the deadline (ms) the handle is armed for
        self.ticks = 0
        self._handle: asyncio.Handle | None = None

    def start(self) -> None:
        self.node.watch_deadlines(self.earlier)
        self._arm(self.node.next_deadline())

    def stop(self) -> None:
        self.node.watch_deadlines(None)
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def earlier(self, deadline: int) -> None:
        if self.armed_at is None or deadline < self.armed_at:
            self._arm(deadline)

    def catch_up(self, received_ms: int) -> None:
        """A request read at ``received_ms`` is about to be handled: run the tick first if the
        deadline it is armed for had come by then."""
        if self._handle is not None and self.armed_at is not None and self.armed_at <= received_ms:
            self._handle.cancel()
            self._run()

    def _arm(self, deadline: int) -> None:
        if self._handle is not None:
            self._handle.cancel()
        self.armed_at = deadline
        delay_s = max(0, deadline - self.clock()) / 1000
        self._handle = self.loop.call_at(self.loop.time() + delay_s, self._due)

    def _due(self) -> None:
        self._handle = self.loop.call_soon(self._run)

    def _run(self) -> None:
        self._handle = None
        now = self.clock()
        self.ticks += 1
        try:
            deadline = self.node.tick(now)
        except Exception:
            log.exception("a timer failed; retrying in %d ms", TIMER_RETRY_MS)
            deadline = now + TIMER_RETRY_MS
        self._arm(deadline)
