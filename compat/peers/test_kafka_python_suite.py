"""kafka-python 3.0.12's own integration suite, unchanged, against a ``kafka-shim serve`` of its own,
once per emulated release (KAFKA_VERSION 3.9.0 and 4.1.0, whose version gates enable more tests;
KAFKA_SHIM_KAFKA_PYTHON_RELEASES=3.9,4.0,4.1 adds 4.0.0), the releases side by side: every test must
do what compat/peers/kafka_python_expected.toml (3.9) or
kafka_python_expected-4.x.toml says (compat/README.md explains how to run it alone, against another
broker, and how to update the lists)."""

from __future__ import annotations

import pytest

from compat.peers import kafka_python, runner
from compat.peers.conftest import KAFKA_PYTHON, peers_cache_dir

pytestmark = pytest.mark.shim_only(
    "its expected results are kafka-shim's; `python -m compat.peers.kafka_python --bootstrap HOST:PORT` "
    "runs the suite against another broker")


@pytest.fixture(scope="module")
def suite_runs(request, tmp_path_factory) -> kafka_python.Background:
    """The run of each release this session tests, all started at once: each is a pytest and brokers
    of its own, mostly waiting (on keytool's JVMs, broker starts, its clients' timeouts), so the
    releases run side by side rather than one after the other. compat/peers/conftest.py started
    them when the tests were collected; here only when it did not (the session's items changed)."""
    background = request.config.stash.get(KAFKA_PYTHON, None)
    if background is not None:
        yield background
        return
    releases = tuple(r for r in kafka_python.TEST_RELEASES
                     if any(getattr(item, "callspec", None) and item.callspec.params.get("suite_run") == r
                            for item in request.session.items))
    background = kafka_python.Background(lambda release: tmp_path_factory.mktemp("kafka-python-suite"),
                                         peers_cache_dir(request.config), releases).start()
    yield background
    background.cancel()


@pytest.fixture(scope="module", params=kafka_python.TEST_RELEASES)
def suite_run(request, suite_runs) -> runner.RunResult:
    try:
        return suite_runs.futures[request.param].result()
    except runner.SdistUnavailable as exc:
        pytest.skip(f"kafka-python {kafka_python.SUITE.version}'s sdist is not here and could not be downloaded: {exc}")


@pytest.mark.parametrize("release", kafka_python.RELEASES)
def test_the_expected_list_gives_every_failure_its_reason(release):
    assert runner.check_expected(runner.load_expected(kafka_python.expected_file(release))) == []


def test_kafka_pythons_integration_suite_does_what_the_expected_list_says(suite_run):
    path = kafka_python.expected_file(suite_run.kafka_version)
    expected = runner.load_expected(path)
    problems = runner.compare(expected, suite_run.outcomes)
    assert not problems, (
        f"{len(problems)} difference(s) from {path.name} "
        f"({suite_run.client} against {suite_run.broker}; the suite's output: {suite_run.workdir / 'pytest.log'}, "
        f"the broker's log: {suite_run.workdir / 'broker.log'}):\n" + "\n".join(problems))


def test_the_client_under_test_is_this_venvs_kafka_python_3_0(suite_run):
    installed = kafka_python.installed_version()
    assert installed is not None and installed.startswith("3.0."), installed
    # the sdist's own `kafka` package is unpacked beside test/ (and shadows the installed one) only
    # when the installed version is not the suite's
    unpacked = (suite_run.suite_dir / "kafka").is_dir()
    assert unpacked == (installed != kafka_python.SUITE.version), suite_run.client
