"""The transaction coordinator: state table, durable state, markers and timeouts."""

from .coordinator import OFFSETS_TOPIC, TXN_TOPIC, TransactionCoordinator
from .state import TxnMetadata, TxnState

__all__ = ["OFFSETS_TOPIC", "TXN_TOPIC", "TransactionCoordinator", "TxnMetadata", "TxnState"]
