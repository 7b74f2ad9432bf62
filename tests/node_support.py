"""Nodes (a broker without sockets) for the coordinator tests, opened and dropped as a test needs."""

from __future__ import annotations

from shim.config import BrokerConfig
from shim.node import Node


def crash(node: Node) -> None:
    """Drop a node as kill -9 would: file descriptors released, nothing flushed or snapshotted,
    no clean-shutdown marker."""
    for plog in node.logs.logs.values():
        for seg in plog.segments:
            seg.close()


class NodeFactory:
    """``factory(**overrides)`` opens a node over one data directory; ``crash``/``close`` drop it."""

    def __init__(self, data_dir, **defaults) -> None:
        self.data_dir = data_dir
        # group.initial.rebalance.delay.ms=0 instead of Kafka's 3000, for fast tests
        self.defaults = {"group_initial_rebalance_delay_ms": 0, **defaults}
        self.open: list[Node] = []

    def __call__(self, **overrides) -> Node:
        node = Node(BrokerConfig(data_dir=self.data_dir, **{**self.defaults, **overrides}))
        self.open.append(node)
        return node

    def crash(self, node: Node) -> None:
        self.open.remove(node)
        crash(node)

    def close(self, node: Node) -> None:
        self.open.remove(node)
        node.close()

    def crash_all(self) -> None:
        for node in list(self.open):
            self.crash(node)
