"""The classic group protocol driven directly with a fake clock (Kafka 3.9 GroupCoordinator):
JoinGroup, SyncGroup, Heartbeat, LeaveGroup, their error codes, rebalances and timeouts."""

from __future__ import annotations

from group_helpers import PROTOCOLS, REBALANCE, SESSION, T0, E, form_group, join, keep_alive, subscription, sync
from shim.coordinators.group import GroupState
from shim.coordinators.group.coordinator import NEW_MEMBER_JOIN_TIMEOUT_MS

S = GroupState


# -- JoinGroup ----------------------------------------------------------------------------


def test_a_first_member_joins_an_empty_group_and_leads_generation_1(gc):
    meta = b"\x00\x01opaque consumer metadata"
    r = join(gc, protocols=[("range", meta)]).result
    assert r.error == E.none
    assert (r.generation_id, r.protocol_type, r.protocol_name, r.leader) == (1, "consumer", "range", r.member_id)
    assert r.member_id.startswith("c-")
    # The leader receives every member's metadata exactly as the member sent it.
    assert [(m.member_id, m.metadata) for m in r.members] == [(r.member_id, meta)]
    assert gc.groups["g"].state is S.COMPLETING_REBALANCE


def test_join_with_an_empty_group_id_is_invalid_group_id(gc):
    assert join(gc, group="").result.error == E.invalid_group_id


def test_session_timeouts_outside_the_broker_bounds_are_refused(gc):
    assert join(gc, session=gc.min_session_timeout_ms - 1).result.error == E.invalid_session_timeout
    assert join(gc, session=gc.max_session_timeout_ms + 1).result.error == E.invalid_session_timeout
    assert "g" not in gc.groups


def test_a_member_id_for_an_unknown_group_or_member_is_unknown_member_id(gc):
    assert join(gc, group="nope", member_id="ghost").result.error == E.unknown_member_id
    form_group(gc, 1)
    assert join(gc, member_id="ghost", now=T0 + 4_000).result.error == E.unknown_member_id


def test_kip_394_a_new_member_gets_its_id_with_member_id_required_then_joins_with_it(gc):
    first = join(gc, known=True).result
    assert first.error == E.member_id_required and first.member_id
    assert first.member_id in gc.groups["g"].pending_members
    second = join(gc, member_id=first.member_id, known=True).result
    assert second.error == E.none and second.member_id == first.member_id and second.generation_id == 1


def test_a_pending_member_id_expires_after_the_session_timeout(gc):
    pending_id = join(gc, known=True).result.member_id
    gc.tick(T0 + SESSION - 1)
    assert pending_id in gc.groups["g"].pending_members
    gc.tick(T0 + SESSION)
    assert pending_id not in gc.groups["g"].pending_members
    assert join(gc, member_id=pending_id, now=T0 + SESSION).result.error == E.unknown_member_id


def test_a_pending_member_id_with_a_group_instance_id_is_refused(gc):
    pending_id = join(gc, known=True).result.member_id
    assert join(gc, member_id=pending_id, instance_id="i").result.error == E.unknown_server_error


def test_inconsistent_protocols_are_refused(gc):
    assert join(gc, protocols=[]).result.error == E.inconsistent_group_protocol
    assert join(gc, protocol_type="").result.error == E.inconsistent_group_protocol
    form_group(gc, 1, protocols=[("range", b"x")])
    assert join(gc, protocol_type="connect").result.error == E.inconsistent_group_protocol
    assert join(gc, protocols=[("roundrobin", b"x")]).result.error == E.inconsistent_group_protocol


