"""Run a client library's own pytest suite, unchanged, against a broker; compare with a committed list.

The pieces, in the order a run uses them:

* ``cached_sdist``: ``pip download --no-binary :all: --no-deps NAME==VERSION`` into a cache directory
  (``.pytest_cache/d/kafka-shim-peers`` by default), once;
* ``unpack``: the suite's files out of the sdist into a fresh directory, plus any file the sdist
  lacks but the suite imports (``Suite.supplied``; a file the sdist does ship is never replaced);
* ``BrokerProcess``: ``kafka-shim serve`` on a free port over a fresh data directory;
* ``run_pytest``: the suite in a pytest subprocess of this interpreter, with a JUnit XML report;
* ``read_junit``: one outcome per test id: pass, fail, error (setup/teardown), skip (with the
  suite's own reason), xfail;
* ``compare``: every difference from the expected list (a test expected to pass that did not, a
  test not in the list, a listed test that did not run, an expected failure that now passes, a
  skip whose reason changed).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CACHE = ROOT / ".pytest_cache" / "d" / "kafka-shim-peers"
READY_PREFIX = "kafka-shim ready: bootstrap.servers="
STATUSES = ("pass", "fail", "error", "skip")
TODO = "TODO:"


class SdistUnavailable(Exception):
    """The sdist could not be downloaded (the message says why)."""


@dataclasses.dataclass(frozen=True)
class Suite:
    name: str                          # the distribution, e.g. "kafka-python"
    version: str                       # the sdist whose suite runs, e.g. "3.0.12"
    members: tuple[str, ...]           # what to extract: top-level paths inside the sdist
    paths: tuple[str, ...]             # what pytest runs, relative to the unpacked sdist
    expected_file: Path
    supplied: tuple[tuple[str, str], ...] = ()   # (path, text) of files the sdist lacks
    broker_args: tuple[str, ...] = ()            # extra `kafka-shim serve` options

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version}"


@dataclasses.dataclass
class RunResult:
    outcomes: dict[str, dict]          # test id -> {"status", "message", "seconds"}
    seconds: float                     # wall time of the pytest subprocess
    returncode: int
    workdir: Path
    suite_dir: Path                    # the unpacked sdist the suite ran in
    client: str = ""
    broker: str = ""
    kafka_version: str = ""            # the suite's KAFKA_VERSION

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for o in self.outcomes.values():
            out[o["status"]] = out.get(o["status"], 0) + 1
        return out


# -- the sdist -----------------------------------------------------------------------------------


def cached_sdist(suite: Suite, cache_dir: Path = DEFAULT_CACHE) -> Path:
    """The sdist's path, downloaded with pip into ``cache_dir`` unless it is already there."""
    def normal(name: str) -> str:
        return re.sub(r"[-_.]+", "_", name).lower()

    tail = f"-{suite.version}.tar.gz"
    cache_dir.mkdir(parents=True, exist_ok=True)
    found = [p for p in cache_dir.glob("*" + tail) if normal(p.name[: -len(tail)]) == normal(suite.name)]
    if found:
        return found[0]
    staging = cache_dir / f".download-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-binary", ":all:", "--no-deps",
           suite.requirement, "-d", str(staging)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SdistUnavailable(f"`{' '.join(cmd[2:])}` did not finish: {exc}") from None
    got = list(staging.glob("*.tar.gz"))
    if proc.returncode != 0 or len(got) != 1:
        shutil.rmtree(staging, ignore_errors=True)
        tail = " ".join((proc.stderr or proc.stdout).split())[-400:]
        raise SdistUnavailable(f"`{' '.join(cmd[2:-2])}` failed ({proc.returncode}): {tail}")
    target = cache_dir / got[0].name
    os.replace(got[0], target)
    shutil.rmtree(staging, ignore_errors=True)
    return target


def unpack(sdist: Path, dest: Path, members: tuple[str, ...], supplied=()) -> Path:
    """Extracts ``members`` of the sdist under ``dest``; returns the unpacked top directory."""
    with tarfile.open(sdist) as tar:
        entries = tar.getmembers()
        top = entries[0].name.split("/", 1)[0]

        def wanted(name: str) -> bool:
            rel = name[len(top) + 1:] if name.startswith(top + "/") else ""
            return any(rel == m.rstrip("/") or rel.startswith(m.rstrip("/") + "/") for m in members)

        tar.extractall(dest, members=[e for e in entries if wanted(e.name)], filter="data")
    root = dest / top
    for rel, text in supplied:
        path = root / rel
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    return root


# -- the broker ----------------------------------------------------------------------------------


