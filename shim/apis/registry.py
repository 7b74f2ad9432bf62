"""The registry of API handlers: the only source of what ApiVersions advertises.

Each handler registers the versions kafka-shim implements. What a broker advertises and accepts
is that range limited to the emulated Kafka release's (``--kafka-version``,
shim.protocol.kafka_releases): an API the release does not have is neither advertised nor served,
so every handler, including ones added later, is capped by the release table. A handler registered
``advertised=False`` is served but left out of ApiVersions, as Kafka leaves out the client telemetry
APIs (TELEMETRY_APIS) without a telemetry receiver and still answers them.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, NamedTuple

from ..protocol.kafka_releases import TELEMETRY_APIS, KafkaRelease

Handler = Callable[[Any, Any], Awaitable[Any] | Any]


class ApiSpec(NamedTuple):
    key: int
    name: str
    min_version: int
    max_version: int
    handler: Handler
    advertised: bool = True


REGISTRY: dict[int, ApiSpec] = {}


def api(key: int, name: str, min_version: int, max_version: int, advertised: bool = True):
    """Register ``handler(ctx, request)`` for versions ``min_version..max_version`` of API ``key``;
    ``advertised=False``: served, but not listed by ApiVersions (only the release's TELEMETRY_APIS)."""

    def register(handler: Handler) -> Handler:
        if key in REGISTRY:
            raise RuntimeError(f"API {key} registered twice")
        if not advertised and key not in TELEMETRY_APIS:
            raise RuntimeError(f"API {key} is advertised by every Kafka release that has it")
        REGISTRY[key] = ApiSpec(key, name, min_version, max_version, handler, advertised)
        return handler

    return register


def emulated_range(spec: ApiSpec, release: KafkaRelease) -> tuple[int, int] | None:
    """The versions of ``spec`` served while emulating ``release``: the intersection, or None."""
    theirs = release.api_versions.get(spec.key) if spec.advertised else TELEMETRY_APIS.get(spec.key)
    if theirs is None:
        return None
    low, high = max(spec.min_version, theirs[0]), min(spec.max_version, theirs[1])
    return (low, high) if low <= high else None


def served(release: KafkaRelease) -> list[tuple[ApiSpec, int, int]]:
    """Every API advertised under ``release`` with its version range, by API key."""
    out = []
    for spec in sorted(REGISTRY.values(), key=lambda s: s.key):
        versions = emulated_range(spec, release) if spec.advertised else None
        if versions is not None:
            out.append((spec, *versions))
    return out
