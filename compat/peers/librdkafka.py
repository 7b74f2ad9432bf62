"""librdkafka's own test programs (``tests/`` of its source: the C library under confluent-kafka and
kcat) against kafka-shim.

    .venv/bin/python -m compat.peers.librdkafka                 # a kafka-shim of its own; compare
    .venv/bin/python -m compat.peers.librdkafka --keep /tmp/rdk # and keep the logs and reports
    .venv/bin/python -m compat.peers.librdkafka --update        # rewrite librdkafka_expected.toml

Where the source comes from: PyPI's confluent-kafka sdist ships no tests, but the npm package
``@confluentinc/kafka-javascript`` bundles librdkafka's whole source tree, ``tests/`` included, under
``deps/librdkafka`` (``npm pack``, 2.8 MB). ``KAFKA_SHIM_LIBRDKAFKA_SRC=<dir>`` builds a librdkafka
checkout instead. The library and its ``test-runner`` are built once into the cache directory
(``.pytest_cache/d/kafka-shim-peers/``): ``./configure`` without GSSAPI, curl and zstd (none of the
tests run here needs them), ``make libs``, ``make -C tests test-runner``.

What the test programs need from their environment (``tests/test.c``, ``tests/README.md``):

* ``test.conf`` (``RDKAFKA_TEST_CONF``) with ``bootstrap.servers``;
* ``KAFKA_VERSION``: the broker's version, which gates tests (``TEST_BRKVER``);
* ``TEST_CONSUMER_GROUP_PROTOCOL=consumer`` to run the consumer-group tests with KIP-848's protocol;
* ``-L`` (no mock-cluster tests), ``-E`` (no sockem: those interpose a socket emulator, fine too, but
  slow), ``-p1`` (one test at a time on this 2-core machine); ``TEST_REPORT`` for a JSON report.

The broker: ``kafka-shim serve --brokers 3 --kafka-version 4.1`` (the transactional tests create topics
with replication factor 3) with ``share.version`` finalized at 1. librdkafka gates its share-consumer
tests on broker 4.2.0, where Kafka made share groups generally available; the ShareGroupHeartbeat,
ShareFetch and ShareAcknowledge they use are the v1 APIs Kafka 4.1 serves, so the share run tells the
test programs 4.2.0 while kafka-shim emulates 4.1.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import dataclasses
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from compat.peers import runner  # noqa: E402

HERE = Path(__file__).resolve().parent
NPM_PACKAGE, NPM_VERSION, VERSION = "@confluentinc/kafka-javascript", "1.10.1", "2.15.1"
EXPECTED_FILE = HERE / "librdkafka_expected.toml"
# Close to librdkafka's own test cluster (tests/cluster_testing.py): four partitions per auto-created
# topic (0118_commit_rebalance's two consumers each need one), three brokers (the transactional tests
# create topics with replication factor 3; the share tests expect each partition of a two-partition
# topic to come from its own leader), group.share.min.record.lock.duration.ms=1000 (the share tests
# set 3-second acquisition locks); share heartbeats every second (Kafka: 5 s), since a share group's
# first member is assigned its partitions by the heartbeat after the one that initializes them; and
# an authorizer, for 0081_admin's ACL subtests
BROKER_ARGS = ("--brokers", "3", "--kafka-version", "4.1", "--num-partitions", "4",
               "--override", "group.share.min.record.lock.duration.ms=1000",
               "--override", "group.share.heartbeat.interval.ms=1000",
               "--override", "group.share.min.heartbeat.interval.ms=1000",
               "--override", "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
               "--override", "allow.everyone.if.no.acl.found=true")
# no optimisation, no debug symbols: the cold build is what a clean checkout pays on each test run
CONFIGURE = ("--disable-gssapi", "--disable-curl", "--disable-lz4-ext", "--disable-debug-symbols",
             "--disable-optimization")
STUBS = "9999-kafka_shim_stubs.c"
TOOLS = ("cc", "c++", "make", "npm")


class SourceUnavailable(Exception):
    """librdkafka's source could not be had or built for lack of a tool (the message says which)."""


@dataclasses.dataclass(frozen=True)
class Run:
    """One ``test-runner`` invocation: the tests (``TESTS``: numbers) and its environment."""
    name: str
    tests: tuple[str, ...]
    kafka_version: str = "4.1.0"
    env: tuple[tuple[str, str], ...] = ()
    subtests: str | None = None        # SUBTESTS: only the subtests whose name holds this


