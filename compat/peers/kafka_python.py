"""kafka-python's own integration suite (``test/integration`` of its 3.0.12 sdist) against kafka-shim.

    .venv/bin/python -m compat.peers.kafka_python                 # a kafka-shim of its own; compare
    .venv/bin/python -m compat.peers.kafka_python --bootstrap HOST:PORT   # another broker; no comparison
    .venv/bin/python -m compat.peers.kafka_python --update        # rewrite kafka_python_expected.toml

What the suite needs from its environment, read from its conftest and fixtures:

* ``KAFKA_VERSION``: without it every integration test skips ("No KAFKA_VERSION set"); it also picks
  the version gates and the ``api_version`` every client is built with. kafka-shim follows Apache
  Kafka 3.9 by default, so 3.9.0; ``--kafka-version 4.0`` (or 4.1, 3.8, 3.7) runs the suite with
  KAFKA_VERSION 4.0.0 against a kafka-shim emulating that release (``kafka-shim serve
  --kafka-version``), whose results are kept in ``kafka_python_expected-4.0.toml``.
* ``KAFKA_URI=PLAINTEXT://host:port``: use that broker instead of starting Apache Kafka.
* ``KAFKA_ROOT``: an existing directory, even for an external broker (the fixtures check that their
  Kafka distribution is there before they look at ``KAFKA_URI``); an empty one here.
* The broker its fixtures would start: four partitions per topic, ``group.min.session.timeout.ms``
  1000 (its consumer-group test joins with three-second sessions), no initial rebalance delay
  (kafka-shim's default already), and an authorizer with ``allow.everyone.if.no.acl.found=true``.
* Two files of kafka-python's repository that the sdist leaves out (its manifest ships
  ``test/test*.py`` and the ``test.integration``/``test.net`` packages only): ``test/__init__.py``,
  without which Python's own ``test`` package shadows the suite's, and ``test/service.py``, which the
  fixtures import for ``ExternalService``. ``SUPPLIED`` below writes them when the sdist lacks them.

The client under test is the kafka-python installed in this venv when it is the sdist's version;
otherwise the sdist's own ``kafka`` package is unpacked beside ``test/`` and used instead.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import importlib.metadata
import json
import os
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from compat.peers import kafka_dist, runner  # noqa: E402

HERE = Path(__file__).resolve().parent
KAFKA_VERSION = "3.9.0"
RELEASES = ("3.9", "4.0", "4.1")  # the releases with an expected list
# the runs compat/peers/test_kafka_python_suite.py makes by default: the first and the last release (4.0's
# version gates are 4.1's less the share-group ones); KAFKA_SHIM_KAFKA_PYTHON_RELEASES=3.9,4.0,4.1 runs all
TEST_RELEASES = tuple(r for r in os.environ.get("KAFKA_SHIM_KAFKA_PYTHON_RELEASES", "3.9,4.1").split(",") if r)
# the tests whose fixtures start a broker of their own, always (SSL) or unless KAFKA_URI is set (SASL,
# which then skip): run a second time without KAFKA_URI, over compat/peers/kafka_dist.py's KAFKA_ROOT
OWN_BROKER = ("test/integration/test_sasl_integration.py", "test/integration/test_ssl_integration.py")

SUPPLIED_INIT = '''\
# Written by kafka-shim's compat/peers runner: kafka-python's repository has a test/__init__.py that
# its sdist leaves out. Without one, Python's own `test` package shadows the suite's. It sets what the
# repository's sets for every test run: INFO logging, and a failing Future callback fails the test.
import logging

logging.basicConfig(level=logging.INFO)

from kafka.future import Future

Future.error_on_callbacks = True
'''

SUPPLIED_SERVICE = '''\
# Written by kafka-shim's compat/peers runner: kafka-python's sdist leaves out test/service.py, which
# test/integration/fixtures.py imports. An ExternalService is what the fixtures use for KAFKA_URI; a
# SpawnedService runs a command of $KAFKA_ROOT/bin (compat/peers/kafka_dist.py's, which serve
# kafka-shim) and waits for lines of its output.
import logging
import re
import subprocess
import threading
import time

log = logging.getLogger(__name__)


class ExternalService:
    def __init__(self, host, port):
        self.host = host
        self.port = port

    def open(self):
        pass

    def close(self):
        pass

    def dump_logs(self):
        pass

    def wait_for(self, pattern, timeout=30):
        pass


class SpawnedService:
    def __init__(self, args=None, env=None):
        self.args, self.env = [str(a) for a in args], env
        self.proc = None
        self.lines = []
        self.ended = False
        self._cond = threading.Condition()

    def start(self):
        self.proc = subprocess.Popen(self.args, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            with self._cond:
                self.lines.append(line.rstrip("\\n"))
                self._cond.notify_all()
        with self._cond:
            self.ended = True
            self._cond.notify_all()

    def wait_for(self, pattern, timeout=30):
        regex, deadline = re.compile(pattern), time.monotonic() + timeout
        with self._cond:
            while not any(regex.search(line) for line in self.lines):
                left = deadline - time.monotonic()
                if self.ended or left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

    def dump_logs(self):
        with self._cond:
            for line in self.lines:
                log.info("%s: %s", self.args[-2:], line)
'''

SUITE = runner.Suite(
    name="kafka-python",
    version="3.0.12",
    members=("test", "pyproject.toml"),  # pyproject.toml: the suite's pytest options (timeout, logging)
    paths=("test/integration",),
    expected_file=HERE / "kafka_python_expected.toml",
    supplied=(("test/__init__.py", SUPPLIED_INIT), ("test/service.py", SUPPLIED_SERVICE),
              *kafka_dist.TEMPLATES.items()),
    # the ACL settings of the suite's own broker (fixtures.py, _acl_config), with KRaft's authorizer
    broker_args=("--num-partitions", "4", "--group-min-session-timeout-ms", "1000",
                 "--override", "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                 "--override", "allow.everyone.if.no.acl.found=true"),
)

HEADER = f"""\
What kafka-python {SUITE.version}'s own integration suite (test/integration of its sdist, unchanged) does
against kafka-shim. compat/peers/test_kafka_python_suite.py runs it and fails on any difference.

