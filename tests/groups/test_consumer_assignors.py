"""The server-side assignors of consumer groups: every subscribed partition assigned once, to a
subscriber; uniform balanced and sticky; range contiguous per topic."""

from __future__ import annotations

import uuid

from hypothesis import given, settings
from hypothesis import strategies as st

from shim.coordinators.group.consumer_assignors import ASSIGNORS, MemberSpec, kafka_order, range_, uniform

TOPICS = [uuid.UUID(int=i + 1) for i in range(4)]


def check_complete(members, topics, out):
    seen = {}
    for m, assignment in out.items():
        for t, ps in assignment.items():
            assert t in members[m].subscribed
            for p in ps:
                assert (t, p) not in seen and 0 <= p < topics[t]
                seen[(t, p)] = m
    wanted = {(t, p) for spec in members.values() for t in spec.subscribed if t in topics for p in range(topics[t])}
    assert set(seen) == wanted


def size(a):
    return sum(len(ps) for ps in a.values())


layouts = st.fixed_dictionaries({}).flatmap(lambda _: st.tuples(
    st.lists(st.integers(0, 12), min_size=4, max_size=4),  # partitions per topic
    st.integers(1, 6),  # members
    st.booleans(),  # same subscription for everyone
    st.randoms(use_true_random=False)))


@settings(max_examples=150, deadline=None)
@given(layouts)
def test_uniform_assigns_everything_once_balanced_and_keeps_what_it_can(layout):
    counts, n, homogeneous, rnd = layout
    topics = {t: c for t, c in zip(TOPICS, counts)}
    subs = [frozenset(TOPICS) if homogeneous else frozenset(rnd.sample(TOPICS, rnd.randint(1, 4))) for _ in range(n)]
    members = {f"m{i}": MemberSpec(subs[i], {}) for i in range(n)}
    first = uniform(members, topics)
    check_complete(members, topics, first)
    if homogeneous:
        sizes = [size(a) for a in first.values()]
        assert max(sizes) - min(sizes) <= 1
    # one member more: the others keep everything the new balance lets them keep
    members2 = {m: MemberSpec(spec.subscribed, first[m]) for m, spec in members.items()}
    members2["new"] = MemberSpec(frozenset(TOPICS), {})
    second = uniform(members2, topics)
    check_complete(members2, topics, second)
    if homogeneous:
        sizes = [size(a) for a in second.values()]
        assert max(sizes) - min(sizes) <= 1
        moved = sum(size({t: ps - second[m].get(t, frozenset()) for t, ps in first[m].items()}) for m in first)
        assert moved == size(second["new"])  # only what the new member gets changes hands


@settings(max_examples=100, deadline=None)
@given(layouts)
def test_range_gives_each_topic_in_contiguous_ranges(layout):
    counts, n, _, rnd = layout
    topics = {t: c for t, c in zip(TOPICS, counts)}
    members = {f"m{i}": MemberSpec(frozenset(rnd.sample(TOPICS, rnd.randint(1, 4))), {}) for i in range(n)}
    out = range_(members, topics)
    check_complete(members, topics, out)
    for t in TOPICS:
        subs = sorted(m for m in members if t in members[m].subscribed)
        if not subs:
            continue
        got = [sorted(out[m].get(t, ())) for m in subs]
        assert [p for ps in got for p in ps] == list(range(topics[t]))  # in member order, contiguous
        assert max(map(len, got)) - min(map(len, got)) <= 1


def loads(out):
    return {m: size(a) for m, a in out.items()}


@settings(max_examples=150, deadline=None)
@given(layouts)
def test_uniform_for_different_subscriptions_leaves_no_partition_that_could_move_to_balance(layout):
    """Kafka's heterogeneous builder: no subscriber of a topic holds a partition of it while another
    subscriber of that topic has two or more partitions fewer in all."""
    counts, n, _, rnd = layout
    topics = {t: c for t, c in zip(TOPICS, counts)}
    members = {f"m{i}": MemberSpec(frozenset(rnd.sample(TOPICS, rnd.randint(1, 4))), {}) for i in range(n)}
    out = kafka_order_uniform(members, topics)
    check_complete(members, topics, out)
    load = {m: size(out.get(m, {})) for m in members}
    for t in topics:
        subs = [m for m in members if t in members[m].subscribed]
        for holder in subs:
            if out.get(holder, {}).get(t):
                assert all(load[holder] - load[other] <= 1 for other in subs)


