"""The peer-suite machinery without the network: unpacking an sdist, the cached download, a real
pytest subprocess read back through its JUnit XML, and the comparison with an expected list."""

from __future__ import annotations

import io
import tarfile
import tomllib

import pytest

from compat.peers import runner

SUITE = runner.Suite(name="Some_Client", version="1.2.3", members=("test", "setup.cfg"), paths=("test",),
                     expected_file=runner.ROOT / "unused.toml")


def _sdist(path, files: dict[str, str]):
    with tarfile.open(path, "w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"some_client-1.2.3/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_unpack_takes_the_members_and_supplies_only_what_the_sdist_lacks(tmp_path):
    sdist = _sdist(tmp_path / "some_client-1.2.3.tar.gz", {
        "test/test_a.py": "A", "test/conftest.py": "shipped", "setup.cfg": "[x]", "client/__init__.py": "C",
        "testing_notes.txt": "not a member"})
    root = runner.unpack(sdist, tmp_path / "out", SUITE.members,
                         supplied=(("test/conftest.py", "ours"), ("test/__init__.py", "ours")))
    assert root == tmp_path / "out" / "some_client-1.2.3"
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) == [
        "setup.cfg", "test/__init__.py", "test/conftest.py", "test/test_a.py"]
    assert (root / "test/conftest.py").read_text() == "shipped"
    assert (root / "test/__init__.py").read_text() == "ours"


def test_a_cached_sdist_is_used_without_downloading(tmp_path, monkeypatch):
    cached = _sdist(tmp_path / "some_client-1.2.3.tar.gz", {"test/test_a.py": "A"})
    _sdist(tmp_path / "some_client-1.2.30.tar.gz", {"test/test_a.py": "B"})

    def no_download(*args, **kwargs):
        raise AssertionError(f"downloaded although cached: {args}")

    monkeypatch.setattr(runner.subprocess, "run", no_download)
    assert runner.cached_sdist(SUITE, tmp_path) == cached


def test_a_failed_download_says_why(tmp_path, monkeypatch):
    class Failed:
        returncode, stdout, stderr = 1, "", "ERROR: No matching distribution found for Some_Client==1.2.3"

    monkeypatch.setattr(runner.subprocess, "run", lambda *a, **k: Failed)
    with pytest.raises(runner.SdistUnavailable, match="No matching distribution"):
        runner.cached_sdist(SUITE, tmp_path / "cache")


OUTCOMES = '''
import pytest

@pytest.fixture
def broken():
    raise RuntimeError("no broker")

def test_passes():
    pass

def test_fails():
    assert 1 == 2, "one is not two"

def test_errors_in_setup(broken):
    pass

@pytest.mark.skipif(True, reason="needs a secured broker")
def test_skipped_by_a_gate():
    pass

class TestGroup:
    @pytest.mark.parametrize("codec", ["gzip", "zstd"])
    def test_param(self, codec):
        if codec == "zstd":
            pytest.skip("zstd requires 2.1.0 or newer")
'''


def test_run_pytest_and_read_junit_give_one_outcome_per_test_id(tmp_path):
    (tmp_path / "test" / "sub").mkdir(parents=True)
    (tmp_path / "test" / "__init__.py").write_text("")
    (tmp_path / "test" / "sub" / "__init__.py").write_text("")
    (tmp_path / "test" / "sub" / "test_outcomes.py").write_text(OUTCOMES)
    code, seconds = runner.run_pytest(tmp_path, ["test"], {}, tmp_path / "junit.xml", tmp_path / "log")
    assert code == 1 and seconds > 0
    got = runner.read_junit(tmp_path / "junit.xml", tmp_path)
    m = "test/sub/test_outcomes.py::"
    assert {k: v["status"] for k, v in got.items()} == {
        m + "test_passes": "pass", m + "test_fails": "fail", m + "test_errors_in_setup": "error",
        m + "test_skipped_by_a_gate": "skip", m + "TestGroup::test_param[gzip]": "pass",
        m + "TestGroup::test_param[zstd]": "skip"}
    assert "one is not two" in got[m + "test_fails"]["message"]
    assert "no broker" in got[m + "test_errors_in_setup"]["message"]
    assert got[m + "test_skipped_by_a_gate"]["message"] == "needs a secured broker"
    assert got[m + "TestGroup::test_param[zstd]"]["message"] == "zstd requires 2.1.0 or newer"


EXPECTED = {
    "t::a": {"status": "pass"},
    "t::b": {"status": "fail", "reason": "CreatePartitions (API 37) not implemented"},
    "t::c": {"status": "skip", "reason": "Testing on external Kafka Broker"},
    "t::d": {"status": "error", "reason": "no TLS listener"},
}


def _run(**statuses) -> dict[str, dict]:
    out = {"t::a": {"status": "pass", "message": ""},
           "t::b": {"status": "fail", "message": "IncompatibleBrokerVersion"},
           "t::c": {"status": "skip", "message": "Testing on external Kafka Broker"},
           "t::d": {"status": "error", "message": "FileNotFoundError"}}
    for test, status in statuses.items():
        out[f"t::{test}"] = {"status": status, "message": f"{test} {status} now"}
    return out


def test_a_run_that_matches_the_list_has_no_differences():
    assert runner.compare(EXPECTED, _run()) == []


