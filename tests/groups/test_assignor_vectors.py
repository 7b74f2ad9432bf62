"""Apache Kafka 4.1's own assignor test vectors (group-coordinator's UniformHomogeneousAssignmentBuilderTest,
UniformHeterogeneousAssignmentBuilderTest and RangeAssignorTest), as data: the same input must give exactly
the assignment Kafka's tests assert.

Inputs follow those tests: members walked in sorted order (their TreeMap / sorted GroupSpec), current
assignments either in the order written (Kafka's ``mkOrderedAssignment``) or in Java HashMap order
(``mkAssignment``), the fixed topic ids of Kafka's uniform tests.
"""

from __future__ import annotations

import base64
import uuid

import pytest

from shim.coordinators.group.consumer_assignors import (AssignorError, MemberSpec, kafka_order, range_,
                                                         uniform, uniform_heterogeneous, uniform_homogeneous)


def kafka_uuid(s: str) -> uuid.UUID:
    return uuid.UUID(bytes=base64.urlsafe_b64decode(s + "=="))


T = {1: kafka_uuid("T1-A4s3VTwiI5CTbEp6POw"), 2: kafka_uuid("T2-B4s3VTwiI5YHbPp6YUe"),
     3: kafka_uuid("T3-CU8fVTLCz5YMkLoDQsa"), 4: kafka_uuid("T4-Tw9fVTLCz5HbPp6YQsa")}


def member(subs, current=(), ordered=False, instance=None):
    """subs: topic numbers; current: ((topic, (partitions...)), ...)."""
    cur = {T[t]: tuple(ps) for t, ps in current}
    spec = MemberSpec(frozenset(T[t] for t in subs), cur, instance)
    if not ordered:  # a HashMap of HashSets, as Kafka's mkAssignment builds it
        spec = kafka_order({"x": spec})["x"]
    return spec


def expect(**members):
    return {m: {T[t]: frozenset(ps) for t, ps in a.items()} for m, a in members.items()}


HOMOGENEOUS = [
    ("FirstAssignmentTwoMembersTwoTopicsNoMemberRacks", {1: 3, 3: 2},
     {"A": member([1, 3]), "B": member([1, 3])},
     expect(A={3: [0, 1]}, B={1: [0, 1, 2]})),
    ("FirstAssignmentNumMembersGreaterThanTotalNumPartitions", {3: 2},
     {"A": member([3]), "B": member([3]), "C": member([3])},
     expect(A={}, B={3: [0]}, C={3: [1]})),
    ("ReassignmentForTwoMembersTwoTopicsGivenUnbalancedPrevAssignment", {1: 3, 2: 3},
     {"A": member([1, 2], [(1, [0, 1]), (2, [0, 1])], ordered=True),
      "B": member([1, 2], [(1, [2]), (2, [2])], ordered=True)},
     expect(A={1: [0, 1], 2: [0]}, B={1: [2], 2: [1, 2]})),
    ("ReassignmentWhenPartitionsAreAddedForTwoMembersTwoTopics", {1: 6, 2: 5},
     {"A": member([1, 2], [(1, [0, 2]), (2, [0])], ordered=True),
      "B": member([1, 2], [(1, [1]), (2, [1, 2])], ordered=True)},
     expect(A={1: [0, 2], 2: [0, 3, 4]}, B={1: [1, 3, 4, 5], 2: [1, 2]})),
    ("ReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics", {1: 3, 2: 3},
     {"A": member([1, 2], [(1, [0, 2]), (2, [0])], ordered=True),
      "B": member([1, 2], [(1, [1]), (2, [1, 2])], ordered=True),
      "C": member([1, 2])},
     expect(A={1: [0, 2]}, B={1: [1], 2: [1]}, C={2: [0, 2]})),
    ("ReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithThreeMembersTwoTopics", {1: 3, 2: 3},
     {"A": member([1, 2], [(1, [0]), (2, [0])]), "B": member([1, 2], [(1, [1]), (2, [1])])},
     expect(A={1: [0], 2: [0, 2]}, B={1: [1, 2], 2: [1]})),
    ("ReassignmentWhenOneSubscriptionRemovedAfterInitialAssignmentWithTwoMembersTwoTopics", {1: 2, 2: 2},
     {"A": member([2], [(1, [0]), (2, [0])]), "B": member([2], [(1, [1]), (2, [1])])},
     expect(A={2: [0]}, B={2: [1]})),
]

