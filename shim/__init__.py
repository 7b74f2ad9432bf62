"""kafka-shim: a Kafka-compatible broker over a durable local log.

The public names are imported on first use, so that ``kafka-shim serve`` can start without
loading what it does not need (see shim.cli).
"""

from __future__ import annotations

import importlib

__all__ = ["Broker", "BrokerConfig", "BrokerThread", "serve"]
__version__ = "0.1.0"

_HOMES = {"Broker": "shim.broker", "BrokerThread": "shim.broker", "BrokerConfig": "shim.config", "serve": "shim.cli"}


def __getattr__(name: str):
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'shim' has no attribute {name!r}")
