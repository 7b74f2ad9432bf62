"""Producers and consumers refused by ACLs, after Apache Kafka's AuthorizerIntegrationTest (3.9), with
the Java client: compat/java/AuthzReference.java and AuthzConsumerReplay.java run them in one JVM as
``alice``, ``bob`` and SCRAM users the consumer scenarios make for themselves over
SASL_PLAINTEXT (SCRAM-SHA-512), ``admin`` (a super user) making the topics and ACLs. Each test holds
that test's assertions, and what the client then does against Kafka's answers (compat/README.md,
Java producers refused by ACLs): an idempotent producer without IDEMPOTENT_WRITE asks for a
producer id again and again, and a transactional producer whose partition was never added waits
request.timeout.ms in close()."""

from __future__ import annotations

import pytest

from compat.javarun import observed_of
from shim.broker import secure_broker

pytestmark = [pytest.mark.shim_only("starts a kafka-shim with an authorizer and SASL users of its own"),
              pytest.mark.compat(client="java", scenario="security.acls")]

STANDARD = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
USERS = {"alice": "alice-secret", "bob": "bob-secret", "admin": "admin-secret"}
E = "org.apache.kafka.common.errors."
REQUEST_TIMEOUT_MS = 5000
# longest first (9-16 s: the consumer and admin replays, the two that wait out the request timeout), so
# that the short ones run beside them rather than after them
SCENARIOS = ["authz.consume", "authz.group_admin", "authz.commit_and_offset_fetch", "authz.txn_no_topic_write",
             "authz.txn_commit_no_topic_write", "authz.topic_admin", "authz.txn_loses_topic_write",
             "authz.idempotent_loses_write", "authz.idempotent_no_idempotent_write", "authz.authorized_operations"]


@pytest.fixture(scope="module")
def observed(tmp_path_factory, java_drivers):
    jaas = {f"jaas.{user}": 'org.apache.kafka.common.security.scram.ScramLoginModule required '
                            f'username="{user}" password="{password}";' for user, password in USERS.items()}
    # bob holds no ACL but the ones his scenario gives him: KIP-679 lets any WRITE on a topic stand
    # in for IDEMPOTENT_WRITE, and alice's scenarios grant her some
    with secure_broker(tmp_path_factory.mktemp("authz"), sasl_users=tuple(f"{u}:{p}" for u, p in USERS.items()),
                       authorizer_class_name=STANDARD, super_users="User:admin",
                       group_initial_rebalance_delay_ms=0) as broker:
        out = java_drivers.run("ReferenceDriver", SCENARIOS, broker.bootstrap("SASL_PLAINTEXT"), timeout=300,
                               prefix="authz", parallel=5, timeout_s=120, **jaas, **{
                                   "client.security.protocol": "SASL_PLAINTEXT",
                                   "client.sasl.mechanism": "SCRAM-SHA-512",
                                   "client.request.timeout.ms": str(REQUEST_TIMEOUT_MS)})
    return observed_of(out["results"])


def errors(failure) -> list[str]:
    return [] if failure is None else failure["chain"]


def test_idempotent_producer_without_idempotent_write(observed):
    """testIdempotentProducerNoIdempotentWriteAclInInitProducerId: Kafka answers InitProducerId
    CLUSTER_AUTHORIZATION_FAILED (KafkaApis.handleInitProducerIdRequest, KIP-679) and the send fails
    with ClusterAuthorizationException, twice. The producer goes back to UNINITIALIZED and asks
    again at once, with no backoff (hundreds of requests while idle), so once the user may WRITE the
    topic the same producer sends."""
    obs = observed("authz.idempotent_no_idempotent_write")
    for attempt in ("first", "second"):
        assert E + "ClusterAuthorizationException" in errors(obs[attempt]), obs[attempt]
    assert obs["idle_requests_at_least_100"] is True
    assert obs["after_grant"] is None


def test_idempotent_producer_loses_write(observed):
    """testIdempotentProducerNoIdempotentWriteAclInProduce."""
    obs = observed("authz.idempotent_loses_write")
    assert obs["first"] is None
    for attempt in ("second", "third"):
        assert errors(obs[attempt])[1:2] == [E + "TopicAuthorizationException"], obs[attempt]


