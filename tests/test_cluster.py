"""The simulated cluster's state table (shim.cluster), driven without sockets or a clock."""

from __future__ import annotations

import pytest

from shim.cluster import GROUP, NO_LEADER, TRANSACTION, Cluster, PartitionState, placement
from shim.coordinators.partitioning import partition_for
from shim.errors import ErrorCode, KafkaError
from shim.storage.producer_state import ProducerStateManager


class FakeLog:
    def __init__(self, end: int = 0) -> None:
        self.log_end_offset = end
        self.leader_epoch = 0
        self.high_watermark_limit = None
        self.producer_state = ProducerStateManager()


def cluster(tmp_path=None, nodes=(0, 1, 2), **kw):
    logs: dict = {}
    c = Cluster(nodes, tmp_path, lambda t, p: logs.setdefault((t, p), FakeLog()), lambda: list(logs), **kw)
    c.logs = logs
    return c


def test_placement_is_kafkas_rack_unaware_assignment_with_start_index_0():
    # Kafka's AdminUtils example (5 brokers, 10 partitions, rf 3, start index 0, shift 0)
    nodes = (0, 1, 2, 3, 4)
    assert [placement(p, 3, nodes) for p in range(10)] == [
        (0, 1, 2), (1, 2, 3), (2, 3, 4), (3, 4, 0), (4, 0, 1),
        (0, 2, 3), (1, 3, 4), (2, 4, 0), (3, 0, 1), (4, 1, 2)]


def test_leaders_spread_over_nodes_and_the_first_replica_leads():
    c = cluster()
    c.set_replication_factor("t", 3)
    leaders = [c.state("t", p).leader for p in range(6)]
    assert leaders == [0, 1, 2, 0, 1, 2]
    s = c.state("t", 1)
    assert s.replicas[0] == s.leader and set(s.isr) == {0, 1, 2} and s.leader_epoch == 0


def test_a_non_leader_and_stale_or_future_epochs_are_refused_in_kafkas_order():
    c = cluster()
    c.set_replication_factor("t", 3)
    c.move_leader("t", 0, 1, 0)
    with pytest.raises(KafkaError) as e:
        c.check_leader(0, "t", 0)
    assert e.value.code == ErrorCode.not_leader_or_follower
    with pytest.raises(KafkaError) as e:
        c.check_leader(1, "t", 0, current_leader_epoch=0)
    assert e.value.code == ErrorCode.fenced_leader_epoch
    with pytest.raises(KafkaError) as e:
        c.check_leader(0, "t", 0, current_leader_epoch=5)  # the epoch check comes before the leader check
    assert e.value.code == ErrorCode.unknown_leader_epoch
    assert c.check_leader(1, "t", 0, current_leader_epoch=1).leader == 1


def test_a_leader_move_bumps_the_epoch_and_records_its_start_offset():
    c = cluster()
    c.set_replication_factor("t", 3)
    c.logs[("t", 0)] = FakeLog(end=10)
    assert c.move_leader("t", 0, 1, 0) == 1
    c.logs[("t", 0)].log_end_offset = 25
    assert c.move_leader("t", 0, 2, 0) == 2
    s = c.state("t", 0)
    assert s.epochs == [[0, 0], [1, 10], [2, 25]]
    assert c.logs[("t", 0)].leader_epoch == 2  # the log stamps new batches with it
    # Kafka: LeaderEpochFileCache.endOffsetFor
    assert s.end_offset_for(0, 40) == (0, 10)
    assert s.end_offset_for(1, 40) == (1, 25)
    assert s.end_offset_for(2, 40) == (2, 40)
    assert s.end_offset_for(3, 40) == (-1, -1)
    assert s.epoch_for(9) == 0 and s.epoch_for(10) == 1 and s.epoch_for(30) == 2


def test_an_epoch_without_records_is_replaced_by_the_next():
    c = cluster()
    c.set_replication_factor("t", 3)
    c.move_leader("t", 0, 1, 0)  # log end 0: epoch 0 had no records
    assert c.state("t", 0).epochs == [[1, 0]]
    assert c.state("t", 0).end_offset_for(0, 5) == (0, 0)  # below the earliest: the request's epoch, its start


