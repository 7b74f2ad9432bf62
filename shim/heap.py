"""Keeps the garbage collector's oldest generation small, so its collections do not hold the loop.

A collection of Python's oldest generation walks every object the collector tracks, so its pause
grows with what the broker holds: 100,000 ACLs, 10,000 partitions' logs or many groups made each
such collection 40-130 ms of the loop's CPU, however little the request it fell in did. Objects
moved to the permanent generation (gc.freeze) are no longer walked.

The policy, run at the end of every collection of the oldest generation (a gc callback), when no
cyclic garbage is left anywhere (the collection just freed it, and the younger generations were
merged into it), so nothing frozen is garbage at that moment:

- when that generation still holds more than FREEZE_ABOVE objects, it is frozen: the state the
  broker built since the last freeze (a bulk CreateAcls, CreateTopics, a start-up recovery) leaves
  the collector's walks;
- frozen objects are freed by reference counting as usual when they die, but a dead cycle among
  them is never collected. So once the frozen objects exceed GROWTH times those counted live at
  the last walk of the whole heap, they are unfrozen instead: the next collection of the oldest
  generation walks the whole heap once, frees whatever died frozen, and freezes what lives. Memory
  held by dead frozen cycles is thereby bounded by GROWTH times the live heap, and the walks of the
  whole heap come at doublings of it, not at every collection.
"""

from __future__ import annotations

import gc

FREEZE_ABOVE = 50_000  # tracked objects: a walk of about 7 ms
GROWTH = 2


class _Policy:
    def __init__(self) -> None:
        self.live_at_full_walk = 0  # objects alive after the last walk of the whole heap
        self.freezes = self.unfreezes = 0

    def __call__(self, phase: str, info: dict) -> None:
        if phase != "stop" or info["generation"] != 2:
            return
        frozen = gc.get_freeze_count()
        if frozen and frozen > GROWTH * max(self.live_at_full_walk, FREEZE_ABOVE):
            gc.unfreeze()  # the next collection walks everything and frees the dead frozen cycles
            self.unfreezes += 1
            return
        held = len(gc.get_objects(2))
        if not frozen:
            self.live_at_full_walk = held
        if held > FREEZE_ABOVE:
            gc.freeze()
            self.freezes += 1


_policy: _Policy | None = None


def install() -> _Policy:
    """Runs the policy in this process from now on (idempotent); the serving broker's CLI calls it."""
    global _policy
    if _policy is None:
        _policy = _Policy()
        gc.callbacks.append(_policy)
    return _policy


def uninstall() -> None:
    """Stops the policy and gives the frozen objects back to the collector."""
    global _policy
    if _policy is not None:
        gc.callbacks.remove(_policy)
        _policy = None
    gc.unfreeze()


def settle() -> None:
    """After start-up: the garbage of recovery freed, then everything alive frozen (its count the
    live heap the policy measures growth against)."""
    gc.collect()  # the policy, if installed, freezes at its end; without it, freeze here
    if not gc.get_freeze_count():
        gc.freeze()
    if _policy is not None:
        _policy.live_at_full_walk = max(_policy.live_at_full_walk, gc.get_freeze_count())
