"""Fixtures of the group coordinator tests: nodes (a broker without sockets) over a temporary directory."""

from __future__ import annotations

import pytest

from group_helpers import TOPIC
from node_support import NodeFactory


@pytest.fixture
def nodes(tmp_path):
    """Factory of nodes over one data directory: ``nodes()``, ``nodes.crash(n)``, ``nodes.close(n)``."""
    factory = NodeFactory(tmp_path / "data", offsets_topic_num_partitions=4, transaction_state_num_partitions=4)
    yield factory
    factory.crash_all()  # releases the files; a clean close is not needed


@pytest.fixture
def node(nodes):
    """A node with topic ``t`` of six partitions."""
    n = nodes()
    n.logs.create_topic(TOPIC, 6)
    return n


@pytest.fixture
def gc(node):
    """The node's group coordinator, driven with the fake clock of group_helpers."""
    return node.groups
