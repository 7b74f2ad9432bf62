"""The shell's deadline timer (shim.deadline_timer.DeadlineTimer): armed at the core's next deadline, no polling.

The first tests drive it with a fake loop and a fake clock over a real node; one runs it on a real
asyncio loop to show the order of a request and a deadline that come due together; one counts the
ticks of an idle broker.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import socket

from group_helpers import SESSION, join, sync

from node_support import NodeFactory
from shim import Broker
from shim.coordinators.group.state import GroupState
from shim.deadline_timer import DeadlineTimer

T0 = 1_700_000_000_000
HOUR_MS = 3_600_000


class FakeLoop:
    """``call_at``/``call_soon`` on a clock that moves only in :meth:`advance`."""

    def __init__(self) -> None:
        self.t = 0.0
        self._queue: list = []
        self._seq = itertools.count()

    def time(self) -> float:
        return self.t

    def call_at(self, when: float, callback) -> "FakeHandle":
        handle = FakeHandle(callback)
        heapq.heappush(self._queue, (when, next(self._seq), handle))
        return handle

    def call_soon(self, callback) -> "FakeHandle":
        return self.call_at(self.t, callback)

    def advance(self, to: float) -> None:
        while self._queue and self._queue[0][0] <= to:
            when, _, handle = heapq.heappop(self._queue)
            self.t = max(self.t, when)
            if not handle.cancelled:
                handle.callback()
        self.t = to

    @property
    def armed(self) -> int:
        return sum(not h.cancelled for _, _, h in self._queue)


class FakeHandle:
    def __init__(self, callback) -> None:
        self.callback, self.cancelled = callback, False

    def cancel(self) -> None:
        self.cancelled = True


def quiet_node(tmp_path):
    """A node whose only deadlines are the groups' (retention and transaction checks an hour away)."""
    return NodeFactory(tmp_path / "data", retention_check_interval_ms=HOUR_MS,
                       transaction_abort_check_interval_ms=HOUR_MS)()


def test_a_session_expires_at_its_deadline_and_the_idle_timer_does_not_poll(tmp_path):
    node = quiet_node(tmp_path)
    loop = FakeLoop()
    timer = DeadlineTimer(loop, node, clock=lambda: T0 + round(loop.t * 1000))
    timer.start()
    loop.advance(0)  # the first tick, at start-up
    gc = node.groups

    loop.advance(1.0)
    joined = join(gc, now=T0 + 1_000)  # sets the join deadline (now + 0 ms) and waits for it
    assert timer.armed_at == T0 + 1_000
    loop.advance(1.0)  # the timer completes the join: the member must heartbeat within its session
    member_id = joined.result.member_id
    assert sync(gc, member_id, joined.result.generation_id, {member_id: b"a"}, now=T0 + 1_000).done
    deadline = gc.groups["g"].members[member_id].heartbeat_deadline
    assert deadline == T0 + 1_000 + SESSION
    assert timer.armed_at == deadline

    loop.advance(5.0)
    gc.heartbeat("g", member_id, None, joined.result.generation_id, T0 + 5_000)  # moves it later
    new_deadline = T0 + 5_000 + SESSION
    loop.advance((new_deadline - T0) / 1000 - 0.001)
    assert member_id in gc.groups["g"].members, "expired before its deadline"
    loop.advance((new_deadline - T0) / 1000)
    assert member_id not in gc.groups["g"].members, "not expired at its deadline"
    assert gc.groups["g"].state is GroupState.EMPTY

    # Ticks: start-up, the join, the first (stale) heartbeat deadline, the real one. A 200 ms poll
    # would have ticked 75 times over these 15 seconds.
    assert timer.ticks == 4
    assert loop.armed == 1  # one handle, never a pile of them
    timer.stop()
    assert loop.armed == 0


class RecordingNode:
    def __init__(self, order: list) -> None:
        self.order = order

    def watch_deadlines(self, callback) -> None:
        pass

    def next_deadline(self) -> int:
        return T0 + HOUR_MS

    def tick(self, now: int) -> int:
        self.order.append("tick")
        return now + HOUR_MS


def test_a_request_read_in_the_iteration_its_deadline_comes_due_is_handled_first():
    """asyncio runs the callbacks of ready sockets before the timers due in the same iteration, but
    a connection answers in its task, one iteration later; the tick waits one iteration too."""
    order: list[str] = []

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        a, b = socket.socketpair()
        a.setblocking(False)
        received = loop.create_future()

        async def connection_task():  # as Connection._answer: woken by the read, then dispatches
            await received
            order.append("request")

        task = loop.create_task(connection_task())
        await asyncio.sleep(0)
        b.send(b"heartbeat")
        loop.add_reader(a, lambda: received.done() or received.set_result(a.recv(100)))
        timer = DeadlineTimer(loop, RecordingNode(order), clock=lambda: T0 + HOUR_MS)
        timer.earlier(T0)  # already due: fires in the same iteration the bytes are read
        await task
        while "tick" not in order:
            await asyncio.sleep(0)
        timer.stop()
        loop.remove_reader(a)
        a.close(), b.close()

    asyncio.run(scenario())
    assert order == ["request", "tick"]


async def test_an_idle_broker_does_not_tick(tmp_path):
    """Over a second with nothing due, the timer runs no tick (the old loop polled every 200 ms)."""
    async with Broker(data_dir=tmp_path / "data", listen="127.0.0.1:0", retention_check_interval_ms=HOUR_MS,
                      transaction_abort_check_interval_ms=HOUR_MS) as broker:
        timer = broker._server.timer
        while timer.ticks == 0:  # the start-up tick
            await asyncio.sleep(0.01)
        before = timer.ticks
        await asyncio.sleep(1.0)  # an observation window, not a synchronisation
        assert timer.ticks == before
        assert timer.armed_at - broker.node.next_deadline() == 0


def test_catch_up_runs_a_deadline_due_before_a_request_arrived_and_only_then():
    """A connection about to handle a request read at some time asks the timer to run the tick
    first when the deadline it is armed for had come by then; the loop's own call is dropped."""
    order: list[str] = []
    loop = FakeLoop()
    timer = DeadlineTimer(loop, RecordingNode(order), clock=lambda: T0 + round(loop.t * 1000))
    timer.earlier(T0 + 1_000)
    timer.catch_up(T0 + 999)  # read before the deadline: the request goes first
    assert order == [] and timer.armed_at == T0 + 1_000
    timer.catch_up(T0 + 1_000)
    assert order == ["tick"] and timer.armed_at == T0 + HOUR_MS
    loop.advance(2.0)  # the handle armed for the deadline was cancelled: no second tick
    assert order == ["tick"] and loop.armed == 1
