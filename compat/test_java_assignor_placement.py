"""Which partition goes to which member, with Java kafka-clients 4.x (``group.protocol=consumer``,
the ``java4`` extra) against Kafka 4.1 emulation: compat/java/PlacementDriver.java's
``consumer_protocol.placement`` records, after each member joined and the assignment settled, every
member's id and partitions; each step must be what Kafka's ``uniform`` assignor gives for the
previous step and those member ids (kafka-shim's assignor, which tests/groups/test_assignor_vectors.py
holds to Kafka's own test vectors). One subscription (3 members over 6 partitions) and two
(the heterogeneous builder); the members name racks, which Kafka 4.1's assignors do not use."""

from __future__ import annotations

import pytest

import shim
from shim.coordinators.group.consumer_assignors import MemberSpec, kafka_order, uniform

pytestmark = [pytest.mark.compat(client="java", scenario="consumer.group_protocol_consumer"),
              pytest.mark.shim_only("compares with kafka-shim's assignor on the clients' member ids")]



def replay(steps, ids, counts):
    """Each recorded step against Kafka's algorithm run on the step before it."""
    target: dict = {}
    for step in steps:
        subs = {m["member"]: frozenset(ids[t] for t in m["topics"]) for m in step}
        specs = {m: MemberSpec(s, target.get(m, {})) for m, s in subs.items()}
        target = uniform(kafka_order(specs), counts, homogeneous=len(set(subs.values())) == 1)
        names = {v: k for k, v in ids.items()}
        expected = {m: sorted(f"{names[t]}:{p}" for t, ps in target.get(m, {}).items() for p in ps) for m in subs}
        assert {m["member"]: m["partitions"] for m in step} == expected


def test_kafka_clients_4_members_get_kafkas_uniform_placement(tmp_path, java4):
    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", kafka_version="4.1",
                           group_initial_rebalance_delay_ms=0, group_consumer_heartbeat_interval_ms=500,
                           extra={"group.consumer.min.heartbeat.interval.ms": "500"}) as broker:
        out = java4.run("PlacementDriver", ["consumer_protocol.placement"], broker.bootstrap_servers, timeout=300,
                        prefix="placement", timeout_s=180)
        result = out["results"]["consumer_protocol.placement"]
        assert result["ok"], (result.get("error"), result.get("trace", "")[:2000])
        observed = result["observed"]
        topics = observed["topics"]
        ids = broker.call(lambda: {name: broker.node.groups.consumer.topics[name].topic_id
                                   for name in topics.values()})
    assert out["kafka_clients"].startswith("4.")
    counts = {ids[topics["p6"]]: 6, ids[topics["hx"]]: 3, ids[topics["hy"]]: 6}
    replay(observed["one_subscription"], ids, {ids[topics["p6"]]: 6})
    replay(observed["two_subscriptions"], ids, {k: v for k, v in counts.items() if k != ids[topics["p6"]]})
    assert [len(step) for step in observed["two_subscriptions"]] == [1, 2, 3]