def test_the_protocol_all_members_support_with_the_most_votes_is_chosen(gc):
    gc.initial_rebalance_delay_ms = 3_000
    p1 = join(gc, protocols=[("range", b"1"), ("roundrobin", b"1")])
    p2 = join(gc, protocols=[("roundrobin", b"2"), ("range", b"2"), ("sticky", b"2")])
    p3 = join(gc, protocols=[("roundrobin", b"3"), ("range", b"3")])
    gc.tick(T0 + 3_000)
    gc.tick(T0 + 6_000)
    leader = p1.result
    assert {p.result.protocol_name for p in (p1, p2, p3)} == {"roundrobin"}
    # The leader sees each member's metadata for the chosen protocol; followers see none.
    assert sorted(m.metadata for m in leader.members) == [b"1", b"2", b"3"]
    assert p2.result.members == () and p3.result.members == ()


def test_a_join_during_completing_rebalance_starts_a_new_rebalance_that_waits_for_the_others(gc):
    (m1,), gen = form_group(gc, 1)
    newcomer = join(gc, now=T0 + 5_000)
    assert not newcomer.done and gc.groups["g"].state is S.PREPARING_REBALANCE
    assert gc.heartbeat("g", m1, None, gen, T0 + 5_000) == E.rebalance_in_progress
    rejoin = join(gc, member_id=m1, now=T0 + 5_001)
    assert rejoin.done and newcomer.done
    assert rejoin.result.generation_id == newcomer.result.generation_id == gen + 1
    assert rejoin.result.leader == m1 and len(rejoin.result.members) == 2


def test_a_follower_rejoining_a_stable_group_with_the_same_metadata_does_not_rebalance(gc):
    (leader, follower), gen = form_group(gc, 2)
    r = join(gc, member_id=follower, now=T0 + 5_000).result
    assert (r.error, r.generation_id, r.leader, r.members) == (E.none, gen, leader, ())
    assert gc.groups["g"].state is S.STABLE


def test_the_leader_rejoining_a_stable_group_rebalances(gc):
    (leader, follower), gen = form_group(gc, 2)
    p = join(gc, member_id=leader, now=T0 + 5_000)
    assert not p.done and gc.groups["g"].state is S.PREPARING_REBALANCE


def test_a_member_rejoining_with_new_metadata_rebalances(gc):
    (leader, follower), gen = form_group(gc, 2)
    p = join(gc, member_id=follower, now=T0 + 5_000, protocols=[("range", subscription("t", "u"))])
    assert not p.done and gc.groups["g"].state is S.PREPARING_REBALANCE


def two_joined_after_the_delay(gc):
    """Two members join in the 3 s initial rebalance delay; both JoinGroups complete after it."""
    gc.initial_rebalance_delay_ms = 3_000
    a, b = join(gc), join(gc)
    gc.tick(T0 + 3_000)
    gc.tick(T0 + 6_000)
    return a, b


def test_a_lost_join_response_during_completing_rebalance_is_answered_again(gc):
    a, b = two_joined_after_the_delay(gc)
    leader, follower = a.result.member_id, b.result.member_id
    again = join(gc, member_id=leader, now=T0 + 3_100).result
    assert (again.generation_id, again.leader, len(again.members)) == (1, leader, 2)
    assert join(gc, member_id=follower, now=T0 + 3_100).result.members == ()
    assert gc.groups["g"].state is S.COMPLETING_REBALANCE


def test_members_that_do_not_rejoin_before_the_rebalance_timeout_are_removed(gc):
    (leader, follower), gen = form_group(gc, 2)
    t = T0 + 7_000
    p = join(gc, member_id=leader, now=t)
    keep_alive(gc, {follower: None}, gen, t, t + REBALANCE)  # alive, but never rejoins
    assert not p.done and follower in gc.groups["g"].members
    gc.tick(t + REBALANCE)
    assert p.result.error == E.none and p.result.generation_id == gen + 1
    assert list(gc.groups["g"].members) == [leader]


def test_a_second_join_for_the_same_member_answers_the_first(gc):
    (leader, follower), gen = form_group(gc, 2)
    first = join(gc, member_id=leader, now=T0 + 5_000)
    second = join(gc, member_id=leader, now=T0 + 5_001)
    # The displaced request is told to rejoin rather than left hanging.
    assert first.result.error == E.rebalance_in_progress and not second.done


