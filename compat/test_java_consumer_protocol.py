"""The consumer group protocol (KIP-848) with Java kafka-clients 4.x (``group.protocol=consumer``,
the ``java4`` extra) against Kafka 4.1 emulation: compat/java/GroupProtocolDriver.java's
``consumer_protocol.rebalance`` (1 -> 3 -> 1 members, a subscription change, committed offsets
resumed, the group described as a consumer group) and ``consumer_protocol.eos``
(sendOffsetsToTransaction with the member's epoch; commit moves the offset, abort does not) and
``consumer_protocol.regex`` (subscribe(SubscriptionPattern), resolved by the broker, follows a
topic created later) and ``consumer_protocol.migration`` (two classic members, a consumer-protocol
member joins and leaves: classic -> consumer -> classic, as the Admin client describes it) and
``consumer_protocol.group_configs`` (KIP-848 GROUP configs through Admin)."""

from __future__ import annotations

import pytest

import shim

pytestmark = [pytest.mark.compat(client="java"), pytest.mark.shim_only("starts a broker emulating Kafka 4.1")]



def run(tmp_path, java4, scenarios, arm=None):
    """The driver's scenarios against a fresh broker; ``arm(broker)`` first (faults through the
    control plane), whose rules come back with their counts after the run."""
    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", kafka_version="4.1",
                           group_initial_rebalance_delay_ms=0, group_consumer_heartbeat_interval_ms=500,
                           extra={"group.consumer.min.heartbeat.interval.ms": "500"},
                           transaction_abort_check_interval_ms=200) as broker:
        rules = arm(broker) if arm is not None else {}
        out = java4.run("GroupProtocolDriver", scenarios, broker.bootstrap_servers, timeout=300, prefix="kip848",
                        parallel=2, timeout_s=180)
        types = broker.call(lambda: {g: "consumer" for g in broker.node.groups.consumer.groups})
        if rules:
            faults = {r["rule"]: r for r in broker.control.faults()["rules"]}
            out["rules"] = {name: faults[rule] for name, rule in rules.items()}
    return out, types


@pytest.mark.compat(scenario="consumer.group_protocol_migration")
def test_kafka_clients_4_classic_group_to_consumer_group_and_back(tmp_path, java4):
    out, _ = run(tmp_path, java4, ["consumer_protocol.migration"])
    result = out["results"]["consumer_protocol.migration"]
    assert result["ok"], result.get("trace", "")[:2000]
    migration = result["observed"]
    assert (migration["classic_type"], migration["mixed_type"], migration["back_type"]) == (
        "Classic", "Consumer", "Classic")


@pytest.mark.compat(scenario="consumer.group_protocol_consumer")
def test_kafka_clients_4_consumer_protocol(tmp_path, java4):
    out, types = run(tmp_path, java4, ["consumer_protocol.rebalance", "consumer_protocol.eos",
                                       "consumer_protocol.regex"])
    assert out["kafka_clients"].startswith("4.")
    failed = {name: (r["error"], r.get("trace", "")[:2000]) for name, r in out["results"].items() if not r["ok"]}
    assert not failed
    rebalance = out["results"]["consumer_protocol.rebalance"]["observed"]
    assert rebalance["three_members"] == [2, 2, 2] and rebalance["after_subscription_change"] == 12
    assert (rebalance["group_type"], rebalance["described_members"]) == ("Consumer", 3)
    eos = out["results"]["consumer_protocol.eos"]["observed"]
    assert eos["member_epoch_positive"] and (eos["committed_round"], eos["aborted_round"]) == (3, 5)
    assert eos["group_offset"] == 3
    assert out["results"]["consumer_protocol.regex"]["observed"]["assigned"] == 3
    assert {"kip848-cp-G", "kip848-cp-eos-G", "kip848-rx-G"} <= set(types)


@pytest.mark.compat(scenario="consumer.group_configs")
def test_kafka_clients_4_admin_sets_and_describes_group_configs(tmp_path, java4):
    out, _ = run(tmp_path, java4, ["consumer_protocol.group_configs"])
    result = out["results"]["consumer_protocol.group_configs"]
    assert result["ok"], result.get("trace", "")[:2000]
    observed = result["observed"]
    # the broker of run() shortens the heartbeat interval to 500 ms
    assert observed["before"] == {"consumer.heartbeat.interval.ms": "500/DEFAULT_CONFIG",
                                  "consumer.session.timeout.ms": "45000/DEFAULT_CONFIG"}
    assert observed["after"] == {"consumer.heartbeat.interval.ms": "6000/DYNAMIC_GROUP_CONFIG",
                                 "consumer.session.timeout.ms": "50000/DYNAMIC_GROUP_CONFIG"}  # Admin names source 8 so
    assert observed["too_short"] == ("InvalidConfigurationException: consumer.session.timeout.ms must be greater "
                                     "than or equal to group.consumer.min.session.timeout.ms")


@pytest.mark.compat(scenario="consumer.group_protocol_consumer")
def test_kafka_clients_4_assignment_that_comes_before_its_topic_metadata(tmp_path, java4):
    """The KIP-848 consumer resolves an assignment's topic ids through its own metadata
    (AbstractMembershipManager.maybeReconcile): with the broker's Metadata answers naming the topic
    held back 3 s for these two clients, the first heartbeat's answer comes first. Subscribed and
    polled at once, the client calls onPartitionsAssigned with nothing, then with the partitions
    once the metadata comes, for the one assignment the broker answered; waiting until its metadata
    names the topic before the first poll (compat/java/GroupReplay.awaitKnown, what the replays of
    Kafka's callback-counting tests do) gives the one call Kafka's tests count."""
    def hold_metadata(broker):
        return {mode: broker.control.delay(ms=3000, api="Metadata", topic="kip848-late-meta",
                                           client_id=f"kip848-late-meta-{mode}", count=0)["rule"]
                for mode in ("plain", "known")}
    out, _ = run(tmp_path, java4, ["consumer_protocol.late_metadata"], arm=hold_metadata)
    result = out["results"]["consumer_protocol.late_metadata"]
    assert result["ok"], result.get("trace", "")[:2000]
    partitions = ["kip848-late-meta-0", "kip848-late-meta-1"]
    assert result["observed"] == {"plain": [[], partitions], "known": [partitions]}
    assert out["rules"]["plain"]["fired"] >= 1 and out["rules"]["known"]["fired"] >= 1
