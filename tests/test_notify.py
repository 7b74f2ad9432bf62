"""Parked requests wake on a change (of their partitions, or of anything), give up after their
timeout, and end when cancelled."""

import asyncio

import pytest

from shim.notify import ChangeNotifier, wait_or_timeout


async def test_a_change_wakes_a_parked_wait_before_its_timeout():
    notifier = ChangeNotifier()
    parked = asyncio.ensure_future(notifier.wait(30))
    await asyncio.sleep(0)  # parked
    notifier.changed()
    await asyncio.wait_for(parked, 5)
    assert notifier._any == set() and notifier._by_key == {}


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


async def test_a_change_of_a_partition_wakes_its_watchers_and_those_of_anything_only():
    notifier = ChangeNotifier()
    on_t0 = asyncio.ensure_future(notifier.wait(30, keys=[("t", 0), ("t", 1)]))
    on_u0 = asyncio.ensure_future(notifier.wait(30, keys=[("u", 0)]))
    anything = asyncio.ensure_future(notifier.wait(30))
    await asyncio.sleep(0)
    notifier.changed(("t", 1))
    await asyncio.wait_for(asyncio.gather(on_t0, anything), 5)
    assert not on_u0.done()
    assert set(notifier._by_key) == {("u", 0)}  # the woken watcher left its other partition too
    notifier.changed()  # anything: every watcher
    await asyncio.wait_for(on_u0, 5)
    assert notifier._any == set() and notifier._by_key == {}
