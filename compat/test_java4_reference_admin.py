"""PlaintextAdminIntegrationTest's cases that need kafka-clients 4.x (as Kafka 4.1's version of the
test has them), against Kafka 4.1 emulation with share groups on (compat/java/Admin4Replay.java, one
JVM): testIncrementalAlterAndDescribeGroupConfigs, the GROUP half of
testDescribeConfigsNonexistentForKraft, testListGroups, testDescribeClassicGroups, testShareGroups,
testConsumerGroups with group.protocol=consumer, testConsumerGroupWithMemberMigration,
testListClientMetricsResources and testListConfigResources."""

from __future__ import annotations

import pytest

import shim
from compat.javarun import observed_of
from compat.share_support import enable_share_groups

pytestmark = [pytest.mark.compat(client="java"), pytest.mark.shim_only("starts a broker emulating Kafka 4.1")]

SCENARIOS = ["admin.group_configs", "admin.list_groups_by_type", "admin.consumer_protocol_groups", "admin.member_migration",
             "admin.delete_offsets_consumer_protocol", "admin.create_topics_returns_configs", "admin.client_metrics_configs"]
# BaseAdminIntegrationTest.modifyConfigs' static settings, which testCreateTopicsReturnsConfigs reads back
STATIC = {"log.roll.hours": "2", "log.roll.jitter.ms": "123"}


@pytest.fixture(scope="module")
def observed(tmp_path_factory, java4):
    with shim.BrokerThread(data_dir=tmp_path_factory.mktemp("j4ra"), listen="127.0.0.1:0", kafka_version="4.1",
                           group_initial_rebalance_delay_ms=0, extra=STATIC) as broker:
        enable_share_groups(broker.bootstrap_servers)
        out = java4.run("Admin4Replay", SCENARIOS, broker.bootstrap_servers, timeout=240, prefix="j4ra",
                        parallel=6, timeout_s=120)
    assert out["kafka_clients"].startswith("4.")
    return observed_of(out["results"])


OPERATIONS = ["READ", "DELETE", "DESCRIBE"]  # AclEntry.supportedOperations(GROUP), in AclOperation order


@pytest.mark.compat(scenario="admin.group_configs")
def test_group_configs(observed):
    """testIncrementalAlterAndDescribeGroupConfigs, testDescribeConfigsNonexistentForKraft (GROUP)."""
    obs = observed("admin.group_configs")
    assert (obs["alter_keys"], obs["alter"], obs["described_count"]) == (["j4ra-describe-alter-configs-group"], None, 1)
    assert obs["session"] == obs["session_after_validate_only"] == ["50000", "DYNAMIC_GROUP_CONFIG"]
    assert obs["heartbeat"] == ["5000", "DEFAULT_CONFIG"]  # GroupCoordinatorConfig.CONSUMER_GROUP_HEARTBEAT_INTERVAL_MS_DEFAULT
    assert obs["validate_only"] is None
    assert obs["invalid"] == ["InvalidConfigurationException", "consumer.session.timeout.ms must be greater than or "
                              "equal to group.consumer.min.session.timeout.ms"]
    assert obs["nonexistent_entries"] > 0


@pytest.mark.compat(scenario="admin.list_groups_by_type")
def test_list_groups_and_share_groups(observed):
    """testListGroups (GroupListing of each type, the simple group Classic, protocol "" and Empty),
    testDescribeClassicGroups, testShareGroups."""
    obs = observed("admin.list_groups_by_type")
    assert obs["ready"] and obs["all_stable"] and obs["simple_alter"] == [None, None] and obs["list_errors"] == 0
    classic, consumer = "classic:Classic:consumer:Stable", "consumer:Consumer:consumer:Stable"
    share, simple = "share:Share:share:Stable", "simple:Classic::Empty"
    assert obs["filters"] == {
        "none": [classic, consumer, share, simple], "consumer_groups": [classic, consumer, simple],
        "share_groups": [share], "classic": [classic, simple], "consumer": [consumer], "share": [share],
        "classic_stable": [classic], "stable": [classic, consumer, share], "empty": [simple],
        "protocol_consumer": [classic, consumer], "share_empty": []}
    assert obs["classic_described"] == {"classic": {"protocol": "consumer", "members": 1, "upgraded": [False]},
                                        "simple": {"protocol": "", "members": 0, "upgraded": []}}
    assert obs["described_count"] == 2
    assert obs["share"] == {"state": "Stable", "members": 1, "clients": ["test_client_id"],
                            "assignment": ["j4ra-types-topic-0", "j4ra-types-topic-1"], "operations": OPERATIONS}
    assert obs["share_fake"] == {"error": ["GroupIdNotFoundException", "Group j4ra-types-fake not found."]}
    assert obs["share_as_consumer"] == {"error": ["GroupIdNotFoundException",
                                                  "Group j4ra-types-share is not a consumer group."]}


@pytest.mark.compat(scenario="admin.consumer_protocol_groups")
def test_consumer_protocol_group_admin(observed):
    """testConsumerGroups[groupProtocol=consumer]: removing every member sends LeaveGroup naming the
    dynamic member by member id, which Kafka 4 accepts for a consumer-protocol member (KAFKA-18188)."""
    obs = observed("admin.consumer_protocol_groups")
    assert obs["ready"] and obs["stable_and_committed"]
    assert obs["listed"] == [["Consumer:Stable"]] * 3 + [[], []]
    described = obs["described"]
    assert described == {"type": "Consumer", "state": "Stable", "simple": False, "group_epoch": 3,
                         "target_assignment_epoch": 3, "members": 3, "clients": ["test_client_id"], "upgraded": [True],
                         "assignment": sorted(f"j4ra-cp-topic{t}-{p}" for t in ("", "1", "2") for p in (0, 1)),
                         "operations": OPERATIONS}
    assert obs["fake"] == obs["fake_all"] == ["GroupIdNotFoundException", "Group j4ra-cp-fake not found."]
    assert obs["offsets"] == [1, 1, 1]
    assert obs["remove_unknown"] == ["UnknownMemberIdException"] * 2
    assert obs["delete_active"] == ["GroupIdNotFoundException", "GroupNotEmptyException"]
    assert (obs["remove_static"], obs["members_after_one"]) == ([None, None], 2)
    assert (obs["remove_all"], obs["members_after_all"], obs["delete_empty"]) == (None, 0, None)
    assert (obs["alter"], obs["altered"]) == ([None, None], 0)


