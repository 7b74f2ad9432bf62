"""The consumer group protocol (KIP-848) through the coordinator, with the fake clock: epochs,
revocation before assignment, fencing, static members, timeouts, member-epoch offset commits, and
the state rebuilt from __consumer_offsets after kill -9."""

from __future__ import annotations

import pytest

from group_helpers import T0, TOPIC, call
from shim.coordinators.group import OffsetAndMetadata
from shim.coordinators.group.consumer_coordinator import HeartbeatRequest
from shim.coordinators.group.consumer_group import MemberState
from shim.errors import ErrorCode as E

HEARTBEAT, DESCRIBE, OFFSET_COMMIT, OFFSET_FETCH, LIST = 68, 69, 8, 9, 16


class Client:
    """One consumer-protocol member as a client drives it: it remembers its epoch and owns exactly
    what the last assignment it received says (revoking at once)."""

    def __init__(self, gc, member_id, group="g", topics=(TOPIC,), **kw):
        self.gc, self.member_id, self.group, self.epoch, self.owned = gc, member_id, group, 0, {}
        self.join = {"rebalance_timeout_ms": 30_000, "subscribed_topic_names": tuple(topics), **kw}

    def beat(self, now=T0, **kw):
        fields = self.join if self.epoch == 0 else {}
        if self.epoch > 0 and "instance_id" in self.join:
            fields = {"instance_id": self.join["instance_id"]}
        r = self.gc.consumer.heartbeat(HeartbeatRequest(self.group, self.member_id, kw.pop("epoch", self.epoch),
                                                        owned=self.owned, **{**fields, **kw}), now)
        if r.error == E.none:
            self.epoch = r.member_epoch
            if r.assignment is not None:
                self.owned = dict(r.assignment)
        return r

    def partitions(self):
        return sorted(p for ps in self.owned.values() for p in ps)


def converge(clients, now=T0, rounds=10):
    for _ in range(rounds):
        for c in clients:
            assert c.beat(now).error == E.none
    return [c.partitions() for c in clients]


def test_a_partition_is_revoked_by_its_owner_before_another_member_gets_it(gc):
    a, b = Client(gc, "a"), Client(gc, "b")
    assert a.beat().member_epoch == 1 and a.partitions() == [0, 1, 2, 3, 4, 5]
    r = b.beat()
    assert (r.member_epoch, r.assignment) == (2, {})
    group = gc.consumer.groups["g"]
    assert group.members["b"].state is MemberState.UNRELEASED_PARTITIONS
    a.beat()  # told to give up half; still at epoch 1 until it does
    assert group.members["a"].state is MemberState.UNREVOKED_PARTITIONS and a.epoch == 1
    assert len(a.partitions()) == 3
    assert b.beat().assignment is None and b.partitions() == []  # a has not confirmed yet
    a.beat()  # a's heartbeat no longer lists the revoked partitions: they are free
    assert a.epoch == 2 and group.members["a"].state is MemberState.STABLE
    b.beat()
    assert sorted(a.partitions() + b.partitions()) == list(range(6)) and len(b.partitions()) == 3
    assert group.state.value == "Stable"


def test_three_members_then_one(gc):
    clients = [Client(gc, m) for m in "abc"]
    assert sorted(map(len, converge(clients))) == [2, 2, 2]
    for c in clients[1:]:
        assert c.beat(epoch=-1).member_epoch == -1
    assert gc.consumer.groups["g"].state.value == "Assigning"  # the next heartbeat recomputes the target
    assert converge(clients[:1]) == [[0, 1, 2, 3, 4, 5]]


def test_range_assignor_when_the_members_ask_for_it(node, gc):
    node.logs.create_topic("u", 6)
    clients = [Client(gc, m, topics=(TOPIC, "u"), server_assignor="range") for m in "ab"]
    converge(clients)
    t, u = node.logs.topics[TOPIC].topic_id, node.logs.topics["u"].topic_id
    # co-partitioned ranges: the first member by id gets 0-2 of both topics
    assert clients[0].owned == {t: frozenset({0, 1, 2}), u: frozenset({0, 1, 2})}
    assert gc.consumer.describe("g").assignor == "range"


