"""Handlers that walk a request's arrays give the event loop up now and then.

Kafka answers requests on a pool of handler threads, so a DescribeGroups of 100,000 groups holds
one thread while the others serve everyone else. Here every request is answered on the one event
loop: a read-only handler that loops over what the client listed awaits :class:`Pacer` once per
item, which yields to the loop after SLICE_S of work. What the request reads may change between
slices, as it may between Kafka's handler threads. A handler that changes state paces only between
writes Kafka makes apart too (WriteTxnMarkers: between markers' appends), and asks for durability
after its last write.
"""

from __future__ import annotations

import asyncio
import time

SLICE_S = 0.005


class Pacer:
    """``await pace()`` once per item: a yield to the loop every SLICE_S (time.monotonic, as
    uvloop's loop.time() stands still within one turn of the loop)."""

    __slots__ = ("_deadline",)

    def __init__(self) -> None:
        self._deadline = time.monotonic() + SLICE_S

    async def __call__(self) -> None:
        if time.monotonic() >= self._deadline:
            await asyncio.sleep(0)
            self._deadline = time.monotonic() + SLICE_S

    async def each(self, items):
        """The items, one at a time, paced."""
        for item in items:
            await self()
            yield item
