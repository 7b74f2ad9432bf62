"""Helpers shared by the ACL APIs: wire fields to bindings and filters, and the checks Kafka's
request classes make while parsing (CreateAclsRequest.validate, DescribeAclsRequest and
DeleteAclsRequest.normalizeAndValidate). A request they refuse fails to parse in Kafka, and its
connection is closed; so here."""

from __future__ import annotations

from ..protocol.framing import FrameError
from ..security.acls import AclBinding, AclFilter, AclOperation, AclPermissionType, PatternType, ResourceType

UNKNOWN = 0
SECURITY_DISABLED = "No Authorizer is configured."


def _code(value) -> int:
    return int(getattr(value, "value", value))


def check_codes(version: int, resource_type, pattern_type, operation, permission, api: str,
                any_pattern_allowed: bool = True) -> None:
    """Refuse UNKNOWN (code 0) elements, and below v1 any pattern type but LITERAL (and ANY in filters)."""
    pattern = _code(pattern_type)
    if version == 0 and pattern != PatternType.LITERAL and not (any_pattern_allowed and pattern == PatternType.ANY):
        raise FrameError(f"{api} v0 only supports literal resource pattern types")
    if UNKNOWN in (_code(resource_type), pattern, _code(operation), _code(permission)):
        raise FrameError(f"{api} contains UNKNOWN elements")


def pattern_of(entity, field: str) -> int:
    """The pattern type of a v1+ entity; v0 has no field: LITERAL (an ANY filter there means LITERAL)."""
    return getattr(entity, field, PatternType.LITERAL)


def to_filter(version: int, resource_type, name, pattern_type, principal, host, operation, permission) -> AclFilter:
    pattern = PatternType.LITERAL if version == 0 else PatternType.of(_code(pattern_type))
    return AclFilter(ResourceType.of(_code(resource_type)), name, pattern, principal, host,
                     AclOperation.of(_code(operation)), AclPermissionType.of(_code(permission)))


def check_filter(version: int, f, api: str) -> None:
    """check_codes of a DescribeAcls request or a DeleteAcls filter (the same fields)."""
    check_codes(version, f.resource_type_filter, pattern_of(f, "pattern_type_filter"), f.operation, f.permission_type,
                api)


def filter_of(version: int, f) -> AclFilter:
    """The AclFilter of a DescribeAcls request or a DeleteAcls filter (the same fields)."""
    return to_filter(version, f.resource_type_filter, f.resource_name_filter, pattern_of(f, "pattern_type_filter"),
                     f.principal_filter, f.host_filter, f.operation, f.permission_type)


def to_binding(version: int, c) -> AclBinding:
    pattern = PatternType.LITERAL if version == 0 else PatternType.of(_code(pattern_of(c, "resource_pattern_type")))
    return AclBinding(ResourceType.of(_code(c.resource_type)), c.resource_name, pattern, c.principal, c.host,
                      AclOperation.of(_code(c.operation)), AclPermissionType.of(_code(c.permission_type)))
