"""Fixtures of the transaction tests: nodes (a broker without sockets) over a temporary directory."""

from __future__ import annotations

import pytest

from shim.node import Node
from txn_helpers import TOPIC, crash, make_node


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
        factory.crash(node)  # releases the files; a clean close fsyncs every partition, which is slow


@pytest.fixture
def txn_node(nodes):
    """A node with topic ``t`` of two partitions."""
    node = nodes()
    node.logs.create_topic(TOPIC, 2)
    return node


