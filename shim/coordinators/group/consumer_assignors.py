"""Server-side assignors of consumer groups (Kafka 4.1: ``assignor/UniformAssignor`` with its
homogeneous and heterogeneous builders, ``assignor/RangeAssignor``; ``group.consumer.assignors``,
the first is the default). They give the assignment Kafka gives for the same input.

An assignor maps the members (subscribed topic ids, current target assignment, instance id, rack)
and the subscribed topics (partition counts) to a new target assignment. Pure functions; the
coordinator runs one whenever the group epoch passes the assignment epoch.

Kafka's result depends on the order in which it walks its inputs: members, topics and partitions
come out of Java ``HashMap``/``HashSet`` iteration. The assignors walk the dicts they are given in
order; :func:`kafka_order` puts the coordinator's members and assignments into the order Kafka's
group coordinator would walk them (``java_order`` emulates a Java hash table's iteration).

* ``uniform``, all members with the same subscription: members keep what they own up to their
  quota (``partitions // members``, one more for the ``partitions % members`` members entitled to
  it); a member with room gives its extra partition up unless it is among the last that must take
  one; the partitions left, subscribed topics in hash order and revoked ones after, fill the
  members with room in order.
* ``uniform``, different subscriptions: members keep what they own of their subscription; each
  remaining topic (most partitions per subscriber first, then fewest subscribers, then topic id)
  goes one partition at a time to its least loaded subscriber (ties: member order); then each
  topic with two or more subscribers moves partitions, the highest numbered first, from its most to
  its least loaded subscribers until they differ by at most one, repeated over the topics (at most
  16 rounds) until a round moves nothing.
* ``range``: members sorted by instance id (static members first), then member id; per topic its
  subscribers take contiguous ranges in that order, the first ``partitions % subscribers`` one
  more, so co-partitioned topics line up and static members keep their ranges across restarts.

Racks: Kafka 4.1's built-in assignors do not use rack information (only a custom assignor can);
members' and partitions' racks are part of the input and ignored here as there.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import NamedTuple

from .consumer_group import Assignment

UNIFORM, RANGE = "uniform", "range"
DEFAULT_ASSIGNORS = (UNIFORM, RANGE)  # Kafka: group.consumer.assignors
MAX_BALANCE_ROUNDS = 16  # Kafka: UniformHeterogeneousAssignmentBuilder.MAX_ITERATION_COUNT


class AssignorError(Exception):
    """Kafka: PartitionAssignorException (a subscribed topic has no metadata)."""


class MemberSpec(NamedTuple):
    subscribed: frozenset[uuid.UUID]
    current: Mapping[uuid.UUID, Iterable[int]]  # walked in the order given (see kafka_order)
    instance_id: str | None = None
    rack_id: str | None = None


TopicPartitions = dict[uuid.UUID, int]  # topic id -> number of partitions
Assignor = Callable[..., dict[str, Assignment]]  # (members, topics, homogeneous=None)


# -- Java hash-table iteration order ------------------------------------------------------------

def string_hash(s: str) -> int:
    """java.lang.String.hashCode over UTF-16 code units, as an unsigned 32-bit value."""
    h = 0
    data = s.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h


def uuid_hash(u: uuid.UUID) -> int:
    """org.apache.kafka.common.Uuid.hashCode."""
    x = (u.int >> 64) ^ (u.int & 0xFFFFFFFFFFFFFFFF)
    return ((x >> 32) ^ x) & 0xFFFFFFFF


def uuid_key(u: uuid.UUID) -> tuple[int, int]:
    """org.apache.kafka.common.Uuid.compareTo: signed most, then least significant bits."""
    def signed(v: int) -> int:
        return v - (1 << 64) if v >= 1 << 63 else v
    return signed(u.int >> 64), signed(u.int & 0xFFFFFFFFFFFFFFFF)


def grown_capacity(n: int) -> int:
    """Table size of a default HashMap/HashSet after n puts (load factor 0.75)."""
    cap = 16
    while n > cap * 3 // 4:
        cap *= 2
    return cap


def copied_capacity(n: int) -> int:
    """Table size of ``new HashSet<>(collection)`` of n elements."""
    want, cap = max(int(n / 0.75) + 1, 16), 1
    while cap < want:
        cap *= 2
    return cap


def java_order(keys: Iterable, hash_of: Callable[[Hashable], int], capacity: int | None = None) -> list:
    """The order a Java HashMap iterates keys inserted in the given order: by bucket, then insertion
    (resizing keeps the relative order within a bucket)."""
    keys = list(keys)
    mask = (capacity or grown_capacity(len(keys))) - 1
    return sorted(keys, key=lambda k: ((h := hash_of(k)) ^ (h >> 16)) & mask)


@functools.lru_cache(maxsize=16384)
def _partition_order(partitions: frozenset[int]) -> tuple[int, ...]:
    """A partition set read back from a target-assignment record (``new HashSet<>(list)``).
    Cached: a group's target assignments are the same frozensets from one run to the next."""
    ps = sorted(partitions)
    cap = copied_capacity(len(ps))
    if not ps or ps[-1] < cap:  # every partition in a bucket of its own: ascending
        return tuple(ps)
    return tuple(java_order(ps, lambda p: p, cap))