HETEROGENEOUS = [
    ("FirstAssignmentTwoMembersTwoTopics", {1: 3, 3: 6},
     {"A": member([1, 3]), "B": member([3])},
     expect(A={1: [0, 1, 2], 3: [4]}, B={3: [0, 1, 2, 3, 5]})),
    ("FirstAssignmentNumMembersGreaterThanTotalNumPartitions", {3: 1, 1: 2},
     {"A": member([3]), "B": member([3]), "C": member([1])},
     expect(A={3: [0]}, B={}, C={1: [0, 1]})),
    ("ReassignmentForTwoMembersThreeTopicsGivenUnbalancedPrevAssignment", {1: 6, 2: 4, 3: 4},
     {"A": member([1], [(1, [0, 1, 2])]), "B": member([1, 2], [(1, [3]), (2, [0])]),
      "C": member([1, 2, 3], [(1, [4, 5]), (2, [1, 2, 3]), (3, [0, 1, 2, 3])])},
     expect(A={1: [0, 1, 2, 5]}, B={1: [3], 2: [0, 1, 2, 3]}, C={1: [4], 3: [0, 1, 2, 3]})),
    ("ReassignmentWhenPartitionsAreAddedForTwoMembers", {1: 6, 2: 5, 3: 3, 4: 3},
     {"A": member([1, 3], [(1, [0, 1, 2, 3]), (3, [0, 1])]),
      "B": member([1, 2, 3, 4], [(2, [0, 1, 2]), (4, [0, 1, 2])])},
     expect(A={1: [0, 1, 2, 3, 4, 5], 3: [0, 1, 2]}, B={2: [0, 1, 2, 3, 4], 4: [0, 1, 2]})),
    ("ReassignmentWhenOneMemberAddedAndPartitionsAddedTwoMembersTwoTopics", {1: 6, 2: 7},
     {"A": member([1], [(1, [0, 2]), (2, [0])]), "B": member([1, 2], [(1, [1]), (2, [1, 2])]),
      "C": member([1, 2])},
     expect(A={1: [0, 2, 3, 4, 5]}, B={1: [1], 2: [1, 2, 6]}, C={2: [0, 3, 4, 5]})),
    ("ReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithThreeMembersThreeTopics", {1: 3, 2: 8, 3: 3},
     {"A": member([1, 3], [(1, [0, 1, 2]), (3, [0, 1])]), "B": member([2], [(2, [3, 4, 5, 6])])},
     expect(A={1: [0, 1, 2], 3: [0, 1, 2]}, B={2: [0, 1, 2, 3, 4, 5, 6, 7]})),
    ("ReassignmentWhenOneSubscriptionRemovedAfterInitialAssignmentWithTwoMembersTwoTopics", {1: 3, 2: 5},
     {"A": member([1], [(1, [0, 2]), (2, [1, 3])]), "B": member([1, 2], [(1, [1]), (2, [0, 2, 4])])},
     expect(A={1: [0, 1, 2]}, B={2: [0, 1, 2, 3, 4]})),
    ("ReassignmentWhenTopicPartitionsRunOutAndMembersHaveNoPartitions", {1: 2, 2: 2, 3: 2},
     {"A": member([1, 2, 3], [(1, [0, 1]), (2, [0, 1]), (3, [0, 1])]), "B": member([1, 2, 3])},
     expect(A={2: [0], 3: [0, 1]}, B={1: [0, 1], 2: [1]})),
    ("FirstAssignmentWithTwoMembersIncludingOneWithoutSubscriptions", {1: 3},
     {"A": member([1]), "B": member([])},
     expect(A={1: [0, 1, 2]}, B={})),
]

RANGE = [
    ("FirstAssignmentTwoMembersTwoTopicsSameSubscriptions", {1: 3, 3: 2},
     {"A": member([1, 3]), "B": member([1, 3])},
     expect(A={1: [0, 1], 3: [0]}, B={1: [2], 3: [1]})),
    ("FirstAssignmentThreeMembersThreeTopicsDifferentSubscriptions", {1: 3, 2: 3, 3: 2},
     {"A": member([1, 2]), "B": member([3]), "C": member([2, 3])},
     expect(A={1: [0, 1, 2], 2: [0, 1]}, B={3: [0]}, C={2: [2], 3: [1]})),
    ("FirstAssignmentNumMembersGreaterThanNumPartitions", {1: 3, 3: 2},
     {"A": member([1, 3]), "B": member([1, 3]), "C": member([1, 3])},
     expect(A={1: [0], 3: [0]}, B={1: [1], 3: [1]}, C={1: [2]})),
    ("ReassignmentNumMembersGreaterThanNumPartitionsWhenOneMemberAdded", {1: 2, 2: 2},
     {"A": member([1, 2], [(1, [0]), (2, [0])]), "B": member([1, 2], [(1, [1]), (2, [1])]), "C": member([1, 2])},
     expect(A={1: [0], 2: [0]}, B={1: [1], 2: [1]}, C={})),
    ("ReassignmentWhenOnePartitionAddedForTwoMembersTwoTopics", {1: 4, 2: 4},
     {"A": member([1, 2], [(1, [0, 1]), (2, [0, 1])]), "B": member([1, 2], [(1, [2]), (2, [2])])},
     expect(A={1: [0, 1], 2: [0, 1]}, B={1: [2, 3], 2: [2, 3]})),
    ("ReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics", {1: 3, 2: 3},
     {"A": member([1, 2], [(1, [0, 1]), (2, [0, 1])]), "B": member([1, 2], [(1, [2]), (2, [2])]),
      "C": member([1, 2])},
     expect(A={1: [0], 2: [0]}, B={1: [1], 2: [1]}, C={1: [2], 2: [2]})),
    ("ReassignmentWhenOneMemberAddedAndOnePartitionAfterInitialAssignmentWithTwoMembersTwoTopics", {1: 4, 2: 3},
     {"A": member([1, 2], [(1, [0, 1]), (2, [0, 1])]), "B": member([1, 2], [(1, [2]), (2, [2])]),
      "C": member([1])},
     expect(A={1: [0, 1], 2: [0, 1]}, B={1: [2], 2: [2]}, C={1: [3]})),
    ("ReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithTwoMembersTwoTopics", {1: 3, 2: 3},
     {"B": member([1, 2], [(1, [2]), (2, [2])])},
     expect(B={1: [0, 1, 2], 2: [0, 1, 2]})),
    ("ReassignmentWhenMultipleSubscriptionsRemovedAfterInitialAssignmentWithThreeMembersTwoTopics",
     {1: 3, 2: 3, 3: 2},
     {"A": member([1], [(1, [0, 1, 2]), (2, [0])]), "B": member([1, 2, 3], [(2, [1])]),
      "C": member([2], [(2, [2]), (3, [0, 1])])},
     expect(A={1: [0, 1]}, B={1: [2], 2: [0, 1], 3: [0, 1]}, C={2: [2]})),
]


