"""A coordinator's load as steps: a generator that does a little of the work between two
``yield``s and returns what it built. Start-up runs the steps in slices on the event loop after the
listeners open (shim.coordinators.loader); a coordinator move, and tests, run them in one go."""

from __future__ import annotations

from typing import Generator, TypeVar

T = TypeVar("T")
Steps = Generator[None, None, T]


def drain(steps: "Steps[T]") -> T:
    """Run ``steps`` to the end at once; what they return."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value
