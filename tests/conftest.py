"""Fixtures shared by the broker unit tests: partition logs and nodes on a temporary directory.

Nothing here opens a socket; the tests drive shim.storage and shim.apis directly.
"""

from __future__ import annotations

import os

import pytest

from shim.config import BrokerConfig
from shim.node import Node
from shim.storage.partition_log import LogConfig, PartitionLog


class LogOpener:
    """Opens PartitionLogs over one directory and closes whatever a test left open.

    ``close(plog)`` is a clean shutdown (index files and producer snapshot written);
    ``crash(plog)`` only releases the file descriptors, as a SIGKILL would.
    """

    def __init__(self, directory) -> None:
        self.directory = directory
        self._open: list[PartitionLog] = []

    def __call__(self, config: LogConfig | None = None, *, clean: bool = True) -> PartitionLog:
        plog = PartitionLog(self.directory, "t", 0, config or LogConfig(), clean=clean)
        self._open.append(plog)
        return plog

    def close(self, plog: PartitionLog) -> None:
        self._open.remove(plog)
        plog.close()

    def crash(self, plog: PartitionLog) -> None:
        self._open.remove(plog)
        for seg in plog.segments:
            os.close(seg.fileno())  # no clean-up of any kind: space reserved past the end stays too
            seg._fd = -1

    def close_all(self) -> None:
        for plog in list(self._open):
            self.close(plog)


@pytest.fixture
def open_log(tmp_path):
    """Factory: ``open_log(LogConfig(...), clean=True)`` -> PartitionLog in ``tmp_path/t-0``."""
    opener = LogOpener(tmp_path / "t-0")
    yield opener
    opener.close_all()


@pytest.fixture
def node(tmp_path):
    """A broker node (logs, producer ids, config) without a server, over a fresh data directory."""
    # group.initial.rebalance.delay.ms=0 instead of Kafka's 3000: tests that exercise the delay set it
    n = Node(BrokerConfig(data_dir=tmp_path / "data", group_initial_rebalance_delay_ms=0))
    yield n
    n.close()
