"""ACLs as Kafka names them: resource patterns, access control entries, bindings and filters.

The codes are the wire codes of Kafka's ResourceType, PatternType, AclOperation and
AclPermissionType; a code Kafka does not know reads as UNKNOWN, as their ``fromCode`` does.
:class:`AclStore` keeps the bindings durable in ``__cluster_metadata/acls.json``, written the way
the SCRAM credentials and client quotas are (one atomic write per change: compute the change,
persist it, then apply it in memory).
"""

from __future__ import annotations

import asyncio
import enum
import json
import threading
from dataclasses import dataclass
from pathlib import Path

from ..storage import fs

FILE_NAME = "acls.json"
WILDCARD = "*"  # a LITERAL resource name, principal name or host that matches any
CLUSTER_NAME = "kafka-cluster"  # Kafka: Resource.CLUSTER_NAME


class _Coded(enum.IntEnum):
    @classmethod
    def of(cls, code: int):
        try:
            return cls(code)
        except ValueError:
            return cls(0)  # UNKNOWN


class ResourceType(_Coded):
    UNKNOWN, ANY, TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID, DELEGATION_TOKEN, USER = range(8)


class PatternType(_Coded):
    UNKNOWN, ANY, MATCH, LITERAL, PREFIXED = range(5)


class AclOperation(_Coded):
    (UNKNOWN, ANY, ALL, READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS,
     ALTER_CONFIGS, IDEMPOTENT_WRITE, CREATE_TOKENS, DESCRIBE_TOKENS) = range(15)


class AclPermissionType(_Coded):
    UNKNOWN, ANY, DENY, ALLOW = range(4)


R, P, O, A = ResourceType, PatternType, AclOperation, AclPermissionType


@dataclass(frozen=True, slots=True)
class AclBinding:
    resource_type: ResourceType
    name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: AclOperation
    permission: AclPermissionType

    def to_json(self) -> dict:
        return {"resource_type": self.resource_type.name, "name": self.name, "pattern_type": self.pattern_type.name,
                "principal": self.principal, "host": self.host, "operation": self.operation.name,
                "permission": self.permission.name}

    @classmethod
    def from_json(cls, entry: dict) -> "AclBinding":
        return cls(R[entry["resource_type"]], entry["name"], P[entry["pattern_type"]], entry["principal"],
                   entry["host"], O[entry["operation"]], A[entry["permission"]])


@dataclass(frozen=True, slots=True)
class AclFilter:
    """Kafka's AclBindingFilter: None matches any name, principal or host; ANY any code; a MATCH
    pattern matches the LITERAL, wildcard and PREFIXED patterns that would apply to the name."""
    resource_type: ResourceType = R.ANY
    name: str | None = None
    pattern_type: PatternType = P.ANY
    principal: str | None = None
    host: str | None = None
    operation: AclOperation = O.ANY
    permission: AclPermissionType = A.ANY

    @property
    def pattern_unknown(self) -> bool:
        return self.resource_type is R.UNKNOWN or self.pattern_type is P.UNKNOWN

    @property
    def entry_unknown(self) -> bool:
        return self.operation is O.UNKNOWN or self.permission is A.UNKNOWN

    def matches(self, b: AclBinding) -> bool:
        return self._pattern_matches(b) and self._entry_matches(b)

    def _pattern_matches(self, b: AclBinding) -> bool:
        # Kafka: ResourcePatternFilter.matches
        if self.resource_type is not R.ANY and self.resource_type is not b.resource_type:
            return False
        if self.pattern_type not in (P.ANY, P.MATCH) and self.pattern_type is not b.pattern_type:
            return False
        if self.name is None:
            return True
        if self.pattern_type is P.ANY or self.pattern_type is b.pattern_type:
            return self.name == b.name
        if b.pattern_type is P.LITERAL:
            return self.name == b.name or b.name == WILDCARD
        return self.name.startswith(b.name)

    def _entry_matches(self, b: AclBinding) -> bool:
        # Kafka: AccessControlEntryFilter.matches
        if self.principal is not None and self.principal != b.principal:
            return False
        if self.host is not None and self.host != b.host:
            return False
        if self.operation is not O.ANY and self.operation is not b.operation:
            return False
        return self.permission is A.ANY or self.permission is b.permission