def test_moving_to_a_replica_outside_the_isr_is_refused():
    c = cluster()
    c.set_replication_factor("t", 2)
    outsider = next(n for n in (0, 1, 2) if n not in c.state("t", 0).replicas)
    with pytest.raises(ValueError):
        c.move_leader("t", 0, outsider, 0)
    with pytest.raises(ValueError):
        c.move_leader("t", 0, 7, 0)


def test_node_down_moves_leadership_and_shrinks_isr_and_node_up_restores_it():
    c = cluster()
    c.set_replication_factor("t", 3)
    c.set_replication_factor("solo", 1)
    before = c.state("t", 0)
    assert before.leader == 0
    solo = c.state("solo", 0)
    c.node_down(0, 0)
    assert c.state("t", 0).leader == 1 and c.state("t", 0).leader_epoch == 1 and 0 not in c.state("t", 0).isr
    assert solo.leader == NO_LEADER and solo.isr == (0,)  # no unclean election: the last ISR member stays
    assert c.alive() == [1, 2] and c.controller() == 1
    c.node_up(0, 0)
    assert set(c.state("t", 0).isr) == {0, 1, 2} and c.state("t", 0).leader == 1
    assert solo.leader == 0 and solo.leader_epoch == 1


def test_a_partition_without_a_leader_waits_for_its_last_isr_member():
    """Kafka without unclean election: a replica that left the ISR before the last one went down
    cannot lead when it returns (it has no leader to catch up from); the last ISR member can, and
    the other replica then rejoins the ISR."""
    c = cluster()
    c.set_replication_factor("t", 2)
    s = c.state("t", 0)
    assert s.replicas == (0, 1)
    c.node_down(0, 0)
    c.node_down(1, 0)
    assert (s.leader, s.isr) == (NO_LEADER, (1,))
    c.node_up(0, 0)
    assert (s.leader, s.isr) == (NO_LEADER, (1,))
    c.node_up(1, 0)
    assert (s.leader, s.isr) == (1, (0, 1))


def test_coordinators_are_the_leaders_of_the_partitions_keys_hash_to():
    c = cluster()
    p = partition_for("my-group", 50)
    assert c.coordinator_partition(GROUP, "my-group") == ("__consumer_offsets", p)
    assert c.coordinator(GROUP, "my-group") == c.state("__consumer_offsets", p).leader == p % 3
    t = partition_for("my-txn", 50)
    assert c.coordinator(TRANSACTION, "my-txn") == t % 3
    target = (p % 3 + 1) % 3
    c.move_coordinator(GROUP, "my-group", target, 0)
    assert c.coordinator(GROUP, "my-group") == target


def test_coordinator_placement_negates_a_negative_hash_as_kafka_does():
    # "orders-consumer".hashCode() is -1204742690; Kafka's Utils.abs gives 1204742690 % 50 = 40,
    # where masking the sign bit would give 8
    c = cluster()
    for kind, topic in ((GROUP, "__consumer_offsets"), (TRANSACTION, "__transaction_state")):
        assert c.coordinator_partition(kind, "orders-consumer") == (topic, 40)
        assert c.coordinator(kind, "orders-consumer") == c.state(topic, 40).leader == 40 % 3


def test_a_slowed_follower_holds_the_high_watermark_until_it_leaves_the_isr():
    c = cluster(replica_lag_time_max_ms=100)
    c.set_replication_factor("t", 3)
    log = c.logs.setdefault(("t", 0), FakeLog(end=5))
    c.state("t", 0)
    c.slow_follower("t", 0, 1, now_ms=1000)
    assert log.high_watermark_limit == 5
    log.log_end_offset = 9
    c.tick(1050)
    assert 1 in c.state("t", 0).isr and log.high_watermark_limit == 5
    c.tick(1101)  # more than replica.lag.time.max.ms behind the log end
    assert 1 not in c.state("t", 0).isr and log.high_watermark_limit is None
    c.unslow_follower("t", 0, 1, 1200)
    assert 1 in c.state("t", 0).isr


def test_a_caught_up_slow_follower_stays_in_the_isr():
    c = cluster(replica_lag_time_max_ms=100)
    c.set_replication_factor("t", 3)
    c.logs.setdefault(("t", 0), FakeLog(end=5))
    c.slow_follower("t", 0, 2, now_ms=0)
    c.tick(500)  # nothing appended: Kafka's Replica.isCaughtUp holds when its log end is the leader's
    assert 2 in c.state("t", 0).isr