CONSUMER_PROTOCOL = (("TEST_CONSUMER_GROUP_PROTOCOL", "consumer"),)
SHARE = "4.2.0"
# The curated selection (under three minutes here; compat/README.md lists what is left out and why).
# A run with ``subtests`` runs only the subtests whose name holds that text: the share-consumer tests
# run one to three minutes each in full.
RUNS = (
    Run("share-groups", ("0175",), kafka_version=SHARE),
    Run("share-commit-sync", ("0176",), kafka_version=SHARE, subtests="do_test_basic"),
    Run("share-txn-mixed", ("0177",), kafka_version=SHARE, subtests="do_test_m"),
    Run("share-txn-two-groups", ("0177",), kafka_version=SHARE, subtests="two groups"),
    Run("share-close", ("0178",), kafka_version=SHARE, subtests="close_without_acknowledge"),
    Run("share-destroy", ("0179",), kafka_version=SHARE, subtests="destroy_flags=0x0 ack_half=true"),
    Run("share-topic-recreate", ("0184",), kafka_version=SHARE, subtests="0184-recreate-hb-first"),
    Run("classic", ("0090", "0103", "0129")),
    Run("admin-create-partitions", ("0081",), subtests="CreatePartitions"),
    Run("admin-configs", ("0081",), subtests="Configs"),
    Run("consumer-protocol", ("0030", "0102"), env=CONSUMER_PROTOCOL),
    Run("consumer-protocol-subscription", ("0113",), env=CONSUMER_PROTOCOL, subtests="_change_subscription_"),
    Run("consumer-protocol-regex", ("0045",), env=CONSUMER_PROTOCOL, subtests="Resubscribe with Regex"),
)

HEADER = f"""\
What librdkafka {VERSION}'s own test programs (tests/ of its source, unchanged; the curated selection of
compat/peers/librdkafka.py's RUNS) do against kafka-shim serve --brokers 3 --kafka-version 4.1 (and
the settings of BROKER_ARGS there).
compat/peers/test_librdkafka_suite.py runs them and fails on any difference. A test is RUN/TEST.

status: pass | fail | skip. A fail says what kafka-shim lacks (or what else stops the test); a skip
carries the test program's own reason.
Regenerate with `python -m compat.peers.librdkafka --update`.
"""


# -- the source and the build ----------------------------------------------------------------


def _npm_pack(cache_dir: Path) -> Path:
    name = f"confluentinc-kafka-javascript-{NPM_VERSION}.tgz"
    target = cache_dir / name
    if target.exists():
        return target
    if shutil.which("npm") is None:
        raise SourceUnavailable("npm is not installed (it fetches librdkafka's source)")
    staging = cache_dir / f".npm-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        proc = subprocess.run(["npm", "pack", f"{NPM_PACKAGE}@{NPM_VERSION}", "--pack-destination", str(staging)],
                              capture_output=True, text=True, timeout=300, cwd=staging)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SourceUnavailable(f"npm pack did not finish: {exc}") from None
    if proc.returncode != 0 or not (staging / name).exists():
        shutil.rmtree(staging, ignore_errors=True)
        raise SourceUnavailable(f"npm pack {NPM_PACKAGE}@{NPM_VERSION} failed: {' '.join(proc.stderr.split())[-300:]}")
    os.replace(staging / name, target)
    shutil.rmtree(staging, ignore_errors=True)
    return target


def _unpack(cache_dir: Path, dest: Path, env) -> None:
    local = env.get("KAFKA_SHIM_LIBRDKAFKA_SRC")
    if local:
        shutil.copytree(local, dest, ignore=shutil.ignore_patterns(".git", "*.o", "*.so*", "*.a"))
        return
    prefix = "package/deps/librdkafka/"
    with tarfile.open(_npm_pack(cache_dir)) as tar:
        members = [m for m in tar.getmembers() if m.name.startswith(prefix)]
        for m in members:
            m.name = m.name[len(prefix):]
        tar.extractall(dest, members=[m for m in members if m.name], filter="data")


def _make(args: list[str], cwd: Path, log, nice: int = 0, started=None, env=None) -> None:
    """One build step; with ``nice``, at that niceness (a build beside running tests takes the CPU
    they leave); ``started(proc)`` is told of the process, the leader of a group of its own."""
    log.write(f"$ {' '.join(args)}\n")
    log.flush()
    cmd = ["nice", "-n", str(nice), *args] if nice and shutil.which("nice") else args
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, process_group=0, env=env)
    if started is not None:
        started(proc)
    try:
        proc.wait(1200)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    if proc.returncode != 0:
        raise RuntimeError(f"`{' '.join(args)}` failed ({proc.returncode}) in {cwd}; its output: {log.name}")