status: pass | fail | error (in setup or teardown) | skip.
A fail or error says what kafka-shim lacks (or what else stops the test); a skip is the suite's
own decision and carries its own reason, word for word.
Regenerate with `python -m compat.peers.kafka_python --update`: entries whose status did not change
keep their reasons; a new failure gets a TODO the test refuses until its cause is written down.
"""


def release_of(kafka_version: str) -> str:
    """"4.0.0" or "4.0" -> "4.0": the release kafka-shim emulates for a KAFKA_VERSION."""
    return ".".join(kafka_version.split(".")[:2])


def suite_version(kafka_version: str) -> str:
    """"4.0" -> "4.0.0": the KAFKA_VERSION the suite's version gates compare."""
    parts = kafka_version.split(".")
    return ".".join(parts + ["0"] * (3 - len(parts)))


def expected_file(kafka_version: str = KAFKA_VERSION) -> Path:
    """The expected results of a run with ``kafka_version``: 3.9's in SUITE.expected_file."""
    release = release_of(kafka_version)
    if release == release_of(KAFKA_VERSION):
        return SUITE.expected_file
    return SUITE.expected_file.with_name(f"{SUITE.expected_file.stem}-{release}.toml")


def header(kafka_version: str) -> str:
    release = release_of(kafka_version)
    if release == release_of(KAFKA_VERSION):
        return HEADER
    return (HEADER.replace("does\nagainst kafka-shim.",
                           f"does\nagainst kafka-shim --kafka-version {release} (KAFKA_VERSION={suite_version(kafka_version)}).")
            .replace("kafka_python --update", f"kafka_python --kafka-version {release} --update"))


def installed_version() -> str | None:
    try:
        return importlib.metadata.version("kafka-python")
    except importlib.metadata.PackageNotFoundError:
        return None


