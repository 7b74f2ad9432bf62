"""More of the Admin surface after Apache Kafka's own tests, replayed with kafka-clients on one broker
(compat/java/AdminSurfaceReplay.java, all in one JVM): AdminFenceProducersTest, ClientQuotasRequestTest,
ListOffsetsIntegrationTest's KRaft cases on the leader's append path, BaseAdminIntegrationTest's
testCreateDeleteTopics and, from PlaintextAdminIntegrationTest, testListTopicsWithOptionListInternal,
testDescribeTopicsWithOptionPartitionSizeLimitPerResponse, testAclOperations,
testLogStartOffsetAfterDeleteRecords, testCreatePartitionWithOptionRetryOnQuotaViolation and
testDescribeConfigsNonexistentForKraft. Each test holds those Kafka tests' assertions."""

from __future__ import annotations

import pytest

from compat.javarun import module_scenarios, observed_of

pytestmark = pytest.mark.compat(client="java")


@pytest.fixture(scope="module")
def prefix(compat_target) -> str:
    return compat_target.prefix + "-jra"


@pytest.fixture(scope="module")
def observed(request, java_drivers, compat_target, prefix):
    out = java_drivers.run("ReferenceDriver", module_scenarios(request), compat_target.bootstrap_servers,
                           timeout=240, prefix=prefix, parallel=5, timeout_s=120)
    return observed_of(out["results"])


INVALID = "InvalidRequestException"


@pytest.mark.compat(scenario="admin.fence_producers")
def test_fence_producers(observed):
    """testFenceAfterProducerCommit, testFenceBeforeProducerCommit."""
    obs = observed("admin.fence_producers")
    after, before = obs["after_commit"], obs["before_commit"]
    fenced = "org.apache.kafka.common.errors.ProducerFencedException"
    assert after["fence"] is None and after["send"]["chain"][1] == fenced and after["commit"]["chain"][0] == fenced
    either = {fenced, "org.apache.kafka.common.errors.InvalidProducerEpochException"}
    assert before["fence"] is None and before["send"]["chain"][1] in either and before["commit"]["chain"][0] in either


def quotas(*pairs):
    """One entity's described quotas: ``quotas("user=u", {"producer_byte_rate": 1.0})``."""
    return dict(zip(pairs[::2], pairs[1::2]))


@pytest.mark.compat(scenario="admin.client_quota_requests")
def test_client_quotas(observed, prefix):
    """ClientQuotasRequestTest (every KRaft case) and testCreatePartitionWithOptionRetryOnQuotaViolation,
    with the KRaft controller's messages (ClientQuotaControlManager, ClientQuotasImage)."""
    obs = observed("admin.client_quota_requests")
    assert_described(obs)
    assert_altered(obs)
    assert_refused(obs)

    assert obs["retry_on_quota"] is None
    assert obs["retry_on_quota_described"] == {f"client-id={prefix}-quota-client-id": {
        "controller_mutation_rate": 1.0, "consumer_byte_rate": 3.0}}


def assert_described(obs):
    """ClientQuotasRequestTest's describe cases: exact and partial matches of the entities set up."""
    assert obs["initially"] == {} and obs["match_setup"] is None and obs["match_teardown"] is None
    rate = "request_percentage"
    user_client = [("client-id=client-id-1,user=user-1", 50.5), ("client-id=client-id-1,user=user-2", 51.51),
                   ("client-id=client-id-2,user=user-3", 52.52), ("client-id=client-id-1,user default", 53.53),
                   ("client-id default,user=user-1", 54.54), ("client-id default,user=user-3", 55.55),
                   ("user=user-1", 56.56), ("user=user-2", 57.57), ("user=user-3", 58.58), ("user default", 59.59),
                   ("client-id=client-id-2", 60.6)]
    assert obs["match_exact"] == [{label: {rate: value}} for label, value in user_client]
    assert obs["match_exact_none"] == [{}] * 7
    everything = {label: {rate: value} for label, value in user_client}
    everything.update({"ip=1.2.3.4": {"connection_creation_rate": 10.0}, "ip=2.3.4.5": {"connection_creation_rate": 20.0}})

    def having(cond):
        return {k: v for k, v in everything.items() if cond(k.split(","))}
    partial = obs["match_partial"]
    assert partial["user-1"] == having(lambda parts: "user=user-1" in parts)
    assert len(partial["user-1"]) == 3
    assert partial["unknown"] == {} and partial["only_client-id-1"] == {} and partial["only_nothing"] == {}
    assert partial["client-id-2"] == having(lambda parts: "client-id=client-id-2" in parts) and len(partial["client-id-2"]) == 2
    assert partial["default_user"] == having(lambda parts: "user default" in parts) and len(partial["default_user"]) == 2
    assert partial["only_user-2"] == having(lambda parts: parts == ["user=user-2"])
    assert partial["only_users"] == having(lambda parts: len(parts) == 1 and parts[0].startswith("user"))
    assert len(partial["only_users"]) == 4
    assert partial["users"] == having(lambda parts: any(p.startswith("user") for p in parts)) and len(partial["users"]) == 10
    assert partial["only_clients"] == having(lambda parts: len(parts) == 1 and parts[0].startswith("client-id"))
    assert len(partial["only_clients"]) == 1
    assert partial["clients"] == having(lambda parts: any(p.startswith("client-id") for p in parts))
    assert len(partial["clients"]) == 7
    assert partial["ips"] == having(lambda parts: parts[0].startswith("ip")) and len(partial["ips"]) == 2
    assert partial["all"] == everything and len(everything) == 13


