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
from .mirror import walk_named_ids, walk_topic_partitions

ACTIONS = ("error", "delay", "close", "crash")
FINISHED_KEPT = 256  # finished rules remembered for their counts; older ones are forgotten


@dataclass
class Named:
    """What one request names, for the filters of every rule (shim.control.mirror's walks)."""

    transactional_ids: set = field(default_factory=set)
    group_ids: set = field(default_factory=set)
    topic_partitions: set = field(default_factory=set)  # (topic, partition); partition None: a topic alone
    topics: set = field(default_factory=set)
    partitions: set = field(default_factory=set)

    @classmethod
    async def walk(cls, request: Any, needs: set, pace) -> "Named":
        """The sets ``needs`` asks for ("transactional_id", "group_id", "topic"), walked awaiting
        ``pace`` (shim.apis._pace.Pacer) per entity: a 2 MiB request holds half a million partitions."""
        named = cls()
        for kind, out in (("transactional_id", named.transactional_ids), ("group_id", named.group_ids)):
            if kind in needs:
                out.update([i async for i in pace.each(walk_named_ids(request, kind)) if i is not None])
        if "topic" in needs:
            async for tp in pace.each(walk_topic_partitions(request)):
                if tp is not None:
                    named.topic_partitions.add(tp)
                    named.topics.add(tp[0])
                    named.partitions.add(tp[1])
        return named


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

    @property
    def needs(self) -> set:
        """What the request must be walked for (Named.walk) to match it."""
        out = set()
        if self.transactional_only or self.transactional_id is not None:
            out.add("transactional_id")
        if self.group_id is not None:
            out.add("group_id")
        if self.topic is not None or self.partition is not None:
            out.add("topic")
        return out

    def accepts_header(self, node_id: int, api_key: int, client_id: str | None) -> bool:
        return (self.apis is None or api_key in self.apis) and (self.node is None or node_id == self.node) and (
            self.client_id is None or client_id == self.client_id)

    def accepts(self, node_id: int, api_key: int, client_id: str | None, named: Named) -> bool:
        if not self.accepts_header(node_id, api_key, client_id):
            return False
        if self.transactional_only and not (named.transactional_ids - {""}):
            return False
        if self.transactional_id is not None and self.transactional_id not in named.transactional_ids:
            return False
        if self.group_id is not None and self.group_id not in named.group_ids:
            return False
        if self.topic is not None and self.partition is not None:
            return (self.topic, self.partition) in named.topic_partitions
        if self.topic is not None:
            return self.topic in named.topics
        if self.partition is not None:
            return self.partition in named.partitions
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

    async def take(self, node_id: int, api_key: int, client_id: str | None, request: Any, pace) -> Rule | None:
        """The first rule live when the request came (and still live) that it triggers, counted as
        fired; None if it triggers none. What the request names is walked once for every rule."""
        rules = [r for r in self.live if r.match.accepts_header(node_id, api_key, client_id)]
        needs = set().union(*(r.match.needs for r in rules))
        named = await Named.walk(request, needs, pace) if needs else Named()
        live = {id(r) for r in self.live}  # cleared or finished by another request meanwhile: not again
        for rule in rules:
            if id(rule) not in live or not rule.match.accepts(node_id, api_key, client_id, named):
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
