"""Kafka's StandardAuthorizer (KRaft's ACL authorizer) over the durable :class:`AclStore`.

An action (principal, client host, operation, resource) is decided as Kafka's
StandardAuthorizerData.authorize decides it: a super user may do anything; otherwise every ACL
whose pattern applies to the resource (LITERAL with the same name, LITERAL ``*``, PREFIXED with a
prefix of the name) and whose principal (or ``User:*``) and host (or ``*``) match is consulted; a
matching DENY wins over any ALLOW; an ALLOW of READ, WRITE, DELETE or ALTER also allows DESCRIBE
and one of ALTER_CONFIGS also DESCRIBE_CONFIGS (not so for DENY); ALL matches every operation.
When no ACL at all applies to the resource, ``allow.everyone.if.no.acl.found`` decides (default
false: denied). ``authorize_by_resource_type`` is Kafka's Authorizer.authorizeByResourceType (may
the principal do the operation on some resource of the type), which InitProducerId uses.
"""

from __future__ import annotations

from .acls import WILDCARD, AclBinding, AclFilter, AclStore, creation_error
from .acls import AclOperation as O
from .acls import AclPermissionType as A
from .acls import PatternType as P
from .acls import ResourceType as R

STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
WILDCARD_PRINCIPAL = "User:*"

IMPLIES_DESCRIBE = frozenset({O.DESCRIBE, O.READ, O.WRITE, O.DELETE, O.ALTER})
IMPLIES_DESCRIBE_CONFIGS = frozenset({O.DESCRIBE_CONFIGS, O.ALTER_CONFIGS})

# Kafka: AclEntry.supportedOperations, the operations an authorized-operations field reports on
SUPPORTED_OPERATIONS = {
    R.TOPIC: (O.READ, O.WRITE, O.CREATE, O.DESCRIBE, O.DELETE, O.ALTER, O.DESCRIBE_CONFIGS, O.ALTER_CONFIGS),
    R.GROUP: (O.READ, O.DESCRIBE, O.DELETE),
    R.CLUSTER: (O.CREATE, O.CLUSTER_ACTION, O.DESCRIBE_CONFIGS, O.ALTER_CONFIGS, O.IDEMPOTENT_WRITE, O.ALTER,
                O.DESCRIBE),
    R.TRANSACTIONAL_ID: (O.DESCRIBE, O.WRITE),
    R.DELEGATION_TOKEN: (O.DESCRIBE,),
    R.USER: (O.CREATE_TOKENS, O.DESCRIBE_TOKENS),
}


def bitfield(operations) -> int:
    """Kafka: Utils.to32BitField of the operations' codes (a signed int32)."""
    bits = sum(1 << op for op in set(operations))
    return bits - (1 << 32) if bits >= 1 << 31 else bits


def parse_super_users(spec: str) -> frozenset[str]:
    """``super.users``: principals separated by ``;`` (Kafka: StandardAuthorizer.getConfiguredSuperUsers)."""
    users = frozenset(u.strip() for u in spec.split(";") if u.strip())
    bad = [u for u in users if ":" not in u]
    if bad:
        raise ValueError(f"super.users: expected a string in format principalType:principalName but got {bad[0]}")
    return users


def check_authorizer_class(name: str) -> None:
    if name and name != STANDARD_AUTHORIZER:
        raise ValueError(f"authorizer.class.name: only {STANDARD_AUTHORIZER} is served, not {name!r}")


def _result(acl: AclBinding, principal: str, host: str, op: O) -> A | None:
    """Kafka: StandardAuthorizerData.findResult -- None when the ACL does not match the action."""
    if acl.principal != principal and acl.principal != WILDCARD_PRINCIPAL:
        return None
    if acl.host != WILDCARD and acl.host != host:
        return None
    if acl.operation is not O.ALL:
        if acl.permission is A.ALLOW and op is O.DESCRIBE:
            if acl.operation not in IMPLIES_DESCRIBE:
                return None
        elif acl.permission is A.ALLOW and op is O.DESCRIBE_CONFIGS:
            if acl.operation not in IMPLIES_DESCRIBE_CONFIGS:
                return None
        elif acl.operation is not op:
            return None
    return acl.permission