class BrokerProcess:
    """``kafka-shim serve`` on a free port over ``data_dir``; its log goes to ``log_path``; ``env``: its
    environment (default: this process's)."""

    def __init__(self, data_dir: Path, log_path: Path, args=(), env=None) -> None:
        script = Path(sys.executable).parent / "kafka-shim"
        cmd = [str(script)] if script.exists() else [sys.executable, "-m", "shim"]
        # group.initial.rebalance.delay.ms=0 instead of Kafka's 3000, as the other test brokers: the
        # suites' consumer groups rebalance at once
        cmd += ["serve", "--listen", "127.0.0.1:0", "--data-dir", str(data_dir),
                "--override", "group.initial.rebalance.delay.ms=0", *args]
        self.log_path = log_path
        self._log = open(log_path, "w")
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self._log, text=True, cwd=ROOT, env=env)
        self.bootstrap_servers = ""

    def wait_ready(self, timeout: float = 30.0) -> str:
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        try:
            while not self.bootstrap_servers:
                if not sel.select(max(0.0, deadline - time.monotonic())):
                    raise RuntimeError(f"kafka-shim serve printed no ready line within {timeout:.0f}s "
                                       f"(log: {self.log_path})")
                line = self.proc.stdout.readline()
                if not line:
                    raise RuntimeError(f"kafka-shim serve exited ({self.proc.wait()}) before it was ready "
                                       f"(log: {self.log_path})")
                if line.startswith(READY_PREFIX):
                    self.bootstrap_servers = line[len(READY_PREFIX):].split()[0]
        finally:
            sel.close()
        return self.bootstrap_servers

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.proc.stdout.close()
        self._log.close()
        return self.proc.returncode

    def __enter__(self) -> "BrokerProcess":
        try:
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


# -- the suite -----------------------------------------------------------------------------------


