"""Share groups (KIP-932): membership, share sessions and share-partition state."""

from .configs import GroupConfigs, ShareSettings, share_settings
from .coordinator import ShareCoordinator
from .store import ShareStateStore

__all__ = ["GroupConfigs", "ShareCoordinator", "ShareSettings", "ShareStateStore", "share_settings"]
