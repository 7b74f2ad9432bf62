"""PlaintextAdminIntegrationTest's leader elections with the Java Admin, against a simulated
three-broker kafka-shim whose brokers compat/java/ElectionReplay.java stops and starts through the
control plane: a preferred election brings leadership back to the first replica once it is a live
ISR member again (PreferredLeaderNotAvailableException while it is down), an unclean election of a
partition whose ISR is all down elects a live replica outside it (EligibleLeadersNotAvailableException
while none is live), and a partition with its leader needs no election; and ProducerFailureHandlingTest's
acks=all sends below min.insync.replicas."""

from __future__ import annotations

import pytest

from compat.javarun import observed_of
from shim.broker import BrokerThread

pytestmark = [pytest.mark.shim_only("stops and starts brokers of a simulated cluster through its control plane"),
              pytest.mark.compat(client="java")]

NOT_NEEDED, NO_PREFERRED, NO_ELIGIBLE = ("ElectionNotNeededException", "PreferredLeaderNotAvailableException",
                                         "EligibleLeadersNotAvailableException")


@pytest.fixture(scope="module")
def observed(tmp_path_factory, java_drivers):
    with BrokerThread(data_dir=tmp_path_factory.mktemp("elections") / "data", listen="127.0.0.1:0", brokers=3,
                      control_listen="127.0.0.1:0") as broker:
        out = java_drivers.run("ReferenceDriver", ["admin.elect_preferred", "admin.elect_unclean",
                                                     "producer.not_enough_replicas"],
                               broker.bootstrap_servers, timeout=200, prefix="elect", parallel=1, timeout_s=90,
                               control=broker.broker.control_url)
    return observed_of(out["results"])


@pytest.mark.compat(scenario="admin.elect_preferred")
def test_preferred_election(observed):
    """testElectPreferredLeaders' failover and return: [leader, ISR] and the election's outcome at each step."""
    assert observed("admin.elect_preferred")["steps"] == [
        [1, [1, 2]], [NOT_NEEDED],        # the preferred replica leads
        [2, [2]], [NO_PREFERRED],          # it is down: 2 leads, and cannot be replaced
        [2, [1, 2]], [None], [1, [1, 2]],  # back in the ISR: elected again
    ]


@pytest.mark.compat(scenario="admin.elect_unclean")
def test_unclean_election(observed):
    """testElectUncleanLeadersWhenNoLiveBrokers, ...ForOnePartition, ...ForManyPartitions,
    ...ForAllPartitions, ...AndNoop and ...Noop, on partitions assigned to brokers 1 and 2, and 1 and 0."""
    assert observed("admin.elect_unclean")["steps"] == [
        [[1, [1, 2]], [1, [0, 1]]],
        [[-1, [1]], [0, [0]]],             # 2 then 1 down: p1 has no leader, p2 fails over to 0
        [NO_ELIGIBLE],                     # no live replica of p1
        [None, NOT_NEEDED],                # 2 back (stale): p1 elects it uncleanly; p2 has a leader
        [[2, [2]], [0, [0]]],
        [None, None],                      # ...ForManyPartitions: both partitions on 1 and 2 elect 2
        [[2, [2]], [2, [2]]],
        [NOT_NEEDED],                      # 1 back: it rejoins the ISR, p1 keeps its leader
        [[2, [1, 2]], [0, [0, 1]]],
    ]
    # ...ForAllPartitions: no partitions named; the leaderless one is elected, the one that has a
    # leader is left out of the answer (KRaft's ReplicationControlManager.electLeaders)
    assert observed("admin.elect_unclean")["all"] == [None, "absent"]
    assert observed("admin.elect_unclean")["all_state"] == [[2, [2]], [0, [0]]]


@pytest.mark.compat(scenario="producer.not_enough_replicas")
def test_not_enough_replicas(observed):
    """ProducerFailureHandlingTest's replication cases on brokers 0 and 1 (acks=all, no retries,
    min.insync.replicas=2): a record near max.message.bytes is written; with broker 1 down the send fails
    with one of the errors Kafka's testNotEnoughReplicasAfterBrokerShutdown accepts; with it back, written."""
    obs = observed("producer.not_enough_replicas")
    assert (obs["large_acks_all"], obs["all_up"], obs["replica_back"]) == (None, None, None)
    e = "org.apache.kafka.common.errors."
    assert obs["replica_down"]["chain"][1] in (e + "NotEnoughReplicasException", e + "NotEnoughReplicasAfterAppendException",
                                               e + "TimeoutException"), obs["replica_down"]
