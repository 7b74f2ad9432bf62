"""Listeners as Kafka configures them: ``listeners``, ``advertised.listeners`` and
``listener.security.protocol.map``.

``NAME://host:port`` entries, comma-separated; a name is mapped to its security protocol by the map
(Kafka's default maps each protocol's own name to itself). An empty host binds every interface;
port 0 picks a free port. Advertised addresses default to the bound ones (the host of
``advertised_host`` when given, the port actually bound when the listener's is 0).
"""

from __future__ import annotations

import re
from typing import NamedTuple

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
DEFAULT_PROTOCOL_MAP = ",".join(f"{p}:{p}" for p in PROTOCOLS)
_ENTRY = re.compile(r"(?P<name>[A-Za-z0-9_.-]+)://(?P<host>\[[^\]]*\]|[^:/]*):(?P<port>\d+)")


class Endpoint(NamedTuple):
    name: str
    host: str
    port: int


class Listener(NamedTuple):
    name: str
    protocol: str
    host: str
    port: int

    @property
    def tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")

    @property
    def sasl(self) -> bool:
        return self.protocol.startswith("SASL_")


def parse_endpoints(spec: str, what: str) -> list[Endpoint]:
    out: list[Endpoint] = []
    for item in (s.strip() for s in spec.split(",")):
        if not item:
            continue
        m = _ENTRY.fullmatch(item)
        if m is None:
            raise ValueError(f"{what} entries are NAME://host:port, not {item!r}")
        out.append(Endpoint(m["name"].upper(), m["host"].strip("[]"), int(m["port"])))
    names = [e.name for e in out]
    if len(set(names)) != len(names):
        raise ValueError(f"{what} has a listener name more than once: {spec!r}")
    return out


def parse_protocol_map(spec: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in (s.strip() for s in spec.split(",")):
        if not item:
            continue
        name, sep, protocol = item.partition(":")
        if not sep or protocol.upper() not in PROTOCOLS:
            raise ValueError(f"listener.security.protocol.map entries are NAME:PROTOCOL with PROTOCOL one of "
                             f"{', '.join(PROTOCOLS)}, not {item!r}")
        out[name.strip().upper()] = protocol.upper()
    return out


def resolve(listeners: str, protocol_map: str, advertised: str) -> tuple[list[Listener], dict[str, Endpoint]]:
    """The listeners to bind, and the advertised endpoint given for each listener name (port 0: the bound port)."""
    protocols = parse_protocol_map(protocol_map)
    bound = []
    for e in parse_endpoints(listeners, "listeners"):
        if e.name not in protocols:
            raise ValueError(f"listener {e.name} has no entry in listener.security.protocol.map")
        bound.append(Listener(e.name, protocols[e.name], e.host, e.port))
    if not bound:
        raise ValueError("listeners is empty")
    adverts = {e.name: e for e in parse_endpoints(advertised, "advertised.listeners")}
    unknown = set(adverts) - {b.name for b in bound}
    if unknown:
        raise ValueError(f"advertised.listeners names listeners that are not in listeners: {sorted(unknown)}")
    return bound, adverts