@pytest.mark.compat(scenario="admin.member_migration")
def test_member_migration(observed):
    """testConsumerGroupWithMemberMigration: [member epoch, upgraded] by client id."""
    obs = observed("admin.member_migration")
    assert obs["stable"]
    assert obs["described"] == {"type": "Consumer", "group_epoch": 2, "target_assignment_epoch": 2, "members": {
        "test_classic_client_id": [2, False], "test_consumer_client_id": [2, True]}}


@pytest.mark.compat(scenario="admin.delete_offsets_consumer_protocol")
def test_delete_offsets_consumer_protocol(observed):
    """testDeleteConsumerGroupOffsets[groupProtocol=consumer]: [all(), the subscribed partition, an
    unknown topic's] while consuming, for an unknown group, and once the member left."""
    obs = observed("admin.delete_offsets_consumer_protocol")
    assert obs["polled"]
    assert obs["consuming"] == ["GroupSubscribedToTopicException", "GroupSubscribedToTopicException",
                                "UnknownTopicOrPartitionException"]
    assert obs["fake"] == ["GroupIdNotFoundException"] * 3
    assert obs["empty"] == ["UnknownTopicOrPartitionException", None, "UnknownTopicOrPartitionException"]


@pytest.mark.compat(scenario="admin.create_topics_returns_configs")
def test_create_topics_returns_configs(observed):
    """testCreateTopicsReturnsConfigs: [value, source, sensitive, read-only, synonyms] per config."""
    obs = observed("admin.create_topics_returns_configs")
    assert obs["created"] is None and obs["shapes"] == [2, 1, 3, 1, 1, 1]  # one broker: replication factor 1
    assert obs["configs"] == {
        "cleanup.policy": ["delete", "DEFAULT_CONFIG", False, False, 0],
        "retention.ms": ["10800000", "DYNAMIC_DEFAULT_BROKER_CONFIG", False, False, 0],
        "delete.retention.ms": ["34", "DYNAMIC_BROKER_CONFIG", False, False, 0],
        "segment.jitter.ms": ["123", "STATIC_BROKER_CONFIG", False, False, 0],
        "segment.ms": ["7200000", "STATIC_BROKER_CONFIG", False, False, 0],  # log.roll.hours=2
        "index.interval.bytes": ["9999999", "DYNAMIC_TOPIC_CONFIG", False, False, 0]}


@pytest.mark.compat(scenario="admin.client_metrics_configs")
def test_client_metrics_configs(observed):
    """testListClientMetricsResources and testListConfigResources (kafka-clients 4.x's
    listClientMetricsResources, ListConfigResources v0, and listConfigResources, v1), with
    ClientMetricsConfigs' refusals, the 4.1 description with defaults and the removal with the last key."""
    obs = observed("admin.client_metrics_configs")
    name, group = "j4ra-metrics-sub", "j4ra-cfg-group"
    assert (obs["initially"], obs["alter"], obs["listed"]) == ([], None, [name])
    every = ["BROKER:0", "BROKER_LOGGER:0", f"CLIENT_METRICS:{name}", f"GROUP:{group}", "TOPIC:__consumer_offsets"]
    assert obs["config_resources"] == {"ALL": every, "BROKER": ["BROKER:0"], "BROKER_LOGGER": ["BROKER_LOGGER:0"],
                                       "TOPIC": ["TOPIC:__consumer_offsets"], "GROUP": [f"GROUP:{group}"],
                                       "CLIENT_METRICS": [f"CLIENT_METRICS:{name}"]}
    assert obs["unknown_type"]["chain"][0] == "org.apache.kafka.common.errors.UnsupportedVersionException"
    refused = {k: v and [v[0], v[1]] for k, v in obs["refused"].items()}
    assert refused == {
        "interval": ["InvalidRequestException",
                     "Invalid value 99 for interval.ms, interval must be between 100 and 3600000 (1 hour)"],
        "not_a_number": ["InvalidConfigurationException",
                         "Invalid value often for configuration interval.ms: Not a number of type INT"],
        "unknown_key": ["InvalidRequestException", "Unknown client metrics configuration: colour"],
        "selector": ["InvalidConfigurationException", "Illegal client matching pattern: client_idx=a"],
        "regex": ["InvalidConfigurationException", "Illegal client matching pattern: client_id=("],
        "append": ["InvalidConfigurationException", "Can't APPEND to key metrics because its type is not LIST."]}
    assert obs["match"] is None
    assert obs["described"] == {
        "interval.ms": ["111", "DYNAMIC_CLIENT_METRICS_CONFIG", "INT"],
        "match": ["client_software_name=apache-kafka-java,client_id=.*", "DYNAMIC_CLIENT_METRICS_CONFIG", "LIST"],
        "metrics": ["", "DEFAULT_CONFIG", "LIST"]}
    assert (obs["listed_after_one_delete"], obs["listed_after_last_delete"]) == ([name], [])
