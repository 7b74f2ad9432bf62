"""The server-side assignors of consumer groups: every subscribed partition assigned once, to a
subscriber; uniform balanced and sticky; range contiguous per topic."""

from __future__ import annotations

import uuid

from hypothesis import given, settings
from hypothesis import strategies as st

from shim.coordinators.group.consumer_assignors import MemberSpec, range_, uniform

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