def _selected_sources(tests_dir: Path, numbers) -> list[str]:
    return sorted(p.name for p in tests_dir.glob("[08][0-9][0-9][0-9]-*.c*")
                  if p.name[:4] in numbers and p.suffix in (".c", ".cpp"))


def _write_stubs(tests_dir: Path, sources: list[str]) -> str:
    """A C file defining every test entry point test.c names but ``sources`` do not: test.c's table
    refers to all of them, and building only the tests that run halves the cold build. A stub that
    were run (it is not: TESTS names only built tests) fails its test."""
    declared = re.findall(r"^_TEST_DECL\((\w+)\);", (tests_dir / "test.c").read_text(), re.M)
    defined = set()
    for src in sources:
        defined.update(re.findall(r"\bint\s+main_(\w+)\s*\(", (tests_dir / src).read_text(errors="replace")))
    lines = ['/* written by kafka-shim\'s compat/peers/librdkafka.py: the tests it does not build */',
             '#include "test.h"']
    for name in declared:
        if name not in defined:
            lines.append(f"int main_{name}(int argc, char **argv) {{\n"
                         f'        TEST_FAIL("not built by kafka-shim\'s runner");\n        return 1;\n}}')
    (tests_dir / STUBS).write_text("\n".join(lines) + "\n")
    return STUBS


def build(cache_dir: Path = runner.DEFAULT_CACHE, runs: tuple[Run, ...] = None, nice: int = 0,
          started=None, env=None) -> tuple[Path, float]:
    """librdkafka's tests/ directory with a test-runner of the tests ``runs`` name; (path, seconds the
    build took, 0 when cached). Raises SourceUnavailable when a tool is missing. ``nice`` and
    ``started`` go to each build step (_make); ``env`` is their environment (default: this process's)."""
    env = os.environ if env is None else env
    numbers = sorted({n for r in (runs or RUNS) for n in r.tests})
    src = cache_dir / f"librdkafka-{VERSION}"
    stamp = src / ".built"
    if stamp.exists() and stamp.read_text().split() == numbers and (src / "tests" / "test-runner").exists():
        return src / "tests", 0.0
    missing = [t for t in TOOLS if shutil.which(t) is None and not (t == "npm" and env.get(
        "KAFKA_SHIM_LIBRDKAFKA_SRC"))]
    if missing:
        raise SourceUnavailable(f"{', '.join(missing)} not installed (librdkafka is built from source)")
    began = time.monotonic()
    cache_dir.mkdir(parents=True, exist_ok=True)
    jobs = f"-j{os.cpu_count() or 1}"
    with open(cache_dir / f"librdkafka-{VERSION}-build.log", "w") as log:
        if not (src / "src" / "librdkafka.so.1").exists():
            shutil.rmtree(src, ignore_errors=True)
            _unpack(cache_dir, src, env)
            _make(["./configure", *CONFIGURE], src, log, nice, started, env)
            _make(["make", jobs, "libs"], src, log, nice, started, env)
        tests = src / "tests"
        sources = _selected_sources(tests, numbers)
        stubs = _write_stubs(tests, sources)
        (tests / "test-runner").unlink(missing_ok=True)
        c_files = " ".join([s for s in sources if s.endswith(".c")] + [stubs])
        cxx_files = " ".join(s for s in sources if s.endswith(".cpp"))
        _make(["make", jobs, "test-runner", f"TESTSRCS_C={c_files}", f"TESTSRCS_CXX={cxx_files}"], tests, log,
              nice, started, env)
    stamp.write_text(" ".join(numbers) + "\n")
    return src / "tests", time.monotonic() - began


