"""The group coordinator: classic-protocol membership, committed and transactional offsets,
durable in ``__consumer_offsets``."""

from .coordinator import GroupCoordinator, GroupSummary, MemberSummary
from .records import OffsetAndMetadata
from .state import GroupMetadata, GroupState, JoinResult, Pending, SyncResult

__all__ = [
    "GroupCoordinator",
    "GroupMetadata",
    "GroupState",
    "GroupSummary",
    "JoinResult",
    "MemberSummary",
    "OffsetAndMetadata",
    "Pending",
    "SyncResult",
]
