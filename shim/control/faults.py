"""The fault table: rules armed by the control plane, matched against each request.

A rule says what to do (answer with an error, add latency, close the connection before or after
the request is applied, stop the process) to which requests (an API, and optionally a node,
topic, partition, client id, transactional id or group id), how many of them (``count``; 0 is
every one until cleared) after letting ``skip`` matching ones through. A rule counts the
requests it matched and the ones it acted on (``fired``), so a test can wait for its effect.

Unarmed, the request path pays one truth test of :attr:`FaultTable.live` (see
shim.control.plane.Control.active).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from ..errors import ErrorCode
from .mirror import named_ids, topic_partitions

ACTIONS = ("error", "delay", "close", "crash")
FINISHED_KEPT = 256  # finished rules remembered for their counts; older ones are forgotten


@dataclass
class Match:
    """Which requests a rule applies to; None matches anything."""

    apis: frozenset[int] | None = None
    node: int | None = None
    topic: str | None = None
    partition: int | None = None
    client_id: str | None = None
    transactional_id: str | None = None
    group_id: str | None = None
    transactional_only: bool = False  # only requests that name a transactional id

    def accepts(self, node_id: int, api_key: int, client_id: str | None, request: Any) -> bool:
        if self.apis is not None and api_key not in self.apis:
            return False
        if self.node is not None and node_id != self.node:
            return False
        if self.client_id is not None and client_id != self.client_id:
            return False
        if self.transactional_only and not (named_ids(request, "transactional_id") - {""}):
            return False
        if self.transactional_id is not None and self.transactional_id not in named_ids(request, "transactional_id"):
            return False
        if self.group_id is not None and self.group_id not in named_ids(request, "group_id"):
            return False
        if self.topic is not None or self.partition is not None:
            return any((self.topic is None or t == self.topic) and (self.partition is None or p == self.partition)
                       for t, p in topic_partitions(request))
        return True

    def describe(self) -> dict:
        out = {k: v for k, v in dataclasses.asdict(self).items() if v not in (None, False) and k != "apis"}
        if self.apis is not None:
            out["apis"] = sorted(self.apis)
        return out


@dataclass
class Rule:
    id: int
    action: str
    match: Match
    when: str = "before"  # close/crash: before the request is applied, or after (its response is lost)
    error: ErrorCode | None = None
    delay_ms: int = 0
    count: int = 1  # requests acted on before the rule finishes; 0 = until cleared
    skip: int = 0  # matching requests let through first
    label: str = ""  # the operation that armed it
    matched: int = 0
    fired: int = 0

    @property
    def finished(self) -> bool:
        return self.count > 0 and self.fired >= self.count

    def describe(self) -> dict:
        out = {"rule": self.id, "op": self.label, "action": self.action, "when": self.when,
               "count": self.count, "skip": self.skip, "matched": self.matched, "fired": self.fired,
               "finished": self.finished, "match": self.match.describe()}
        if self.error is not None:
            out["error"] = self.error.name.upper()
        if self.delay_ms:
            out["delay_ms"] = self.delay_ms
        return out


@dataclass
class FaultTable:
    live: list[Rule] = field(default_factory=list)
    finished: list[Rule] = field(default_factory=list)
    _next_id: int = 1

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id - 1

    def arm(self, action: str, match: Match, **settings) -> Rule:
        rule = Rule(self.new_id(), action, match, **settings)
        self.live.append(rule)
        return rule

    def take(self, node_id: int, api_key: int, client_id: str | None, request: Any) -> Rule | None:
        """The first live rule this request triggers, counted as fired; None if it triggers none."""
        for rule in self.live:
            if not rule.match.accepts(node_id, api_key, client_id, request):
                continue
            rule.matched += 1
            if rule.matched <= rule.skip:
                continue
            rule.fired += 1
            if rule.finished:
                self._retire(rule)
            return rule
        return None

    def _retire(self, rule: Rule) -> None:
        self.live.remove(rule)
        self.finished.append(rule)
        del self.finished[:-FINISHED_KEPT]

    def get(self, rule_id: int) -> Rule | None:
        return next((r for r in self.live + self.finished if r.id == rule_id), None)

    def clear(self, rule_id: int | None = None) -> list[int]:
        """Disarm one rule (or all); returns the ids disarmed."""
        gone = [r for r in self.live if rule_id is None or r.id == rule_id]
        for rule in gone:
            self._retire(rule)
        return [r.id for r in gone]

    def rules(self) -> list[Rule]:
        return self.finished + self.live