def run(workdir: Path, bootstrap: str | None = None, kafka_version: str = KAFKA_VERSION,
        cache_dir: Path = runner.DEFAULT_CACHE, started=None, env: dict | None = None) -> runner.RunResult:
    """Runs the suite in ``workdir`` against ``bootstrap``, or a kafka-shim started for it.
    ``started(proc)`` is told of each pytest it starts (see runner.run_pytest); ``env`` is the
    environment of its processes (default: this process's)."""
    kafka_version = suite_version(kafka_version)
    installed = installed_version()
    own = installed == SUITE.version
    members = SUITE.members if own else SUITE.members + ("kafka",)
    suite_dir = runner.unpack(runner.cached_sdist(SUITE, cache_dir), workdir, members, SUITE.supplied)
    kafka_root = workdir / "kafka-root"
    kafka_root.mkdir(exist_ok=True)
    junit, log = workdir / "junit.xml", workdir / "pytest.log"
    began = time.monotonic()
    with contextlib.ExitStack() as stack:
        broker, own_run = None, None
        ignore = []
        if bootstrap is None:
            # OWN_BROKER's tests start brokers of their own, on ports of their own: they run beside
            # the rest (about 40 s, mostly keytool's JVMs and broker starts, that would otherwise follow
            # the rest's 20 s)
            pool = stack.enter_context(concurrent.futures.ThreadPoolExecutor(1, "kafka-python-own-broker"))
            own_run = pool.submit(_run_own_brokers, workdir, suite_dir, kafka_version, started, env)
            (workdir / "data").mkdir(exist_ok=True)
            broker = stack.enter_context(runner.BrokerProcess(workdir / "data", workdir / "broker.log",
                                                              broker_args(kafka_version), env=env))
            bootstrap = broker.bootstrap_servers
            ignore = [f"--ignore={p}" for p in OWN_BROKER]
        suite_env = {"KAFKA_VERSION": kafka_version, "KAFKA_URI": f"PLAINTEXT://{bootstrap}",
                     "KAFKA_ROOT": str(kafka_root)}
        code, seconds = runner.run_pytest(suite_dir, SUITE.paths, suite_env, junit, log, extra_args=ignore,
                                          started=started, base_env=env)
        broker_text = _broker_text(broker, bootstrap, kafka_version)
        outcomes = runner.read_junit(junit, suite_dir) if junit.exists() else {}
        if own_run is not None:
            own_code, own = own_run.result()
            code, seconds = max(code, own_code), time.monotonic() - began
            outcomes.update(own)
    if code not in (0, 1) or not junit.exists():
        raise RuntimeError(f"the suite's pytest exited {code} without a report of its tests; its output: {log}")
    client = (f"kafka-python {installed} (installed)" if own
              else f"kafka-python {SUITE.version} from its sdist (installed: {installed or 'none'})")
    return runner.RunResult(outcomes, seconds, code, workdir, suite_dir, client,
                            f"{broker_text}, KAFKA_VERSION={kafka_version}", kafka_version)


def _run_own_brokers(workdir: Path, suite_dir: Path, kafka_version: str, started=None,
                     base_env: dict | None = None) -> tuple[int, dict]:
    """OWN_BROKER's tests, their fixtures starting kafka-shim through kafka_dist's KAFKA_ROOT."""
    root = kafka_dist.make_root(workdir / "kafka-dist")
    junit, log = workdir / "junit-own-broker.xml", workdir / "pytest-own-broker.log"
    env = {"KAFKA_VERSION": kafka_version, "KAFKA_URI": None, "KAFKA_ROOT": str(root)}
    code, _ = runner.run_pytest(suite_dir, OWN_BROKER, env, junit, log, started=started, base_env=base_env)
    if code not in (0, 1) or not junit.exists():
        raise RuntimeError(f"the suite's pytest exited {code} without a report of its tests; its output: {log}")
    return code, runner.read_junit(junit, suite_dir)


class Background:
    """The runs of ``releases``, side by side on threads of their own: compat/peers/conftest.py starts
    them when the session's tests are collected and they are among them, and the suite's fixture waits
    for their results. Each run is a pytest and about a dozen brokers, keytool JVMs and helper
    processes of its own: about 40 s of two cores' CPU together, which beside the tests before the
    suite's comes from the CPU those leave (their clients' waits) rather than after them."""

    def __init__(self, workdir_for, cache_dir: Path, releases: tuple[str, ...]) -> None:
        self.workdir_for, self.cache_dir = workdir_for, cache_dir  # workdir_for(release) -> a new directory
        # the environment as it is now: the tests running meanwhile may set variables for a moment
        self.env = dict(os.environ)
        self.futures = {r: concurrent.futures.Future() for r in releases}
        self._procs: list = []
        self._cancelled = False
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._run, args=(r,), name=f"kafka-python-suite-{r}", daemon=True)
                         for r in releases]

    def start(self) -> "Background":
        self._starter = threading.Thread(target=self._start_runs, name="kafka-python-suite", daemon=True)
        self._starter.start()
        return self

    def _start_runs(self) -> None:
        try:
            runner.cached_sdist(SUITE, self.cache_dir)  # once (a download from a fresh clone), before the runs
        except BaseException as exc:  # noqa: BLE001 - SdistUnavailable above all: the fixture skips
            for future in self.futures.values():
                future.set_exception(exc)
            return
        with self._lock:
            if self._cancelled:
                for future in self.futures.values():
                    future.cancel()
                return
            for thread in self._threads:
                thread.start()

    def _started(self, proc) -> None:
        with self._lock:
            self._procs.append(proc)
            if self._cancelled:  # every pytest started after cancel() is killed at once
                os.killpg(proc.pid, signal.SIGKILL)

    def _run(self, release: str) -> None:
        try:
            self.futures[release].set_result(run(self.workdir_for(release), kafka_version=release,
                                                 cache_dir=self.cache_dir, started=self._started, env=self.env))
        except BaseException as exc:  # noqa: BLE001 - handed to whoever waits for the result
            self.futures[release].set_exception(exc)

    def cancel(self) -> None:
        """Stops runs still going (the session ended first): their pytests and the brokers those
        started are killed; each run's own broker stops as run() returns."""
        with self._lock:
            self._cancelled = True
            for proc in self._procs:
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGKILL)
        self._starter.join(30)
        for thread in self._threads:
            if thread.is_alive():
                thread.join(30)


