"""Turn one request frame into one response (or none, for acks=0 produces)."""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import sys
import time
from typing import NamedTuple

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
from ..protocol.kafka_releases import RELEASES
from . import _authz, _loading, controller as controller_apis
from ._coordinator_sync import COORDINATOR_APIS
from ._coordinator_sync import synced as coordinator_synced
from ._loading import LOADED_APIS
from ._pace import SLICE_S, Pacer
from .context import RequestContext
from .registry import REGISTRY, ApiSpec, emulated_range

log = logging.getLogger(__name__)

API_VERSIONS = 18
# Frames larger than this are read by kio on a worker thread (see _decode).
DECODE_INLINE_BYTES = 256 * 1024
# A frame an API reads itself (Produce) is read on the loop up to a producer's default
# max.request.size: at most ~15,000 partitions, 30 ms; no thread hop for the common large Produce.
OWN_DECODE_INLINE_BYTES = 1024 * 1024 + 64
# Their answers hold file regions opened while encoding, before the loop may delete a segment:
# they are always encoded on the loop. (ShareFetch's acquired records are bytes, copied from the
# segment as they are acquired: its answers go by the rule of every other API.)
_RECORDS_APIS = frozenset({1})  # Fetch


async def dispatch(node, frame: bytes, client_host: str = "", session=None) -> bytes | None:
    """The response as bytes (file regions read into memory), or None when none is due."""
    parts = await dispatch_parts(node, frame, client_host, session)
    return None if parts is None else join_parts(parts)


async def dispatch_parts(node, frame: bytes, client_host: str = "", session=None) -> list | None:
    """The response as bytes and file regions to send in order, or None when none is due."""
    return (await dispatch_request(node, frame, client_host, session)).parts


class Answer(NamedTuple):
    parts: list | None  # bytes and file regions to send in order; None when no response is due
    mute_ms: int  # a throttled client's channel is muted this long after the answer (Kafka: ThrottledChannel)


# Answer((parts, mute_ms)) for every request: a NamedTuple's own __new__ is a Python function, twice the cost.
_answer = functools.partial(tuple.__new__, Answer)


class _Route(NamedTuple):
    """What the dispatcher needs of an API under one emulated release, looked up once."""
    spec: object
    versions: tuple[int, int]
    module: object
    validate: object  # module.validate(ctx, request): what Kafka's request class refuses while parsing
    decode: object  # module.decode(frame, version): (header, request) read by the API itself, or None
    own: bool = False  # the controller listener's own answer (shim.apis.controller): no broker checks first


@functools.lru_cache(maxsize=1024)  # bounded: the key is the client's (every int16 once was 131,072 entries)
def _route(key: int, kafka_version: str, controller: bool = False) -> _Route | None:
    if controller:
        return _controller_route(key, kafka_version)
    spec = REGISTRY.get(key)
    versions = None if spec is None else emulated_range(spec, RELEASES[kafka_version])
    if versions is None:
        return None
    module = sys.modules[spec.handler.__module__]
    return _Route(spec, versions, module, getattr(module, "validate", None), getattr(module, "decode", None))


@functools.lru_cache(maxsize=1024)  # bounded: key and version are the client's to choose
def _served(key: int, version: int, kafka_version: str, controller: bool) -> _Route | None:
    """The route of a request the emulated release serves at its version, else None (looked up for
    every request)."""
    route = _route(key, kafka_version, controller)
    return route if route is not None and route.versions[0] <= version <= route.versions[1] else None


def forget_routes() -> None:
    """Look each API's module up again (a test that replaced a module's function)."""
    _route.cache_clear()
    _served.cache_clear()


