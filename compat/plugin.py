"""The compat-matrix machinery, loaded by compat/conftest.py: options, markers, fixtures.

* ``--kafka-bootstrap`` / ``KAFKA_SHIM_TARGET``: the broker under test (see compat/targets.py);
* ``--shim-kafka-version`` / ``KAFKA_SHIM_KAFKA_VERSION``: the Kafka release an in-process
  kafka-shim emulates (``--kafka-version`` of ``kafka-shim serve``);
* ``--shim-brokers N`` / ``KAFKA_SHIM_BROKERS``: the in-process kafka-shim simulates N brokers
  (``--brokers`` of ``kafka-shim serve``; README.md, A simulated cluster);
* ``compat_target`` (module scope): that broker, with a fresh random topic prefix;
* ``java_drivers`` (session): compat/java compiled against kafka-clients 3.9.1 (``--java-client 4``
  / ``KAFKA_SHIM_JAVA_CLIENT=4``: 4.x), or a skip; when the session's tests need them, the
  compiles start in the background as soon as they are collected (see pytest_collection_finish);
* ``apache_kafka`` (session): an Apache Kafka container via testcontainers, or a skip;
* marker ``compat(client=..., scenario=...)``: names the matrix cell a test fills (scenario ids
  from compat/scenarios/); module-level and test-level markers merge;
* marker ``shim_only(reason)``: the test needs a kafka-shim of its own (it kills or restarts the
  broker, puts a proxy in front of it or reads its internals); with an external target it is
  skipped with that reason instead of quietly running against kafka-shim again.
"""

from __future__ import annotations

import concurrent.futures
import os
import tempfile
import threading
from pathlib import Path

import pytest

from compat import javarun, scenarios, targets

# compat/conftest.py does `from compat.plugin import *`
__all__ = [
    "pytest_addoption", "pytest_configure", "pytest_collection_modifyitems", "pytest_collection_finish",
    "_external_target", "compat_target", "java_drivers", "java4", "apache_kafka",
]


def pytest_addoption(parser):
    group = parser.getgroup("kafka-shim compat")
    group.addoption("--kafka-bootstrap", dest="kafka_bootstrap", default=None, metavar="HOST:PORT|testcontainers",
                    help=f"run the compat scenarios against this broker instead of an in-process kafka-shim "
                         f"(also ${targets.ENV})")
    group.addoption("--java-client", dest="java_client", default=None, choices=("3", "4"),
                    help="the Java client the Java suites run: 3 (kafka-clients 3.9.1, default) or 4 "
                         "(kafka-clients 4.x, the java4 extra); also $KAFKA_SHIM_JAVA_CLIENT")
    group.addoption("--shim-kafka-version", dest="shim_kafka_version", default=None, metavar="X.Y",
                    help=f"the Kafka release the in-process kafka-shim emulates (also ${targets.VERSION_ENV}; "
                         f"default 3.9)")
    group.addoption("--shim-brokers", dest="shim_brokers", default=None, type=int, metavar="N",
                    help=f"the in-process kafka-shim simulates N brokers (also ${targets.BROKERS_ENV}; default 1)")


def pytest_configure(config):
    brokers = config.getoption("shim_brokers", default=None)
    if brokers:  # also for the kafka-shim processes and kafka_shim fixtures the tests start themselves
        os.environ[targets.BROKERS_ENV] = str(brokers)
    config.addinivalue_line("markers", "compat(client, scenario): the compatibility-matrix cell this test fills")
    config.addinivalue_line("markers", "shim_only(reason): needs a kafka-shim of its own; skipped for an external target")


def compat_marks(item) -> dict:
    merged: dict = {}
    for mark in reversed(list(item.iter_markers("compat"))):  # module first, then class, then test
        merged.update(mark.kwargs)
    return merged


def pytest_collection_modifyitems(config, items):
    wanted = targets.requested(config)
    for item in items:
        marks = compat_marks(item)
        if marks:
            scenarios.validate(marks.get("client"), marks.get("scenario"), item.nodeid)
        only = item.get_closest_marker("shim_only")
        if only is not None and wanted != "shim":
            reason = only.args[0] if only.args else "needs a kafka-shim of its own"
            item.add_marker(pytest.mark.skip(reason=f"not run against {wanted}: {reason}"))