def _topic_order(topics: Iterable[uuid.UUID], keys: dict) -> list[uuid.UUID]:
    """Topic ids as a default HashMap lists them; ``keys`` caches each topic's sort key per table size."""
    topics = list(topics)
    if len(topics) < 2:
        return topics
    cap = grown_capacity(len(topics))
    by_topic = keys.get(cap)
    if by_topic is None:
        by_topic = keys[cap] = {}
    for t in topics:
        if t not in by_topic:
            h = uuid_hash(t)
            by_topic[t] = ((h ^ (h >> 16)) & (cap - 1), uuid_key(t))
    return sorted(topics, key=by_topic.__getitem__)


def kafka_order(members: Mapping[str, MemberSpec]) -> dict[str, MemberSpec]:
    """Members and their current assignments in the order Kafka's TargetAssignmentBuilder hands them
    to the assignor: a HashMap of member ids, each assignment a HashMap of topic ids to HashSets."""
    out, keys = {}, {}
    for mid in java_order(members, string_hash):
        spec = members[mid]
        current = spec.current
        out[mid] = spec._replace(current={t: _partition_order(frozenset(current[t]))
                                          for t in _topic_order(current, keys)})
    return out


def homogeneous_subscriptions(subscriptions: Iterable[tuple[Iterable[str], str | None]]) -> bool:
    """Kafka: ConsumerGroup.subscriptionType from each member's (topic names, regex). Homogeneous when
    every name is subscribed by every member and no regex is used, or when every member uses the one
    regex and no names."""
    subs = [(frozenset(names), regex or None) for names, regex in subscriptions]
    regexes = {regex for _, regex in subs}
    if regexes == {None}:
        return len({names for names, _ in subs}) <= 1
    return len(regexes) == 1 and not any(names for names, _ in subs)


def _check_topics(members: Mapping[str, MemberSpec], topics: TopicPartitions) -> None:
    for spec in members.values():
        for t in spec.subscribed:
            if t not in topics:
                raise AssignorError(f"Members are subscribed to topic {t} which doesn't exist in the topic metadata.")


def _freeze(out: Mapping[str, Mapping[uuid.UUID, Iterable[int]]]) -> dict[str, Assignment]:
    return {m: {t: frozenset(ps) for t, ps in a.items() if ps} for m, a in out.items()}


# -- uniform --------------------------------------------------------------------------------------

def uniform(members: dict[str, MemberSpec], topics: TopicPartitions,
            homogeneous: bool | None = None) -> dict[str, Assignment]:
    """Kafka: UniformAssignor. ``homogeneous`` is the group's subscription type (Kafka derives it
    from the subscribed names and regexes); by default, whether all subscriptions are equal."""
    if not members:
        return {}
    if homogeneous is None:
        homogeneous = len({spec.subscribed for spec in members.values()}) == 1
    if homogeneous:
        return uniform_homogeneous(members, topics)
    return uniform_heterogeneous(members, topics)


