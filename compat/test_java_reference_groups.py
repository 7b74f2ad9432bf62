"""Apache Kafka 3.9's PlaintextConsumerPollTest group cases (testMaxPollIntervalMs,
testMaxPollIntervalMsDelayInRevocation, testMaxPollIntervalMsDelayInAssignment,
testMaxPollIntervalMsShorterThanPollTimeout, testMultiConsumerSessionTimeoutOnStopPolling and
...OnClose) and PlaintextConsumerSubscriptionTest.testUnsubscribeTopic, replayed with kafka-clients
and the classic protocol against a kafka-shim of their own, set up as Kafka's AbstractConsumerTest
sets its brokers: group.min.session.timeout.ms=100 (the tests' session timeouts of 100 ms to 2 s),
group.max.session.timeout.ms=60000, group.initial.rebalance.delay.ms=10. compat/java/GroupReplay.java
runs them in one JVM; each test holds the Kafka test's assertions."""

from __future__ import annotations

import pytest

import shim
from compat.javarun import module_scenarios, observed_of

pytestmark = [pytest.mark.compat(client="java"),
              pytest.mark.shim_only("starts a broker with AbstractConsumerTest's group settings")]


@pytest.fixture(scope="module")
def observed(request, java_drivers, tmp_path_factory):
    data = tmp_path_factory.mktemp("groups-replay") / "data"
    wanted = [n for n in module_scenarios(request) if n != "consumer.offsets_compression"]
    with shim.BrokerThread(data_dir=data, listen="127.0.0.1:0", group_initial_rebalance_delay_ms=10,
                           group_min_session_timeout_ms=100, group_max_session_timeout_ms=60000) as broker:
        out = java_drivers.run("ReferenceDriver", wanted, broker.bootstrap_servers, timeout=300,
                               prefix="groups", parallel=7, timeout_s=120)
    return observed_of(out["results"])


@pytest.mark.compat(scenario="consumer.max_poll_interval")
def test_max_poll_interval(observed):
    """testMaxPollIntervalMs: [rebalanced, calls to onPartitionsAssigned, to onPartitionsRevoked]; the
    member that did not poll for 3 s (max.poll.interval.ms=1000) left and joins again."""
    obs = observed("consumer.max_poll_interval")
    assert obs["first"] == [True, 1, 0]
    assert obs["second"] == [True, 2, 1]


@pytest.mark.compat(scenario="consumer.slow_revocation")
def test_max_poll_interval_delay_in_revocation(observed):
    """testMaxPollIntervalMsDelayInRevocation: the revocation callback sleeps past session.timeout.ms
    (1000) and its commit still succeeds: the broker's rebalance timeout is max.poll.interval.ms."""
    obs = observed("consumer.slow_revocation")
    assert (obs["first"], obs["second"]) == (True, True)
    assert (obs["committed_position"], obs["commit_completed"]) == (0, True)


@pytest.mark.compat(scenario="consumer.slow_assignment")
def test_max_poll_interval_delay_in_assignment(observed):
    """testMaxPollIntervalMsDelayInAssignment: after an assignment callback longer than the session
    timeout, the member is still in the group (its commit succeeds, nothing was revoked)."""
    obs = observed("consumer.slow_assignment")
    assert obs["first"] is True
    assert obs["no_rebalance"] == ["null", 0]


@pytest.mark.compat(scenario="consumer.long_poll")
def test_poll_timeout_longer_than_max_poll_interval(observed):
    """testMaxPollIntervalMsShorterThanPollTimeout: poll(2 s) with max.poll.interval.ms=1000 rebalances nothing."""
    obs = observed("consumer.long_poll")
    assert (obs["first"], obs["assigned_since"]) == (True, 0)


@pytest.mark.compat(scenario="consumer.unsubscribe_topic")
def test_unsubscribe_topic(observed):
    """testUnsubscribeTopic: session.timeout.ms=100; subscribing to nothing empties the assignment."""
    assert observed("consumer.unsubscribe_topic") == {"first": True, "assignment_after": 0}


@pytest.mark.parametrize("scenario", [pytest.param(n, id=n, marks=pytest.mark.compat(scenario=n))
                                      for n in ("consumer.member_stops_polling", "consumer.member_closes")])
def test_multi_consumer_session_timeout(observed, scenario):
    """testMultiConsumerSessionTimeoutOnStopPolling / ...OnClose: of three members sharing eight
    partitions one stops polling (max.poll.interval.ms=6000 ends its membership) or closes; the other
    two end up with four partitions each."""
    obs = observed(scenario)
    assert obs["three"] == [2, 3, 3]
    assert obs["two"] == [4, 4]


@pytest.mark.compat(scenario="consumer.offsets_compression")
def test_offsets_topic_compression_codec(tmp_path, java_drivers):
    """GroupCoordinatorIntegrationTest.testGroupCoordinatorPropagatesOffsetsTopicCompressionCodec
    (offsets.topic.num.partitions=1, offsets.topic.compression.codec=1): every batch of
    __consumer_offsets-0 is gzip; the commit is read back after a restart too (the coordinator loads
    compressed batches)."""
    from kafka_codecs.batch import Compression, parse_header

    settings = dict(data_dir=tmp_path / "data", listen="127.0.0.1:0", offsets_topic_num_partitions=1,
                    extra={"offsets.topic.compression.codec": "1"})

    def codecs(broker):
        plog = broker.node.logs.get("__consumer_offsets", 0)
        return broker.call(lambda: [parse_header(b).compression for b in plog.iter_batches()])
    with shim.BrokerThread(**settings) as broker:
        out = java_drivers.run("ReferenceDriver", ["consumer.offsets_compression"], broker.bootstrap_servers,
                               timeout=120, prefix="codec", parallel=1, timeout_s=60)
        written = codecs(broker)
    assert observed_of(out["results"])("consumer.offsets_compression") == {"committed": 10}
    assert written and set(written) == {Compression.GZIP}, written
    with shim.BrokerThread(**settings) as broker:
        out = java_drivers.run("ReferenceDriver", ["consumer.offsets_compression"], broker.bootstrap_servers,
                               timeout=120, prefix="codec", parallel=1, timeout_s=60)
        assert observed_of(out["results"])("consumer.offsets_compression") == {"committed": 10}
        assert set(codecs(broker)) == {Compression.GZIP}