@pytest.mark.parametrize("changes, says", [
    ({"a": "fail"}, "t::a: expected to pass, fail: a fail now"),
    ({"b": "pass"}, "t::b: now passes, update the list (it said fail: CreatePartitions (API 37) not implemented)"),
    ({"c": "pass"}, "t::c: now passes, update the list"),
    ({"b": "error"}, "t::b: expected fail (CreatePartitions (API 37) not implemented), got error: b error now"),
    ({"d": "skip"}, "t::d: expected error (no TLS listener), got skip: d skip now"),
    ({"c": "skip"}, "t::c: skipped, but now because 'c skip now', the list says 'Testing on external Kafka Broker'"),
    ({"e": "pass"}, "t::e: pass but not in the expected list (e pass now)"),
])
def test_every_kind_of_difference_is_named(changes, says):
    problems = runner.compare(EXPECTED, _run(**changes))
    assert len(problems) == 1 and problems[0].startswith(says), problems


def test_a_listed_test_that_did_not_run_is_a_difference():
    actual = _run()
    del actual["t::b"]
    assert runner.compare(EXPECTED, actual) == ["t::b: in the expected list (fail) but the suite did not run it"]


def test_the_list_refuses_failures_without_a_reason_and_unknown_statuses():
    assert runner.check_expected(EXPECTED) == []
    bad = {"t::x": {"status": "fail"}, "t::y": {"status": "skip", "reason": " "},
           "t::z": {"status": "xfail", "reason": "hidden"}, "t::w": {"status": "error", "reason": "TODO: look"}}
    assert [p.split(": ", 1)[0] for p in runner.check_expected(bad)] == ["t::w", "t::x", "t::y", "t::z"]


def test_update_keeps_reasons_of_unchanged_entries_and_marks_new_failures_todo():
    actual = _run(a="fail", b="fail", d="pass", e="skip")
    new = runner.updated_expected(EXPECTED, actual)
    assert new["t::b"] == EXPECTED["t::b"]
    assert new["t::a"] == {"status": "fail", "reason": "TODO: find the cause of: a fail now"}
    assert new["t::d"] == {"status": "pass"}
    assert new["t::e"] == {"status": "skip", "reason": "e skip now"}
    assert runner.check_expected(new) == ["t::a: a fail needs its reason (the missing kafka-shim feature, or the "
                                          "suite's own skip reason), not 'TODO: find the cause of: a fail now'"]


def test_the_rendered_list_reads_back_as_it_was_written():
    tricky = {**EXPECTED, 'test/x.py::test_q["a\\\\b"]': {"status": "fail", "reason": 'says "no" — twice\\'}}
    text = runner.render_expected(tricky, "first line\nsecond line")
    assert text.startswith("# first line\n# second line\n")
    assert tomllib.loads(text)["tests"] == tricky


def test_the_matrix_section_gives_the_lists_reason_or_what_the_suite_said(tmp_path):
    from compat.peers import kafka_python

    result = runner.RunResult(_run(b="error"), 12.3, 1, tmp_path, tmp_path, "kafka-python 3.0.12 (installed)", "b")
    section = kafka_python.matrix_section(result, EXPECTED)
    why = {t["test"]: (t["status"], t["reason"]) for t in section["tests"]}
    assert why["t::c"] == ("skip", "Testing on external Kafka Broker")
    assert why["t::b"] == ("error", "b error now (the expected list says fail)")
    assert section["differences"] == runner.compare(EXPECTED, result.outcomes) != []
    assert section["counts"] == {"pass": 1, "error": 2, "skip": 1}
    external = kafka_python.matrix_section(result, None)
    assert external["differences"] == [] and external["expected_file"] == ""
    assert dict((t["test"], t["reason"]) for t in external["tests"])["t::d"] == "FileNotFoundError"


def test_a_broker_that_exited_during_the_suite_is_named_with_the_result(tmp_path):
    from compat.peers import kafka_python

    class Exited:
        log_path = tmp_path / "broker.log"

        class proc:
            returncode = -9

            @staticmethod
            def poll():
                return -9

    text = kafka_python._broker_text(Exited, "127.0.0.1:1", kafka_python.KAFKA_VERSION)
    assert text.endswith(f"(which exited with -9 during the suite; its log: {tmp_path / 'broker.log'})")
    assert kafka_python._broker_text(None, "10.0.0.1:9092", kafka_python.KAFKA_VERSION) == "the broker at 10.0.0.1:9092"


def test_each_kafka_version_has_its_release_broker_and_expected_list():
    from compat.peers import kafka_python

    assert kafka_python.suite_version("4.1") == "4.1.0" and kafka_python.release_of("4.0.0") == "4.0"
    assert kafka_python.expected_file("3.9.0") == kafka_python.SUITE.expected_file
    assert kafka_python.expected_file("4.1").name == "kafka_python_expected-4.1.toml"
    args39, args41 = kafka_python.broker_args("3.9.0"), kafka_python.broker_args("4.1.0")
    assert args39[-2:] == ("--kafka-version", "3.9") and "advertised.listeners" not in " ".join(args39)
    assert ("--kafka-version", "4.1") == args41[-4:-2] and args41[-1].startswith("advertised.listeners=")
