"""Wake parked requests (long-poll Fetch) when a log changes: appends, markers, LSO moves."""

from __future__ import annotations

import asyncio


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

    async def wait(self, timeout: float) -> None:
        """Return after the next change or after ``timeout`` seconds, whichever comes first."""
        fut = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            await asyncio.wait_for(fut, timeout)
        except asyncio.TimeoutError:
            pass
        finally:
            if fut in self._waiters:
                self._waiters.remove(fut)