def test_the_initial_rebalance_delay_waits_for_more_members_up_to_the_rebalance_timeout(gc):
    gc.initial_rebalance_delay_ms = 3_000
    members = [join(gc, rebalance=7_000)]
    gc.tick(T0 + 2_000)
    members.append(join(gc, now=T0 + 2_000, rebalance=7_000))  # arrives during the delay: wait again
    gc.tick(T0 + 3_000)
    gc.tick(T0 + 5_000)
    members.append(join(gc, now=T0 + 5_000, rebalance=7_000))  # again, but only 1 s of the timeout is left
    gc.tick(T0 + 6_000)
    members.append(join(gc, now=T0 + 6_500, rebalance=7_000))
    gc.tick(T0 + 6_999)
    assert not any(p.done for p in members)
    gc.tick(T0 + 7_000)  # the rebalance timeout bounds the waiting
    assert {p.result.generation_id for p in members} == {1}
    assert len(members[0].result.members) == 4


def test_a_new_member_whose_rebalance_cannot_complete_expires_after_five_minutes(gc):
    (m1,), gen = form_group(gc, 1, rebalance=10 * 60_000)
    newcomer = join(gc, now=T0 + 4_000, rebalance=10 * 60_000)
    t = T0 + 4_000
    while t < T0 + 4_000 + NEW_MEMBER_JOIN_TIMEOUT_MS:  # m1 heartbeats but never rejoins
        assert gc.heartbeat("g", m1, None, gen, t) == E.rebalance_in_progress
        gc.tick(t)
        t += SESSION // 2
    gc.tick(T0 + 4_000 + NEW_MEMBER_JOIN_TIMEOUT_MS)
    assert newcomer.result.error == E.unknown_member_id
    assert list(gc.groups["g"].members) == [m1]


# -- static membership (KIP-345) ----------------------------------------------------------


def static_group(gc, n=2, skip=False, protocols=None):
    gc.initial_rebalance_delay_ms = 3_000
    ps = [join(gc, instance_id=f"i{k}", skip=skip, protocols=protocols) for k in range(n)]
    gc.tick(T0 + 3_000)
    gc.tick(T0 + 6_000)
    ids = [p.result.member_id for p in ps]
    gen, leader = ps[0].result.generation_id, ps[0].result.leader
    for k, m in enumerate(ids):
        sync(gc, m, gen, {x: x.encode() for x in ids} if m == leader else {}, now=T0 + 6_000, instance_id=f"i{k}")
    gc.initial_rebalance_delay_ms = 0
    return ids, gen, leader


def test_a_restarted_static_member_takes_its_place_without_a_rebalance(gc):
    (i0, i1), gen, leader = static_group(gc)
    r = join(gc, instance_id="i1", now=T0 + 5_000).result
    assert r.error == E.none and r.member_id != i1 and r.generation_id == gen
    # Before v9 the old leader is named, so the new member id does not run the assignor.
    assert r.leader == leader and r.members == ()
    assert gc.groups["g"].state is S.STABLE
    assert sync(gc, r.member_id, gen, now=T0 + 5_000, instance_id="i1").result.assignment == i1.encode()


def test_the_old_member_id_of_a_replaced_static_member_is_fenced(gc):
    (i0, i1), gen, leader = static_group(gc)
    new = join(gc, instance_id="i1", now=T0 + 5_000).result.member_id
    assert gc.heartbeat("g", i1, "i1", gen, T0 + 5_000) == E.fenced_instance_id
    assert sync(gc, i1, gen, instance_id="i1").result.error == E.fenced_instance_id
    assert join(gc, member_id=i1, instance_id="i1").result.error == E.fenced_instance_id
    assert gc.heartbeat("g", new, "i1", gen, T0 + 5_000) == E.none


