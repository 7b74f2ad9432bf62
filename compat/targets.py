"""Which broker the compat scenarios run against.

* default: a fresh in-process kafka-shim per test module (``shim.BrokerThread`` on a free port,
  transaction timeouts checked every 200 ms so the timeout scenario takes seconds, not minutes);
* ``--kafka-bootstrap HOST:PORT`` or ``KAFKA_SHIM_TARGET=HOST:PORT``: an external broker, e.g. the
  Apache Kafka of docker-compose.yml (``localhost:19092``) — topic names and transactional ids
  get a random prefix per run so a long-lived broker can be reused;
* ``--kafka-bootstrap testcontainers`` or ``KAFKA_SHIM_TARGET=testcontainers``: an
  ``apache/kafka:3.9.1`` container started with testcontainers (skipped when no Docker engine
  answers).

Every scenario must hold on Apache Kafka as well: that is what the external targets check.
"""

from __future__ import annotations

import contextlib
import os
import socket
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from .support import recv_exactly

KAFKA_IMAGE = "apache/kafka:3.9.1"
ENV = "KAFKA_SHIM_TARGET"
VERSION_ENV = "KAFKA_SHIM_KAFKA_VERSION"
BROKERS_ENV = "KAFKA_SHIM_BROKERS"


@dataclass
class Target:
    kind: str                    # "kafka-shim", "external" or "testcontainers"
    bootstrap_servers: str
    description: str
    prefix: str = field(default_factory=lambda: "c" + uuid.uuid4().hex[:8])
    broker: object | None = None  # the BrokerThread when kind == "kafka-shim"

    @property
    def is_shim(self) -> bool:
        return self.kind == "kafka-shim"


def requested(config) -> str:
    """'shim', 'testcontainers' or a bootstrap address, from the pytest option or the env var."""
    value = config.getoption("kafka_bootstrap", default=None) or os.environ.get(ENV) or "shim"
    return value.strip()


def shim_version(config) -> str | None:
    """The Kafka release the in-process kafka-shim emulates, from the option or the env var."""
    value = config.getoption("shim_kafka_version", default=None) or os.environ.get(VERSION_ENV)
    return value.strip() if value else None


def shim_brokers(config) -> int:
    """How many brokers the in-process kafka-shim simulates, from the option or the env var."""
    value = config.getoption("shim_brokers", default=None) or os.environ.get(BROKERS_ENV)
    return int(value) if value else 1


@contextlib.contextmanager
def shim_target(data_dir: Path, kafka_version: str | None = None, brokers: int = 1):
    from shim import BrokerThread

    emulation = {"kafka_version": kafka_version} if kafka_version else {}
    if brokers != 1:
        emulation["brokers"] = brokers
    # group.initial.rebalance.delay.ms=0 instead of Kafka's 3000, as the Apache Kafka targets set it:
    # the first rebalance of each test's group need not wait.
    with BrokerThread(data_dir=data_dir, listen="127.0.0.1:0", transaction_abort_check_interval_ms=200,
                      group_initial_rebalance_delay_ms=0, **emulation) as broker:
        label = f"kafka-shim (in-process, Kafka {broker.broker.config.kafka_version} emulation" + (
            f", {brokers} brokers)" if brokers != 1 else ")")
        yield Target("kafka-shim", broker.bootstrap_servers, label, broker=broker)


class NoDockerEngine(Exception):
    pass


def docker_engine_problem() -> str | None:
    """None when a Docker engine answers, else why not."""
    try:
        import docker
    except ImportError:
        return "the docker Python package is missing (pip install testcontainers)"
    try:
        client = docker.from_env(timeout=5)
        client.ping()
        client.close()
    except Exception as exc:  # docker raises several unrelated types for "no engine"
        return f"no Docker engine reachable ({type(exc).__name__}: {str(exc)[:160]})"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def apache_kafka_container(image: str = KAFKA_IMAGE, startup_timeout: float = 120):
    """A single-node KRaft Apache Kafka in Docker, configured like docker-compose.yml's ``kafka``."""
    problem = docker_engine_problem()
    if problem:
        raise NoDockerEngine(problem)
    from testcontainers.core.container import DockerContainer
    from testcontainers.core.wait_strategies import LogMessageWaitStrategy

    port = _free_port()
    container = (
        DockerContainer(image)
        .with_bind_ports(port, port)
        .with_env("KAFKA_NODE_ID", "1")
        .with_env("KAFKA_PROCESS_ROLES", "broker,controller")
        .with_env("KAFKA_LISTENERS", f"PLAINTEXT://0.0.0.0:{port},CONTROLLER://0.0.0.0:9093")
        .with_env("KAFKA_ADVERTISED_LISTENERS", f"PLAINTEXT://127.0.0.1:{port}")
        .with_env("KAFKA_LISTENER_SECURITY_PROTOCOL_MAP", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT")
        .with_env("KAFKA_CONTROLLER_LISTENER_NAMES", "CONTROLLER")
        .with_env("KAFKA_CONTROLLER_QUORUM_VOTERS", "1@localhost:9093")
        .with_env("KAFKA_INTER_BROKER_LISTENER_NAME", "PLAINTEXT")
        .with_env("KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR", "1")
        .with_env("KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR", "1")
        .with_env("KAFKA_TRANSACTION_STATE_LOG_MIN_ISR", "1")
        .with_env("KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS", "0")
        .with_env("KAFKA_TRANSACTION_ABORT_TIMED_OUT_TRANSACTION_CLEANUP_INTERVAL_MS", "200")
        .waiting_for(LogMessageWaitStrategy("Kafka Server started").with_startup_timeout(startup_timeout))
    )
    with container:
        yield Target("testcontainers", f"127.0.0.1:{port}", f"{image} (testcontainers)")


def finalized_features(bootstrap_servers: str) -> dict[str, int]:
    """The features the broker finalizes (ApiVersions v3), e.g. {"transaction.version": 2} for
    Kafka 4.x: what decides whether a 4.x client uses transaction version 2."""
    return {f.name: f.max_version_level for f in _api_versions(bootstrap_servers).finalized_features}


def max_api_version(bootstrap_servers: str, api_key: int) -> int:
    """The highest version of ``api_key`` the broker serves (-1: none)."""
    return max((k.max_version for k in _api_versions(bootstrap_servers).api_keys if k.api_key == api_key), default=-1)


def _api_versions(bootstrap_servers: str):
    import struct

    from shim.protocol.messages import RequestHeader, decode_response, encode_request, request_class

    host, _, port = bootstrap_servers.split(",")[0].rpartition(":")
    request = request_class(18, 3)(client_software_name="kafka-shim-compat", client_software_version="1")
    frame = encode_request(RequestHeader(18, 3, 1, "compat"), request)
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(struct.pack(">i", len(frame)) + frame)
        size = struct.unpack(">i", recv_exactly(conn, 4))[0]
        return decode_response(recv_exactly(conn, size), 18, 3)[1]
