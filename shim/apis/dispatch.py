"""Turn one request frame into one response (or none, for acks=0 produces)."""

from __future__ import annotations

import inspect
import logging

from kio.serial.errors import SerialError

from ..errors import ErrorCode
from ..protocol.framing import FrameError
from ..protocol.messages import (
    decode_request,
    encode_response,
    encode_response_parts,
    join_parts,
    make,
    peek,
    response_class,
)
from .context import RequestContext
from .registry import REGISTRY

log = logging.getLogger(__name__)

API_VERSIONS = 18


async def dispatch(node, frame: bytes, client_host: str = "") -> bytes | None:
    """The response as bytes (file regions read into memory), or None when none is due."""
    parts = await dispatch_parts(node, frame, client_host)
    return None if parts is None else join_parts(parts)


async def dispatch_parts(node, frame: bytes, client_host: str = "") -> list | None:
    """The response as bytes and file regions to send in order, or None when none is due."""
    key, version, correlation_id = peek(frame)
    spec = REGISTRY.get(key)
    if spec is None:
        raise FrameError(f"unknown API key {key}")
    if not spec.min_version <= version <= spec.max_version:
        if key == API_VERSIONS:
            return [_unsupported_api_versions(correlation_id)]
        raise FrameError(f"unsupported version {version} of {spec.name} (supported {spec.min_version}-{spec.max_version})")
    header, request = decode_request(frame, key, version)
    result = spec.handler(RequestContext(node, header, client_host), request)
    if inspect.isawaitable(result):
        result = await result
    if result is None:
        return None
    try:
        return encode_response_parts(correlation_id, result)
    except (SerialError, TypeError, ValueError) as exc:
        # A value the request put in the response no longer fits its field (a member id made of
        # a 32767-byte group instance id and a UUID): Kafka's network thread fails to serialize it
        # and closes the connection, and so does this.
        raise FrameError(f"cannot encode the {spec.name} v{version} response: {exc}") from exc


def _unsupported_api_versions(correlation_id: int) -> bytes:
    """KIP-511: a v0 body with UNSUPPORTED_VERSION and our ApiVersions range; the client retries."""
    spec = REGISTRY[API_VERSIONS]
    cls = response_class(API_VERSIONS, 0)
    m = __import__(cls.__module__, fromlist=["ApiVersion"])
    body = make(
        cls,
        error_code=ErrorCode.unsupported_version,
        api_keys=(m.ApiVersion(api_key=API_VERSIONS, min_version=spec.min_version, max_version=spec.max_version),),
    )
    return encode_response(correlation_id, body)
