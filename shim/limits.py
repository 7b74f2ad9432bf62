"""Connection quotas, sans-IO: how many connections the broker and each client address may hold.

Kafka's ``ConnectionQuotas`` (SocketServer.scala) has two different answers to "too many":
``max.connections`` is broker-wide and makes the acceptor *wait* until a connection closes (new
clients queue in the listen backlog, nobody is refused); ``max.connections.per.ip`` (and its
``max.connections.per.ip.overrides``) closes a connection over the limit right after accepting it.
The server asks :meth:`slot_available` before accepting and :meth:`inc` after, and calls
:meth:`dec` once for every connection :meth:`inc` admitted.
"""

from __future__ import annotations

import ipaddress
import socket

UNLIMITED = 2**31 - 1  # Kafka's default for both limits: Int.MaxValue


def parse_overrides(text: str) -> dict[str, int]:
    """``max.connections.per.ip.overrides``: comma-separated ``host:count`` pairs (Kafka: a CSV map).

    Host names are resolved once here, as Kafka resolves them with ``InetAddress.getByName``; the
    keys are then the textual addresses the acceptor sees.
    """
    overrides: dict[str, int] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        host, sep, count = item.rpartition(":")
        if not sep or not host or not count.strip().isdigit():
            raise ValueError(f"max.connections.per.ip.overrides: {item!r} is not host:count")
        overrides[_address(host.strip().strip("[]"))] = int(count)
    return overrides


def _address(host: str) -> str:
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    try:
        return socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)[0][4][0]
    except OSError as exc:
        raise ValueError(f"max.connections.per.ip.overrides: cannot resolve {host!r}: {exc}") from None


def check_limits(max_connections: int, max_per_ip: int, overrides: dict[str, int]) -> None:
    """Kafka's KafkaConfig validation of the three settings."""
    if max_connections < 0 or max_per_ip < 0 or any(n < 0 for n in overrides.values()):
        raise ValueError("max.connections, max.connections.per.ip and its overrides must be at least 0")
    if max_per_ip == 0 and not overrides:
        raise ValueError("max.connections.per.ip can be set to zero only if "
                         "max.connections.per.ip.overrides property is set")


class ConnectionQuotas:
    def __init__(self, max_connections: int = UNLIMITED, max_per_ip: int = UNLIMITED,
                 overrides: dict[str, int] | None = None) -> None:
        self.max_connections = max_connections
        self.max_per_ip = max_per_ip
        self.overrides = {_canonical(ip): n for ip, n in (overrides or {}).items()}
        self.total = 0
        self.counts: dict[str, int] = {}

    def update(self, max_connections: int, max_per_ip: int, overrides: dict[str, int]) -> None:
        """New limits, live (Kafka: ConnectionQuotas.updateBrokerMaxConnections and
        updateMaxConnectionsPerIp, on a dynamic config change); connections already held stay."""
        self.max_connections = max_connections
        self.max_per_ip = max_per_ip
        self.overrides = {_canonical(ip): n for ip, n in overrides.items()}

    def slot_available(self) -> bool:
        """Whether the acceptor may take the next connection (Kafka: connectionSlotAvailable)."""
        return self.total < self.max_connections

    def limit_for(self, ip: str) -> int:
        return self.overrides.get(_canonical(ip), self.max_per_ip)

    def inc(self, ip: str) -> bool:
        """Count a new connection from ``ip``; False (and nothing counted) when ``ip`` is at its limit,
        and the connection is to be closed (Kafka: TooManyConnectionsException)."""
        ip = _canonical(ip)
        count = self.counts.get(ip, 0)
        if count >= self.limit_for(ip):
            return False
        self.counts[ip] = count + 1
        self.total += 1
        return True

    def dec(self, ip: str) -> None:
        ip = _canonical(ip)
        count = self.counts.pop(ip)
        if count > 1:
            self.counts[ip] = count - 1
        self.total -= 1


def _canonical(ip: str) -> str:
    try:
        address = ipaddress.ip_address(ip.split("%", 1)[0])
    except ValueError:
        return ip
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)  # a dual-stack socket sees IPv4 clients as ::ffff:a.b.c.d
    return str(address)
