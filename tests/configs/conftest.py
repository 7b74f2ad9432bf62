"""Fixtures shared by the config tests."""

from __future__ import annotations

import pytest

from shim.config import BrokerConfig
from shim.configs.properties import config_from_properties
from shim.node import Node


@pytest.fixture
def node_of(tmp_path):
    """Opens a Node from broker properties (Kafka's names) over one data directory; closes them all after."""
    opened = []

    def make(**props):
        n = Node(config_from_properties(props, BrokerConfig(data_dir=tmp_path / "data")))
        opened.append(n)
        return n
    yield make
    for n in opened:
        n.close()