class StandardAuthorizer:
    def __init__(self, store: AclStore, super_users: frozenset[str] = frozenset(),
                 allow_if_no_acl: bool = False) -> None:
        self.store, self.super_users, self.allow_if_no_acl = store, super_users, allow_if_no_acl

    def authorize(self, principal: str, host: str, op: O, resource_type: R, name: str) -> bool:
        if principal in self.super_users:
            return True
        applying = self.store.applying_to(resource_type, name)
        allowed = False
        for acl in applying:
            result = _result(acl, principal, host, op)
            if result is A.DENY:
                return False
            allowed = allowed or result is A.ALLOW
        return allowed or (not applying and self.allow_if_no_acl)

    def authorized_operations(self, principal: str, host: str, resource_type: R, name: str) -> int:
        """Kafka: AuthHelper.authorizedOperations, as a bitfield."""
        return bitfield(op for op in SUPPORTED_OPERATIONS[resource_type]
                        if self.authorize(principal, host, op, resource_type, name))

    def authorize_by_resource_type(self, principal: str, host: str, op: O, resource_type: R) -> bool:
        """Kafka: Authorizer.authorizeByResourceType -- allowed on at least one resource of the type
        that no DENY of the same or a shorter prefix takes away."""
        if self.authorize(principal, host, op, resource_type, "hardcode"):
            return True
        deny = {P.LITERAL: set(), P.PREFIXED: set()}
        allow = {P.LITERAL: set(), P.PREFIXED: set()}
        for acl in self.store:
            if acl.resource_type is not resource_type or acl.host not in (host, WILDCARD):
                continue
            if acl.principal not in (principal, WILDCARD_PRINCIPAL) or acl.operation not in (op, O.ALL):
                continue
            if acl.permission is A.DENY:
                if acl.pattern_type is P.LITERAL and acl.name == WILDCARD:
                    return False
                deny[acl.pattern_type].add(acl.name)
            elif acl.pattern_type is P.LITERAL and acl.name == WILDCARD:
                return True
            else:
                allow[acl.pattern_type].add(acl.name)
        for pattern_type, names in allow.items():
            for name in names:
                if pattern_type is P.LITERAL and name in deny[P.LITERAL]:
                    continue
                if not any(name[:i] in deny[P.PREFIXED] for i in range(1, len(name) + 1)):
                    return True
        return False

    # -- the ACL APIs ---------------------------------------------------------------------------

    def acls(self, acl_filter: AclFilter) -> list[AclBinding]:
        return [b for b in self.store if acl_filter.matches(b)]

    async def create(self, bindings: list[AclBinding], pace=None) -> None:
        """CreateAcls: store the bindings (without a ``creation_error``, checked by the caller as
        it walks the request); an ACL that exists already is a success. ``pace``: see
        AclStore.change_async."""
        await self.store.change_async(add=bindings, pace=pace)

    async def delete(self, filters: list[AclFilter], pace) -> list[list[AclBinding] | str]:
        """DeleteAcls: per filter the bindings it removed (an ACL two filters match is listed by both),
        or why the filter is refused (Kafka: AclControlManager.validateFilter). The filters are
        matched against the newest change a binding at a time (``pace``: awaited once per binding,
        shim.apis._pace.Pacer), and what they match is removed in one change."""
        results: list[list[AclBinding] | str] = []
        snapshot, removed = self.store.newest, {}
        for f in filters:
            if f.pattern_unknown:
                results.append("Unknown patternFilter.")
            elif f.entry_unknown:
                results.append("Unknown entryFilter.")
            else:
                results.append([])
                for b in snapshot:
                    await pace()
                    if f.matches(b):
                        results[-1].append(b)
                        removed[b] = None
        if removed:
            await self.store.change_async(remove=removed.keys(), pace=pace)
        return results
