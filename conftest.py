"""Which event loop the async tests of tests/ and compat/ run on, and which tests run serially.

By default the one a user of kafka-shim gets (``auto``: uvloop when installed); the environment
variable KAFKA_SHIM_EVENT_LOOP=asyncio (or uvloop) moves every in-process broker of a run to that
loop: the async tests' loops here, BrokerThread and ``kafka-shim serve`` through BrokerConfig's
default. A test marked ``@pytest.mark.asyncio(loop_factories=LOOPS)`` runs once on each loop.

``make test`` runs the tests of tests/ and compat/ not marked ``serial`` on two pytest-xdist workers
(``-n 2 --dist loadfile -m "not serial" tests compat``: a module's tests stay on one worker, so its
module-scoped brokers and JVMs start once), then the ``serial`` ones in one session of their own.
A test of tests/ is ``serial`` when its module is in SERIAL (bounds on loop turns, CPU or wall
time, idle and session deadlines on the real clock, pacing and fairness between connections) or
measures its thread's or process's CPU time: a second worker beside it would take the time it is
checked on (but those in CPU_BOUND_ONLY, which bound only the loop thread's own CPU time per turn). Of compat/, the fuzzing (its loop-stall bounds) and compat/peers (the librdkafka and
kafka-python suites, which start in the background at collection and must start once) are
``serial``; the real-client tests run on the workers, each on brokers, ports and directories of
its own.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from shim.event_loops import default_choice, loop_factory, resolve

LOOPS = ["asyncio", "uvloop"]


def pytest_asyncio_loop_factories(config, item):
    marker = item.get_closest_marker("asyncio")
    if marker is not None and "loop_factories" in marker.kwargs:
        return {name: loop_factory(name) for name in LOOPS}
    name = resolve(default_choice())
    return {name: loop_factory(name)}


ROOT = Path(__file__).resolve().parent
SERIAL = frozenset({
    "tests/apis/test_client_quotas.py", "tests/apis/test_telemetry_subscriptions.py",
    "tests/groups/test_consumer_assignors.py", "tests/groups/test_group_round_loop.py",
    "tests/groups/test_group_session_expiry.py", "tests/share/test_share_heartbeat_loop.py",
    "tests/share/test_share_initialize_loop.py", "tests/share/test_share_state_apis.py",
    "tests/share/test_share_state_loop.py", "tests/test_fetch_pacing.py", "tests/test_fetch_request_loop.py",
    "tests/test_fetch_session_cache.py", "tests/test_heap.py", "tests/test_list_offsets_timestamp_search.py",
    "tests/test_offsets_apis.py", "tests/test_produce_pacing.py", "tests/test_record_pass_loop.py",
    "tests/test_server_fairness.py", "tests/test_server_fairness_writes.py", "tests/test_server_limits.py",
    "tests/test_topic_lifecycle_loop.py", "tests/txn/test_fetch_isolation.py",
})
SERIAL_DIRS = ("compat/fuzz/", "compat/peers/")
# Modules that bound only the CPU time of the loop thread's turns (tests/loop_stall.py: thread time, garbage
# collection apart), which a busy second core does not add to: all of them passed in a serial session run
# beside other work at a load average of 10. They run on the workers, where their minutes are shared.
CPU_BOUND_ONLY = frozenset({"tests/test_paced_handlers.py"})
# a module that measures CPU time is serial even when SERIAL does not name it
MEASURES_CPU = re.compile(r"thread_time|process_time|getrusage|loop_stall|stall_during")


def pytest_configure(config):
    config.addinivalue_line("markers", "serial: never run beside a pytest-xdist worker (see conftest.py)")


def _serial(path: Path, cache: dict) -> bool:
    if path not in cache:
        rel = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.as_posix()
        if rel in SERIAL or rel.startswith(SERIAL_DIRS) or not rel.startswith(("tests/", "compat/")):
            cache[path] = True
        elif rel in CPU_BOUND_ONLY:
            cache[path] = False
        else:
            try:
                cache[path] = MEASURES_CPU.search(path.read_text(errors="replace")) is not None
            except OSError:
                cache[path] = True
    return cache[path]


@pytest.hookimpl(tryfirst=True)  # before -m selects by markers
def pytest_collection_modifyitems(config, items):
    cache: dict = {}
    for item in items:
        if _serial(item.path, cache):
            item.add_marker(pytest.mark.serial)
