"""kafka-shim: a Kafka-compatible broker over a durable local log."""

from .broker import Broker, BrokerThread
from .config import BrokerConfig
from .cli import serve

__all__ = ["Broker", "BrokerConfig", "BrokerThread", "serve"]
__version__ = "0.1.0"
