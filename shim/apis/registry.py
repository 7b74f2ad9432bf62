"""The registry of API handlers: the only source of what ApiVersions advertises."""

from __future__ import annotations

from typing import Any, Awaitable, Callable, NamedTuple

Handler = Callable[[Any, Any], Awaitable[Any] | Any]


class ApiSpec(NamedTuple):
    key: int
    name: str
    min_version: int
    max_version: int
    handler: Handler


REGISTRY: dict[int, ApiSpec] = {}


def api(key: int, name: str, min_version: int, max_version: int):
    """Register ``handler(ctx, request)`` for versions ``min_version..max_version`` of API ``key``."""

    def register(handler: Handler) -> Handler:
        if key in REGISTRY:
            raise RuntimeError(f"API {key} registered twice")
        REGISTRY[key] = ApiSpec(key, name, min_version, max_version, handler)
        return handler

    return register
