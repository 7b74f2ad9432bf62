"""The compat-matrix machinery, loaded by compat/conftest.py: options, markers, fixtures.

* ``--kafka-bootstrap`` / ``KAFKA_SHIM_TARGET``: the broker under test (see compat/targets.py);
* ``--shim-kafka-version`` / ``KAFKA_SHIM_KAFKA_VERSION``: the Kafka release an in-process
  kafka-shim emulates (``--kafka-version`` of ``kafka-shim serve``);
* ``--shim-brokers N`` / ``KAFKA_SHIM_BROKERS``: the in-process kafka-shim simulates N brokers
  (``--brokers`` of ``kafka-shim serve``; README.md, A simulated cluster);
* ``compat_target`` (module scope): that broker, with a fresh random topic prefix;
* ``java_drivers`` (session): compat/java compiled against kafka-clients 3.9.1 (``--java-client 4``
  / ``KAFKA_SHIM_JAVA_CLIENT=4``: 4.x), or a skip;
* ``apache_kafka`` (session): an Apache Kafka container via testcontainers, or a skip;
* marker ``compat(client=..., scenario=...)``: names the matrix cell a test fills (scenario ids
  from compat/scenarios.py); module-level and test-level markers merge;
* marker ``shim_only(reason)``: the test needs a kafka-shim of its own (it kills or restarts the
  broker, puts a proxy in front of it or reads its internals); with an external target it is
  skipped with that reason instead of quietly running against kafka-shim again.
"""

from __future__ import annotations

import os

import pytest

from compat import javarun, scenarios, targets

# compat/conftest.py does `from compat.plugin import *`
__all__ = [
    "pytest_addoption", "pytest_configure", "pytest_collection_modifyitems",
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


def _drivers(request, tmp_path_factory, client: str) -> javarun.JavaDrivers:
    """The Java drivers compiled once per source digest into pytest's cache (kept across runs)."""
    cache = getattr(request.config, "cache", None)  # absent under -p no:cacheprovider
    build_root = cache.mkdir("kafka-shim-java") if cache else tmp_path_factory.mktemp("kafka-shim-java")
    try:
        return javarun.JavaDrivers.prepare(build_root, client)
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
