"""Which event loop the async tests of tests/ and compat/ run on.

By default the one a user of kafka-shim gets (``auto``: uvloop when installed); the environment
variable KAFKA_SHIM_EVENT_LOOP=asyncio (or uvloop) moves every in-process broker of a run to that
loop: the async tests' loops here, BrokerThread and ``kafka-shim serve`` through BrokerConfig's
default. A test marked ``@pytest.mark.asyncio(loop_factories=LOOPS)`` runs once on each loop.
"""

from __future__ import annotations

from shim.event_loops import default_choice, loop_factory, resolve

LOOPS = ["asyncio", "uvloop"]


def pytest_asyncio_loop_factories(config, item):
    marker = item.get_closest_marker("asyncio")
    if marker is not None and "loop_factories" in marker.kwargs:
        return {name: loop_factory(name) for name in LOOPS}
    name = resolve(default_choice())
    return {name: loop_factory(name)}