def kafka_order_uniform(members, topics):
    return uniform(kafka_order(members), topics)


@settings(max_examples=150, deadline=None)
@given(layouts, st.sampled_from(["uniform", "range"]))
def test_an_assignment_given_back_as_the_current_one_stays_as_it_is(layout, name):
    """Stickiness at rest: with nothing changed, running the assignor again moves nothing."""
    counts, n, homogeneous, rnd = layout
    topics = {t: c for t, c in zip(TOPICS, counts)}
    subs = [frozenset(TOPICS) if homogeneous else frozenset(rnd.sample(TOPICS, rnd.randint(1, 4))) for _ in range(n)]
    members = kafka_order({f"m{i}": MemberSpec(subs[i], {}) for i in range(n)})
    assign = ASSIGNORS[name]
    first = assign(members, topics)
    again = assign(kafka_order({m: spec._replace(current=first.get(m, {})) for m, spec in members.items()}), topics)
    assert {m: a for m, a in again.items() if a} == {m: a for m, a in first.items() if a}


@settings(max_examples=100, deadline=None)
@given(layouts)
def test_uniform_keeps_every_member_what_its_new_quota_allows_when_one_leaves(layout):
    """A member leaving: with one subscription everyone else keeps all it had, and takes a share of
    the leaver's partitions; every partition is still owned exactly once."""
    counts, n, _, rnd = layout
    topics = {t: c for t, c in zip(TOPICS, counts)}
    members = kafka_order({f"m{i}": MemberSpec(frozenset(TOPICS), {}) for i in range(n + 1)})
    first = uniform(members, topics)
    gone = rnd.choice(sorted(members))
    rest = kafka_order({m: spec._replace(current=first.get(m, {})) for m, spec in members.items() if m != gone})
    second = uniform(rest, topics)
    check_complete(rest, topics, second)
    sizes = [size(second.get(m, {})) for m in rest]
    assert max(sizes) - min(sizes) <= 1
    for m in rest:
        kept = size({t: ps & second.get(m, {}).get(t, frozenset()) for t, ps in first.get(m, {}).items()})
        assert kept == min(size(first.get(m, {})), size(second.get(m, {})))


def test_a_hundred_members_over_a_thousand_partitions_are_assigned_in_milliseconds():
    """The target assignment is computed on the coordinator's loop: it must stay cheap (about 2 ms
    here for 100 members and 1,000 partitions; the bound leaves room for a loaded machine)."""
    import random
    import time
    rnd = random.Random(7)
    topics = {uuid.UUID(int=rnd.getrandbits(128)): 100 for _ in range(10)}
    ids = [str(uuid.UUID(int=rnd.getrandbits(128))) for _ in range(100)]
    fresh = {m: MemberSpec(frozenset(topics), {}) for m in ids}
    first = uniform(kafka_order(fresh), topics)
    joined = {m: MemberSpec(frozenset(topics), first[m]) for m in ids[:-1]}
    joined[ids[-1]] = MemberSpec(frozenset(topics), {})
    mixed = {m: MemberSpec(frozenset(rnd.sample(sorted(topics), 5)), {}) for m in ids}
    for members in (fresh, joined, mixed):
        best = min(_timed(lambda: uniform(kafka_order(members), topics), time) for _ in range(5))
        assert best < 0.05


def _timed(fn, time):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


@settings(max_examples=150, deadline=None)
@given(layouts, st.sampled_from(["uniform", "range"]))
def test_a_settled_assignment_stays_whatever_the_order_the_members_come_in(layout, name):
    """Kafka's CommonAssignorTests.testReassignmentStickiness: the assignor given its own assignment
    back, with the members in any order, changes nothing."""
    counts, n, homogeneous, rnd = layout
    topics = {t: c for t, c in zip(TOPICS, counts)}
    subs = [frozenset(TOPICS) if homogeneous else frozenset(rnd.sample(TOPICS, rnd.randint(1, 4))) for _ in range(n)]
    members = {f"m{i}": MemberSpec(subs[i], {}) for i in range(n)}
    first = ASSIGNORS[name](kafka_order(members), topics)
    order = sorted(members)
    rnd.shuffle(order)
    again = ASSIGNORS[name]({m: members[m]._replace(current=first.get(m, {})) for m in order}, topics)
    assert {m: a for m, a in again.items() if a} == {m: a for m, a in first.items() if a}
