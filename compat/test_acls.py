"""ACLs with stock clients over SASL_SSL (SCRAM-SHA-512): the transactions seed scenario and a
consumer group, run by a principal holding exactly the ACLs Kafka requires of them, and with each
one taken away, the error Apache Kafka gives as the client surfaces it (README.md, ACLs).

The ACLs a transactional producer and a group consumer need (Kafka's documentation, "Authorization
and ACLs"): WRITE on the topic and on the transactional ids (an idempotent producer's InitProducerId
passes on WRITE to some topic), READ on the topic and on the group. One broker for the module, with
StandardAuthorizer, ``super.users=User:admin`` and the user ``alice`` the ACLs are given to; each
test uses topics, groups and transactional ids of its own. Java runs compat/java/KafkaDriver.java's
txn.seed and consumer.group_commit (which also create their topics: CREATE); kcat, which has no
transactions, consumes the seed topic in a group and produces to it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid

import pytest

from compat.acl_clients import ACL_CLIENTS, error_text
from compat.security_clients import Security
from shim.broker import secure_broker
from shim.security.acls import AclBinding
from shim.security.acls import AclOperation as O
from shim.security.acls import AclPermissionType as A
from shim.security.acls import PatternType as P
from shim.security.acls import ResourceType as R

pytestmark = pytest.mark.shim_only("starts a kafka-shim with an authorizer and SASL listeners of its own")

STANDARD = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
ALICE = ("alice", "alice-secret")
SEED_COMMITTED = [b"plain-1", b"b-1", b"b-2"]
SEED_END = 7  # a-1, a-2, ABORT, plain-1, b-1, b-2, COMMIT; a client may commit 6, before the marker

# the ACL taken away -> how each client names Kafka's error
MISSING = {
    "txn-write": ("TRANSACTIONAL_ID_AUTHORIZATION_FAILED", {
        "kafka-python": "TransactionalIdAuthorizationFailedError", "confluent-kafka": "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
        "aiokafka": "TransactionalIdAuthorizationFailed"}),
    "topic-write": ("TOPIC_AUTHORIZATION_FAILED", {
        "kafka-python": "TopicAuthorizationFailedError", "confluent-kafka": "TOPIC_AUTHORIZATION_FAILED",
        "aiokafka": "TopicAuthorizationFailedError"}),
    "group-read": ("GROUP_AUTHORIZATION_FAILED", {
        "kafka-python": "GroupAuthorizationFailedError", "confluent-kafka": "GROUP_AUTHORIZATION_FAILED",
        "aiokafka": "GroupAuthorizationFailedError"}),
    "topic-read": ("TOPIC_AUTHORIZATION_FAILED", {
        "kafka-python": "TopicAuthorizationFailedError", "confluent-kafka": "TOPIC_AUTHORIZATION_FAILED",
        "aiokafka": "TopicAuthorizationFailedError"}),
}
PRODUCER_ACLS = ("txn-write", "topic-write")
# each Python client is a cell of the compatibility matrix (compat/scenarios/, security.acls)
PY_CLIENTS = [pytest.param(c, id=c.name, marks=pytest.mark.compat(client=c.name, scenario="security.acls"))
              for c in ACL_CLIENTS]
JAVA_CELL = pytest.mark.compat(client="java", scenario="security.acls")
KCAT_CELL = pytest.mark.compat(client="kcat", scenario="security.acls")


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    # group.initial.rebalance.delay.ms=0 instead of Kafka's 3000, as compat/conftest.py's brokers:
    # each group read here is a first join of an empty group, which would wait those 3 s
    with secure_broker(tmp_path_factory.mktemp("acls"), sasl_users=(":".join(ALICE), "admin:admin-secret"),
                       authorizer_class_name=STANDARD, super_users="User:admin",
                       group_initial_rebalance_delay_ms=0) as b:
        yield b


class Names:
    def __init__(self) -> None:
        tag = uuid.uuid4().hex[:8]
        self.topic, self.group, self.txn_prefix = f"acl-{tag}", f"acl-group-{tag}", f"acl-tx-{tag}-"

    def acls(self) -> dict[str, AclBinding]:
        def allow(rtype, name, op, pattern=P.LITERAL):
            return AclBinding(rtype, name, pattern, f"User:{ALICE[0]}", "*", op, A.ALLOW)
        return {"txn-write": allow(R.TRANSACTIONAL_ID, self.txn_prefix, O.WRITE, P.PREFIXED),
                "topic-write": allow(R.TOPIC, self.topic, O.WRITE),
                "topic-read": allow(R.TOPIC, self.topic, O.READ),
                "group-read": allow(R.GROUP, self.group, O.READ)}


def client(broker, cls):
    return cls(Security(broker.bootstrap("SASL_SSL"), "SASL_SSL", "SCRAM-SHA-512", *ALICE, broker.certs["ca"]))


def prepare(broker, without: str | None = None) -> Names:
    names = Names()
    broker.call(broker.node.logs.create_topic, names.topic, 1)  # the topic exists: CREATE is not in question
    broker.add_acls(*(b for k, b in names.acls().items() if k != without))
    return names


@pytest.mark.parametrize("cls", PY_CLIENTS)
def test_the_seed_scenario_and_a_group_with_exactly_the_acls_kafka_requires(broker, cls):
    names, c = prepare(broker), client(broker, cls)
    c.seed(names.topic, names.txn_prefix + "a", names.txn_prefix + "b")
    got, committed = c.group_read(names.topic, names.group, len(SEED_COMMITTED))
    assert got == SEED_COMMITTED
    assert getattr(committed, "offset", committed) in (SEED_END - 1, SEED_END)


@pytest.mark.parametrize("missing", list(MISSING))
@pytest.mark.parametrize("cls", PY_CLIENTS)
def test_each_acl_taken_away_gives_kafkas_error(broker, cls, missing):
    names, c = prepare(broker, without=missing), client(broker, cls)
    expected = MISSING[missing][1][cls.name]
    if missing in PRODUCER_ACLS:
        with pytest.raises(Exception) as raised:
            c.seed(names.topic, names.txn_prefix + "a", names.txn_prefix + "b")
    else:
        c.seed(names.topic, names.txn_prefix + "a", names.txn_prefix + "b")
        with pytest.raises(Exception) as raised:
            c.group_read(names.topic, names.group, len(SEED_COMMITTED))
    assert expected in error_text(raised.value)


# -- Java: compat/java/KafkaDriver.java's txn.seed and consumer.group_commit, unchanged -----------

JAVA_SCENARIOS = {"txn-write": "txn.seed", "topic-write": "txn.seed", "group-read": "consumer.group_commit",
                  "topic-read": "consumer.group_commit"}
JAVA_ERRORS = {"txn-write": "TransactionalIdAuthorizationException", "topic-write": "TopicAuthorizationException",
               "group-read": "GroupAuthorizationException", "topic-read": "TopicAuthorizationException"}


def java_acls(prefix: str, without: str | None = None) -> list[AclBinding]:
    """What the two scenarios need, on the run's prefix: they create their topics (CREATE), write
    them in transactions and read them in a group."""
    def allow(rtype, op):
        return AclBinding(rtype, prefix, P.PREFIXED, f"User:{ALICE[0]}", "*", op, A.ALLOW)
    acls = {"topic-create": allow(R.TOPIC, O.CREATE), "topic-write": allow(R.TOPIC, O.WRITE),
            "topic-read": allow(R.TOPIC, O.READ), "txn-write": allow(R.TRANSACTIONAL_ID, O.WRITE),
            "group-read": allow(R.GROUP, O.READ)}
    return [b for k, b in acls.items() if k != without]


def run_java(broker, java_drivers, scenarios: list[str], without: str | None = None) -> dict:
    """The scenarios as alice. request.timeout.ms is 5 s instead of compat/java/Support.java's 15 s:
    a transactional producer whose AddPartitionsToTxn was refused (no topic WRITE) waits that long
    in close(), with nothing left in flight, after send() has already failed with the error."""
    prefix = f"java-acl-{uuid.uuid4().hex[:6]}"
    broker.add_acls(*java_acls(prefix, without))
    jaas = ('org.apache.kafka.common.security.scram.ScramLoginModule required username="{}" password="{}";'
            .format(*ALICE))
    return java_drivers.run("KafkaDriver", scenarios, broker.bootstrap("SASL_SSL"), timeout=240, prefix=prefix,
                            parallel=2, timeout_s=60, **{
                                "client.security.protocol": "SASL_SSL", "client.sasl.mechanism": "SCRAM-SHA-512",
                                "client.request.timeout.ms": "5000",
                                "client.sasl.jaas.config": jaas, "client.ssl.truststore.type": "PEM",
                                "client.ssl.truststore.location": broker.certs["ca"]})["results"]


@JAVA_CELL
def test_java_seed_and_group_with_exactly_the_acls_kafka_requires(broker, java_drivers):
    results = run_java(broker, java_drivers, ["txn.seed", "consumer.group_commit"])
    for name, result in results.items():
        assert result["ok"], f"{name}: {result['error']}\n{result['trace']}"
    seed = results["txn.seed"]["observed"]
    assert [r["v"] for r in seed["read_committed"]] == ["plain-1", "b-1", "b-2"]
    assert seed["read_committed_position"] == SEED_END
    group = results["consumer.group_commit"]["observed"]
    assert (group["committed"], group["second_member"], group["admin_group_offset"]) == (3, ["g-3", "g-4"], 3)


@JAVA_CELL
@pytest.mark.parametrize("missing", list(JAVA_ERRORS))
def test_java_each_acl_taken_away_gives_kafkas_error(broker, java_drivers, missing):
    result = run_java(broker, java_drivers, [JAVA_SCENARIOS[missing]], without=missing)[JAVA_SCENARIOS[missing]]
    assert not result["ok"]
    assert JAVA_ERRORS[missing] in result["error"] + result["trace"]


# -- kcat: a group consumer (-G) and a producer (-P) of the seed topic written by confluent-kafka ---

KCAT = shutil.which("kcat") or shutil.which("kafkacat")
needs_kcat = pytest.mark.skipif(KCAT is None, reason="kcat is not installed: apt-get install -y kcat")


def kcat(broker, *args: str, stdin: str | None = None, timeout: float = 20) -> tuple[int | None, str, str]:
    """kcat as alice over SASL_SSL: (exit status, or None when it had to be stopped; stdout; stderr)."""
    cmd = [KCAT, "-b", broker.bootstrap("SASL_SSL"), "-X", "security.protocol=SASL_SSL",
           "-X", "sasl.mechanisms=SCRAM-SHA-512", "-X", f"sasl.username={ALICE[0]}",
           "-X", f"sasl.password={ALICE[1]}", "-X", f"ssl.ca.location={broker.certs['ca']}", *args]
    try:
        proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:  # a consumer that reports its error and waits on
        return None, _text(e.stdout), _text(e.stderr)
    return proc.returncode, proc.stdout, proc.stderr


def _text(out) -> str:
    return out.decode(errors="replace") if isinstance(out, bytes) else (out or "")


def kcat_group_read(broker, names) -> tuple[int | None, list, str]:
    code, out, err = kcat(broker, "-C", "-G", names.group, names.topic, "-o", "beginning", "-e", "-J", "-q",
                          "-X", "isolation.level=read_committed")
    return code, [(m["offset"], m["payload"]) for m in map(json.loads, out.splitlines()) if "payload" in m], err


@needs_kcat
@KCAT_CELL
def test_kcat_with_exactly_the_acls_kafka_requires(broker):
    from compat.acl_clients import ConfluentKafkaAcl
    names = prepare(broker)
    client(broker, ConfluentKafkaAcl).seed(names.topic, names.txn_prefix + "a", names.txn_prefix + "b")
    code, _, err = kcat(broker, "-P", "-t", names.topic, "-p", "0", stdin="k-1\n")
    assert code == 0, err
    code, got, err = kcat_group_read(broker, names)
    assert code == 0, err
    assert got == [(3, "plain-1"), (4, "b-1"), (5, "b-2"), (7, "k-1")]


@needs_kcat
@KCAT_CELL
@pytest.mark.parametrize("missing, expected", [("topic-write", "Topic authorization failed"),
                                               ("group-read", "Group authorization failed"),
                                               ("topic-read", "Topic authorization failed")])
def test_kcat_each_acl_taken_away_gives_kafkas_error(broker, missing, expected):
    names = prepare(broker, without=missing)
    if missing == "topic-write":
        code, _, err = kcat(broker, "-P", "-t", names.topic, "-p", "0", stdin="k-1\n")
    else:
        code, _, err = kcat_group_read(broker, names)
    assert code != 0 and expected in err


def test_the_kafka_shim_acls_fixture(kafka_shim_acls):
    """The pytest fixture: alice may do nothing until the test gives her an ACL in one line. Without
    WRITE on any topic her idempotent producer gets no producer id (CLUSTER_AUTHORIZATION_FAILED, as
    Kafka answers an idempotent producer without IDEMPOTENT_WRITE or WRITE on some topic)."""
    from kafka import KafkaProducer

    from shim.security.acls import acl

    kw = dict(bootstrap_servers=kafka_shim_acls.bootstrap("SASL_SSL"), security_protocol="SASL_SSL",
              sasl_mechanism="SCRAM-SHA-512", sasl_plain_username="alice", sasl_plain_password="alice-secret",
              ssl_cafile=kafka_shim_acls.certs["ca"], max_block_ms=10_000)
    kafka_shim_acls.call(kafka_shim_acls.node.logs.create_topic, "orders", 1)
    kafka_shim_acls.add_acls(acl("User:alice", "DESCRIBE", topic="orders"))
    producer = KafkaProducer(**kw)
    with pytest.raises(Exception, match="ClusterAuthorizationFailed"):
        producer.send("orders", b"refused").get(timeout=10)
    producer.close()
    kafka_shim_acls.add_acls(acl("User:alice", "WRITE", topic="orders"))
    producer = KafkaProducer(**kw)
    assert producer.send("orders", b"allowed").get(timeout=10).offset == 0
    producer.close()


def test_acls_made_with_kafka_python_survive_kill_9(tmp_path, shim_process, free_port):
    """``kafka-shim serve`` configured by Kafka's property names; ACLs created with kafka-python's
    admin client are there after a SIGKILL and a restart."""
    from kafka import KafkaAdminClient
    from kafka.admin import (ACL, ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType, ResourcePattern,
                             ResourcePatternFilter, ResourceType)

    args = ("--override", f"authorizer.class.name={STANDARD}", "--override", "super.users=User:ANONYMOUS")
    port = free_port()
    broker = shim_process(tmp_path / "data", port, args=args)
    admin = KafkaAdminClient(bootstrap_servers=broker.wait_ready())
    made = [ACL("User:alice", "*", ACLOperation.WRITE, ACLPermissionType.ALLOW,
                ResourcePattern(ResourceType.TOPIC, "orders")),
            ACL("User:alice", "*", ACLOperation.READ, ACLPermissionType.ALLOW,
                ResourcePattern(ResourceType.GROUP, "billing-", ACLResourcePatternType.PREFIXED))]
    assert len(admin.create_acls(made)["succeeded"]) == 2
    admin.close()
    broker.kill9()
    broker = shim_process(tmp_path / "data", port, args=args)
    admin = KafkaAdminClient(bootstrap_servers=broker.wait_ready())
    acls, _ = admin.describe_acls(ACLFilter(None, None, ACLOperation.ANY, ACLPermissionType.ANY,
                                            ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY)))
    admin.close()
    assert sorted((a.resource_pattern.resource_name, a.operation, a.resource_pattern.pattern_type) for a in acls) == [
        ("billing-", ACLOperation.READ, ACLResourcePatternType.PREFIXED),
        ("orders", ACLOperation.WRITE, ACLResourcePatternType.LITERAL)]


@pytest.mark.compat(client="java", scenario="admin.acls")
def test_java_admin_acls(broker, java_drivers):
    """Java's Admin createAcls, describeAcls (a MATCH filter) and deleteAcls, as a super user."""
    jaas = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="admin-secret";'
    prefix = f"java-acls-{uuid.uuid4().hex[:6]}"
    result = java_drivers.run("AdminDriver", ["admin.acls"], broker.bootstrap("SASL_SSL"), timeout=240, prefix=prefix,
                              parallel=1, timeout_s=60, **{
                                  "client.security.protocol": "SASL_SSL", "client.sasl.mechanism": "SCRAM-SHA-512",
                                "client.request.timeout.ms": "5000",
                                  "client.sasl.jaas.config": jaas, "client.ssl.truststore.type": "PEM",
                                  "client.ssl.truststore.location": broker.certs["ca"]})["results"]["admin.acls"]
    assert result["ok"], f"{result['error']}\n{result['trace']}"
    obs, topic = result["observed"], f"{prefix}-acl"
    assert obs["create"] is None
    assert obs["create_bad_cluster"]["chain"][0].endswith("InvalidRequestException")
    assert obs["describe_match"] == [f"TOPIC:PREFIXED:{topic}-:User:alice:*:WRITE:DENY"]
    assert obs["deleted"] == [f"TOPIC:LITERAL:{topic}:User:alice:*:READ:ALLOW",
                              f"TOPIC:PREFIXED:{topic}-:User:alice:*:WRITE:DENY"]
    assert obs["after_delete"] == []
