"""DescribeProducers sent to a follower with the Java Admin (DescribeProducersOptions.brokerId), against
a simulated three-broker kafka-shim: compat/java/FollowerReplay.java. A Kafka follower answers from
its own log (ReplicaManager.activeProducerState takes any hosted replica), a broker with no replica
NOT_LEADER_OR_FOLLOWER, which the Admin does not retry when a broker was named."""

from __future__ import annotations

import pytest

from compat.javarun import observed_of
from shim.broker import BrokerThread

pytestmark = [pytest.mark.shim_only("slows a follower of a simulated cluster through its control plane"),
              pytest.mark.compat(client="java")]


@pytest.fixture(scope="module")
def observed(tmp_path_factory, java_drivers):
    with BrokerThread(data_dir=tmp_path_factory.mktemp("followers") / "data", listen="127.0.0.1:0", brokers=3,
                      control_listen="127.0.0.1:0") as broker:
        out = java_drivers.run("ReferenceDriver", ["admin.describe_producers_follower"], broker.bootstrap_servers,
                               timeout=200, prefix="follow", parallel=1, timeout_s=90,
                               control=broker.broker.control_url)
    return observed_of(out["results"])


@pytest.mark.compat(scenario="admin.describe_producers_follower")
def test_a_follower_describes_the_producers_of_its_log(observed):
    obs = observed("admin.describe_producers_follower")
    [[producer_id, last_sequence]] = obs["leader"]
    assert last_sequence == 2 and producer_id >= 0
    assert obs["follower"] == obs["leader"]
    assert obs["no_replica"]["chain"][0] == "org.apache.kafka.common.errors.NotLeaderOrFollowerException"
    assert "on brokerId 2" in obs["no_replica"]["message"]
    # slowed, it holds what it had fetched: the leader's fourth record is not in its log yet
    assert obs["appended"] and obs["slowed_follower"] == [[producer_id, 2]]
    assert obs["pending"] is None and obs["caught_up_follower"] == [[producer_id, 3]]
