"""Wake parked requests (long-poll Fetch) when a log changes: appends, markers, LSO moves."""

from __future__ import annotations

import asyncio


async def wait_or_timeout(fut: asyncio.Future, timeout: float | None) -> bool:
    """Await ``fut`` for at most ``timeout`` seconds (None: no limit); whether it completed.

    asyncio.timeout, not wait_for: on Python 3.11 wait_for swallows a cancellation that arrives
    as ``fut`` completes (CPython gh-86296), and a request cancelled with its connection must end."""
    try:
        async with asyncio.timeout(timeout):
            await fut
    except TimeoutError:
        return False
    return True


class ChangeNotifier:
    def __init__(self) -> None:
        self._waiters: list[asyncio.Future] = []

    def changed(self) -> None:
        if not self._waiters:  # called for every append
            return
        waiters, self._waiters = self._waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(None)

    async def wait(self, timeout: float, gone: asyncio.Future | None = None) -> None:
        """Return after the next change or after ``timeout`` seconds, whichever comes first, or
        once ``gone`` is done (the client of a parked request closed its connection)."""
        fut = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)

        def end(_) -> None:
            if not fut.done():
                fut.set_result(None)

        if gone is not None:
            gone.add_done_callback(end)
        try:
            await wait_or_timeout(fut, timeout)
        finally:
            if fut in self._waiters:
                self._waiters.remove(fut)
            if gone is not None:
                gone.remove_done_callback(end)  # a live connection parks again and again
