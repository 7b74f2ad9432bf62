"""librdkafka's own test programs (its tests/ directory, unchanged: share consumer, KIP-848 consumer
protocol, transactions, idempotence, admin) against a ``kafka-shim serve --brokers 3 --kafka-version
4.1`` of their own: every test must do what compat/peers/librdkafka_expected.toml says
(compat/README.md explains how to run them alone and how to update the list). The library and its
test-runner are built from source once per checkout (.pytest_cache); build and run start in the
background as soon as the session's tests are collected (compat/peers/conftest.py), and the fixture
waits for their result. The tests skip only when a compiler, make or npm (which fetches the source)
is missing."""

from __future__ import annotations

import pytest

from compat.peers import librdkafka, runner
from compat.peers.conftest import SUITE, peers_cache_dir

pytestmark = pytest.mark.shim_only(
    "its expected results are kafka-shim's; `python -m compat.peers.librdkafka --bootstrap HOST:PORT` "
    "runs the tests against another broker")


@pytest.fixture(scope="module")
def suite_run(request, tmp_path_factory) -> runner.RunResult:
    # the run compat/peers/conftest.py started when the tests were collected
    background = request.config.stash.get(SUITE, None)
    try:
        if background is not None:
            return background.result()
        return librdkafka.run(tmp_path_factory.mktemp("librdkafka-suite"), cache_dir=peers_cache_dir(request.config))
    except librdkafka.SourceUnavailable as exc:
        pytest.skip(f"librdkafka {librdkafka.VERSION}'s test programs cannot be built here: {exc}")


def test_the_expected_list_gives_every_failure_its_reason():
    assert runner.check_expected(runner.load_expected(librdkafka.EXPECTED_FILE)) == []


def test_every_run_test_is_in_the_expected_list_and_the_list_names_no_other():
    expected = runner.load_expected(librdkafka.EXPECTED_FILE)
    numbers = {(r.name, n) for r in librdkafka.RUNS for n in r.tests}
    listed = {(k.split("/", 1)[0], k.split("/", 1)[1][:4]) for k in expected}
    assert listed == numbers


def _outcomes(tmp_path, log: str) -> dict[str, str]:
    """What _read_outcomes makes of two passing test programs of one number in a SUBTESTS run."""
    report = tmp_path / "report.json"
    report.write_text('{"tests": {"0045_a": {"state": "PASSED", "duration": 1}, '
                      '"0045_b": {"state": "PASSED", "duration": 2}}}')
    run = librdkafka.Run("regex", ("0045",), subtests="Resubscribe")
    return {k: o["status"] for k, o in librdkafka._read_outcomes(run, report, log).items()}


def test_a_subtests_run_keeps_the_tests_that_ran_such_a_subtest_and_fails_when_none_did(tmp_path):
    ran = "[0045_b   /  9.6s] [ do_test_resubscribe_with_regex:704: Resubscribe with Regex: PASS (9.66s) ]\n"
    assert _outcomes(tmp_path, ran) == {"regex/0045_b": "pass"}
    assert _outcomes(tmp_path, "") == {"regex/0045_a": "fail", "regex/0045_b": "fail"}


def test_librdkafkas_test_programs_do_what_the_expected_list_says(suite_run):
    expected = runner.load_expected(librdkafka.EXPECTED_FILE)
    problems = runner.compare(expected, suite_run.outcomes)
    assert not problems, (
        f"{len(problems)} difference(s) from {librdkafka.EXPECTED_FILE.name} "
        f"({suite_run.client} against {suite_run.broker}; the test-runner's output: "
        f"{suite_run.workdir}/test-runner-RUN.log, the broker's log: {suite_run.workdir / 'broker.log'}):\n"
        + "\n".join(problems))
