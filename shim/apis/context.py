"""What a handler gets: the node, the request header and helpers to build its response."""

from __future__ import annotations

import functools
import ipaddress
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..protocol.messages import RequestHeader, make, response_class, response_module
from ..security.acls import CLUSTER_NAME, ResourceType
from ..security.authorizer import SUPPORTED_OPERATIONS, bitfield
from ..security.session import ANONYMOUS

if TYPE_CHECKING:
    from ..node import Node


@dataclass(slots=True)
class RequestContext:
    node: "Node"
    header: RequestHeader
    client_host: str = ""  # as Kafka's RequestContext.clientAddress prints it: "/127.0.0.1"
    request_size: int = 0  # bytes of the request frame after its size (Kafka: Request.sizeInBytes)
    mute_ms: int = 0  # set by a throttled handler: read nothing more from the connection for this long
    session: Any = None  # shim.security.session: the connection's listener, principal, SASL state
    node_id: int = 0  # the simulated broker the request came to (shim.cluster)
    large_answer: bool = False  # set by a handler that built a large answer quickly: encoded off the loop
    records_pinned: bool = False  # a Fetch answer whose records hold their own files: may be encoded off the loop
    # a coordinator API's: GroupCommit.coordinator_synced when it started; an append after it that a
    # failed fsync lost answers NOT_COORDINATOR (shim.apis._coordinator_sync). None: the handler's
    # answer reports only its own appends, known on disk or decided without them (EndTxn once its
    # Prepare state is on disk): nothing else is waited for
    coordinator_seen: int | None = 0
    load_refused: bool = False  # a handler answered the coordinators' load error (shim.apis._loading.loading)

    def throttle(self, ms: int) -> int:
        """A quota's throttle time: muting the connection for ``ms``; returns it for throttle_time_ms."""
        self.mute_ms = max(self.mute_ms, ms)
        return ms

    @property
    def endpoint(self) -> tuple[str, int]:
        """The advertised (host, port) of the listener this request came in on."""
        return self.node.endpoint(self.listener, self.node_id)

    @property
    def listener(self) -> str | None:
        return self.session.listener if self.session is not None else None

    def endpoint_of(self, node_id: int) -> tuple[str, int]:
        """The advertised (host, port) of broker ``node_id`` on this request's listener."""
        return self.node.endpoint(self.listener, node_id)

    def leader_of(self, topic: str, partition: int, current_leader_epoch: int = -1):
        """The partition's cluster state when this broker leads it at that epoch, else raises
        KAFKA_STORAGE_ERROR while the data directory is offline (shim.storage.group_commit), then
        NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH (shim.cluster)."""
        self.node.logs.check_online(topic, partition)
        return self.node.cluster.check_leader(self.node_id, topic, partition, current_leader_epoch)

    def replica_of(self, topic: str, partition: int):
        """The partition's cluster state when this broker holds a replica of it, leader or
        follower, else raises KAFKA_STORAGE_ERROR while the data directory is offline, then
        NOT_LEADER_OR_FOLLOWER (Kafka: ReplicaManager.getPartitionOrError)."""
        self.node.logs.check_online(topic, partition)
        return self.node.cluster.check_replica(self.node_id, topic, partition)

    def coordinates(self, kind: int, key: str) -> bool:
        """This broker coordinates ``key`` (a group id for kind 0, a transactional id for kind 1).
        None does while the data directory is offline: the internal partitions have no leader, so
        their coordinators resigned (Kafka: onResignation once the controller took the leadership
        of the offline replicas away)."""
        if self.node.logs.offline:
            return False
        cluster = self.node.cluster
        return cluster.single or cluster.coordinator(kind, key) == self.node_id

    # -- authorization (Kafka: AuthHelper); without an authorizer everything is allowed ----------

    @property
    def principal(self) -> str:
        principal = getattr(self.session, "principal", None)
        return principal or ANONYMOUS

    @property
    def quota_user(self) -> str:
        """The user the byte-rate quotas know this client as: its principal's name (Kafka's
        ClientQuotaManager takes KafkaPrincipal.getName, ``alice`` of ``User:alice``, ``ANONYMOUS``
        without authentication)."""
        return self.principal.partition(":")[2]

    @property
    def host(self) -> str:
        """The client's address as ACL hosts name it (Java's InetAddress.getHostAddress): "127.0.0.1",
        "0:0:0:0:0:0:0:1" for ::1, an IPv4-mapped IPv6 address as its IPv4 form."""
        return java_host_address(self.client_host.lstrip("/"))

    def authorize(self, operation, resource_type, name: str) -> bool:
        authorizer = self.node.authorizer
        return authorizer is None or authorizer.authorize(self.principal, self.host, operation, resource_type, name)

    def authorized(self, operation, resource_type, names) -> set:
        """The names among ``names`` the principal may ``operation`` (Kafka: filterByAuthorized)."""
        if self.node.authorizer is None:  # every name: no call per name (a 2 MiB request names 140,000)
            return set(names)
        return {n for n in set(names) if self.authorize(operation, resource_type, n)}

    async def authorized_paced(self, operation, resource_type, names, pace) -> set:
        """:meth:`authorized`, awaiting ``pace`` per name: a 2 MiB request names 120,000 topics,
        0.6 CPU s of the authorizer in one turn."""
        if self.node.authorizer is None:
            return set(names)
        return {n async for n in pace.each(set(names)) if self.authorize(operation, resource_type, n)}

    def authorize_cluster(self, operation) -> bool:
        return self.authorize(operation, ResourceType.CLUSTER, CLUSTER_NAME)

    def authorized_operations(self, resource_type, name: str) -> int:
        """An authorized-operations bitfield: every supported operation without an authorizer."""
        authorizer = self.node.authorizer
        if authorizer is None:
            return bitfield(SUPPORTED_OPERATIONS[resource_type])
        return authorizer.authorized_operations(self.principal, self.host, resource_type, name)

    @property
    def version(self) -> int:
        return self.header.api_version

    @property
    def m(self) -> ModuleType:
        """The kio response module of this API and version: ``ctx.m.PartitionData(...)``."""
        return response_module(self.header.api_key, self.header.api_version)

    def make(self, entity: str, /, **fields: Any) -> Any:
        """Build entity ``entity`` of this version's response, keeping only the fields it has."""
        return make(getattr(self.m, entity), **fields)

    def response(self, **fields: Any) -> Any:
        fields.setdefault("throttle_time", 0)
        return make(response_class(self.header.api_key, self.header.api_version), **fields)


@functools.lru_cache(maxsize=1024)  # asked once per name a request's ACL lookups meet: 40% of their cost
def java_host_address(host: str) -> str:
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if address.version == 6:
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return ":".join(f"{int(group, 16):x}" for group in address.exploded.split(":"))
    return str(address)
