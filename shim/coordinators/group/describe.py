"""What DescribeGroups and ListGroups see of the group coordinator (Kafka: GroupMetadataManager
describeGroups and listGroups). A consumer group is not a classic group: DescribeGroups (v0-5)
describes it as Dead, as Kafka 4 does; ListGroups lists both types."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from ...errors import ErrorCode, KafkaError
from .state import GroupState, check_group_id

if TYPE_CHECKING:
    from .coordinator import GroupCoordinator


class MemberSummary(NamedTuple):
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    metadata: bytes
    assignment: bytes


class GroupSummary(NamedTuple):
    state: str
    protocol_type: str
    protocol: str
    members: tuple[MemberSummary, ...]


DEAD_SUMMARY = GroupSummary(GroupState.DEAD.value, "", "", ())


def describe_group(gc: "GroupCoordinator", group_id: str) -> tuple[ErrorCode, GroupSummary]:
    try:
        check_group_id(group_id, allow_empty=True)
    except KafkaError as e:
        return e.code, GroupSummary("", "", "", ())
    group = gc.groups.get(group_id)
    if group is None:
        return ErrorCode.none, DEAD_SUMMARY
    stable = group.is_(GroupState.STABLE)
    members = tuple(
        MemberSummary(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                      m.metadata(group.protocol_name) if stable else b"", m.assignment if stable else b"")
        for m in group.members.values()
    )
    return ErrorCode.none, GroupSummary(group.state.value, group.protocol_type or "",
                                        group.protocol_name if stable else "", members)


def state_key(state: str) -> str:
    """A group state as ListGroups' states filter compares it (Kafka: lower case, trimmed)."""
    return state.lower().strip()


def type_key(group_type: str) -> str:
    """A group type as ListGroups' types filter compares it (Kafka: lower case)."""
    return group_type.lower()


def list_groups(gc: "GroupCoordinator", states: set[str], types: set[str]) -> list[tuple[str, str, str, str]]:
    """``states`` and ``types`` as state_key and type_key give them; empty: every group."""
    listed = [(g.group_id, g.protocol_type or "", g.state.value, "classic") for g in gc.groups.values()]
    listed += [(g.group_id, "consumer", g.state.value, "consumer") for g in gc.consumer.groups.values()]
    return [row for row in listed if (not states or state_key(row[2]) in states) and (not types or row[3] in types)]