@pytest.mark.parametrize("epoch,code", [(5, E.fenced_member_epoch), (0, None)])
def test_epoch_checks(gc, epoch, code):
    a = Client(gc, "a")
    a.beat()
    a.beat()
    if code is None:  # a join with epoch 0 of a member at epoch 1 whose previous epoch is 0: let through
        assert gc.consumer.heartbeat(HeartbeatRequest("g", "a", 0, rebalance_timeout_ms=1, owned={},
                                                      subscribed_topic_names=(TOPIC,)), T0).error == E.none
    else:
        assert a.beat(epoch=epoch).error == code


def test_unknown_member_and_group_and_bad_requests(gc):
    Client(gc, "a").beat()
    assert Client(gc, "x").beat(epoch=1).error == E.unknown_member_id
    assert Client(gc, "x", group="nope").beat(epoch=1).error == E.group_id_not_found
    assert Client(gc, "x").beat(subscribed_topic_names=None).error == E.invalid_request
    assert Client(gc, "x").beat(server_assignor="sticky").error == E.unsupported_assignor
    assert Client(gc, "x").beat(subscribed_topic_regex="(").error == E.invalid_regular_expression


def test_a_member_one_epoch_behind_with_a_subset_of_its_partitions_is_let_through(gc):
    a, b = Client(gc, "a"), Client(gc, "b")
    a.beat(), b.beat(), a.beat(), a.beat()
    assert a.epoch == 2
    member = gc.consumer.groups["g"].members["a"]
    assert member.previous_member_epoch == 1
    assert a.beat(epoch=1).error == E.none  # lost the answer that bumped it
    a.owned = {next(iter(member.assigned)): frozenset(range(6))}
    assert a.beat(epoch=1).error == E.fenced_member_epoch  # claims more than it has


def test_a_static_member_comes_back_to_its_partitions_without_a_rebalance(gc):
    a, b = Client(gc, "a", instance_id="i-a"), Client(gc, "b", instance_id="i-b")
    converge([a, b])
    before = a.partitions()
    group = gc.consumer.groups["g"]
    epoch = group.group_epoch
    assert a.beat(epoch=-2).member_epoch == -2
    assert Client(gc, "a2", instance_id="i-b").beat().error == E.unreleased_instance_id
    back = Client(gc, "a2", instance_id="i-a")
    r = back.beat()
    assert r.error == E.none and back.partitions() == before
    assert group.group_epoch == epoch and "a" not in group.members
    assert Client(gc, "zzz", instance_id="i-a").beat(epoch=3).error == E.fenced_instance_id


def test_session_timeout_fences_and_frees_the_partitions(gc):
    a, b = Client(gc, "a"), Client(gc, "b")
    converge([a, b])
    gc.tick(T0 + 45_000 - 1)
    assert set(gc.consumer.groups["g"].members) == {"a", "b"}
    later = T0 + 30_000
    for _ in range(3):
        a.beat(later)
    gc.tick(T0 + 45_000)
    assert set(gc.consumer.groups["g"].members) == {"a"}
    assert converge([a], later) == [[0, 1, 2, 3, 4, 5]]


def test_a_member_that_does_not_revoke_in_time_is_fenced(gc):
    a = Client(gc, "a", rebalance_timeout_ms=1_000)
    a.beat()
    b = Client(gc, "b")
    b.beat()
    a.beat(T0 + 10)  # asked to revoke
    assert gc.consumer.groups["g"].members["a"].state is MemberState.UNREVOKED_PARTITIONS
    a.owned = {t: ps | frozenset(range(6)) for t, ps in a.owned.items()}  # keeps them
    a.beat(T0 + 500)
    b.beat(T0 + 500)
    gc.tick(T0 + 1_010)
    assert set(gc.consumer.groups["g"].members) == {"b"}