class Background:
    """run() on a thread of its own: compat/peers/conftest.py starts one when the session's tests are
    collected and the suite is among them, and the suite's fixture waits for its result. The cold
    build (about 100 s on two cores, at niceness 10 so that it takes the CPU the other tests leave)
    and the test programs (about 95 s, most of it their own waits: three-second checks that nothing
    arrives, a second after each topic creation) then run beside the tests before the suite's."""

    def __init__(self, workdir: Path, cache_dir: Path, runs: tuple[Run, ...] = RUNS) -> None:
        self.workdir, self.cache_dir, self.runs = workdir, cache_dir, runs
        # the environment as it is now: the tests running meanwhile may set variables for a moment
        # (KAFKA_SHIM_EVENT_LOOP=libev, to see it refused) that its processes must not inherit
        self.env = dict(os.environ)
        self.future: concurrent.futures.Future = concurrent.futures.Future()
        self._proc: subprocess.Popen | None = None
        self._cancelled = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="librdkafka-suite", daemon=True)

    def start(self) -> "Background":
        self._thread.start()
        return self

    def _started(self, proc: subprocess.Popen) -> None:
        with self._lock:
            self._proc = proc
            if self._cancelled:  # every process started after cancel() is killed at once
                os.killpg(proc.pid, signal.SIGKILL)

    def _run(self) -> None:
        try:
            self.future.set_result(run(self.workdir, cache_dir=self.cache_dir, runs=self.runs, nice=10,
                                       started=self._started, env=self.env))
        except BaseException as exc:  # noqa: BLE001 - handed to whoever waits for the result
            self.future.set_exception(exc)

    def result(self) -> runner.RunResult:
        return self.future.result()

    def cancel(self) -> None:
        """Stops a run still going (the session ended first): its build or test-runner is killed, and
        so is every process it would start next; the broker stops as run() returns."""
        with self._lock:
            self._cancelled = True
            if self._proc is not None and self._proc.poll() is None:
                os.killpg(self._proc.pid, signal.SIGKILL)
        self._thread.join(30)


# -- a run -----------------------------------------------------------------------------------

_FAILED = re.compile(r'^### Test "(?P<test>[^" (]+)(?: \((?P<sub>[^"]*)\))?" failed at (?P<where>[^:]+:\d+)[^#]*###\n'
                     r"(?P<msg>[^\n]*)", re.M)
_COLOR = re.compile(r"\x1b\[[0-9;]*m")


def _read_outcomes(run: Run, report: Path, log_text: str) -> dict[str, dict]:
    """RUN/TEST -> {status, message, seconds} from the test-runner's JSON report and its output."""
    failures: dict[str, str] = {}
    for m in _FAILED.finditer(log_text):
        failures.setdefault(m["test"], f"{m['sub'] or ''} at {m['where']}: {m['msg']}".strip())
    tests = {}
    if report.exists():
        text = report.read_text()
        with contextlib.suppress(ValueError):
            tests = json.loads(text if text.rstrip().endswith("}") else text + "}}").get("tests", {})
    outcomes, unmatched = {}, []
    for name, info in tests.items():
        state = info.get("state", "")
        if name == "<MAIN>" or not name.startswith(run.tests) or (state == "SKIPPED" and not info.get("extra")):
            continue  # not asked for, or a local/mock variant of an asked-for number (-L filters those)
        status = {"PASSED": "pass", "SKIPPED": "skip"}.get(state, "fail")
        message = info.get("extra", "") if status == "skip" else failures.get(name, state if status == "fail" else "")
        if status == "pass" and run.subtests and not _ran_subtests(log_text, name, run.subtests):
            unmatched.append(f"{run.name}/{name}")
        outcomes[f"{run.name}/{name}"] = {"status": status, "message": runner._one_line(message),
                                          "seconds": round(float(info.get("duration", 0)), 2)}
    _settle_unmatched(run, outcomes, unmatched)
    for name, why in failures.items():  # a test the report lacks (the runner aborted)
        if name != "<MAIN>" and f"{run.name}/{name}" not in outcomes:
            outcomes[f"{run.name}/{name}"] = {"status": "fail", "message": runner._one_line(why), "seconds": 0.0}
    for number in run.tests:
        if not any(k.split("/", 1)[1].startswith(number) for k in outcomes):
            outcomes[f"{run.name}/{number}"] = {"status": "fail", "seconds": 0.0,
                                                "message": "the test-runner ended before this test reported"}
    return outcomes


def _settle_unmatched(run: Run, outcomes: dict[str, dict], unmatched: list[str]) -> None:
    """The tests of a SUBTESTS run that passed without running a subtest of that name (the other
    test programs of one number, whose subtests are named otherwise) are left out when another test
    of the run ran one or failed; when none did, each is a failure: a renamed subtest must not turn
    a run into a pass that tested nothing."""
    matched = any(o["status"] != "skip" for k, o in outcomes.items() if k not in unmatched)
    for key in unmatched:
        if matched:
            del outcomes[key]
        else:
            outcomes[key].update(status="fail", message=f"passed without running a subtest named *{run.subtests}*")


def _ran_subtests(log_text: str, test: str, subtests: str) -> bool:
    """Whether the test passed at least one subtest SUBTESTS chose: a renamed subtest must not turn
    a run into a pass that tested nothing."""
    return any(line.startswith(f"[{test}") and subtests in line and ": PASS (" in line for line in log_text.splitlines())


