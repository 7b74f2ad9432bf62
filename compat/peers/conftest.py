"""The librdkafka suite (compat/peers/librdkafka.py) and kafka-python's (compat/peers/kafka_python.py)
start in the background as soon as the session's tests are collected and they are among them: their
builds, brokers and test runs go beside the tests before them, and their fixtures wait for the
results (librdkafka.Background, kafka_python.Background)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from compat.peers import kafka_python, librdkafka, runner

SUITE = pytest.StashKey[librdkafka.Background]()
KAFKA_PYTHON = pytest.StashKey[kafka_python.Background]()
HERE = Path(__file__).resolve().parent


def _runs_the_suite(item) -> bool:
    return (item.path.name == "test_librdkafka_suite.py" and "suite_run" in getattr(item, "fixturenames", ())
            and item.get_closest_marker("skip") is None)


def _kafka_python_release(item) -> str | None:
    """The release a test of test_kafka_python_suite.py needs a run of, if any."""
    callspec = getattr(item, "callspec", None)
    if item.path.name != "test_kafka_python_suite.py" or callspec is None or item.get_closest_marker("skip"):
        return None
    return callspec.params.get("suite_run")


BACKGROUND_MODULES = ("test_librdkafka_suite.py", "test_kafka_python_suite.py")


def pytest_collection_modifyitems(config, items):
    """The suites that run in the background go last in the session: their builds and test runs then
    have every other test's time to finish in, instead of the session waiting for them at compat/peers
    (the third directory collected)."""
    later = [item for item in items if item.path.name in BACKGROUND_MODULES and item.path.parent == HERE]
    if later:
        moved = set(later)
        items[:] = [item for item in items if item not in moved] + later


def peers_cache_dir(config) -> Path:
    cache = getattr(config, "cache", None)  # absent under -p no:cacheprovider
    return cache.mkdir("kafka-shim-peers") if cache else runner.DEFAULT_CACHE


def suite_workdir(config, name: str = "librdkafka-suite") -> Path:
    """A directory under the session's basetemp, as tmp_path_factory gives the fixtures (kept after
    the session, as theirs are: a failure names the logs in it)."""
    factory = getattr(config, "_tmp_path_factory", None)
    return factory.mktemp(name) if factory else Path(tempfile.mkdtemp(prefix=f"{name}-"))


def pytest_collection_finish(session):
    if session.config.option.collectonly:
        return
    if any(_runs_the_suite(item) for item in session.items):
        config = session.config
        config.stash[SUITE] = librdkafka.Background(suite_workdir(config), peers_cache_dir(config)).start()
    releases = {_kafka_python_release(item) for item in session.items} - {None}
    if releases:
        config = session.config
        config.stash[KAFKA_PYTHON] = kafka_python.Background(
            lambda release: suite_workdir(config, "kafka-python-suite"), peers_cache_dir(config),
            tuple(r for r in kafka_python.TEST_RELEASES if r in releases)).start()


def pytest_sessionfinish(session):
    for key in (SUITE, KAFKA_PYTHON):
        background = session.config.stash.get(key, None)
        if background is not None:
            background.cancel()