def test_offset_commits_carry_the_member_epoch(gc):
    a = Client(gc, "a")
    a.beat()
    one = {(TOPIC, 0): OffsetAndMetadata(5)}
    assert gc.commit_offsets("g", "a", None, a.epoch, one, T0) == {(TOPIC, 0): E.none}
    assert gc.commit_offsets("g", "a", None, a.epoch + 1, one, T0) == {(TOPIC, 0): E.stale_member_epoch}
    assert gc.commit_offsets("g", "a", None, a.epoch, one, T0, version=8) == {(TOPIC, 0): E.unsupported_version}
    assert gc.commit_offsets("g", "zz", None, a.epoch, one, T0) == {(TOPIC, 0): E.unknown_member_id}
    assert gc.validate_offset_fetch("g", "a", a.epoch + 1) == E.stale_member_epoch
    assert gc.validate_offset_fetch("g", None, -1) == E.none


def test_a_stale_transactional_commit_is_an_illegal_generation(node, gc):
    a = Client(gc, "a")
    a.beat()
    pid, epoch = node.txn.init_producer_id("tx", 60_000, -1, -1, T0)
    node.txn.add_offsets("tx", pid, epoch, "g", T0)
    one = {(TOPIC, 0): OffsetAndMetadata(5)}
    # Kafka: TxnOffsetCommit has no STALE_MEMBER_EPOCH code
    assert gc.commit_txn_offsets("g", "tx", pid, epoch, "a", None, a.epoch + 1, one, T0) == {
        (TOPIC, 0): E.illegal_generation}
    assert gc.commit_txn_offsets("g", "tx", pid, epoch, "a", None, a.epoch, one, T0) == {(TOPIC, 0): E.none}


@pytest.mark.parametrize("clean", [True, False])
def test_the_group_survives_a_restart(nodes, node, gc, clean):
    a, b = Client(gc, "a"), Client(gc, "b", instance_id="i")
    converge([a, b])
    gc.commit_offsets("g", "a", None, a.epoch, {(TOPIC, 1): OffsetAndMetadata(7)}, T0)
    before = gc.consumer.groups["g"]
    snapshot = (before.group_epoch, before.assignment_epoch,
                {m: x.current() for m, x in before.members.items()}, dict(before.target))
    nodes.close(node) if clean else nodes.crash(node)
    gc = nodes().groups
    after = gc.consumer.groups["g"]
    assert (after.group_epoch, after.assignment_epoch, {m: x.current() for m, x in after.members.items()},
            after.target) == snapshot
    assert after.static_members == {"i": "b"}
    assert after.offsets[(TOPIC, 1)].value.offset == 7
    a.gc = b.gc = gc
    assert a.beat().error == E.none and b.beat().error == E.none  # no rejoin needed
    assert gc.consumer.groups["g"].group_epoch == snapshot[0]


def test_an_empty_group_is_deleted_with_its_offsets_and_stays_deleted(nodes, node, gc):
    a = Client(gc, "a")
    a.beat()
    gc.commit_offsets("g", "a", None, a.epoch, {(TOPIC, 1): OffsetAndMetadata(7)}, T0)
    assert gc.delete_groups(["g"], T0) == {"g": E.non_empty_group}
    a.beat(epoch=-1)
    assert gc.delete_groups(["g"], T0) == {"g": E.none}
    nodes.crash(node)
    gc = nodes().groups
    assert "g" not in gc.consumer.groups and "g" not in gc.groups


def test_a_new_topic_matching_the_regex_bumps_the_group_epoch(node, gc):
    a = Client(gc, "a", topics=(), subscribed_topic_regex="t.*")
    a.beat()
    epoch = gc.consumer.groups["g"].group_epoch
    node.logs.create_topic("t2", 2)
    node.logs.create_topic("other", 2)
    converge([a])
    assert gc.consumer.groups["g"].group_epoch == epoch + 1
    assert sorted(len(ps) for ps in a.owned.values()) == [2, 6]
    node.logs.add_partitions("t2", 3)
    converge([a])
    assert sorted(len(ps) for ps in a.owned.values()) == [3, 6]