def creation_error(b: AclBinding) -> str | None:
    """Why CreateAcls refuses this binding (INVALID_REQUEST), in Kafka's words, or None.
    Kafka: AclApis.handleCreateAcls, then AclControlManager.validateNewAcl."""
    if b.resource_type is R.CLUSTER and b.name != CLUSTER_NAME:
        return f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}"
    if b.name == "":
        return "Invalid empty resource name"
    if b.resource_type in (R.UNKNOWN, R.ANY):
        return f"Invalid resourceType {b.resource_type.name}"
    if b.pattern_type not in (P.LITERAL, P.PREFIXED):
        return f"Invalid patternType {b.pattern_type.name}"
    if b.operation in (O.UNKNOWN, O.ANY):
        return f"Invalid operation {b.operation.name}"
    if b.permission not in (A.DENY, A.ALLOW):
        return f"Invalid permissionType {b.permission.name}"
    if ":" not in b.principal:
        # Kafka stores such an ACL and then fails every authorization it is consulted for
        # (StandardAcl.kafkaPrincipal); refusing it up front is the one difference.
        return f"Could not parse principal from `{b.principal}` (no colon is present separating the " \
               f"principal type from the principal name)"
    return None


def acl(principal: str, operation: str | AclOperation, *, topic: str | None = None, group: str | None = None,
        transactional_id: str | None = None, cluster: bool = False, user: str | None = None,
        delegation_token: str | None = None, prefixed: bool = False, deny: bool = False,
        host: str = WILDCARD) -> AclBinding:
    """One ACL in a line: ``acl("User:alice", "WRITE", topic="orders")``,
    ``acl("User:alice", "READ", group="app-", prefixed=True)``, ``acl("User:ops", "ALTER", cluster=True)``."""
    named = [(R.TOPIC, topic), (R.GROUP, group), (R.TRANSACTIONAL_ID, transactional_id),
             (R.CLUSTER, CLUSTER_NAME if cluster else None), (R.USER, user), (R.DELEGATION_TOKEN, delegation_token)]
    named = [(t, n) for t, n in named if n is not None]
    if len(named) != 1:
        raise ValueError("name exactly one resource: topic, group, transactional_id, cluster, user or delegation_token")
    (resource_type, name), = named
    op = operation if isinstance(operation, AclOperation) else AclOperation[operation.upper()]
    return AclBinding(resource_type, name, P.PREFIXED if prefixed else P.LITERAL, principal, host, op,
                      A.DENY if deny else A.ALLOW)