def test_transactional_producer_without_topic_write(observed):
    """testTransactionalProducerTopicAuthorizationExceptionInSendCallback. The abort close() starts
    needs no EndTxn (no partition was added), and the sender's last poll then sleeps for the request
    timeout before close() returns: a client wait, whatever the broker."""
    obs = observed("authz.txn_no_topic_write")
    assert errors(obs["error"]) == [E + "TopicAuthorizationException"]
    assert obs["unauthorized_topics"] == ["<topic>"]
    assert obs["close_ms"] >= REQUEST_TIMEOUT_MS * 0.9, obs["close_ms"]


def test_transactional_commit_without_topic_write(observed):
    """testTransactionalProducerTopicAuthorizationExceptionInCommit."""
    obs = observed("authz.txn_commit_no_topic_write")
    assert errors(obs["commit"])[:1] == [E + "TopicAuthorizationException"], obs["commit"]


def test_transactional_producer_loses_topic_write_mid_transaction(observed):
    """A partition already in the transaction: the Produce is refused TOPIC_AUTHORIZATION_FAILED, and
    close() aborts with an EndTxn the coordinator completes, without waiting out the request timeout."""
    obs = observed("authz.txn_loses_topic_write")
    assert errors(obs["error"])[1:2] == [E + "TopicAuthorizationException"], obs["error"]
    assert obs["close_ms"] < REQUEST_TIMEOUT_MS / 2, obs["close_ms"]
    assert obs["state_after_close"] in ("CompleteAbort", "Empty")


T, G = "TopicAuthorizationException", "GroupAuthorizationException"


def test_consume(observed):
    """AuthorizerIntegrationTest's consume cases: testConsumeUsingAssignWithNoAccess,
    testSimpleConsumeWithOffsetLookupAndNoGroupAccess (the committed-offset lookup needs the group),
    testSimpleConsumeWithExplicitSeekAndNoGroupAccess, testConsumeWithoutTopicDescribeAccess,
    testConsumeWithTopicDescribe, testConsumeWithTopicWrite, testConsumeWithTopicAndGroupRead,
    testPatternSubscription* (an internal topic matched only with exclude.internal.topics=false and
    READ on it; DESCRIBE alone refuses it) and testCreatePermissionOnTopicToReadFromNonExistentTopic."""
    obs = observed("authz.consume")
    assert obs["assign_no_access"] == [T, ["c-assign-no-access"]]
    assert obs["offset_lookup_no_group"] == [G, "c-offset-lookup-no-group-G"]
    assert obs["explicit_seek_no_group"] == "ok"
    for case in ("no_topic_describe", "topic_describe_group_read", "topic_write_group_read"):
        assert obs[case] == [T, ["c-" + case.replace("_", "-")]], case
    assert obs["topic_read_group_read"] == "ok"
    assert obs["pattern_no_topic_access"] is True
    assert obs["pattern_topic_describe"] == [T, ["c-pattern-topic-describe"]]
    assert obs["pattern_topic_and_group_read"] == ["ok", True, True, True]
    assert obs["pattern_not_matching_internal"] == "ok"
    assert obs["internal_matched"] == ["ok", ["c-internal-matched"], True]
    assert obs["internal_describe_only"] == [T, ["__consumer_offsets"]]
    assert obs["read_missing_topic"] == [[T, ["c-read-missing-topic-new"]], True]


def test_commit_and_offset_fetch(observed):
    """testCommitWith* (OffsetCommit: READ on the group, then READ on the topic) and testOffsetFetchWith*
    through position() (OffsetFetch: DESCRIBE on both; the consumer's Metadata refuses an undescribable
    topic first), and testOffsetFetchMultipleGroupsAuthorization through the Admin's batched
    listConsumerGroupOffsets: a group refused fails, partitions of topics not described are left out."""
    obs = observed("authz.commit_and_offset_fetch")

    def topic(key):
        return "o-" + "".join(c if c.isalpha() else "-" for c in key).lower()
    commit, position = obs["commit"], obs["position"]
    for key in ("none", "topic:READ", "group:DESCRIBE,topic:DESCRIBE"):
        assert commit[key] == [G, topic(key) + "-G"], key
    for key in ("group:READ", "group:READ,topic:WRITE", "group:READ,topic:DESCRIBE"):
        assert commit[key] == [T, [topic(key)]], key
    assert commit["group:READ,topic:READ"] is None
    assert position["none"] == [T, ["o-none"]] and position["group:READ"] == [T, ["o-group-read"]]
    assert position["topic:READ"] == [G, "o-topic-read-G"]
    for key in ("group:DESCRIBE,topic:DESCRIBE", "group:READ,topic:READ", "group:READ,topic:WRITE",
                "group:READ,topic:DESCRIBE"):
        assert position[key] is None, key
    t1 = ["1-0:15:1:metadata"]
    t12 = t1 + ["2-0:15:1:metadata", "2-1:15:1:metadata"]
    every = t12 + [f"3-{p}:15:1:metadata" for p in range(3)]
    mg = obs["multiple_groups"]
    assert mg["step1"] == {"1": t1, "2": t1, "3": [G, "mg-group3"], "4": t1, "5": [G, "mg-group5"]}
    assert mg["step2"] == {"1": t1, "2": t12, "3": t12, "4": t12, "5": t12}
    assert mg["step3"] == {"1": t1, "2": t12, "3": every, "4": every, "5": every}