def test_a_regex_no_other_member_subscribes_is_assigned_from_the_heartbeat_after_the_one_that_brings_it(node, gc):
    # Kafka resolves a new regex in the background, then bumps the group epoch (librdkafka's
    # 0045_resubscribe_with_regex: the literal topic first, the regex's topics at the next heartbeat)
    node.logs.create_topic("lit", 2)
    a = Client(gc, "a", topics=("lit",), subscribed_topic_regex="t.*")
    r = a.beat()
    lit, t = node.logs.topics["lit"].topic_id, node.logs.topics[TOPIC].topic_id
    assert r.assignment == {lit: frozenset({0, 1})}
    group = gc.consumer.groups["g"]
    assert (group.group_epoch, group.assignment_epoch, group.state.value) == (2, 1, "Assigning")
    a.beat()
    assert a.owned == {lit: frozenset({0, 1}), t: frozenset(range(6))} and a.epoch == 2
    # a regex another member subscribes to is resolved already: no second bump
    b = Client(gc, "b", topics=(), subscribed_topic_regex="t.*")
    b.beat()
    assert group.group_epoch == 3
    converge([a, b])
    assert sorted(a.owned[t] | b.owned[t]) == list(range(6)) and a.owned[lit] == frozenset({0, 1})
    # once no member subscribes to it, subscribing again waits for a new resolution
    for c in (a, b):
        c.beat(epoch=-1)
    c = Client(gc, "c", topics=("lit",), subscribed_topic_regex="t.*")
    assert c.beat().assignment == {lit: frozenset({0, 1})}
    # a member changing to a regex no one has is answered without it too
    assert c.beat(subscribed_topic_regex="l.*").error == E.none and t not in c.owned


async def test_the_apis_under_kafka_4_and_3_9(nodes):
    node = nodes(kafka_version="4.1")
    node.logs.create_topic(TOPIC, 3)
    r = await call(node, HEARTBEAT, 1, group_id="g", member_id="m", member_epoch=0, rebalance_timeout=30_000,
                   subscribed_topic_names=(TOPIC,), topic_partitions=())
    assert (r.error_code, r.member_id, r.member_epoch) == (E.none, "m", 1)
    assert sorted(r.assignment.topic_partitions[0].partitions) == [0, 1, 2]
    d = await call(node, DESCRIBE, 1, group_ids=("g", "nope"), include_authorized_operations=False)
    assert (d.groups[0].group_state, d.groups[0].group_epoch, d.groups[0].members[0].member_epoch) == ("Stable", 1, 1)
    assert d.groups[0].members[0].assignment.topic_partitions[0].topic_name == TOPIC
    assert d.groups[1].error_code == E.group_id_not_found
    listed = await call(node, LIST, 5, states_filter=(), types_filter=("consumer",))
    assert [(g.group_id, g.group_type, g.group_state) for g in listed.groups] == [("g", "consumer", "Stable")]
    nodes.close(node)
    old = nodes(kafka_version="3.9")
    r = await call(old, HEARTBEAT, 0, group_id="h", member_id="", member_epoch=0, rebalance_timeout=30_000,
                   subscribed_topic_names=(TOPIC,), topic_partitions=())
    assert r.error_code == E.unsupported_version


def test_a_regex_that_would_backtrack_forever_is_matched_in_linear_time(node, gc):
    node.logs.create_topic("a" * 200, 1)
    # (a+)+b against 200 a's: exponential for a backtracking engine, linear for RE2 (Kafka: RE2/J)
    a = Client(gc, "a", topics=(), subscribed_topic_regex="(a+)+b")
    assert a.beat().error == E.none and a.owned == {}
    assert Client(gc, "b", topics=(), subscribed_topic_regex="(?<=x)y").beat().error == E.invalid_regular_expression


def test_a_regex_whose_program_outgrows_its_memory_budget_is_invalid(gc):
    """".{1000}" 29 times is 203 bytes of regex and 2 MiB of compiled program, kept in the compile
    cache: a thousand such heartbeats held 2 GiB. Past REGEX_MAX_MEM RE2 refuses to compile it."""
    answer = Client(gc, "a", topics=(), subscribed_topic_regex=".{1000}" * 29).beat()
    assert answer.error == E.invalid_regular_expression
    assert "pattern too large" in answer.message
    assert Client(gc, "b", topics=(), subscribed_topic_regex=".{1000}" * 3).beat().error == E.none


