"""ElectLeaders in a simulated three-broker cluster (shim.cluster.Cluster.elect_leader), as Kafka's
controller answers it (ReplicationControlManager.electLeader, PartitionChangeBuilder), after
PlaintextAdminIntegrationTest's testElectPreferredLeaders and testElectUncleanLeaders* cases."""

from __future__ import annotations

import datetime
import itertools

import pytest

from shim.apis.dispatch import dispatch_request
from shim.config import BrokerConfig
from shim.errors import ErrorCode as E
from shim.node import Node
from shim.protocol.messages import RequestHeader, decode_response, encode_request, join_parts, request_module

_corr = itertools.count(1)
PREFERRED, UNCLEAN = 0, 1


@pytest.fixture
def node(tmp_path):
    n = Node(BrokerConfig(data_dir=tmp_path, brokers=3, group_initial_rebalance_delay_ms=0))
    for node_id, port in {0: 9000, 1: 9001, 2: 9002}.items():
        n.bound(n.listeners[0], port, node_id)
    n.logs.create_topic("t", 3)
    n.cluster.set_replication_factor("t", 3)  # replicas (0,1,2), (1,2,0), (2,0,1)
    n.logs.create_topic("u", 1)
    n.cluster.assign("u", 0, (1, 2))  # testElectUnclean*'s assignment: brokers 1 and 2
    yield n
    n.close()


async def elect(node, partitions, election_type, to=0):
    m = request_module(43, 2)
    wanted = None if partitions is None else tuple(
        m.TopicPartitions(topic=t, partitions=tuple(ps)) for t, ps in partitions.items())
    corr = next(_corr)
    request = m.ElectLeadersRequest(topic_partitions=wanted, timeout=datetime.timedelta(seconds=5),
                                    election_type=election_type)
    answer = await dispatch_request(node, encode_request(RequestHeader(43, 2, corr, "t"), request), node_id=to)
    got, r = decode_response(join_parts(answer.parts), 43, 2)
    assert got == corr and r.error_code == E.none
    return {(t.topic, p.partition_id): (p.error_code, p.error_message)
            for t in r.replica_election_results for p in t.partition_result}


def leader(node, topic, partition):
    s = node.cluster.state(topic, partition)
    return s.leader, s.leader_epoch, s.isr


async def test_a_preferred_election_moves_leadership_back_to_the_first_replica(node):
    node.cluster.node_down(0, 0)
    node.cluster.node_up(0, 0)
    assert leader(node, "t", 0) == (1, 1, (0, 1, 2))  # 0 is back in the ISR, 1 still leads
    assert await elect(node, {"t": [0, 1]}, PREFERRED, to=1) == {
        ("t", 0): (E.none, None), ("t", 1): (E.election_not_needed, "Leader election not needed for topic partition.")}
    assert leader(node, "t", 0) == (0, 2, (0, 1, 2))
    assert (await elect(node, {"t": [0]}, PREFERRED))[("t", 0)][0] == E.election_not_needed


async def test_a_preferred_election_needs_the_preferred_replica_live_and_in_sync(node):
    node.cluster.node_down(0, 0)
    assert await elect(node, {"t": [0]}, PREFERRED, to=1) == {("t", 0): (E.preferred_leader_not_available, None)}
    assert leader(node, "t", 0) == (1, 1, (1, 2))


async def test_electing_every_partition_reports_only_the_ones_that_needed_it(node):
    node.cluster.node_down(0, 0)
    node.cluster.node_up(0, 0)
    got = await elect(node, None, PREFERRED, to=1)
    assert {k: v[0] for k, v in got.items() if k[0] in ("t", "u")} == {("t", 0): E.none}
    assert [leader(node, "t", p)[0] for p in range(3)] == [0, 1, 2]


async def test_an_unclean_election_of_a_leaderless_partition_elects_a_live_replica_outside_the_isr(node):
    # testElectUncleanLeadersForOnePartition: 2 leaves the ISR, 1 (the last member) goes down, 2 returns
    node.cluster.node_down(2, 0)
    node.cluster.node_down(1, 0)
    assert leader(node, "u", 0) == (-1, 0, (1,))
    node.cluster.node_up(2, 0)
    assert leader(node, "u", 0) == (-1, 0, (1,))  # stale: no leader to catch up from
    assert await elect(node, {"u": [0]}, PREFERRED) == {("u", 0): (E.preferred_leader_not_available, None)}
    assert await elect(node, {"u": [0]}, UNCLEAN) == {("u", 0): (E.none, None)}
    assert leader(node, "u", 0) == (2, 1, (2,))
    node.cluster.node_up(1, 0)
    assert leader(node, "u", 0) == (2, 1, (1, 2))  # the old leader rejoins the new one's ISR
    # testElectUncleanLeadersNoop: a partition with a leader needs no unclean election
    assert (await elect(node, {"u": [0]}, UNCLEAN))[("u", 0)][0] == E.election_not_needed


async def test_an_unclean_election_without_a_live_replica_finds_no_eligible_leader(node):
    # testElectUncleanLeadersWhenNoLiveBrokers: broker 0 is up but holds no replica
    node.cluster.node_down(2, 0)
    node.cluster.node_down(1, 0)
    assert await elect(node, {"u": [0]}, UNCLEAN) == {("u", 0): (E.eligible_leaders_not_available, None)}
    assert leader(node, "u", 0) == (-1, 0, (1,))


async def test_random_failovers_and_elections_keep_every_leader_a_live_isr_member(node):
    """Seeded runs of brokers going down and up between preferred, unclean and all-partition elections
    (unknown partitions too): every answer is one of Kafka's, and every leader stays a live member of
    its partition's ISR, its replicas holding the ISR."""
    import random

    rng = random.Random(20261127)
    codes = {E.none, E.election_not_needed, E.preferred_leader_not_available, E.eligible_leaders_not_available,
             E.unknown_topic_or_partition}
    seen = set()
    for _ in range(300):
        action = rng.random()
        target = rng.choice([0, 1, 2])
        if action < 0.3:
            if len(node.cluster.down) < 2:
                node.cluster.node_down(target, 0)
        elif action < 0.5:
            node.cluster.node_up(target, 0)
        else:
            wanted = None if action > 0.9 else {"t": rng.sample([0, 1, 2, 3, -1], 2), "u": [0]}
            got = await elect(node, wanted, rng.choice([PREFERRED, UNCLEAN]), to=rng.choice(node.cluster.alive()))
            seen |= {code for code, _ in got.values()}
            assert seen <= codes
        for (t, p) in [("t", 0), ("t", 1), ("t", 2), ("u", 0)]:
            s = node.cluster.state(t, p)
            assert set(s.isr) <= set(s.replicas) and s.isr
            if s.leader != -1:
                assert s.leader in s.isr and s.leader not in node.cluster.down, (t, p, s)
    assert seen == codes  # the run elected, refused and skipped partitions, not only one of them