def run_tests(tests_dir: Path, run: Run, bootstrap: str, workdir: Path, timeout: float = 600,
              started=None, env=None) -> dict[str, dict]:
    """One Run's test-runner; ``started(proc)`` is told of it (the leader of a process group); ``env``
    is the environment its own is made from (default: this process's)."""
    conf = workdir / f"test-{run.name}.conf"
    # the timeout multiplier: the test programs' own timeouts assume a dedicated machine
    conf.write_text(f"bootstrap.servers={bootstrap}\ntest.timeout.multiplier=2\n")
    report, log = workdir / f"report-{run.name}.json", workdir / f"test-runner-{run.name}.log"
    lib = os.pathsep.join(str(tests_dir.parent / d) for d in ("src", "src-cpp"))
    env = {**(os.environ if env is None else env), "RDKAFKA_TEST_CONF": str(conf), "TEST_REPORT": str(report),
           "KAFKA_VERSION": run.kafka_version, "TESTS": ",".join(run.tests), "LD_LIBRARY_PATH": lib, **dict(run.env)}
    if run.subtests:
        env["SUBTESTS"] = run.subtests
    with open(log, "w") as out:
        proc = subprocess.Popen([str(tests_dir / "test-runner"), "-L", "-E", "-p1"], cwd=workdir, env=env,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        if started is not None:
            started(proc)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait(10)
    return _read_outcomes(run, report, _COLOR.sub("", log.read_text(errors="replace")))


def run(workdir: Path, bootstrap: str | None = None, cache_dir: Path = runner.DEFAULT_CACHE,
        runs: tuple[Run, ...] = RUNS, nice: int = 0, started=None, env=None) -> runner.RunResult:
    """Builds (or finds) the test-runner and runs ``runs`` against ``bootstrap`` or a kafka-shim of its
    own. ``nice`` is the build's niceness; ``started(proc)`` is told of each build step and test-runner;
    ``env`` is the environment of every process started (default: this process's)."""
    from compat.share_support import enable_share_groups

    tests_dir, build_seconds = build(cache_dir, runs, nice, started, env)
    outcomes: dict[str, dict] = {}
    with contextlib.ExitStack() as stack:
        broker_text = f"the broker at {bootstrap}"
        if bootstrap is None:
            (workdir / "data").mkdir(exist_ok=True)
            broker = stack.enter_context(runner.BrokerProcess(workdir / "data", workdir / "broker.log", BROKER_ARGS,
                                                              env=env))
            bootstrap, broker_text = broker.bootstrap_servers, "kafka-shim serve " + " ".join(BROKER_ARGS)
            enable_share_groups(bootstrap)
        began = time.monotonic()
        for r in runs:
            outcomes.update(run_tests(tests_dir, r, bootstrap.split(",")[0], workdir, started=started, env=env))
        seconds = time.monotonic() - began
    client = f"librdkafka {VERSION} test-runner (built in {build_seconds:.0f} s)" if build_seconds else \
        f"librdkafka {VERSION} test-runner (cached build)"
    return runner.RunResult(outcomes, seconds, 0, workdir, tests_dir, client, broker_text, VERSION)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m compat.peers.librdkafka", description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap", metavar="HOST:PORT", help="run against this broker (no comparison)")
    parser.add_argument("--keep", type=Path, help="run in this directory and keep its logs and reports")
    parser.add_argument("--update", action="store_true", help=f"rewrite {EXPECTED_FILE.name} from this run")
    parser.add_argument("--tests", help="only these RUN/NUMBER entries, comma-separated (e.g. share/0171)")
    args = parser.parse_args(argv)
    runs = RUNS
    if args.tests:
        want = [t.split("/", 1) for t in args.tests.split(",")]
        runs = tuple(dataclasses.replace(r, tests=tuple(n for k, n in want if k == r.name)) for r in RUNS
                     if any(k == r.name for k, _ in want))
    with contextlib.ExitStack() as stack:
        workdir = args.keep or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="librdkafka-suite-")))
        workdir.mkdir(parents=True, exist_ok=True)
        result = run(workdir, args.bootstrap, runs=runs)
        expected = runner.load_expected(EXPECTED_FILE) if EXPECTED_FILE.exists() and not args.bootstrap else None
        print(runner.report(result, expected))
        if expected is None:
            return 0
        if args.update:
            expected = runner.rewrite_expected(EXPECTED_FILE, expected, result.outcomes, HEADER)
        return runner.verdict(expected, result.outcomes)


if __name__ == "__main__":
    sys.exit(main())
