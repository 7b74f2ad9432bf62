"""The operations table: name -> handler with typed, validated arguments.

Python (``broker.control``), HTTP (``--control-listen``) and the CLI (``kafka-shim ctl``) all call
:func:`call`; adding an operation is one :func:`op` entry here. Every handler takes effect before
it returns and answers a JSON-able dict.
"""

from __future__ import annotations

import asyncio
import inspect
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import ErrorCode, KafkaError
from ..node import now_ms
from .args import Arg, BadArgument, ControlError, check_all
from .faults import Match
from .plane import CRASH_POINTS, Control

# Requests a group coordinator answers, and a transaction coordinator (Kafka routes them by
# FindCoordinator; an InitProducerId without a transactional id goes to any broker).
GROUP_COORDINATOR_APIS = frozenset({8, 9, 11, 12, 13, 14, 15, 28, 42, 47, 68, 69})
TXN_COORDINATOR_APIS = frozenset({22, 24, 25, 26})
HEARTBEAT = 12
COORDINATOR_ERRORS = ("NOT_COORDINATOR", "COORDINATOR_LOAD_IN_PROGRESS", "COORDINATOR_NOT_AVAILABLE")


@dataclass(frozen=True)
class Op:
    name: str
    help: str
    args: tuple[Arg, ...]
    handler: Callable[..., Any]

    def describe(self) -> dict:
        return {"name": self.name, "help": self.help, "args": [a.describe() for a in self.args]}


OPS: dict[str, Op] = {}


def op(name: str, help: str, *args: Arg):
    def register(handler):
        OPS[name] = Op(name, help, args, handler)
        return handler
    return register


async def call(control: Control, name: str, given: dict[str, Any] | None = None) -> dict:
    """Run operation ``name`` with ``given`` arguments; ControlError on bad input."""
    spec = OPS.get(name)
    if spec is None:
        raise ControlError(f"no operation {name!r} (known: {', '.join(sorted(OPS))})", status=404)
    args = check_all(spec.args, given or {}, name)
    try:
        result = spec.handler(control, **args)
        if inspect.isawaitable(result):
            result = await result
    except KafkaError as exc:
        raise ControlError(f"{exc.code.name.upper()}: {exc.message or exc.code.name}", status=409) from None
    return result


# -- shared arguments ---------------------------------------------------------------------------

COUNT = Arg("count", "int", "requests acted on (0: every one until cleared)", default=1, minimum=0)
SKIP = Arg("skip", "int", "matching requests let through first", default=0, minimum=0)
FILTERS = (
    Arg("node", "int", "only requests to this node id", minimum=0),
    Arg("topic", "str", "only requests naming this topic"),
    Arg("partition", "int", "only requests naming this partition", minimum=0),
    Arg("client_id", "str", "only requests from this client id"),
    Arg("transactional_id", "str", "only requests of this transactional id"),
    Arg("group_id", "str", "only requests of this group"),
)
WHEN = Arg("when", "choice", "before the request is applied, or after (its response is lost)",
           default="before", choices=("before", "after"))


def _match(api: int | None, node=None, topic=None, partition=None, client_id=None, transactional_id=None,
           group_id=None, apis: frozenset[int] | None = None) -> Match:
    if api is not None:
        apis = frozenset({api})
    return Match(apis, node, topic, partition, client_id, transactional_id, group_id)


def _armed(control: Control, action: str, label: str, match: Match, **settings) -> dict:
    return control.arm(action, match, label=label, **settings).describe()


# -- faults on the request path -----------------------------------------------------------------

@op("error", "answer the next requests of an API with a Kafka error, without applying them",
    Arg("api", "api", "the API (name or key)", required=True),
    Arg("error", "error", "the Kafka error (name or code)", required=True), COUNT, SKIP, *FILTERS)
def _error(control, api, error, count, skip, **filters):
    return _armed(control, "error", "error", _match(api, **filters), error=error, count=count, skip=skip)


@op("delay", "add latency to the next requests (of an API, or of all)",
    Arg("ms", "int", "milliseconds added", required=True, minimum=0, maximum=600_000),
    Arg("api", "api", "the API (name or key); all when omitted"), COUNT, SKIP, *FILTERS)
def _delay(control, ms, api, count, skip, **filters):
    return _armed(control, "delay", "delay", _match(api, **filters), delay_ms=ms, count=count, skip=skip)


@op("close", "close the connection before a request is applied, or after (the response is lost)",
    Arg("api", "api", "the API (name or key); all when omitted"), WHEN, COUNT, SKIP, *FILTERS)