def test_an_unknown_group_instance_id_with_a_member_id_is_unknown_member_id(gc):
    (i0, i1), gen, leader = static_group(gc)
    assert gc.heartbeat("g", i0, "other", gen, T0 + 5_000) == E.unknown_member_id
    assert join(gc, member_id=i0, instance_id="other").result.error == E.unknown_member_id


def test_v9_tells_a_restarted_static_leader_it_leads_but_may_skip_the_assignment(gc):
    (i0, i1), gen, leader = static_group(gc, skip=True)
    r = join(gc, instance_id="i0", now=T0 + 5_000, skip=True).result
    assert r.leader == r.member_id and r.skip_assignment and len(r.members) == 2


def test_a_static_member_rejoining_with_another_protocol_rebalances(gc):
    static_group(gc, n=2, protocols=[("range", b"x"), ("roundrobin", b"x")])
    p = join(gc, instance_id="i1", now=T0 + 7_000, protocols=[("roundrobin", b"y"), ("range", b"y")])
    # One vote each: the choice may not move away from range, so no rebalance...
    assert p.done and p.result.error == E.none and gc.groups["g"].state is S.STABLE
    assert gc.groups["g"].protocol_name == "range"


def test_a_static_member_whose_new_protocols_change_the_choice_rebalances(gc):
    _, gen, _ = static_group(gc, n=1, protocols=[("range", b"x")])
    p = join(gc, instance_id="i0", now=T0 + 7_000, protocols=[("roundrobin", b"y"), ("range", b"y")])
    # A rebalance, which the only member completes at once: a new generation with the new protocol.
    assert (p.result.generation_id, p.result.protocol_name) == (gen + 1, "roundrobin")
    assert gc.groups["g"].state is S.COMPLETING_REBALANCE


def test_static_members_that_do_not_rejoin_stay_in_the_group(gc):
    (i0, i1), gen, leader = static_group(gc)
    t = T0 + 7_000
    p = join(gc, member_id=leader, instance_id="i0", now=t)
    keep_alive(gc, {i1: "i1"}, gen, t, t + REBALANCE)
    gc.tick(t + REBALANCE)
    assert p.result.generation_id == gen + 1 and set(gc.groups["g"].members) == {i0, i1}


def test_followers_wait_for_the_leaders_assignment(gc):
    a, b = two_joined_after_the_delay(gc)
    leader, follower, gen = a.result.member_id, b.result.member_id, a.result.generation_id
    waiting = sync(gc, follower, gen, now=T0 + 6_000)
    assert not waiting.done
    done = sync(gc, leader, gen, {leader: b"L", follower: b"F"}, now=T0 + 6_000)
    assert done.result.assignment == b"L" and waiting.result.assignment == b"F"
    assert (waiting.result.protocol_type, waiting.result.protocol_name) == ("consumer", "range")
    assert gc.groups["g"].state is S.STABLE
    # In a stable group SyncGroup answers at once with the member's assignment.
    assert sync(gc, follower, gen, now=T0 + 4_000).result.assignment == b"F"


def test_members_missing_from_the_leaders_assignment_get_an_empty_one(gc):
    a, b = two_joined_after_the_delay(gc)
    gen = a.result.generation_id
    waiting = sync(gc, b.result.member_id, gen, now=T0 + 6_000)
    sync(gc, a.result.member_id, gen, {a.result.member_id: b"L"}, now=T0 + 6_000)
    assert waiting.result.error == E.none and waiting.result.assignment == b""


