"""Parked requests wake on a change, give up after their timeout, and end when cancelled."""

import asyncio

import pytest

from shim.notify import ChangeNotifier, wait_or_timeout


async def test_a_change_wakes_a_parked_wait_before_its_timeout():
    notifier = ChangeNotifier()
    parked = asyncio.ensure_future(notifier.wait(30))
    await asyncio.sleep(0)  # parked
    notifier.changed()
    await asyncio.wait_for(parked, 5)
    assert notifier._waiters == []


async def test_a_wait_ends_at_its_timeout_without_a_change():
    assert await wait_or_timeout(asyncio.get_running_loop().create_future(), 0.01) is False


async def test_a_cancellation_arriving_as_the_change_lands_is_not_lost():
    """The connection closing cancels its parked Fetch; if the log changed in the same turn, the
    request must still end as cancelled (asyncio.wait_for on Python 3.11 returned instead)."""
    notifier = ChangeNotifier()
    parked = asyncio.ensure_future(notifier.wait(30))
    await asyncio.sleep(0)
    notifier.changed()
    parked.cancel()
    with pytest.raises(asyncio.CancelledError):
        await parked