def uniform_homogeneous(members: dict[str, MemberSpec], topics: TopicPartitions) -> dict[str, Assignment]:
    """Kafka: UniformHomogeneousAssignmentBuilder; every member has the first member's subscription."""
    first = next(iter(members.values()))
    subscribed = first.subscribed
    if not subscribed:
        return {}
    _check_topics({"": first}, topics)
    taken: dict[uuid.UUID, set[int]] = {t: set() for t in subscribed}
    for spec in members.values():
        for t, ps in spec.current.items():
            if t in taken:
                taken[t].update(ps)
    free = [(t, p) for t in java_order(sorted(subscribed, key=uuid_key), uuid_hash,
                                       copied_capacity(len(subscribed)))
            for p in range(topics[t]) if p not in taken[t]]
    total = sum(topics[t] for t in subscribed)
    base, extra = divmod(total, len(members))
    out: dict[str, dict[uuid.UUID, list[int]]] = {}
    room: list[tuple[str, int]] = []
    for index, (mid, spec) in enumerate(members.items()):
        quota, has_extra = (base + 1, True) if extra > 0 else (base, False)
        kept: dict[uuid.UUID, list[int]] = {}
        for t, ps in spec.current.items():
            if t not in subscribed:
                continue
            ps = [p for p in ps if p < topics[t]]  # a partition the topic no longer has is dropped
            kept[t] = ps[:quota]
            free.extend((t, p) for p in ps[quota:])
            quota -= len(kept[t])
        if quota > 0 and has_extra and len(members) - index > extra:
            quota, has_extra = quota - 1, False  # leave the extra partition to a later member
        if quota > 0:
            room.append((mid, quota))
        if has_extra:
            extra -= 1
        out[mid] = kept
    given = 0
    for mid, quota in room:
        for t, p in free[given:given + quota]:
            out[mid].setdefault(t, []).append(p)
        given += quota
    if given < len(free):
        raise AssignorError("Partitions were left unassigned")
    return _freeze(out)


class _Balancer:
    """Kafka: UniformHeterogeneousAssignmentBuilder.MemberAssignmentBalancer. A topic's subscribers
    sorted by load; a range of least loaded members that grows rightwards as it fills, and a range
    of most loaded ones that grows leftwards as it gives up partitions."""

    def __init__(self, sizes: list[int]):
        self.sizes = sizes
        self.order: list[int] = []

    def initialize(self, members: list[int]) -> int:
        sizes = self.sizes
        self.order = order = sorted(members, key=lambda i: (sizes[i], i))
        self.least_end, self.least_count, self.next_least = 0, sizes[order[0]] - 1, 0
        self.most_start = self.most_end = len(order)
        self.most_count, self.next_most = sizes[order[-1]] + 1, len(order) - 1
        return sizes[order[-1]] - sizes[order[0]]

    def next_least_loaded(self) -> int:
        order, sizes = self.order, self.sizes
        if self.next_least >= self.least_end:
            self.least_count += 1
            while self.least_end < len(order) and sizes[order[self.least_end]] == self.least_count:
                self.least_end += 1
            self.next_least = 0
        self.next_least += 1
        return order[self.next_least - 1]

    def next_most_loaded(self) -> int:
        order, sizes = self.order, self.sizes
        if self.next_most < self.most_start:
            if self.most_end <= self.most_start and self.most_start > 0:
                self.most_count = sizes[order[self.most_start - 1]]
            else:
                self.most_count -= 1
            while self.most_start > 0 and sizes[order[self.most_start - 1]] == self.most_count:
                self.most_start -= 1
            self.next_most = self.most_end - 1
        if self.next_most < 0:
            return -1
        self.next_most -= 1
        return order[self.next_most + 1]

    def exclude_most_loaded(self) -> None:
        """Swap the member last returned by next_most_loaded to the end of the range, and shrink it."""
        i, j = self.next_most + 1, self.most_end - 1
        self.order[i], self.order[j] = self.order[j], self.order[i]
        self.most_end -= 1

    def balanced(self) -> bool:
        return self.most_count - self.least_count <= 1