class AclStore:
    """The bindings, durable; insertion order is kept so DescribeAcls answers stably. An index by
    resource pattern gives the ACLs that apply to one resource without a scan (Kafka's AclCache
    sorts them for the same purpose).

    A change is computed on the loop from the newest change (``_latest``, maybe not yet written),
    written, then put in force. :meth:`change_async` encodes, indexes and writes on a worker thread
    (100,000 ACLs: 2.4 s of JSON); :meth:`change` does it all at once. Changes are numbered, each
    includes every earlier one, and a write older than the one on disk is skipped, so the file
    and the bindings in force only move forward."""

    def __init__(self, meta_dir: Path) -> None:
        self.path = meta_dir / FILE_NAME
        self.bindings: dict[AclBinding, None] = {}
        if self.path.exists():
            self.bindings = {AclBinding.from_json(e): None for e in json.loads(self.path.read_bytes())}
        self.by_pattern, self.prefix_lengths = _index(self.bindings)
        self._latest, self._seq, self._written, self._applied = self.bindings, 0, 0, 0
        self._file_lock = threading.Lock()
        self._pending: asyncio.Future | None = None  # the last change still being written

    def applying_to(self, resource_type: ResourceType, name: str) -> list[AclBinding]:
        """The ACLs whose pattern matches the resource: LITERAL with its name or ``*``, PREFIXED
        with a prefix of its name."""
        get = self.by_pattern.get
        found = [*get((resource_type, PatternType.LITERAL, name), ()),
                 *get((resource_type, PatternType.LITERAL, WILDCARD), ())]
        for length in self.prefix_lengths.get(resource_type, ()):
            if length > len(name):
                break
            found += get((resource_type, PatternType.PREFIXED, name[:length]), ())
        return found

    def __iter__(self):
        return iter(self.bindings)

    def __len__(self) -> int:
        return len(self.bindings)

    def _next(self, add, remove) -> tuple[int, dict] | None:
        """(number, bindings) of the change after the newest, or None when it changes nothing.
        ``add`` may be a dict, whose keys' hashes are then not computed again."""
        latest = self._latest
        changed = {b: None for b in latest if b not in remove} if remove else dict(latest)
        changed.update(add if isinstance(add, dict) else ((b, None) for b in add))
        if len(changed) == len(latest) if not remove else changed.keys() == latest.keys():
            return None  # (adding only: the same size is the same bindings)
        self._seq += 1
        self._latest = changed
        return self._seq, changed

    def _write(self, seq: int, data: bytes) -> None:
        with self._file_lock:  # a change written already includes this one: nothing to do
            if seq > self._written:
                fs.atomic_write(self.path, data)
                self._written = seq

    def _apply(self, seq: int, changed: dict, index: tuple) -> None:
        if seq > self._applied:
            self.bindings, (self.by_pattern, self.prefix_lengths), self._applied = changed, index, seq

    def change(self, add: list[AclBinding] = (), remove: set[AclBinding] = frozenset()) -> None:
        """Compute the change, persist it, then apply it in memory."""
        step = self._next(add, remove)
        if step is not None:
            seq, changed = step
            self._write(seq, _encode(changed))
            self._apply(seq, changed, _index(changed))

    async def change_async(self, add: list[AclBinding] = (), remove: set[AclBinding] = frozenset(),
                           pace=None) -> None:
        """:meth:`change`, its encoding, index and write on a worker thread. With ``pace`` (awaited
        once per binding, shim.apis._pace.Pacer) the bindings to add that are not in force are
        found a slice of the loop at a time; the change itself is then made in one turn from the
        newest one (a copy of a dict, no hashing), so a change made meanwhile is kept."""
        if pace is not None and not remove:
            add = await _fresh(self._latest, add, pace)
        if pace is not None and remove and not add:
            step = await self._removal(remove, pace)
        else:
            step = self._next(add, remove)
        if step is None:  # nothing new, but what it asks may still be on its way to the disk
            if self._pending is not None:
                await asyncio.shield(self._pending)
            return
        seq, changed = step
        loop = asyncio.get_running_loop()
        mine = self._pending = loop.create_future()
        try:
            index = await loop.run_in_executor(None, self._encode_and_write, seq, changed)
            self._apply(seq, changed, index)
        except BaseException:
            if self._latest is changed:  # not written: later changes start from what is in force
                self._latest = self.bindings
            raise
        finally:
            mine.set_result(None)
            if self._pending is mine:
                self._pending = None

    async def _removal(self, remove: set[AclBinding], pace) -> tuple[int, dict] | None:
        """:meth:`_next` of a removal, the ACLs kept found a slice of the loop at a time; a change
        made meanwhile has it computed again in one turn."""
        snapshot, kept = self._latest, {}
        for b in snapshot:
            await pace()
            if b not in remove:
                kept[b] = None
        if self._latest is not snapshot:
            return self._next((), remove)
        if len(kept) == len(snapshot):
            return None
        self._seq += 1
        self._latest = kept
        return self._seq, kept

    @property
    def newest(self) -> dict:
        """The bindings of the newest change (maybe not yet in force): never modified in place."""
        return self._latest

    def _encode_and_write(self, seq: int, changed: dict) -> tuple:
        self._write(seq, _encode(changed))
        return _index(changed)


async def _fresh(latest: dict, add, pace) -> dict:
    """The bindings of ``add`` not in ``latest`` (a change, never modified), as dict keys."""
    fresh: dict[AclBinding, None] = {}
    for b in add:
        await pace()
        if b not in latest:
            fresh[b] = None
    return fresh


def _encode(bindings: dict, chunk: int = 1000) -> bytes:
    """The bindings as a JSON array, encoded a chunk at a time: json.dumps holds the GIL for the
    whole of one call, and one call over 100,000 bindings kept the event loop's thread waiting."""
    entries = [b.to_json() for b in bindings]
    return ("[" + ", ".join(json.dumps(entries[i:i + chunk])[1:-1] for i in range(0, len(entries), chunk))
            + "]").encode()


def _index(bindings) -> tuple[dict, dict]:
    """(by resource pattern, the sorted prefix lengths of each resource type's PREFIXED patterns)."""
    by_pattern: dict[tuple, list[AclBinding]] = {}
    prefix_lengths: dict[ResourceType, list[int]] = {}
    for b in bindings:
        by_pattern.setdefault((b.resource_type, b.pattern_type, b.name), []).append(b)
    for rtype, pattern, name in by_pattern:
        if pattern is PatternType.PREFIXED:
            prefix_lengths.setdefault(rtype, []).append(len(name))
    for lengths in prefix_lengths.values():
        lengths[:] = sorted(set(lengths))
    return by_pattern, prefix_lengths
