"""The control plane of one broker: faults on the request path, crash points, the request log,
and the coordinator levers (markers held, clocks advanced, transactional ids fenced).

Every operation takes effect before it returns, so a test observes it without sleeping; a rule's
``fired`` count says when a fault has acted (:meth:`Control.wait_fired`). The front-ends
(Python, HTTP, CLI) reach these methods through one table, shim.control.ops.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import time
from typing import TYPE_CHECKING, Any, Callable

from ..errors import ErrorCode
from .args import ControlError
from .faults import FaultTable, Match, Rule
from .mirror import error_codes, error_response
from .requestlog import RequestLog

if TYPE_CHECKING:
    from ..apis.context import RequestContext
    from ..node import Node

log = logging.getLogger(__name__)

MAX_LIVE_RULES = 1000  # armed at once; each request is matched against them in turn
CRASH_EXIT_CODE = 86  # the exit status of a process stopped at a crash point
# Named points inside the broker where a crash can be armed (shim.control.ops: crash --point).
CRASH_POINTS = {
    "txn.prepared": "the PrepareCommit/PrepareAbort record is written, no marker yet",
    "txn.markers_written": "the markers are written, the CompleteCommit/CompleteAbort record not yet",
    "share.initializing": "a share group's partitions are written initializing (key 15), their state not yet",
}


class ControlledClose(ConnectionError):
    """The control plane closes this connection (the server ends it without a response)."""


class Control:
    def __init__(self, node: "Node") -> None:
        self.node = node
        self.faults = FaultTable()
        self.requests = RequestLog()
        self.points: dict[str, Rule] = {}  # armed crash points
        self.active = False  # the one check the request path makes
        self._fired: asyncio.Event | None = None
        self.exit: Callable[[int], None] = os._exit
        self.server = None  # the asyncio shell serving the node (shim.server), for node down/up

    def refresh(self) -> None:
        self.active = bool(self.faults.live) or self.requests.enabled

    # -- the request path -------------------------------------------------------------------

    async def intercept(self, ctx: "RequestContext", spec, request: Any, module: Any, pace) -> Any:
        """Handle one request under the armed rules, and log it when the log is on. ``pace``: a
        shim.apis._pace.Pacer for the walks of the request."""
        started = time.monotonic()
        rule = await self.faults.take(ctx.node_id, spec.key, ctx.header.client_id, request, pace) \
            if self.faults.live else None
        outcome, result = "closed", None
        try:
            if rule is None:
                result, outcome = await _run(spec, ctx, request), "answered"
            else:
                self._notify()
                result, outcome = await self._act(rule, spec, ctx, request, module)
        finally:
            if rule is not None and not self.faults.live:
                self.refresh()
            if self.requests.enabled:
                self._record(spec, ctx, result, rule, outcome, started)
        return result

    async def _act(self, rule: Rule, spec, ctx: "RequestContext", request: Any, module: Any) -> tuple[Any, str]:
        if rule.action == "delay":
            await asyncio.sleep(rule.delay_ms / 1000)
            return await _run(spec, ctx, request), "answered"
        if rule.action == "error":
            if spec.key == 0 and getattr(request, "acks", 1) == 0:
                return None, "error"  # acks=0: the refused produce is not answered either
            if hasattr(module, "error_response"):  # the API's own (Kafka: AbstractRequest.getErrorResponse)
                answer = module.error_response(ctx, request, rule.error)
                return (await answer if inspect.isawaitable(answer) else answer), "error"  # OffsetFetch's paces
            return error_response(spec.key, ctx.version, request, rule.error), "error"
        if rule.when == "after":
            result = await _run(spec, ctx, request)
            if rule.action == "crash":
                self._crash(f"after {spec.name} (rule {rule.id})")
            raise ControlledClose(f"closed after {spec.name} by control rule {rule.id}")
        if rule.action == "crash":
            self._crash(f"before {spec.name} (rule {rule.id})")
        raise ControlledClose(f"closed before {spec.name} by control rule {rule.id}")

    def _record(self, spec, ctx: "RequestContext", result: Any, rule: Rule | None, outcome: str,
                started: float) -> None:
        error = next((c for c in error_codes(result) if c != ErrorCode.none), None)
        if outcome == "answered" and result is None:
            outcome = "no response"
        if outcome == "closed" and rule is not None and rule.when == "after":
            outcome = "closed after"
        self.requests.add(api=spec.name, api_key=spec.key, version=ctx.version,
                          correlation_id=ctx.header.correlation_id, client_id=ctx.header.client_id,
                          node=ctx.node_id, latency_ms=round((time.monotonic() - started) * 1000, 3),
                          error=error.name.upper() if error is not None else None,
                          fault=rule.id if rule is not None else None, outcome=outcome)

    # -- rules ------------------------------------------------------------------------------

    def arm(self, action: str, match: Match, **settings) -> Rule:
        if len(self.faults.live) >= MAX_LIVE_RULES:
            raise ControlError(f"{MAX_LIVE_RULES} rules are armed already; clear some first", status=409)
        rule = self.faults.arm(action, match, **settings)
        self.refresh()
        return rule

    def clear(self, rule_id: int | None = None) -> list[int]:
        gone = self.faults.clear(rule_id)
        if rule_id is None or rule_id in [r.id for r in self.points.values()]:
            for name, rule in list(self.points.items()):
                if rule_id is None or rule.id == rule_id:
                    gone.append(rule.id)
                    del self.points[name]
        self.refresh()
        return gone

    async def wait_fired(self, rule_id: int, fired: int, timeout_s: float) -> Rule:
        """Return once rule ``rule_id`` acted ``fired`` times; TimeoutError after ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        while True:
            rule = self.faults.get(rule_id)
            if rule is None:
                raise KeyError(rule_id)
            if rule.fired >= fired:
                return rule
            if self._fired is None:
                self._fired = asyncio.Event()
            await asyncio.wait_for(self._fired.wait(), max(0.0, deadline - time.monotonic()))

    def _notify(self) -> None:
        if self._fired is not None:
            self._fired.set()
            self._fired = None

    # -- crash points -----------------------------------------------------------------------

    def arm_point(self, name: str, skip: int) -> Rule:
        rule = Rule(self.faults.new_id(), "crash", Match(), skip=skip, label=f"crash {name}")
        self.points[name] = rule
        return rule

    def probe(self, name: str) -> None:
        """Called by the broker at a named point: stops the process if a crash is armed there."""
        rule = self.points.get(name)
        if rule is None:
            return
        rule.matched += 1
        if rule.matched > rule.skip:
            self._crash(f"at {name} ({CRASH_POINTS[name]})")

    def _crash(self, where: str) -> None:
        log.critical("kafka-shim: stopped by the control plane %s", where)
        os.write(2, f"kafka-shim: crash point reached: stopped {where}\n".encode())
        self.exit(CRASH_EXIT_CODE)


async def _run(spec, ctx, request) -> Any:
    result = spec.handler(ctx, request)
    if inspect.isawaitable(result):
        result = await result
    return result