def test_sync_group_error_codes(gc):
    assert sync(gc, "m", 1, group="").result.error == E.invalid_group_id
    assert sync(gc, "m", 1, group="nope").result.error == E.unknown_member_id
    (leader, follower), gen = form_group(gc, 2)
    assert sync(gc, "ghost", gen).result.error == E.unknown_member_id
    assert sync(gc, leader, gen + 1).result.error == E.illegal_generation
    assert sync(gc, leader, gen, protocol_type="connect").result.error == E.inconsistent_group_protocol
    assert sync(gc, leader, gen, protocol_name="roundrobin").result.error == E.inconsistent_group_protocol
    assert sync(gc, leader, gen, protocol_type="consumer", protocol_name="range").result.error == E.none
    join(gc, member_id=leader, now=T0 + 5_000)  # PreparingRebalance
    assert sync(gc, follower, gen, now=T0 + 5_000).result.error == E.rebalance_in_progress


def test_a_new_rebalance_tells_members_awaiting_their_assignment_to_rejoin(gc):
    a, b = two_joined_after_the_delay(gc)
    waiting = sync(gc, b.result.member_id, a.result.generation_id, now=T0 + 6_000)
    join(gc, now=T0 + 3_100)  # a newcomer
    assert waiting.result.error == E.rebalance_in_progress


def test_members_that_never_sync_are_removed_after_the_rebalance_timeout(gc):
    a, b = two_joined_after_the_delay(gc)
    leader, follower, gen = a.result.member_id, b.result.member_id, a.result.generation_id
    t = T0 + 6_000
    sync(gc, leader, gen, {leader: b"L"}, now=t)
    keep_alive(gc, {leader: None, follower: None}, gen, t, t + REBALANCE)  # the follower never syncs
    assert len(gc.groups["g"].members) == 2
    gc.tick(t + REBALANCE)
    assert list(gc.groups["g"].members) == [leader]
    assert gc.groups["g"].state is S.PREPARING_REBALANCE


def test_an_assignment_too_large_to_store_fails_the_sync_and_rebalances(nodes):
    node = nodes(max_message_bytes=4_096)
    gc = node.groups
    a, b = two_joined_after_the_delay(gc)
    leader, follower, gen = a.result.member_id, b.result.member_id, a.result.generation_id
    waiting = sync(gc, follower, gen, now=T0 + 6_000)
    r = sync(gc, leader, gen, {leader: b"x" * 10_000}, now=T0 + 6_000).result
    # Kafka: storeGroup maps MESSAGE_TOO_LARGE to UNKNOWN_SERVER_ERROR.
    assert r.error == waiting.result.error == E.unknown_server_error
    assert gc.groups["g"].state is S.PREPARING_REBALANCE


# -- Heartbeat and session timeouts -------------------------------------------------------


def test_heartbeat_error_codes(gc):
    assert gc.heartbeat("", "m", None, 1, T0) == E.invalid_group_id
    assert gc.heartbeat("nope", "m", None, 1, T0) == E.unknown_member_id
    (leader, follower), gen = form_group(gc, 2)
    assert gc.heartbeat("g", "ghost", None, gen, T0) == E.unknown_member_id
    assert gc.heartbeat("g", leader, None, gen - 1, T0) == E.illegal_generation
    assert gc.heartbeat("g", leader, None, gen, T0) == E.none
    join(gc, member_id=leader, now=T0 + 1)
    assert gc.heartbeat("g", follower, None, gen, T0 + 1) == E.rebalance_in_progress


def test_heartbeats_in_completing_rebalance_are_fine(gc):
    r = join(gc).result
    assert gc.groups["g"].state is S.COMPLETING_REBALANCE
    assert gc.heartbeat("g", r.member_id, None, r.generation_id, T0 + 1) == E.none


def test_a_member_that_stops_heartbeating_is_removed_and_the_group_rebalances(gc):
    (leader, follower), gen = form_group(gc, 2)
    t = T0 + 6_000  # both sessions started here
    assert gc.heartbeat("g", leader, None, gen, t + 5_000) == E.none
    gc.tick(t + SESSION - 1)
    assert follower in gc.groups["g"].members
    gc.tick(t + SESSION)
    assert follower not in gc.groups["g"].members
    assert gc.groups["g"].state is S.PREPARING_REBALANCE
    assert gc.heartbeat("g", leader, None, gen, t + SESSION) == E.rebalance_in_progress
    r = join(gc, member_id=leader, now=t + SESSION).result
    assert r.generation_id == gen + 1 and [m.member_id for m in r.members] == [leader]


