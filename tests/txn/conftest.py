"""Fixtures of the transaction tests: nodes (a broker without sockets) over a temporary directory."""

from __future__ import annotations

import pytest

from txn_helpers import TOPIC
from node_support import NodeFactory


@pytest.fixture
def nodes(tmp_path):
    """Factory of nodes over one data directory: ``nodes()``, ``nodes.crash(n)``, ``nodes.close(n)``."""
    factory = NodeFactory(tmp_path / "data")
    yield factory
    factory.crash_all()  # releases the files; a clean close is not needed


@pytest.fixture
def txn_node(nodes):
    """A node with topic ``t`` of two partitions."""
    node = nodes()
    node.logs.create_topic(TOPIC, 2)
    return node