def run_pytest(suite_dir: Path, paths, env: dict, junit: Path, log: Path, timeout: float = 900,
               extra_args=(), started=None, base_env: dict | None = None) -> tuple[int, float]:
    """The suite in a pytest subprocess (this interpreter, so this venv's client); (exit code, seconds).
    ``env`` is added to ``base_env`` (default: this process's environment); a variable set to None
    there is removed. ``started(proc)`` is told of the pytest, the leader of a process group of its own."""
    base = os.environ if base_env is None else base_env
    child_env = {k: v for k, v in base.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS")}
    child_env.update(env)
    child_env = {k: v for k, v in child_env.items() if v is not None}
    cmd = [sys.executable, "-m", "pytest", *paths, "-p", "no:cacheprovider", "-p", "no:kafka_shim",
           "-p", "no:randomly", f"--junitxml={junit}", *extra_args]
    began = time.monotonic()
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, cwd=suite_dir, env=child_env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
        if started is not None:
            started(proc)
        try:
            code = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
            raise RuntimeError(f"the suite did not finish within {timeout:.0f}s (its output: {log})") from None
    return code, time.monotonic() - began


def _nodeid(suite_dir: Path, classname: str, name: str) -> str:
    """pytest's test id from JUnit's dotted classname: the longest prefix that is a file is the module."""
    parts = classname.split(".")
    for i in range(len(parts), 0, -1):
        path = "/".join(parts[:i]) + ".py"
        if (suite_dir / path).is_file():
            return "::".join([path, *parts[i:], name])
    return "::".join([classname, name])


def _one_line(text: str | None, limit: int = 300) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def read_junit(path: Path, suite_dir: Path) -> dict[str, dict]:
    """Test id -> {"status", "message", "seconds"} from pytest's JUnit XML."""
    outcomes: dict[str, dict] = {}
    for case in ET.parse(path).iter("testcase"):
        nodeid = _nodeid(suite_dir, case.get("classname", ""), case.get("name", ""))
        status, message = "pass", ""
        for child in case:
            if child.tag == "failure":
                status, message = "fail", child.get("message")
                break  # a teardown error after a failure adds nothing
            if child.tag == "error":
                status, message = "error", child.get("message")
            elif child.tag == "skipped":
                xfail = child.get("type") == "pytest.xfail"
                status, message = ("xfail" if xfail else "skip"), child.get("message")
        outcomes[nodeid] = {"status": status, "message": _skip_reason(status, message),
                            "seconds": round(float(case.get("time") or 0), 2)}
    return outcomes


def _skip_reason(status: str, message: str | None) -> str:
    text = _one_line(message, 1000)
    return re.sub(r"^(Skipped|xfail): ", "", text) if status in ("skip", "xfail") else text


# -- the expected list ---------------------------------------------------------------------------


def report(result: RunResult, expected: dict[str, dict] | None) -> str:
    """One line per test (with the expected list's reason where it has one), then the totals."""
    lines = []
    for test, got in sorted(result.outcomes.items()):
        why = got["message"]
        if expected and test in expected and expected[test]["status"] == got["status"]:
            why = expected[test].get("reason", "")
        lines.append(f"{got['status']:5} {got['seconds']:7.2f}s  {test}" + (f"  -- {why}" if why else ""))
    counts = ", ".join(f"{n} {s}" for s, n in sorted(result.counts().items()))
    lines.append(f"{result.client} against {result.broker}: {counts} in {result.seconds:.0f} s")
    return "\n".join(lines)


def load_expected(path: Path) -> dict[str, dict]:
    with open(path, "rb") as f:
        return tomllib.load(f).get("tests", {})


def check_expected(expected: dict[str, dict]) -> list[str]:
    """What is wrong with the list itself: unknown statuses, failures and skips without a reason."""
    problems = []
    for test, entry in sorted(expected.items()):
        status, reason = entry.get("status"), (entry.get("reason") or "").strip()
        if status not in STATUSES:
            problems.append(f"{test}: status {status!r} is not one of {', '.join(STATUSES)}")
        elif status != "pass" and (not reason or reason.startswith(TODO)):
            problems.append(f"{test}: a {status} needs its reason (the missing kafka-shim feature, or the "
                            f"suite's own skip reason), not {reason!r}")
    return problems


def compare(expected: dict[str, dict], actual: dict[str, dict]) -> list[str]:
    """Every difference between the expected list and a run, one line each; [] when they agree."""
    problems = []
    for test in sorted(set(expected) | set(actual)):
        want, got = expected.get(test), actual.get(test)
        if want is None:
            problems.append(f"{test}: {got['status']} but not in the expected list ({got['message'] or 'passed'})")
        elif got is None:
            problems.append(f"{test}: in the expected list ({want['status']}) but the suite did not run it")
        elif got["status"] == want["status"]:
            if want["status"] == "skip" and got["message"] != want.get("reason"):
                problems.append(f"{test}: skipped, but now because {got['message']!r}, "
                                f"the list says {want.get('reason')!r}")
        elif got["status"] == "pass":
            problems.append(f"{test}: now passes, update the list (it said {want['status']}: {want.get('reason')})")
        elif want["status"] == "pass":
            problems.append(f"{test}: expected to pass, {got['status']}: {got['message']}")
        else:
            problems.append(f"{test}: expected {want['status']} ({want.get('reason')}), "
                            f"got {got['status']}: {got['message']}")
    return problems


def updated_expected(expected: dict[str, dict], actual: dict[str, dict]) -> dict[str, dict]:
    """The list rewritten from a run: unchanged entries keep their reasons, passes and skips need none
    from us, a new failure gets a TODO that ``check_expected`` refuses until someone writes its cause."""
    out = {}
    for test, got in sorted(actual.items()):
        want = expected.get(test)
        if got["status"] == "pass":
            out[test] = {"status": "pass"}
        elif got["status"] == "skip":
            out[test] = {"status": "skip", "reason": got["message"]}
        elif want is not None and want["status"] == got["status"]:
            out[test] = dict(want)
        else:
            out[test] = {"status": got["status"], "reason": f"{TODO} find the cause of: {got['message']}"}
    return out


def rewrite_expected(path: Path, expected: dict[str, dict], actual: dict[str, dict], header: str) -> dict[str, dict]:
    """``--update``: the expected list at ``path`` rewritten from a run (``updated_expected``), read back."""
    path.write_text(render_expected(updated_expected(expected, actual), header))
    return load_expected(path)


def verdict(expected: dict[str, dict], actual: dict[str, dict]) -> int:
    """Prints what is wrong with the expected list and how a run differs from it; the exit status."""
    problems = check_expected(expected) + compare(expected, actual)
    print("\n".join(["", "differences from the expected list:", *problems]) if problems
          else "\nevery test did what the expected list says")
    return 1 if problems else 0


def render_expected(expected: dict[str, dict], header: str) -> str:
    lines = [f"# {ln}".rstrip() for ln in header.strip().splitlines()]
    for test, entry in sorted(expected.items()):
        lines += ["", f"[tests.{json.dumps(test)}]", f"status = {json.dumps(entry['status'])}"]
        if entry.get("reason"):
            lines.append(f"reason = {json.dumps(entry['reason'], ensure_ascii=False)}")
    return "\n".join(lines) + "\n"