def test_group_consumer_settings_by_their_kafka_names(nodes):
    node = nodes(extra={"group.consumer.max.size": "1", "group.consumer.migration.policy": "Disabled",
                        "group.consumer.assignors": "org.apache.kafka.coordinator.group.assignor.RangeAssignor, uniform"})
    node.logs.create_topic(TOPIC, 2)
    config = node.groups.consumer.config
    assert (config.max_size, config.migration_policy, config.assignors) == (1, "disabled", ("range", "uniform"))
    gc = node.groups
    assert Client(gc, "a").beat().error == E.none
    assert gc.consumer.describe("g").assignor == "range"
    assert Client(gc, "b").beat().error == E.group_max_size_reached


def test_an_assignor_failure_is_unknown_server_error_and_leaves_the_group_as_it_was(gc, monkeypatch):
    """Kafka: a PartitionAssignorException in updateTargetAssignment answers UNKNOWN_SERVER_ERROR."""
    from shim.coordinators.group import consumer_coordinator
    from shim.coordinators.group.consumer_assignors import AssignorError

    a = Client(gc, "a")
    a.beat()

    def failing(*_args, **_kw):
        raise AssignorError("Partitions were left unassigned")
    monkeypatch.setitem(consumer_coordinator.ASSIGNORS, "uniform", failing)
    assert Client(gc, "b").beat().error == E.unknown_server_error
    assert set(gc.consumer.groups["g"].members) == {"a"}


def test_a_subscription_repeating_a_long_name_records_it_once(gc):
    """Kafka keeps a member's subscribed names as a set: 51 copies of a 32,767-character name (1.7 MB,
    past the offsets partition's max.message.bytes) are one name, and the heartbeat is answered."""
    a = Client(gc, "a")
    assert a.beat().member_epoch == 1 and a.partitions() == [0, 1, 2, 3, 4, 5]
    long_name = "t" * 32767
    r = a.beat(rack_id="r1", subscribed_topic_names=(long_name,) * 51)
    assert (r.error, r.message) == (E.none, None)
    member = gc.consumer.groups["g"].members["a"]
    assert member.subscribed_topic_names == (long_name,) and member.rack_id == "r1"
    assert gc.consumer.groups["g"].group_epoch == 2 and r.assignment == {}  # TOPIC is revoked


def test_a_steady_heartbeat_does_not_walk_every_members_subscription(node, gc):
    """Members may each subscribe to as many names as a request holds. Each heartbeat took the union
    of every member's subscription again, so a few members naming 60,000 topics made every
    heartbeat of the group, a one-topic member's included, cost about half a join's loop time
    (0.1-0.3 s). Kafka computes the subscribed topics only when a subscription or the topics
    change; a steady heartbeat is now a small fraction of a join, and a topic made while the
    members heartbeat is still seen."""
    import time

    names = tuple(f"n{i:06d}" for i in range(60_000)) + (TOPIC,)
    big = [Client(gc, m, topics=names) for m in "abcd"]
    for c in big:
        assert c.beat().error == E.none
    small = Client(gc, "small")
    started = time.process_time()
    assert small.beat().error == E.none  # a join: the subscriptions are walked
    join = time.process_time() - started
    converge([small], rounds=1)
    started = time.process_time()
    converge([small], rounds=5)
    steady = (time.process_time() - started) / 5
    assert steady < join / 10, (steady, join)
    epoch = gc.consumer.groups["g"].group_epoch
    node.logs.create_topic("n000007", 2)  # subscribed by the big members: the group's metadata changed
    assert small.beat().error == E.none
    assert gc.consumer.groups["g"].group_epoch == epoch + 1
    converge(big + [small], rounds=4)
    owned = {t for c in big for t, ps in c.owned.items() if ps}
    assert node.logs.topics["n000007"].topic_id in owned
