"""Share groups (KIP-932): membership, share sessions and share-partition state."""

from .configs import GroupConfigs, ShareSettings, share_settings
from .coordinator import ShareCoordinator

__all__ = ["GroupConfigs", "ShareCoordinator", "ShareSettings", "share_settings"]