def _close(control, api, when, count, skip, **filters):
    return _armed(control, "close", "close", _match(api, **filters), when=when, count=count, skip=skip)


@op("fail_coordinator", "answer the group or transaction coordinator's requests with a coordinator error",
    Arg("coordinator", "choice", "which coordinator", required=True, choices=("group", "transaction")),
    Arg("error", "choice", "the error", default="NOT_COORDINATOR", choices=COORDINATOR_ERRORS),
    COUNT, SKIP, *FILTERS)
def _fail_coordinator(control, coordinator, error, count, skip, **filters):
    code = ErrorCode[error.lower()]
    apis = GROUP_COORDINATOR_APIS if coordinator == "group" else TXN_COORDINATOR_APIS
    if coordinator == "group" and code == ErrorCode.coordinator_load_in_progress:
        apis -= {HEARTBEAT}  # Kafka: GroupCoordinator.handleHeartbeat answers NONE while the group loads
    match = _match(None, apis=apis, **filters)
    match.transactional_only = coordinator == "transaction"
    return _armed(control, "error", "fail_coordinator", match, error=code, count=count, skip=skip)


@op("crash", "stop the process (os._exit) at a named point, or before/after a request of an API",
    Arg("point", "choice", "a named point", choices=tuple(CRASH_POINTS)),
    Arg("api", "api", "the API (name or key), when no point is named"), WHEN, SKIP, *FILTERS)
def _crash(control, point, api, when, skip, **filters):
    if (point is None) == (api is None):
        raise BadArgument("crash takes either point or api")
    if point is not None:
        if any(v is not None for v in filters.values()):
            raise BadArgument("a crash point takes no request filters")
        return control.arm_point(point, skip).describe()
    return _armed(control, "crash", "crash", _match(api, **filters), when=when, count=1, skip=skip)


@op("faults", "the armed rules and crash points, and the finished ones, with their counts")
def _faults(control):
    return {"rules": [r.describe() for r in control.faults.rules()],
            "points": {name: r.describe() for name, r in control.points.items()}}


@op("clear", "disarm one rule or crash point (or all)",
    Arg("rule", "int", "the rule id; all when omitted", minimum=1))
def _clear(control, rule):
    return {"cleared": control.clear(rule)}


@op("wait", "return once a rule has acted a number of times",
    Arg("rule", "int", "the rule id", required=True, minimum=1),
    Arg("fired", "int", "how many times", default=1, minimum=1),
    Arg("timeout_ms", "int", "give up after this long", default=30_000, minimum=0, maximum=600_000))
async def _wait(control, rule, fired, timeout_ms):
    try:
        return (await control.wait_fired(rule, fired, timeout_ms / 1000)).describe()
    except KeyError:
        raise ControlError(f"no rule {rule}", status=404) from None
    except asyncio.TimeoutError:
        now = control.faults.get(rule)
        raise ControlError(f"rule {rule} fired {now.fired} times, not {fired}, within {timeout_ms} ms",
                           status=408) from None


# -- the request log ----------------------------------------------------------------------------

@op("log_requests", "start (or stop) recording requests in a bounded log",
    Arg("enabled", "bool", "record or not", default=True),
    Arg("capacity", "int", "entries kept (oldest dropped)", default=1000, minimum=1, maximum=100_000))
def _log_requests(control, enabled, capacity):
    if enabled:
        control.requests.start(capacity)
    else:
        control.requests.stop()
    control.refresh()
    return {"enabled": control.requests.enabled, "capacity": control.requests.capacity}


@op("requests", "the recorded requests: API, version, client id, node, latency, error, fault",
    Arg("api", "api", "only this API"), Arg("client_id", "str", "only this client id"),
    Arg("since", "int", "only entries after this seq", default=0, minimum=0),
    Arg("limit", "int", "at most the last N", minimum=1), Arg("clear", "bool", "empty the log after", default=False))
def _requests(control, api, client_id, since, limit, clear):
    from ..apis.registry import REGISTRY

    entries = control.requests.entries(REGISTRY[api].name if api is not None else None, client_id, since, limit)
    if clear:
        control.requests.clear()
    return {"requests": entries}


from . import cluster_ops, levers  # noqa: E402,F401  (the coordinator and cluster operations register themselves)


# -- fetch sessions -----------------------------------------------------------------------------

@op("fetch_sessions", "the incremental fetch sessions (KIP-227): sessions cached, their partitions, "
    "evictions, and incremental fetches served")
def _fetch_sessions(control):
    return control.node.fetch_sessions.stats()