def broker_args(kafka_version: str) -> tuple[str, ...]:
    """SUITE.broker_args with the release the suite's KAFKA_VERSION names. The fixtures' KRaft
    broker (4.0 on) sets advertised.listeners in its properties, and the suite checks that
    DescribeConfigs calls it STATIC_BROKER_CONFIG; their 3.x broker leaves it to its default."""
    release = release_of(kafka_version)
    static = ("--override", "advertised.listeners=PLAINTEXT://127.0.0.1:0") if release >= "4.0" else ()
    return (*SUITE.broker_args, "--kafka-version", release, *static)


def _broker_text(broker: runner.BrokerProcess | None, bootstrap: str, kafka_version: str) -> str:
    if broker is None:
        return f"the broker at {bootstrap}"
    text = "kafka-shim serve " + " ".join(broker_args(kafka_version))
    if broker.proc.poll() is not None:  # it should still be serving: the runner stops it
        text += f" (which exited with {broker.proc.returncode} during the suite; its log: {broker.log_path})"
    return text


def matrix_section(result: runner.RunResult, expected: dict[str, dict] | None) -> dict:
    """The run as compat/matrix.py records it: per test, its status and why (the expected list's
    reason when the status is the expected one, else what the suite said)."""
    tests = []
    for test, got in sorted(result.outcomes.items()):
        want = (expected or {}).get(test)
        if want is not None and want["status"] == got["status"]:
            why = want.get("reason", "")
        else:
            why = got["message"] + (f" (the expected list says {want['status']})" if want else "")
        tests.append({"test": test, "status": got["status"], "reason": why})
    return {"title": f"kafka-python {SUITE.version} test/integration", "client": result.client,
            "broker": result.broker, "seconds": round(result.seconds, 1), "counts": result.counts(),
            "expected_file": str(SUITE.expected_file.relative_to(runner.ROOT)) if expected is not None else "",
            "differences": runner.compare(expected, result.outcomes) if expected is not None else [],
            "tests": tests}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m compat.peers.kafka_python", description=__doc__.split("\n\n")[0])
    target = os.environ.get("KAFKA_SHIM_TARGET", "")
    parser.add_argument("--bootstrap", metavar="HOST:PORT",
                        default=target if target not in ("", "shim", "testcontainers") else None,
                        help="run against this broker (default: a kafka-shim serve of its own; also $KAFKA_SHIM_TARGET)")
    parser.add_argument("--kafka-version", default=KAFKA_VERSION,
                        help=f"KAFKA_VERSION for the suite (its version gates and clients' api_version) and the "
                             f"release kafka-shim emulates: 3.9, 4.0, 4.1, ... (default {KAFKA_VERSION})")
    parser.add_argument("--update", action="store_true", help=f"rewrite {SUITE.expected_file.name} from this run")
    parser.add_argument("--keep", metavar="DIR", type=Path, help="run in DIR and keep it (logs, JUnit XML, data)")
    parser.add_argument("--json", metavar="PATH", type=Path, help="write the outcomes as JSON")
    args = parser.parse_args(argv)
    if args.update and args.bootstrap:
        parser.error("--update records kafka-shim's results; it cannot be combined with --bootstrap")
    with contextlib.ExitStack() as stack:
        workdir = args.keep or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="kafka-python-suite-")))
        workdir.mkdir(parents=True, exist_ok=True)
        result = run(workdir, args.bootstrap, args.kafka_version)
    return _conclude(args, result)


def _conclude(args, result: runner.RunResult) -> int:
    path = expected_file(args.kafka_version)
    expected = (runner.load_expected(path) if path.exists() else {}) if not args.bootstrap else None
    print(runner.report(result, expected))
    if args.json:
        args.json.write_text(json.dumps({"client": result.client, "broker": result.broker,
                                         "seconds": round(result.seconds, 1), "tests": result.outcomes}, indent=1) + "\n")
    if expected is None:
        return 0
    if args.update:
        expected = runner.rewrite_expected(path, expected, result.outcomes, header(args.kafka_version))
        print(f"wrote {path.relative_to(runner.ROOT)}")
    return runner.verdict(expected, result.outcomes)


if __name__ == "__main__":
    sys.exit(main())