def test_tick_reports_the_next_session_deadline(gc):
    (m,), gen = form_group(gc, 1)
    assert gc.tick(T0 + 6_000) == T0 + 6_000 + SESSION
    gc.heartbeat("g", m, None, gen, T0 + 5_000)
    assert gc.tick(T0 + 5_000) == T0 + 5_000 + SESSION


def test_the_last_member_leaving_by_session_timeout_empties_the_group(gc):
    (m,), gen = form_group(gc, 1)
    gc.tick(T0 + 6_000 + SESSION)
    g = gc.groups["g"]
    assert g.state is S.EMPTY and g.generation_id == gen + 1 and not g.members and g.protocol_name is None


# -- LeaveGroup ---------------------------------------------------------------------------


def test_leave_group_removes_the_member_and_rebalances(gc):
    (leader, follower), gen = form_group(gc, 2)
    assert gc.leave_group("g", [(follower, None)], T0 + 4_000) == (E.none, [E.none])
    assert gc.groups["g"].state is S.PREPARING_REBALANCE
    r = join(gc, member_id=leader, now=T0 + 4_000).result
    assert r.generation_id == gen + 1 and len(r.members) == 1


def test_leave_group_error_codes(gc):
    assert gc.leave_group("", [("m", None)], T0) == (E.invalid_group_id, [])
    assert gc.leave_group("nope", [("m", None), ("n", None)], T0) == (E.none, [E.unknown_member_id] * 2)
    ids, gen, leader = static_group(gc)
    assert gc.leave_group("g", [("ghost", None), (ids[0], "i1"), ("", "nobody")], T0) == (
        E.none, [E.unknown_member_id, E.fenced_instance_id, E.unknown_member_id])


def test_a_static_member_is_removed_by_instance_id_alone(gc):
    ids, gen, leader = static_group(gc)
    assert gc.leave_group("g", [("", "i1")], T0 + 4_000) == (E.none, [E.none])
    assert set(gc.groups["g"].members) == {ids[0]} and "i1" not in gc.groups["g"].static_members


def test_a_pending_member_may_leave(gc):
    pending_id = join(gc, known=True).result.member_id
    assert gc.leave_group("g", [(pending_id, None)], T0) == (E.none, [E.none])
    assert not gc.groups["g"].pending_members


def test_a_member_leaving_during_the_join_phase_lets_it_complete(gc):
    (leader, follower), gen = form_group(gc, 2)
    p = join(gc, member_id=leader, now=T0 + 4_000)
    gc.leave_group("g", [(follower, None)], T0 + 4_000)
    assert p.result.error == E.none and p.result.generation_id == gen + 1


# -- DescribeGroups / ListGroups ----------------------------------------------------------


def test_describe_shows_metadata_and_assignments_only_when_stable(gc):
    assert gc.describe_group("nope")[1].state == "Dead"
    assert gc.describe_group("")[0] == E.none
    r = join(gc).result
    code, s = gc.describe_group("g")
    assert (s.state, s.protocol_type, s.protocol) == ("CompletingRebalance", "consumer", "")
    assert s.members[0].metadata == b"" and s.members[0].client_host == "/127.0.0.1"
    sync(gc, r.member_id, r.generation_id, {r.member_id: b"A"})
    code, s = gc.describe_group("g")
    assert (s.state, s.protocol) == ("Stable", "range")
    assert (s.members[0].metadata, s.members[0].assignment) == (PROTOCOLS[0][1], b"A")


