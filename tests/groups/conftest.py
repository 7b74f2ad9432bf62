"""Fixtures of the group coordinator tests: nodes (a broker without sockets) over a temporary directory."""

from __future__ import annotations

import pytest

from group_helpers import TOPIC, crash, make_node
from shim.node import Node


class NodeFactory:
    def __init__(self, data_dir) -> None:
        self.data_dir = data_dir
        self.open: list[Node] = []

    def __call__(self, **overrides) -> Node:
        node = make_node(self.data_dir, **overrides)
        self.open.append(node)
        return node

    def crash(self, node: Node) -> None:
        self.open.remove(node)
        crash(node)

    def close(self, node: Node) -> None:
        self.open.remove(node)
        node.close()


@pytest.fixture
def nodes(tmp_path):
    """Factory of nodes over one data directory: ``nodes()``, ``nodes.crash(n)``, ``nodes.close(n)``."""
    factory = NodeFactory(tmp_path / "data")
    yield factory
    for node in list(factory.open):
        factory.crash(node)


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