def _controller_route(key: int, kafka_version: str) -> _Route | None:
    """What the controller listener serves (shim.apis.controller): its own answer, or the broker's handler."""
    versions = controller_apis.versions(key, kafka_version)
    if versions is None:
        return None
    own = controller_apis.HANDLERS.get(key)
    if own is None:
        broker = _route(key, kafka_version)  # None for ControlledShutdown, which kio cannot read
        return None if broker is None else broker._replace(versions=versions)
    spec = ApiSpec(key, controller_apis.NAMES[key], *versions, own)
    return _Route(spec, versions, controller_apis, None, None, own=True)


def _served_route(node, key: int, version: int, correlation_id: int, controller: bool = False) -> _Route | Answer:
    """The route of a request the emulated release serves at its version; an ApiVersions request
    at a version it does not serve gets its UNSUPPORTED_VERSION answer, anything else closes the
    connection (Kafka: SocketServer.parseRequestHeader). ``controller``: the request came in on a
    controller listener, which serves the controller's APIs alone."""
    route = _route(key, node.config.kafka_version, controller)
    if route is None:
        shutdown = controller and key == controller_apis.CONTROLLED_SHUTDOWN and \
            controller_apis.versions(key, node.config.kafka_version)
        if shutdown and shutdown[0] <= version <= shutdown[1]:
            return Answer([controller_apis.controlled_shutdown(correlation_id, version)], 0)
        if controller:
            raise FrameError(f"Received request api key {key} which is not enabled on the controller listener")
        raise FrameError(f"API key {key} is not served by Kafka {RELEASES[node.config.kafka_version].name} emulation")
    versions = route.versions
    if not versions[0] <= version <= versions[1]:
        if key == API_VERSIONS:
            return Answer([_unsupported_api_versions(correlation_id, versions)], 0)
        raise FrameError(f"unsupported version {version} of {route.spec.name} (Kafka "
                         f"{RELEASES[node.config.kafka_version].name} emulation serves {versions[0]}-{versions[1]})")
    return route


async def dispatch_request(node, frame: bytes, client_host: str = "", session=None, node_id: int | None = None) -> Answer:
    """``node_id``: the simulated broker the request came to (shim.cluster), the first one by default."""
    key, version, correlation_id = peek(frame)
    controller = session is not None and session.listener in node.controller_listeners
    route = _served(key, version, node.config.kafka_version, controller)
    if route is None:
        route = _served_route(node, key, version, correlation_id, controller)
        if route.__class__ is Answer:
            return route
    spec, module = route.spec, route.module
    control = node.control.active  # a fault armed or the request log on (shim.control): kio's objects throughout
    started = time.monotonic()
    if route.decode is not None and not control and len(frame) <= OWN_DECODE_INLINE_BYTES and not _own_decoding:
        decoded = route.decode(frame, version)  # the common Produce: read here, without a coroutine of its own
    else:
        decoded = None
    header, request = decoded or await _decode(node, route, frame, key, version, control)
    ctx = RequestContext(node, header, client_host, len(frame), session=session,
                         node_id=node.config.node_id if node_id is None else node_id)
    if route.validate is not None:  # what Kafka's request class refuses while parsing closes the connection
        checking = route.validate(ctx, request)
        if checking is not None:  # a validate that walks a long array paces itself (CreateAcls)
            await checking
    commit = node.logs.group_commit if key in COORDINATOR_APIS else None
    if commit is not None:  # what a failure may lose from now on
        ctx.coordinator_seen = commit.coordinator_synced
    refused = _authz.denied(ctx, request) if node.authorizer is not None and not route.own else None
    loading = None
    # shim.coordinators.loader; the APIs that check each entity themselves ask in their handlers
    if refused is None and key in LOADED_APIS and not node.loading.done:
        loading = await _loading.refusal(ctx, request, module)
    if refused is not None:
        result = module.error_response(ctx, request, refused)
    elif loading is not None:
        result = loading
    elif control:
        result = await node.control.intercept(ctx, spec, request, module, Pacer())
    else:
        result = spec.handler(ctx, request)
    if result is not None and result.__class__ is not bytes and inspect.isawaitable(result):
        result = await result
    if result is None:
        return _answer((None, ctx.mute_ms))
    if commit is not None and ctx.coordinator_seen is not None and (
            commit.coordinator_unsynced() or commit.lost_since(ctx.coordinator_seen)):
        result = await coordinator_synced(ctx, request, module, commit, result)  # fsync "always"
    if result.__class__ is bytes:  # the handler wrote its answer itself, header included
        return _answer(([result], ctx.mute_ms))
    try:
        if (time.monotonic() - started < SLICE_S and not ctx.large_answer) or (
                key in _RECORDS_APIS and not ctx.records_pinned):
            return Answer(encode_response_parts(correlation_id, result), ctx.mute_ms)
        # An answer that took long to build, or that its handler says is large, is encoded on a
        # worker thread: kio only reads the answer's immutable objects.
        return Answer(await asyncio.get_running_loop().run_in_executor(
            None, encode_response_parts, correlation_id, result), ctx.mute_ms)
    except (SerialError, TypeError, ValueError) as exc:
        # A value the request put in the response no longer fits its field (a member id made of
        # a 32767-byte group instance id and a UUID): Kafka's network thread fails to serialize it
        # and closes the connection, and so does this.
        raise FrameError(f"cannot encode the {spec.name} v{version} response: {exc}") from exc


