"""The librdkafka suite (compat/peers/librdkafka.py) starts in the background as soon as the
session's tests are collected and it is among them: its build and its test programs run beside the
tests before it, and its fixture waits for the result (librdkafka.Background)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from compat.peers import librdkafka, runner

SUITE = pytest.StashKey[librdkafka.Background]()


def _runs_the_suite(item) -> bool:
    return (item.path.name == "test_librdkafka_suite.py" and "suite_run" in getattr(item, "fixturenames", ())
            and item.get_closest_marker("skip") is None)


def peers_cache_dir(config) -> Path:
    cache = getattr(config, "cache", None)  # absent under -p no:cacheprovider
    return cache.mkdir("kafka-shim-peers") if cache else runner.DEFAULT_CACHE


def suite_workdir(config) -> Path:
    """A directory under the session's basetemp, as tmp_path_factory gives the fixtures (kept after
    the session, as theirs are: a failure names the logs in it)."""
    factory = getattr(config, "_tmp_path_factory", None)
    return factory.mktemp("librdkafka-suite") if factory else Path(tempfile.mkdtemp(prefix="librdkafka-suite-"))


def pytest_collection_finish(session):
    if session.config.option.collectonly:
        return
    if any(_runs_the_suite(item) for item in session.items):
        config = session.config
        config.stash[SUITE] = librdkafka.Background(suite_workdir(config), peers_cache_dir(config)).start()


def pytest_sessionfinish(session):
    background = session.config.stash.get(SUITE, None)
    if background is not None:
        background.cancel()
