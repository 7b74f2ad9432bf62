"""Java Admin (kafka-clients 3.9.1) calls beyond topics and transactions: compat/java/AdminDriver.java
runs every scenario once per module and reports what it observed; each test holds one scenario's
expectations (see compat/scenarios/), which are Apache Kafka 3.9's answers on one broker."""

from __future__ import annotations

import pytest

from compat.javarun import module_scenarios, observed_of

pytestmark = pytest.mark.compat(client="java")

E = "org.apache.kafka.common.errors."


@pytest.fixture(scope="module")
def java_results(request, java_drivers, compat_target):
    # the fetch quota's scenario takes over 10 s (a throttled consumer reads on at the quota's rate)
    wanted = module_scenarios(request, first=("quota.fetch_throttle",))
    out = java_drivers.run("AdminDriver", wanted, compat_target.bootstrap_servers, timeout=300,
                           prefix=compat_target.prefix + "-ja", parallel=4, timeout_s=90)
    assert out["kafka_clients"] == "3.9.1"
    return out["results"]


@pytest.fixture
def observed(java_results):
    return observed_of(java_results)


def error(outcome) -> str | None:
    return None if outcome is None else outcome["chain"][0].removeprefix(E)


@pytest.mark.compat(scenario="admin.create_partitions")
def test_create_partitions(observed):
    obs = observed("admin.create_partitions")
    assert (error(obs["validate_only"]), obs["after_validate_only"]) == (None, 2)
    assert (error(obs["grow"]), obs["after_grow"]) == (None, 4)
    assert error(obs["same"]) == error(obs["fewer"]) == "InvalidPartitionsException"
    assert error(obs["other_broker"]) == "InvalidReplicaAssignmentException"
    assert error(obs["assigned_here"]) is None
    assert error(obs["unknown"]) == "UnknownTopicOrPartitionException"
    assert obs["new_partition_offset"] == 0


@pytest.mark.compat(scenario="admin.log_dirs")
def test_log_dirs(observed):
    obs = observed("admin.log_dirs")
    assert (obs["dir_count"], obs["dir_error"]) == (1, None)
    assert obs["total_bytes_present"] is True and obs["usable_le_total"] is True
    assert obs["replicas"] == {"0": {"size_positive": False, "lag": 0, "future": False},
                               "1": {"size_positive": True, "lag": 0, "future": False}}
    assert error(obs["alter_same_dir"]) is None
    assert error(obs["alter_unknown_dir"]) == "LogDirNotFoundException"


@pytest.mark.compat(scenario="admin.elect_leaders")
def test_elect_leaders(observed):
    obs = observed("admin.elect_leaders")
    expected = {"0": E + "ElectionNotNeededException", "9": E + "UnknownTopicOrPartitionException"}
    assert obs["preferred_named"] == obs["unclean_named"] == expected
    assert obs["preferred_all_for_topic"] == 0


@pytest.mark.compat(scenario="admin.reassignments")
def test_reassignments(observed):
    obs = observed("admin.reassignments")
    assert {p: error(o) for p, o in obs["alter"].items()} == {
        "0": None, "1": "InvalidReplicaAssignmentException", "2": "NoReassignmentInProgressException"}
    assert (obs["listed_all"], obs["listed_topic"]) == (0, 0)
    assert obs["replicas_after"] == [1, 1, 1]


@pytest.mark.compat(scenario="admin.client_quotas")
def test_client_quotas(observed):
    obs = observed("admin.client_quotas")
    prefix = next(iter(obs["user_strict"]))[len("{user="):-len("-user}")]
    user, both = f"{{user={prefix}-user}}", f"{{client-id={prefix}-client, user={prefix}-user}}"
    assert {k: error(v) for k, v in obs["alter"].items()} == {
        user: None, both: None, f"{{client-id={prefix}-client}}": "InvalidRequestException", "{ip=10.9.8.7}": None}
    assert obs["alter"][f"{{client-id={prefix}-client}}"]["message"] == "producer_byte_rate cannot be a fractional value."
    assert obs["user_contains"] == {user: {"producer_byte_rate": 1048576.0, "request_percentage": 50.0},
                                    both: {"consumer_byte_rate": 2097152.0}}
    assert obs["user_strict"] == {user: {"producer_byte_rate": 1048576.0, "request_percentage": 50.0}}
    assert obs["ip"] == {"{ip=10.9.8.7}": {"connection_creation_rate": 7.0}}
    assert obs["user_after_removal"] == {both: {"consumer_byte_rate": 2097152.0}}
    assert error(obs["bad_filter"]) == "InvalidRequestException"


@pytest.mark.compat(scenario="admin.describe_topics_paged")
def test_describe_topics_paged(observed):
    obs = observed("admin.describe_topics_paged")
    assert obs["partitions"] == {"a": [0, 1, 2, 3, 4], "b": [0, 1, 2]}
    assert error(obs["missing"]) == "UnknownTopicOrPartitionException"


@pytest.mark.compat(scenario="admin.authorized_operations")
def test_authorized_operations(observed):
    obs = observed("admin.authorized_operations")
    assert sorted(obs["cluster"]) == ["ALTER", "ALTER_CONFIGS", "CLUSTER_ACTION", "CREATE", "DESCRIBE",
                                      "DESCRIBE_CONFIGS", "IDEMPOTENT_WRITE"]
    assert sorted(obs["topic"]) == ["ALTER", "ALTER_CONFIGS", "CREATE", "DELETE", "DESCRIBE", "DESCRIBE_CONFIGS",
                                    "READ", "WRITE"]
    assert sorted(obs["group"]) == ["DELETE", "DESCRIBE", "READ"]
    assert obs["cluster_not_asked"] is None and obs["topic_not_asked"] is None


@pytest.mark.compat(scenario="quota.produce_throttle")
def test_produce_throttle(observed):
    obs = observed("quota.produce_throttle")
    assert obs["throttle_max_ms"] > 0, obs
    # Kafka measures over 11 one-second samples and assumes 10 s at first: ~100 KiB pass before a throttle
    assert 60 <= obs["sent_before_throttle"] <= 110, obs
    assert obs["free_throttle_max_ms"] == 0


@pytest.mark.compat(scenario="quota.fetch_throttle")
def test_fetch_throttle(observed):
    obs = observed("quota.fetch_throttle")
    assert (obs["count"], obs["in_order"]) == (200, True)
    assert obs["throttle_max_ms"] > 0, obs


@pytest.mark.compat(scenario="admin.internal_topics")
def test_internal_topics_after_find_coordinator(observed):
    obs = observed("admin.internal_topics")
    compression = {"__consumer_offsets": "producer", "__transaction_state": "uncompressed"}
    for topic, codec in compression.items():
        assert obs[topic] == {
            "listed_internal": True, "listed_plain": False, "partitions": 50, "internal": True,
            "configs": {"cleanup.policy": ["compact", "DYNAMIC_TOPIC_CONFIG"], "compression.type": [codec, "DYNAMIC_TOPIC_CONFIG"],
                        "segment.bytes": ["104857600", "DYNAMIC_TOPIC_CONFIG"]}}, topic