async def _decode(node, route: _Route, frame, key: int, version: int, control: bool):
    """(header, request). An API that reads its own requests (Produce, see
    shim.protocol.produce_wire) may leave a frame to kio, which then decides as it always does. kio
    reads a large frame on a worker thread, and so does the API's own reader past
    OWN_DECODE_INLINE_BYTES: their objects are immutable, and 100,000 array items took 0.1-0.2 s
    of the loop."""
    decoded = None
    if route.decode is not None and not control:
        if len(frame) <= OWN_DECODE_INLINE_BYTES and not _own_decoding:  # the common case, no extra await
            decoded = route.decode(frame, version)
        else:
            decoded = await _own_decode(node, route, frame, version)
    if decoded is not None:
        return decoded
    if len(frame) <= DECODE_INLINE_BYTES or route.decode is not None:
        return decode_request(frame, key, version)
    return await asyncio.get_running_loop().run_in_executor(None, decode_request, frame, key, version)


_own_decoding: dict = {}  # node -> the future its last API-read frame on a worker thread sets when read


async def _own_decode(node, route: _Route, frame, version: int):
    """The API's own reading of ``frame``; one past OWN_DECODE_INLINE_BYTES on a worker thread (100,000
    partitions in one 3 MiB Produce took 0.2 s of the loop). Such requests are handed on in the
    order they arrived: one read meanwhile waits for those read on a worker thread before it, so
    appends keep the order of arrival (shim.apis.k00_produce)."""
    before = _own_decoding.get(node)
    if len(frame) <= OWN_DECODE_INLINE_BYTES:
        decoded = route.decode(frame, version)
        if before is not None:
            await before
        return decoded
    mine = _own_decoding[node] = asyncio.get_running_loop().create_future()
    try:
        decoded = await asyncio.get_running_loop().run_in_executor(None, route.decode, frame, version)
        if before is not None:
            await before
        return decoded
    finally:
        mine.set_result(None)  # its handler runs before this wakes the next one up
        if _own_decoding.get(node) is mine:
            del _own_decoding[node]


def _unsupported_api_versions(correlation_id: int, versions: tuple[int, int]) -> bytes:
    """KIP-511: a v0 body with UNSUPPORTED_VERSION and our ApiVersions range; the client retries."""
    cls = response_class(API_VERSIONS, 0)
    m = __import__(cls.__module__, fromlist=["ApiVersion"])
    body = make(
        cls,
        error_code=ErrorCode.unsupported_version,
        api_keys=(m.ApiVersion(api_key=API_VERSIONS, min_version=versions[0], max_version=versions[1]),),
    )
    return encode_response(correlation_id, body)
