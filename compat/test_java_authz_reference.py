"""Producers refused by ACLs, after Apache Kafka's AuthorizerIntegrationTest (3.9), with the Java
client: compat/java/AuthzReference.java runs them in one JVM as ``alice`` and ``bob`` over
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
SCENARIOS = ["authz.idempotent_no_idempotent_write", "authz.idempotent_loses_write", "authz.txn_no_topic_write",
             "authz.txn_commit_no_topic_write", "authz.txn_loses_topic_write"]


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