def test_list_groups_filters_by_state(gc):  # in any case: test_group_apis (ListGroups writes the filter)
    form_group(gc, 1, group="stable")
    join(gc, group="completing")
    assert sorted(g for g, _, _, _ in gc.list_groups()) == ["completing", "stable"]
    assert gc.list_groups({"stable"}) == [("stable", "consumer", "Stable", "classic")]
    assert gc.list_groups({"empty"}) == []


def test_a_static_rejoin_that_cannot_be_stored_is_refused_and_the_old_member_stays(nodes):
    node = nodes(max_message_bytes=4_096)
    gc = node.groups
    (i0, i1), gen, leader = static_group(gc)
    r = join(gc, instance_id="i1", now=T0 + 7_000, protocols=[("range", b"x" * 5_000)]).result
    # Kafka: storeGroup maps MESSAGE_TOO_LARGE to UNKNOWN_SERVER_ERROR; the replacement is undone.
    assert (r.error, r.member_id, r.generation_id) == (E.unknown_server_error, "", gen)
    g = gc.groups["g"]
    assert g.static_members["i1"] == i1 and set(g.members) == {i0, i1}
    assert g.members[i1].protocols == PROTOCOLS
    assert gc.heartbeat("g", i1, "i1", gen, T0 + 7_000) == E.none


def test_a_second_sync_for_the_same_member_answers_the_first(gc):
    a, b = two_joined_after_the_delay(gc)
    follower, gen = b.result.member_id, b.result.generation_id
    first = sync(gc, follower, gen, now=T0 + 6_000)
    second = sync(gc, follower, gen, now=T0 + 6_001)
    assert first.result.error == E.rebalance_in_progress and not second.done


def test_a_member_removed_while_awaiting_its_assignment_is_answered(gc):
    (i0, i1), gen, leader = static_group(gc)
    p = join(gc, member_id=leader, instance_id="i0", now=T0 + 7_000)
    join(gc, member_id=i1, instance_id="i1", now=T0 + 7_000)
    new_gen = p.result.generation_id
    waiting = sync(gc, i1, new_gen, now=T0 + 7_000, instance_id="i1")
    assert not waiting.done
    assert gc.leave_group("g", [("", "i1")], T0 + 7_001) == (E.none, [E.none])
    # Kafka leaves this request unanswered; here it learns it is no longer a member.
    assert waiting.result.error == E.unknown_member_id


def test_group_max_size_refuses_new_members_of_a_full_classic_group(gc):
    """Kafka: GroupMetadataManager.acceptJoiningMember (group.max.size, no limit by default)."""
    from shim.coordinators.group.consumer_config import ConsumerGroupConfig

    gc.consumer.config = ConsumerGroupConfig(classic_max_size=2)
    (leader, other), generation = form_group(gc, 2)
    r = join(gc).result
    assert (r.error, r.member_id) == (E.group_max_size_reached, "")
    assert set(gc.groups["g"].members) == {leader, other}
    # A rebalance takes the first two to join it: the leader, then a new member; the member that
    # comes back last is refused and leaves the group ("kick out the last rejoining members").
    assert join(gc, member_id=leader, now=T0 + 7_000).done is False
    newcomer = join(gc, now=T0 + 7_000)
    assert newcomer.done is False
    r = join(gc, member_id=other, now=T0 + 7_000).result
    assert (r.error, r.member_id) == (E.group_max_size_reached, "")
    assert other not in gc.groups["g"].members and len(gc.groups["g"].members) == 2
    assert newcomer.done and newcomer.result.error == E.none  # the rebalance had everyone it waits for


def test_group_max_size_counts_the_members_waiting_in_the_first_rebalance(gc):
    from shim.coordinators.group.consumer_config import ConsumerGroupConfig

    gc.consumer.config = ConsumerGroupConfig(classic_max_size=1)
    gc.initial_rebalance_delay_ms = 3_000
    first = join(gc)
    assert join(gc).result.error == E.group_max_size_reached
    gc.tick(T0 + 3_000)
    assert first.done and first.result.error == E.none
