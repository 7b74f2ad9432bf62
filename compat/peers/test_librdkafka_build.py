"""The librdkafka suite in the background (librdkafka.Background, started by compat/peers/conftest.py),
over a stand-in source tree (KAFKA_SHIM_LIBRDKAFKA_SRC) whose configure, make and test-runner only
record what they were run with."""

from __future__ import annotations

import os
import shutil
import types
from pathlib import Path

import pytest

from compat.peers import conftest as peers_conftest
from compat.peers import librdkafka
from compat.support import wait_for

pytestmark = pytest.mark.skipif(any(shutil.which(t) is None for t in ("cc", "c++", "make", "nice")),
                                reason="the build steps need cc, c++, make and nice on PATH")

# the stand-in test-runner: its niceness, and a JSON report in which the test it was given passed
RUNNER = """#!/bin/sh
nice > runner-niceness
echo "$KAFKA_SHIM_PROBE" > runner-env
printf '{"tests": {"%s_share": {"state": "PASSED", "duration": 0.1}}}' "$TESTS" > "$TEST_REPORT"
"""


def _source(root: Path, configure: str) -> Path:
    """A tree with librdkafka's layout: configure, `make libs`, tests/ with `make test-runner`."""
    (root / "src").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "configure").write_text("#!/bin/sh\n" + configure)
    (root / "configure").chmod(0o755)
    (root / "Makefile").write_text("libs:\n\ttouch src/librdkafka.so.1\n")
    (root / "tests" / "runner.sh").write_text(RUNNER)
    (root / "tests" / "Makefile").write_text(
        "test-runner:\n\techo $(TESTSRCS_C) > built-sources\n\tcp runner.sh test-runner\n\tchmod +x test-runner\n")
    (root / "tests" / "test.c").write_text("_TEST_DECL(0175_share);\n_TEST_DECL(0999_other);\n")
    (root / "tests" / "0175-share.c").write_text("int main_0175_share(int argc, char **argv) { return 0; }\n")
    return root


RUNS = (librdkafka.Run("share", ("0175",)),)


def test_the_background_builds_niced_then_runs_the_test_programs_unniced_in_its_environment(tmp_path, monkeypatch):
    src = _source(tmp_path / "src", f"nice > {tmp_path}/build-niceness\n")
    monkeypatch.setenv("KAFKA_SHIM_LIBRDKAFKA_SRC", str(src))
    (tmp_path / "work").mkdir()
    monkeypatch.setenv("KAFKA_SHIM_PROBE", "when the tests were collected")
    background = librdkafka.Background(tmp_path / "work", tmp_path / "cache", RUNS)
    monkeypatch.setenv("KAFKA_SHIM_PROBE", "set for a moment by a test running meanwhile")
    result = background.start().result()
    assert result.outcomes == {"share/0175_share": {"status": "pass", "message": "", "seconds": 0.1}}
    own = os.nice(0)
    assert (tmp_path / "build-niceness").read_text().split() == [str(own + 10)]
    assert (tmp_path / "work" / "runner-niceness").read_text().split() == [str(own)]
    # its processes have the environment of the moment it was made, whatever tests set meanwhile
    assert (tmp_path / "work" / "runner-env").read_text() == "when the tests were collected\n"
    # only the selected test program and the stubs of the others were built
    assert (result.suite_dir / "built-sources").read_text().split() == ["0175-share.c", librdkafka.STUBS]
    assert "main_0999_other" in (result.suite_dir / librdkafka.STUBS).read_text()
    assert "built in" in result.client


def test_cancel_stops_a_build_still_running_and_all_its_processes(tmp_path, monkeypatch):
    src = _source(tmp_path / "src", f"sleep 600 &\necho $! > {tmp_path}/pid.tmp\n"
                                    f"mv {tmp_path}/pid.tmp {tmp_path}/pid\nwait\n")
    monkeypatch.setenv("KAFKA_SHIM_LIBRDKAFKA_SRC", str(src))
    background = librdkafka.Background(tmp_path / "work", tmp_path / "cache", RUNS).start()
    pid = int(wait_for(lambda: (tmp_path / "pid").exists() and (tmp_path / "pid").read_text(), 30,
                       message="configure's child started"))
    background.cancel()
    with pytest.raises(RuntimeError, match="configure"):
        background.result()

    def gone() -> bool:  # killed: no such process, or a zombie no one reaps yet
        try:
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
        except FileNotFoundError:
            return True

    wait_for(gone, 10, message=f"configure's child {pid} killed with it")


def _item(name: str, fixtures=("suite_run",), skip=False):
    return types.SimpleNamespace(path=Path("compat/peers") / name, fixturenames=list(fixtures),
                                 get_closest_marker=lambda mark: object() if skip and mark == "skip" else None)


@pytest.mark.parametrize("items, starts", [
    ([_item("test_librdkafka_suite.py")], True),
    ([_item("test_kafka_python_suite.py"), _item("test_librdkafka_suite.py", fixtures=())], False),
    ([_item("test_librdkafka_suite.py", skip=True)], False),  # e.g. skipped for an external target
])
def test_the_suite_starts_at_collection_only_when_it_will_run(tmp_path, monkeypatch, items, starts):
    started = []

    class Recorder:
        def __init__(self, workdir, cache_dir):
            self.dirs = (workdir, cache_dir)

        def start(self):
            started.append(self.dirs)
            return self

    monkeypatch.setattr(librdkafka, "Background", Recorder)
    config = types.SimpleNamespace(stash=pytest.Stash(), option=types.SimpleNamespace(collectonly=False),
                                   cache=types.SimpleNamespace(mkdir=lambda name: tmp_path / name),
                                   _tmp_path_factory=types.SimpleNamespace(mktemp=lambda name: tmp_path / name))
    peers_conftest.pytest_collection_finish(types.SimpleNamespace(items=items, config=config))
    assert started == ([(tmp_path / "librdkafka-suite", tmp_path / "kafka-shim-peers")] if starts else [])
    assert (config.stash.get(peers_conftest.SUITE, None) is not None) == starts