def test_the_leader_cannot_be_slowed_and_a_slowed_follower_is_not_elected():
    c = cluster()
    c.set_replication_factor("t", 3)
    with pytest.raises(ValueError):
        c.slow_follower("t", 0, 0, 0)
    c.slow_follower("t", 0, 1, 0)
    with pytest.raises(ValueError):
        c.move_leader("t", 0, 1, 0)
    c.node_down(0, 0)
    assert c.state("t", 0).leader == 2


def test_a_slowed_follower_back_from_node_down_has_caught_up(tmp_path):
    """A restarted Kafka broker keeps no fetcher state: its follower fetches from the leader again
    and rejoins the ISR caught up, so it holds neither the high watermark nor its old producers."""
    c = cluster(tmp_path, replica_lag_time_max_ms=600_000)
    c.set_replication_factor("t", 3)
    log = c.logs.setdefault(("t", 0), FakeLog(end=5))
    c.state("t", 0)
    c.slow_follower("t", 0, 1, now_ms=0)
    c.slow_follower("t", 0, 2, now_ms=0)
    assert c.follower_producer_state(1, "t", 0) is not None
    c.node_down(1, 0)
    log.log_end_offset = 9  # written while it was down
    c.node_up(1, 0)
    assert 1 in c.state("t", 0).isr and c.follower_producer_state(1, "t", 0) is None
    assert log.high_watermark_limit == 5  # broker 2, still slowed, holds it where it was
    c.unslow_follower("t", 0, 2, 0)
    assert log.high_watermark_limit is None and c.state("t", 0).isr == (0, 1, 2)
    again = cluster(tmp_path)  # nor does cluster.json bring the slowed follower back
    assert again.follower_producer_state(1, "t", 0) is None and not again.slow


def test_a_slowed_follower_does_not_rejoin_the_isr_when_the_last_member_returns():
    """The last ISR member's return brings back the replicas that fetch from it; a slowed one has
    fetched nothing and, rejoining, would move the high watermark back to its log end."""
    c = cluster(replica_lag_time_max_ms=100)
    c.set_replication_factor("t", 2)
    log = c.logs.setdefault(("t", 0), FakeLog(end=5))
    s = c.state("t", 0)
    c.slow_follower("t", 0, 1, now_ms=0)
    log.log_end_offset = 9
    c.tick(101)
    assert s.isr == (0,) and log.high_watermark_limit is None
    c.node_down(0, 200)
    c.node_up(0, 300)
    assert (s.leader, s.isr, log.high_watermark_limit) == (0, (0,), None)
    c.unslow_follower("t", 0, 1, 400)
    assert s.isr == (0, 1)


def test_the_table_survives_a_restart(tmp_path):
    c = cluster(tmp_path)
    c.set_replication_factor("t", 3)
    c.move_leader("t", 0, 2, 0)
    c.node_down(1, 0)
    again = cluster(tmp_path)
    s = again.state("t", 0)
    assert (s.leader, s.leader_epoch, again.down) == (2, 1, {1})
    assert 1 not in s.isr


def test_deleting_a_topic_forgets_its_partitions():
    c = cluster()
    c.set_replication_factor("t", 3)
    c.move_leader("t", 0, 2, 0)
    c.delete_topic("t")
    assert c.state("t", 0) == PartitionState(0, 0, (0,), (0,))  # a new topic of that name starts afresh


def test_one_broker_answers_one_row_until_its_node_goes_down():
    c = cluster(nodes=(5,))
    c.logs[("t", 0)] = FakeLog(end=3)
    s = c.state("t", 0)
    assert (s.leader, s.leader_epoch, s.replicas, s.isr) == (5, 0, (5,), (5,))
    assert c.state("u", 7) is s and not c.partitions  # nothing stored per partition
    assert c.move_leader("t", 0, 5, 0) == 0  # already the leader: nothing changes
    c.node_down(5, 0)
    assert c.state("t", 0).leader == NO_LEADER and s.leader == 5
    c.node_up(5, 0)
    assert (c.state("t", 0).leader, c.state("t", 0).leader_epoch) == (5, 1)
