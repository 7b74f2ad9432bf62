"""The consumer replays of compat/test_java_reference_replay.py again, as Apache Kafka 4's versions
of those tests run them too (getTestQuorumAndGroupProtocolParametersAll): kafka-clients 4.x with
group.protocol=consumer (KIP-848) against a kafka-shim emulating Kafka 4.1, in one JVM, with the
same assertions; for group.id "" Kafka 4's testEmptyGroupIdNotSupported instead (the consumer
refuses to be built). ConsumerBounceTest.testCloseDuringRebalance is classic-only there, and so
left out here."""

from __future__ import annotations

import pytest

import compat.test_java_reference_replay as classic
import shim
from compat.javarun import module_scenarios, observed_of

pytestmark = [pytest.mark.compat(client="java"), pytest.mark.shim_only("starts a broker emulating Kafka 4.1")]

@pytest.fixture(scope="module")
def observed(request, java4, tmp_path_factory):
    with shim.BrokerThread(data_dir=tmp_path_factory.mktemp("kip848-replay") / "data", listen="127.0.0.1:0",
                           kafka_version="4.1", group_initial_rebalance_delay_ms=0,
                           group_consumer_heartbeat_interval_ms=500,  # as test_java_consumer_protocol.py
                           extra={"group.consumer.min.heartbeat.interval.ms": "500"}) as broker:
        out = java4.run("ReferenceDriver", module_scenarios(request), broker.bootstrap_servers, timeout=300,
                        prefix="kip848r", parallel=6, timeout_s=120, **{"client.group.protocol": "consumer"})
    assert out["kafka_clients"].startswith("4.")
    return observed_of(out["results"])


def each(*names):
    return pytest.mark.parametrize("scenario", [pytest.param(n, id=n, marks=pytest.mark.compat(scenario=n))
                                                for n in names])


CHECKS = {
    "consumer.seek": classic.test_seek,
    "consumer.records_and_times": classic.test_headers_timestamps_and_offsets,
    "consumer.pause_and_poll": classic.test_pause_and_poll,
    "consumer.commit_positions": classic.test_positions_and_commits,
    "consumer.subscriptions": classic.test_subscriptions,
    "consumer.static_new_partition": classic.test_static_member_detects_new_partition,
    "consumer.low_fetch_sizes": classic.test_low_fetch_sizes,
    "consumer.commits_more": classic.test_more_commits,
    "consumer.topic_unavailable": classic.test_subscribe_when_topic_unavailable,
    "consumer.assign_and_commit": classic.test_assign_and_commit,
    "consumer.rebalance_callbacks": classic.test_rebalance_callbacks,
    "consumer.fetch_more": classic.test_fetch_more,
    "consumer.lag_lead_metrics": classic.test_lag_and_lead_metrics,
    "consumer.basics": classic.test_consumer_basics,
    "consumer.topic_creation": classic.test_consumer_topic_creation,
}


@each(*CHECKS)
def test_consumer_protocol(observed, scenario):
    CHECKS[scenario](observed)


@each("consumer.group_ids")
def test_consumer_protocol_group_ids(observed, scenario):
    """testConsumingWithNullGroupId as with the classic protocol; testEmptyGroupIdNotSupported."""
    obs = observed(scenario)
    invalid = "org.apache.kafka.common.errors.InvalidGroupIdException"
    assert obs["null_commit"]["chain"] == obs["null_committed"]["chain"] == [invalid]
    assert obs["null_counts"] == [3, 0, 2]
    assert obs["empty_group_refused"]["chain"][0] == "org.apache.kafka.common.KafkaException"