def assert_altered(obs):
    """ClientQuotasRequestTest's alter cases: each step's description afterwards."""
    e = "client-id=client-id,user=user"
    assert obs["alter_steps"] == [{}] + [[None, {e: q}] for q in (
        {"producer_byte_rate": 10000.0, "consumer_byte_rate": 20000.0},
        {"producer_byte_rate": 15000.0, "consumer_byte_rate": 20000.0},
        {"consumer_byte_rate": 20000.0},
        {"consumer_byte_rate": 20000.0},  # removing what is not there changes nothing
        {"producer_byte_rate": 5000.0, "consumer_byte_rate": 20000.0},
        {"producer_byte_rate": 20000.0, "request_percentage": 12.3})]
    unchanged = [None, {"user=user": {"producer_byte_rate": 20000.0, "request_percentage": 23.45}}]
    assert obs["validate_only_steps"] == [unchanged] * 5
    rate_of = "connection_creation_rate"
    assert obs["ip_steps"] == [
        {}, [None, {"ip=1.2.3.4": {rate_of: 100.0}}], [None, {"ip=1.2.3.4": {rate_of: 150.0}}],
        [None, {"ip default": {rate_of: 200.0}}], {"ip=1.2.3.4": {rate_of: 150.0}, "ip default": {rate_of: 200.0}},
        [None, {}], [None, {}]]
    assert obs["sanitized"] == [None, {"user=user with spaces": {"producer_byte_rate": 20000.0}}]
    # a client id named "<default>" (ZooKeeper's default name) is a name, not the default entity
    assert obs["default_name"] == [None, {"client-id=<default>": {"producer_byte_rate": 20000.0}}, {}]


def assert_refused(obs):
    """ClientQuotasRequestTest's invalid requests, with the KRaft controller's messages."""
    assert obs["invalid"] == [[INVALID, "Empty user not supported"], [INVALID, "Empty client-id not supported"],
                              [INVALID, "Unhandled client quota entity type: "], [INVALID, "Invalid empty client quota entity"],
                              [INVALID, "Invalid configuration key bad"],
                              [INVALID, "producer_byte_rate cannot be a fractional value."]]
    combination = [INVALID, "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId"]
    assert obs["invalid_combination"] == [combination] * 2
    assert obs["bad_ip"] == [[INVALID, "not a valid host because it has spaces is not a valid IP or resolvable host."],
                             [INVALID, "RFC2606.invalid is not a valid IP or resolvable host."]]
    assert obs["invalid_filter"] == [[INVALID, "Invalid entity filter component combination. IP filter component should "
                                               "not be used with user or clientId filter component."]] * 2
    assert obs["unsupported_type"] == ["UnsupportedVersionException", "Unsupported entity type other"]


@pytest.mark.compat(scenario="admin.list_offsets_max_timestamp")
def test_list_offsets(observed):
    """ListOffsetsIntegrationTest's KRaft cases, the leader's append path: [offset, leader epoch] for
    earliest, latest and max timestamp."""
    obs = observed("admin.list_offsets_max_timestamp")
    assert obs["empty_max_timestamp"] == [-1, -1, None]  # UNKNOWN_OFFSET, UNKNOWN_TIMESTAMP
    expected = {}
    for compression in ("none", "gzip", "lz4-topic"):
        for batches in ("one", "separate"):
            expected[f"{compression}-{batches}-create"] = [[0, 0], [3, 0], [1, 0]]  # 999 at offset 1
            if compression != "lz4-topic":
                # LogAppendTime: one batch's records share a time, the first offset holds it; the third
                # of three separate batches has the latest time
                expected[f"{compression}-{batches}-append"] = [[0, 0], [3, 0], [0 if batches == "one" else 2, 0]]
    assert obs["cases"] == expected


@pytest.mark.compat(scenario="admin.surface_misc")
def test_surface_misc(observed):
    """testLogStartOffsetAfterDeleteRecords, testListTopicsWithOptionListInternal,
    testDescribeTopicsWithOptionPartitionSizeLimitPerResponse, testAclOperations,
    testDescribeConfigsNonexistentForKraft (its CLIENT_METRICS half: no entries, no error)."""
    obs = observed("admin.surface_misc")
    assert (obs["low_watermark"], obs["log_start_offset"]) == (3, 3)
    assert "__consumer_offsets" in obs["internal_only"]
    assert obs["size_limited"] == [1, [0, 1, 2]] and obs["size_limited_delete"] is None
    assert obs["acls"] == ["SecurityDisabledException"] * 3
    assert obs["configs_nonexistent"] == {"CLIENT_METRICS": 0}


@pytest.mark.compat(scenario="admin.create_delete_topics")
def test_create_delete_topics(observed):
    """BaseAdminIntegrationTest.testCreateDeleteTopics with one broker: [partitions, replication factor,
    configs answered] per topic, [partition, leader, replicas, isr] relative to the broker's id."""
    obs = observed("admin.create_delete_topics")
    shapes = {"mytopic": [2, 1, True], "mytopic2": [3, 1, True], "mytopic3": [1, 1, True]}
    assert (obs["validate"], obs["validate_shapes"], obs["after_validate"]) == (None, shapes, [])
    assert (obs["create"], obs["create_shapes"], obs["ids_match"]) == (None, shapes, [True] * 3)
    assert obs["again"] == ["TopicExistsException"] * 6
    assert obs["described"] == {t: [False, [[p, 0, [0], [0]] for p in range(n)]] for t, (n, _, _) in shapes.items()}
    assert (obs["delete"], obs["gone"]) == (None, True)