def test_group_admin(observed):
    """testDescribeGroupApiWithNoGroupAcl / ...WithGroupDescribe, testListGroupApiWithAndWithoutListGroupAcls
    (DESCRIBE on the cluster lists every group, READ on one group that group, nothing lists none and no
    error), testDeleteGroupApi* and testDeleteGroupOffsets*. A refusal at FindCoordinator names the
    group; one in the DeleteGroups or OffsetDelete answer does not (the Admin's handlers)."""
    obs = observed("authz.group_admin")
    assert obs["describe_no_group_acl"] == [G, "g-describe-no-group-acl-G"]
    assert obs["describe_group_describe"] is None
    assert obs["list"] == [["g-list-G", "g-list-G-other"], ["g-list-G"], [0, 0]]
    assert obs["delete_with_delete"] is None and obs["delete_offsets_with_acl"] is None
    assert obs["delete_without_delete"] == obs["delete_offsets_without_delete"] == [G, None]
    assert obs["delete_no_acl"] == [G, "g-delete-no-acl-G"]
    assert obs["delete_offsets_no_acl"] == [G, "g-delete-offsets-no-acl-G"]
    assert obs["delete_offsets_without_topic"] == [[T, []], [T, []]]


def test_topic_admin(observed):
    """testUnauthorizedDeleteTopicsWith(out)Describe, testDeleteTopicsWithWildCardAuth, the same three
    for DeleteRecords, testUnauthorizedCreatePartitions, testCreatePartitionsWithWildCardAuth,
    testDescribeTopicAclWithOperationAll and ...ConfigsAclWithOperationAll (ALL implies DESCRIBE and
    DESCRIBE_CONFIGS), testListTransactionsAuthorization (listed with WRITE or DESCRIBE on the id)."""
    obs = observed("authz.topic_admin")
    for case in ("delete_topic_without_describe", "delete_topic_with_describe", "delete_records_with_describe",
                 "create_partitions_unauthorized"):
        assert obs[case] == [T, []], case
    # DeleteRecords' metadata lookup names the topic it may not describe
    assert obs["delete_records_without_describe"] == [T, ["t-delete-records-without-describe"]]
    for case in ("delete_topic_wildcard", "delete_records_wildcard", "create_partitions_wildcard"):
        assert obs[case] is None, case
    assert obs["topic_all"] == [None, None]
    txn = ["t-list-transactions-txn"]
    assert obs["list_transactions"] == [txn, [], txn]


def test_authorized_operations(observed):
    """DescribeAuthorizedOperationsTest with ACLs instead of GSSAPI principals: ALTER on the cluster
    gives ALTER and the DESCRIBE it implies, ALL every supported cluster operation (AclEntry.supportedOperations);
    groups with ALL, DESCRIBE, DELETE; topics with the wildcard DESCRIBE, then ALL, and DELETE; nothing
    when not asked (the Admin's null)."""
    obs = observed("authz.authorized_operations")
    assert obs["cluster_not_asked"] is None
    assert obs["cluster_alter"] == ["ALTER", "DESCRIBE"]
    assert obs["cluster_all"] == ["ALTER", "ALTER_CONFIGS", "CLUSTER_ACTION", "CREATE", "DESCRIBE",
                                  "DESCRIBE_CONFIGS", "IDEMPOTENT_WRITE"]
    assert obs["groups"] == [["DELETE", "DESCRIBE", "READ"], ["DESCRIBE"], ["DELETE", "DESCRIBE"]]
    every_topic_op = ["ALTER", "ALTER_CONFIGS", "CREATE", "DELETE", "DESCRIBE", "DESCRIBE_CONFIGS", "READ", "WRITE"]
    assert obs["topics"] == [[None, None], [["DESCRIBE"], ["DESCRIBE"]], [every_topic_op, ["DELETE", "DESCRIBE"]]]