def _topics(counts):
    return {T[t]: n for t, n in counts.items()}


def _same(got, want):
    """Kafka's assertAssignment: every member's assignment equal; an absent member counts as empty."""
    assert {m: a for m, a in got.items() if a} == {m: a for m, a in want.items() if a}
    assert set(got) <= set(want)


@pytest.mark.parametrize("name,counts,members,expected", HOMOGENEOUS, ids=[c[0] for c in HOMOGENEOUS])
def test_uniform_homogeneous_matches_kafka(name, counts, members, expected):
    _same(uniform_homogeneous(members, _topics(counts)), expected)


@pytest.mark.parametrize("name,counts,members,expected", HETEROGENEOUS, ids=[c[0] for c in HETEROGENEOUS])
def test_uniform_heterogeneous_matches_kafka(name, counts, members, expected):
    _same(uniform_heterogeneous(members, _topics(counts)), expected)


@pytest.mark.parametrize("name,counts,members,expected", RANGE, ids=[c[0] for c in RANGE])
def test_range_matches_kafka(name, counts, members, expected):
    _same(range_(members, _topics(counts)), expected)


@pytest.mark.parametrize("assign", [uniform_homogeneous, uniform_heterogeneous, range_])
def test_a_subscribed_topic_without_metadata_is_an_assignor_error(assign):
    with pytest.raises(AssignorError):
        assign({"A": member([2]), "B": member([3])}, _topics({1: 3}))


@pytest.mark.parametrize("assign", [uniform, range_])
def test_members_without_subscriptions_get_nothing(assign):
    assert not any(assign({"A": member([]), "B": member([])}, _topics({1: 3})).values())


def test_range_keeps_a_static_members_ranges_when_it_comes_back_under_a_new_member_id():
    """Kafka's testStaticMembership / testMixedStaticMembership: static members sort by instance id."""
    topics = _topics({1: 5})
    first = {"A": member([1], instance="instanceA"), "C": member([1], instance="instanceC"), "B": member([1])}
    before = range_(first, topics)
    again = {"memberA1": member([1], instance="instanceA"), "C": first["C"], "B": first["B"]}
    after = range_(again, topics)
    assert (after["memberA1"], after["B"], after["C"]) == (before["A"], before["B"], before["C"])
    assert before["A"] == {T[1]: frozenset({0, 1})} and before["B"] == {T[1]: frozenset({4})}


@pytest.mark.parametrize("assign,cases", [(uniform_homogeneous, HOMOGENEOUS), (uniform_heterogeneous, HETEROGENEOUS),
                                          (range_, RANGE)])
def test_member_racks_do_not_move_partitions(assign, cases):
    """Kafka 4.1's built-in assignors ignore racks: each vector gives the same result with racks set."""
    for _, counts, members, expected in cases:
        racked = {m: spec._replace(rack_id=f"rack-{i % 2}") for i, (m, spec) in enumerate(members.items())}
        _same(assign(racked, _topics(counts)), expected)


@pytest.mark.parametrize("assign", [uniform_homogeneous, uniform_heterogeneous])
def test_a_current_partition_the_topic_no_longer_has_is_dropped_not_a_crash(assign):
    out = assign({"A": member([1], [(1, [0, 7])], ordered=True), "B": member([1])}, _topics({1: 4}))
    assert sorted(p for a in out.values() for ps in a.values() for p in ps) == [0, 1, 2, 3]