class _Heterogeneous:
    """Kafka: UniformHeterogeneousAssignmentBuilder. Members are numbered in the order given."""

    def __init__(self, members: dict[str, MemberSpec], topics: TopicPartitions):
        _check_topics(members, topics)
        self.ids = list(members)
        self.topics = topics
        self.subscribers: dict[uuid.UUID, list[int]] = {}
        for i, spec in enumerate(members.values()):
            for t in spec.subscribed:
                self.subscribers.setdefault(t, []).append(i)
        self.sizes = [0] * len(self.ids)
        self.owners = {t: [-1] * topics[t] for t in self.subscribers}
        self.out: dict[str, dict[uuid.UUID, set[int]]] = {}
        for i, (mid, spec) in enumerate(members.items()):  # keep what is still subscribed
            kept = {t: {p for p in ps if p < topics[t]} for t, ps in spec.current.items() if t in spec.subscribed}
            for t, ps in kept.items():
                self.sizes[i] += len(ps)
                for p in ps:
                    self.owners[t][p] = i
            self.out[mid] = kept

    def topic_order(self, topic_ids) -> list[uuid.UUID]:
        """Most partitions per subscriber first, then fewest subscribers, then topic id."""
        def key(t):
            n, s = self.topics[t], len(self.subscribers[t])
            return -(n / s), s, uuid_key(t)
        return sorted(topic_ids, key=key)

    def move(self, t: uuid.UUID, p: int, i: int) -> None:
        old = self.owners[t][p]
        if old != -1:
            ps = self.out[self.ids[old]][t]
            ps.discard(p)
            if not ps:
                del self.out[self.ids[old]][t]
            self.sizes[old] -= 1
        self.out[self.ids[i]].setdefault(t, set()).add(p)
        self.owners[t][p] = i
        self.sizes[i] += 1

    def assign_unowned(self) -> None:
        balancer = _Balancer(self.sizes)
        for t in self.topic_order(self.subscribers):
            unowned = [p for p, owner in enumerate(self.owners[t]) if owner == -1]
            if unowned:
                balancer.initialize(self.subscribers[t])
                for p in unowned:
                    self.move(t, p, balancer.next_least_loaded())

    def balance(self) -> None:
        order = self.topic_order(t for t, subs in self.subscribers.items() if len(subs) >= 2)
        if not order:
            return
        balancer, last = _Balancer(self.sizes), -1
        for _ in range(MAX_BALANCE_ROUNDS):
            for index, t in enumerate(order):
                if index == last:
                    return  # a whole round without a move
                if self.balance_topic(t, balancer) > 0 or last == -1:
                    last = index

    def balance_topic(self, t: uuid.UUID, balancer: _Balancer) -> int:
        """Move the topic's partitions, each giver's highest numbered first, from its most to its
        least loaded subscribers until their loads differ by at most one."""
        if balancer.initialize(self.subscribers[t]) <= 1:
            return 0
        owners = self.owners[t]
        parts = sorted(range(self.topics[t]), key=lambda p: (owners[p], p))
        start: dict[int, int] = {}
        end: dict[int, int] = {}
        for i, p in enumerate(parts):
            start.setdefault(owners[p], i)
            end[owners[p]] = i + 1
        moved = 0
        while not balancer.balanced():
            giver = balancer.next_most_loaded()
            while giver != -1 and end.get(giver, 0) - start.get(giver, 0) <= 0:
                balancer.exclude_most_loaded()
                giver = balancer.next_most_loaded()
            if giver == -1:
                break
            end[giver] -= 1
            taker = balancer.next_least_loaded()
            if balancer.balanced():
                break
            self.move(t, parts[end[giver]], taker)
            moved += 1
        return moved


def uniform_heterogeneous(members: dict[str, MemberSpec], topics: TopicPartitions) -> dict[str, Assignment]:
    """Kafka: UniformHeterogeneousAssignmentBuilder."""
    builder = _Heterogeneous(members, topics)
    if not builder.subscribers:
        return {}
    builder.assign_unowned()
    builder.balance()
    return _freeze(builder.out)


# -- range ----------------------------------------------------------------------------------------

def range_order(members: Mapping[str, MemberSpec]) -> list[str]:
    """Kafka: RangeAssignor.sortMemberIds -- static members by instance id first, then member ids."""
    return sorted(members, key=lambda m: (0, members[m].instance_id, "") if members[m].instance_id is not None
                  else (1, "", m))


def range_(members: dict[str, MemberSpec], topics: TopicPartitions,
           homogeneous: bool | None = None) -> dict[str, Assignment]:
    """Kafka: RangeAssignor (homogeneous and heterogeneous groups alike, per topic)."""
    _check_topics(members, topics)
    order = range_order(members)
    out: dict[str, dict[uuid.UUID, range]] = {m: {} for m in order if members[m].subscribed}
    subscribers: dict[uuid.UUID, list[str]] = {}
    for m in order:
        for t in members[m].subscribed:
            subscribers.setdefault(t, []).append(m)
    for t, subs in subscribers.items():
        n = topics[t]
        quota, extra = divmod(n, len(subs))
        start = 0
        for i, m in enumerate(subs):
            end = min(start + quota + (1 if i < extra else 0), n)
            out[m][t] = range(start, end)
            start = end
    return _freeze(out)


ASSIGNORS: dict[str, Assignor] = {UNIFORM: uniform, RANGE: range_}
