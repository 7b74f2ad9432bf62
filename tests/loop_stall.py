"""The event loop's longest stall while a coroutine runs, seen by a probe task that wakes every
millisecond (imported as ``loop_stall``).

Three measures: the wall-clock time between two wake-ups; the CPU time the loop's thread spent
between them (time.thread_time) on work other than garbage collection; and the longest collection
the loop's thread ran. On a shared machine the first also counts the time the thread waited for a
core or for the GIL; the second counts only what the turns in between did, so a bound on it holds
under load yet fails when one turn does a long piece of work. Collections are apart: a collection
of the oldest generation scans every object alive, so its pause grows with the heap (100,000 ACLs
held, or a request's 100,000 items decoded), whichever turn it falls in.
"""

from __future__ import annotations

import asyncio
import gc
import threading
import time
from dataclasses import dataclass


@dataclass
class Stall:
    wall: float = 0.0  # seconds
    cpu: float = 0.0  # seconds of the loop thread's CPU time, collections left out
    gc: float = 0.0  # the longest collection on the loop's thread


async def stall_during(coro) -> tuple[object, Stall]:
    """The awaited result and the longest stall seen meanwhile."""
    done, worst, loop_thread = False, Stall(), threading.get_ident()
    collecting, collected = [0.0], [0.0]

    def on_gc(phase, info):
        if threading.get_ident() != loop_thread:
            return
        if phase == "start":
            collecting[0] = time.thread_time()
        else:
            pause = time.thread_time() - collecting[0]
            collected[0] += pause
            worst.gc = max(worst.gc, pause)

    async def probe():
        wall, cpu = time.perf_counter(), time.thread_time() - collected[0]
        while not done:
            await asyncio.sleep(0.001)
            now_wall, now_cpu = time.perf_counter(), time.thread_time() - collected[0]
            worst.wall, worst.cpu = max(worst.wall, now_wall - wall), max(worst.cpu, now_cpu - cpu)
            wall, cpu = now_wall, now_cpu

    gc.callbacks.append(on_gc)
    task = asyncio.create_task(probe())
    await asyncio.sleep(0)
    try:
        result = await coro
    finally:
        done = True
        await task  # its last wake-up measures the stall that ended with the answer
        gc.callbacks.remove(on_gc)
    return result, worst