@pytest.fixture(scope="session")
def _external_target(request):
    wanted = targets.requested(request.config)
    if wanted == "shim":
        yield None
    elif wanted == "testcontainers":
        try:
            with targets.apache_kafka_container() as target:
                yield target
        except targets.NoDockerEngine as exc:
            pytest.skip(f"{targets.ENV}=testcontainers: {exc}")
    else:
        yield targets.Target("external", wanted, f"external broker {wanted}")


@pytest.fixture(scope="module")
def compat_target(request, _external_target, tmp_path_factory):
    """The broker under test; a fresh in-process kafka-shim per module unless told otherwise."""
    if _external_target is not None:
        yield targets.Target(_external_target.kind, _external_target.bootstrap_servers,
                             _external_target.description)
        return
    with targets.shim_target(tmp_path_factory.mktemp("kafka-shim"), targets.shim_version(request.config),
                             targets.shim_brokers(request.config)) as target:
        yield target


def java_client(config) -> str:
    """"3" or "4": which kafka-clients the Java drivers are compiled against and run with."""
    import os

    return config.getoption("java_client", default=None) or os.environ.get("KAFKA_SHIM_JAVA_CLIENT") or "3"


COMPILES = pytest.StashKey[dict]()  # client -> Future of its JavaDrivers, compiling in the background


def _build_root(config, tmp_path_factory) -> Path:
    cache = getattr(config, "cache", None)  # absent under -p no:cacheprovider
    if cache is not None:
        return cache.mkdir("kafka-shim-java")
    if tmp_path_factory is not None:
        return tmp_path_factory.mktemp("kafka-shim-java")
    return Path(tempfile.mkdtemp(prefix="kafka-shim-java-"))


def _java_clients_wanted(config, items) -> list[str]:
    """The Java clients the collected tests compile drivers for: by fixture, or by name in their
    module (a fixture some tests request with getfixturevalue)."""
    wanted, texts = set(), {}
    for item in items:
        if item.path not in texts:
            try:
                texts[item.path] = item.path.read_text(errors="replace")
            except OSError:
                texts[item.path] = ""
        names, text = set(getattr(item, "fixturenames", ())), texts[item.path]
        if "java_drivers" in names or "java_drivers" in text:
            wanted.add(java_client(config))
        if "java4" in names or "java4" in text:
            wanted.add("4")
    return sorted(wanted)


def pytest_collection_finish(session):
    """javac runs beside the tests collected before the first one that needs it (each compile
    takes 8-10 s of CPU on two cores, at niceness 10 so the tests keep theirs)."""
    config = session.config
    if config.option.collectonly:
        return
    clients = _java_clients_wanted(config, session.items)
    if not clients:
        return
    factory = getattr(config, "_tmp_path_factory", None)
    futures = {client: concurrent.futures.Future() for client in clients}
    config.stash[COMPILES] = futures

    def compile_all():
        for client, future in futures.items():
            try:
                future.set_result(javarun.JavaDrivers.prepare(_build_root(config, factory), client, nice=10))
            except BaseException as exc:  # noqa: BLE001 - handed to the fixture that waits for it
                future.set_exception(exc)

    threading.Thread(target=compile_all, name="javac", daemon=True).start()


def _drivers(request, tmp_path_factory, client: str) -> javarun.JavaDrivers:
    """The Java drivers compiled once per source digest into pytest's cache (kept across runs)."""
    future = request.config.stash.get(COMPILES, {}).get(client)
    try:
        if future is not None:
            return future.result()
        return javarun.JavaDrivers.prepare(_build_root(request.config, tmp_path_factory), client)
    except javarun.JavaUnavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def java_drivers(request, tmp_path_factory) -> javarun.JavaDrivers:
    return _drivers(request, tmp_path_factory, java_client(request.config))


@pytest.fixture(scope="session")
def java4(request, tmp_path_factory) -> javarun.JavaDrivers:
    """The drivers against kafka-clients 4.x, whatever --java-client says (the Kafka 4 suites)."""
    return _drivers(request, tmp_path_factory, "4")


@pytest.fixture(scope="session")
def apache_kafka():
    """Apache Kafka (apache/kafka:3.9.1, KRaft) via testcontainers; skips without a Docker engine."""
    try:
        with targets.apache_kafka_container() as target:
            yield target
    except targets.NoDockerEngine as exc:
        pytest.skip(f"testcontainers cannot start {targets.KAFKA_IMAGE}: {exc}")
