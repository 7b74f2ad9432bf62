"""Server-side assignors of consumer groups (Kafka 4: ``assignor/UniformAssignor``,
``assignor/RangeAssignor``; ``group.consumer.assignors``, the first is the default).

An assignor maps each member's subscribed topic ids and current target assignment to a new target
assignment. Pure functions; the coordinator runs one whenever the group epoch passes the
assignment epoch.

* ``uniform``: every partition of a subscribed topic goes to one of its subscribers, partition
  counts differ by at most one among members that could take each other's partitions, and a
  partition stays with its owner unless balance needs it elsewhere.
* ``range``: per topic, its subscribers sorted by member id take contiguous ranges, the first
  ``partitions % subscribers`` one partition more, so that co-partitioned topics line up.
"""

from __future__ import annotations

import uuid
from typing import Callable, NamedTuple

from .consumer_group import Assignment

UNIFORM, RANGE = "uniform", "range"
DEFAULT_ASSIGNORS = (UNIFORM, RANGE)  # Kafka: group.consumer.assignors


class MemberSpec(NamedTuple):
    subscribed: frozenset[uuid.UUID]
    current: Assignment


TopicPartitions = dict[uuid.UUID, int]  # topic id -> number of partitions
Assignor = Callable[[dict[str, MemberSpec], TopicPartitions], dict[str, Assignment]]


def _freeze(out: dict[str, dict[uuid.UUID, set[int]]]) -> dict[str, Assignment]:
    return {m: {t: frozenset(ps) for t, ps in a.items() if ps} for m, a in out.items()}


def uniform(members: dict[str, MemberSpec], topics: TopicPartitions) -> dict[str, Assignment]:
    subscriptions = {frozenset(spec.subscribed & topics.keys()) for spec in members.values()}
    if len(subscriptions) == 1:
        return _uniform_homogeneous(members, topics, next(iter(subscriptions)))
    return _uniform_general(members, topics)


def _uniform_homogeneous(members: dict[str, MemberSpec], topics: TopicPartitions,
                         subscribed: frozenset[uuid.UUID]) -> dict[str, Assignment]:
    """Every member subscribes to the same topics (Kafka: UniformHomogeneousAssignmentBuilder):
    each keeps up to its quota of what it has, the rest fills those below quota. Linear."""
    order = sorted(members)
    every = [(t, p) for t in sorted(subscribed, key=str) for p in range(topics[t])]
    base, extra = divmod(len(every), len(order)) if order else (0, 0)
    out: dict[str, dict[uuid.UUID, set[int]]] = {m: {} for m in order}
    count = dict.fromkeys(order, 0)
    taken: set[tuple[uuid.UUID, int]] = set()
    for m in order:  # stickiness, up to the quota; a member over it keeps one more while extras last
        kept = sorted((t, p) for t, ps in members[m].current.items() if t in subscribed
                      for p in ps if p < topics[t] and (t, p) not in taken)
        quota = base + 1 if len(kept) > base and extra > 0 else base
        if quota > base:
            extra -= 1
        for t, p in kept[:quota]:
            out[m].setdefault(t, set()).add(p)
            taken.add((t, p))
        count[m] = min(len(kept), quota)
    free = [tp for tp in every if tp not in taken]
    given = 0
    for m in order:  # up to the base quota ...
        while count[m] < base:
            t, p = free[given]
            out[m].setdefault(t, set()).add(p)
            count[m] += 1
            given += 1
    for m in order:  # ... then the partitions left over, one to each member still at it
        if given == len(free):
            break
        if count[m] == base:
            t, p = free[given]
            out[m].setdefault(t, set()).add(p)
            count[m] += 1
            given += 1
    return _freeze(out)


def _uniform_general(members: dict[str, MemberSpec], topics: TopicPartitions) -> dict[str, Assignment]:
    """Members subscribe to different topics (Kafka: UniformHeterogeneousAssignmentBuilder)."""
    out: dict[str, dict[uuid.UUID, set[int]]] = {m: {} for m in members}
    owner: dict[tuple[uuid.UUID, int], str] = {}
    count = {m: 0 for m in members}
    order = sorted(members)
    for m in order:  # stickiness: a partition stays where it is, once
        for t, ps in members[m].current.items():
            if t not in members[m].subscribed or t not in topics:
                continue
            for p in sorted(ps):
                if p < topics[t] and (t, p) not in owner:
                    owner[(t, p)] = m
                    out[m].setdefault(t, set()).add(p)
                    count[m] += 1
    subscribers = {t: [m for m in order if t in members[m].subscribed] for t in topics}
    for t in sorted(topics, key=lambda t: (len(subscribers[t]), str(t))):
        for p in range(topics[t]):
            if (t, p) in owner or not subscribers[t]:
                continue
            m = min(subscribers[t], key=lambda c: (count[c], c))
            owner[(t, p)] = m
            out[m].setdefault(t, set()).add(p)
            count[m] += 1
    _balance(out, owner, count, subscribers)
    return _freeze(out)


def _balance(out, owner, count, subscribers) -> None:
    """Move partitions from members holding two or more than another subscriber of their topic."""
    moved = True
    while moved:
        moved = False
        for (t, p), m in sorted(owner.items(), key=lambda kv: (-count[kv[1]], str(kv[0][0]), kv[0][1])):
            target = min(subscribers[t], key=lambda c: (count[c], c))
            if count[target] + 1 < count[m]:
                out[m][t].discard(p)
                out[target].setdefault(t, set()).add(p)
                owner[(t, p)] = target
                count[m] -= 1
                count[target] += 1
                moved = True


def range_(members: dict[str, MemberSpec], topics: TopicPartitions) -> dict[str, Assignment]:
    out: dict[str, dict[uuid.UUID, set[int]]] = {m: {} for m in members}
    for t, n in topics.items():
        subs = sorted(m for m, spec in members.items() if t in spec.subscribed)
        if not subs:
            continue
        quota, extra = divmod(n, len(subs))
        start = 0
        for i, m in enumerate(subs):
            size = quota + (1 if i < extra else 0)
            if size:
                out[m][t] = set(range(start, start + size))
            start += size
    return _freeze(out)


ASSIGNORS: dict[str, Assignor] = {UNIFORM: uniform, RANGE: range_}
