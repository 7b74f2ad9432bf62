"""Production security settings of the Python clients, unchanged, against kafka-shim's listeners
(README.md, Security): SASL_SSL with SCRAM-SHA-512 and SASL_PLAINTEXT with PLAIN for
kafka-python, confluent-kafka and aiokafka (produce and consume; a transaction aborted then one
committed, read read_committed; a wrong password reported as the client reports Kafka's
SASL_AUTHENTICATION_FAILED, with Kafka's message), and mutual TLS on an SSL listener with
ssl.client.auth=required (all three, and Java with PEM stores; the broker names the client by its
certificate's distinguished name, as Kafka's default principal mapping does). Over SASL_SSL with
SCRAM-SHA-512 each of the three, kcat and Java also runs the txn.seed scenario (compat/scenarios/) and a
consumer group, and gets SASL_AUTHENTICATION_FAILED for a wrong password. librdkafka re-authenticates
(KIP-368), and kcat's old librdkafka shows the SCRAM nonce check of Kafka 3.9 and of 4.0.

One broker for the module with all four listeners (shim.broker.secure_broker, the
kafka_shim_secure fixture's) and its own throwaway CA.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from compat.security_clients import CLIENTS, KCAT, ConfluentKafka, KafkaPython, Kcat, Security
from shim.broker import SECURE_USER, BrokerThread, secure_broker

pytestmark = pytest.mark.shim_only("starts a kafka-shim with TLS and SASL listeners of its own")

SASL = [("SASL_SSL", "SCRAM-SHA-512"), ("SASL_PLAINTEXT", "PLAIN")]
CLIENT_DN = "User:CN=client,OU=test,O=kafka-shim"
WRONG_PASSWORD_MESSAGE = {
    "SCRAM-SHA-512": "Authentication failed during authentication due to invalid credentials with SASL mechanism "
                     "SCRAM-SHA-512",
    "PLAIN": "Authentication failed: Invalid username or password",
}
# how each client names Kafka's SASL_AUTHENTICATION_FAILED (error 58)
FAILED_NAME = {"kafka-python": "SaslAuthenticationFailedError", "confluent-kafka": "_AUTHENTICATION",
               "aiokafka": "SaslAuthenticationFailed", "kcat": "SASL authentication error"}
needs_kcat = pytest.mark.skipif(KCAT is None, reason="kcat is not installed: apt-get install -y kcat")
WITH_KCAT = [*CLIENTS, pytest.param(Kcat, marks=needs_kcat)]


@pytest.fixture(scope="module")
def secure(tmp_path_factory):
    # no initial rebalance delay (Kafka's is 3 s), as the other test brokers: groups form at once
    with secure_broker(tmp_path_factory.mktemp("secure"), client_auth="required",
                       group_initial_rebalance_delay_ms=0) as broker:
        yield broker


def settings(broker, protocol: str, mechanism: str | None = None, password: str = SECURE_USER[1],
             client_cert: bool = False) -> Security:
    certs = broker.certs
    return Security(broker.bootstrap(protocol), protocol, mechanism, SECURE_USER[0] if mechanism else None,
                    password if mechanism else None, certs["ca"],
                    certs["client-cert"] if client_cert else None, certs["client-key"] if client_cert else None)


def topic() -> str:
    return f"sec-{uuid.uuid4().hex[:10]}"


@pytest.mark.parametrize("protocol, mechanism", SASL)
@pytest.mark.parametrize("client", CLIENTS, ids=lambda c: c.name)
def test_produce_and_consume(secure, client, protocol, mechanism):
    c, t = client(settings(secure, protocol, mechanism)), topic()
    values = [f"{protocol}-{i}".encode() for i in range(3)]
    c.produce(t, values)
    assert c.consume(t, len(values)) == values


@pytest.mark.parametrize("protocol, mechanism", SASL)
@pytest.mark.parametrize("client", CLIENTS, ids=lambda c: c.name)
def test_transaction_read_committed(secure, client, protocol, mechanism):
    c, t = client(settings(secure, protocol, mechanism)), topic()
    c.transaction(t, committed=[b"c1", b"c2"], aborted=[b"a1"])
    assert c.consume(t, 2, "read_committed") == [b"c1", b"c2"]
    assert c.consume(t, 3, "read_uncommitted") == [b"a1", b"c1", b"c2"]


@pytest.mark.parametrize("protocol, mechanism", SASL)
@pytest.mark.parametrize("client", CLIENTS, ids=lambda c: c.name)
def test_wrong_password_is_sasl_authentication_failed(secure, client, protocol, mechanism):
    report = client(settings(secure, protocol, mechanism, password="not-the-password")).auth_error()
    assert FAILED_NAME[client.name] in report
    assert WRONG_PASSWORD_MESSAGE[mechanism] in report


@pytest.mark.parametrize("client", WITH_KCAT, ids=lambda c: c.name)
def test_seed_scenario_over_sasl_ssl_scram(secure, client):
    """the txn.seed scenario (compat/scenarios/) over SASL_SSL with SCRAM-SHA-512: a-1, a-2 aborted, plain-1, then
    b-1, b-2 committed, each by its own producer (kcat, which cannot abort, reads what
    confluent-kafka wrote)."""
    reader, t = client(settings(secure, "SASL_SSL", "SCRAM-SHA-512")), topic()
    writer = reader if reader.transactional else ConfluentKafka(reader.s)
    writer.transaction(t, committed=[], aborted=[b"a-1", b"a-2"])
    writer.produce(t, [b"plain-1"])
    writer.transaction(t, committed=[b"b-1", b"b-2"], aborted=[])
    assert reader.consume(t, 3, "read_committed") == [b"plain-1", b"b-1", b"b-2"]
    assert reader.consume(t, 5, "read_uncommitted") == [b"a-1", b"a-2", b"plain-1", b"b-1", b"b-2"]


@pytest.mark.parametrize("client", WITH_KCAT, ids=lambda c: c.name)
def test_consumer_group_over_sasl_ssl_scram(secure, client):
    """A member of a group reads and commits; the next member of the same group resumes after the
    commit and reads only what came since (JoinGroup, SyncGroup, OffsetCommit, OffsetFetch over
    SASL_SSL)."""
    c, t, group = client(settings(secure, "SASL_SSL", "SCRAM-SHA-512")), topic(), f"g-{uuid.uuid4().hex[:8]}"
    c.produce(t, [b"g-0", b"g-1", b"g-2"])
    assert c.group(t, group, 3) == [b"g-0", b"g-1", b"g-2"]
    c.produce(t, [b"g-3", b"g-4"])
    assert c.group(t, group, 2) == [b"g-3", b"g-4"]


@needs_kcat
def test_kcat_wrong_password_is_sasl_authentication_failed(secure):
    report = Kcat(settings(secure, "SASL_SSL", "SCRAM-SHA-512", password="not-the-password")).auth_error()
    assert FAILED_NAME["kcat"] in report and WRONG_PASSWORD_MESSAGE["SCRAM-SHA-512"] in report


@needs_kcat
def test_scram_nonce_check_follows_the_emulated_release(tmp_path):
    """kcat 1.7.1's librdkafka (< 2.6.1) sends its client nonce twice in the SCRAM client-final
    message: Kafka 3.9 lets it through (endsWith), 4.0 refuses it (equals) with the generic
    message, while a librdkafka >= 2.6.1 (confluent-kafka's) logs in under both."""
    t = topic()
    for version, kcat_logs_in in (("3.9", True), ("4.0", False)):
        with BrokerThread(data_dir=tmp_path / version, listeners="SASL_PLAINTEXT://127.0.0.1:0",
                          sasl_users=(":".join(SECURE_USER),), kafka_version=version) as broker:
            s = Security(broker.bootstrap("SASL_PLAINTEXT"), "SASL_PLAINTEXT", "SCRAM-SHA-256", *SECURE_USER)
            ConfluentKafka(s).produce(t, [b"by librdkafka 2.16"])
            report = Kcat(s).auth_error()
            assert (WRONG_PASSWORD_MESSAGE["SCRAM-SHA-512"].replace("512", "256") in report) != kcat_logs_in, report
            if kcat_logs_in:
                assert Kcat(s).consume(t, 1) == [b"by librdkafka 2.16"]


@pytest.mark.parametrize("client", WITH_KCAT, ids=lambda c: c.name)
def test_mutual_tls_names_the_client_by_its_certificate(secure, client):
    c, t = client(settings(secure, "SSL", client_cert=True)), topic()
    c.produce(t, [b"over mutual TLS"])
    assert c.consume(t, 1) == [b"over mutual TLS"]


def test_the_ssl_principal_is_the_certificates_distinguished_name(secure):
    from kafka import KafkaProducer

    s = settings(secure, "SSL", client_cert=True)
    producer = KafkaProducer(bootstrap_servers=s.bootstrap, security_protocol="SSL", ssl_cafile=s.cafile,
                             ssl_certfile=s.certfile, ssl_keyfile=s.keyfile)
    try:
        producer.send(topic(), b"x").get(timeout=20)
        assert secure.principals("SSL") == {CLIENT_DN}
    finally:
        producer.close()


def test_a_client_without_a_certificate_is_refused_when_one_is_required(secure):
    # TLS 1.3: the client finishes its side of the handshake and sends ApiVersions, then the broker
    # refuses the missing certificate with a TLS alert, which librdkafka reads before the first
    # answer (Kafka's SSLEngine sends bad_certificate, OpenSSL certificate_required)
    report = ConfluentKafka(settings(secure, "SSL")).auth_error()
    assert "_ALL_BROKERS_DOWN" in report
    assert "alert certificate required" in report and "in state APIVERSION_QUERY" in report


def test_scram_credentials_managed_with_the_admin_api(secure):
    """AlterUserScramCredentials then DescribeUserScramCredentials (confluent-kafka's AdminClient,
    as kafka-configs.sh --alter --add-config 'SCRAM-SHA-512=[...]' does), and the new user logs in."""
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import (AdminClient, ScramCredentialInfo, ScramMechanism,
                                       UserScramCredentialDeletion, UserScramCredentialUpsertion)

    s = settings(secure, "SASL_SSL", "SCRAM-SHA-512")
    admin = AdminClient({"bootstrap.servers": s.bootstrap, "security.protocol": "SASL_SSL",
                         "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": s.user, "sasl.password": s.password,
                         "ssl.ca.location": s.cafile})
    user = f"bob-{uuid.uuid4().hex[:6]}"
    good = UserScramCredentialUpsertion(user, ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192), b"bob-pw")
    few = UserScramCredentialUpsertion("carol", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 1000), b"pw")
    missing = UserScramCredentialDeletion("nobody", ScramMechanism.SCRAM_SHA_256)
    futures = admin.alter_user_scram_credentials([good, few, missing], request_timeout=20)
    assert futures[user].result(20) is None

    def error_of(future) -> KafkaError:
        try:
            future.result(20)
        except KafkaException as exc:
            return exc.args[0]
        raise AssertionError("no error")

    assert (error_of(futures["carol"]).code(), error_of(futures["carol"]).str()) == \
        (KafkaError.UNACCEPTABLE_CREDENTIAL, "Too few iterations")
    assert error_of(futures["nobody"]).code() == KafkaError.RESOURCE_NOT_FOUND

    described = admin.describe_user_scram_credentials([user, SECURE_USER[0]], request_timeout=20)
    infos = {u: sorted((i.mechanism, i.iterations) for i in f.result(20).scram_credential_infos)
             for u, f in described.items()}
    assert infos == {user: [(ScramMechanism.SCRAM_SHA_512, 8192)],
                     SECURE_USER[0]: [(ScramMechanism.SCRAM_SHA_256, 4096), (ScramMechanism.SCRAM_SHA_512, 4096)]}

    bob = ConfluentKafka(Security(s.bootstrap, "SASL_SSL", "SCRAM-SHA-512", user, "bob-pw", s.cafile))
    t = topic()
    bob.produce(t, [b"from bob"])
    assert bob.consume(t, 1) == [b"from bob"]
    wrong_mechanism = ConfluentKafka(Security(s.bootstrap, "SASL_SSL", "SCRAM-SHA-256", user, "bob-pw", s.cafile))
    assert "_AUTHENTICATION" in wrong_mechanism.auth_error()  # only a SCRAM-SHA-512 credential was set


def test_kafka_shim_secure_fixture(kafka_shim_secure):
    c = KafkaPython(settings(kafka_shim_secure, "SASL_SSL", "SCRAM-SHA-256"))
    t = topic()
    c.produce(t, [b"fixture"])
    assert c.consume(t, 1) == [b"fixture"]


def test_serve_with_kafkas_security_flags_and_certs_command(tmp_path, shim_process):
    import subprocess
    import sys
    from pathlib import Path

    script = Path(sys.executable).parent / "kafka-shim"
    made = subprocess.run([str(script), "certs", "--out", str(tmp_path / "certs")], capture_output=True, text=True,
                          timeout=60)
    assert made.returncode == 0, made.stderr
    assert {Path(line).name for line in made.stdout.split()} >= {"ca.pem", "broker.pem", "client-cert.pem"}
    broker = shim_process(tmp_path / "data", 0, console_script=True, args=[
        "--listeners", "PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
        "--advertised-listeners", "SASL_SSL://localhost:0",
        "--ssl-keystore-location", str(tmp_path / "certs" / "broker.pem"),
        "--sasl-enabled-mechanisms", "SCRAM-SHA-256", "--sasl-user", "bob:bob-pw"])
    broker.wait_ready(timeout=20)
    listeners_line = broker.proc.stdout.readline().strip()
    assert listeners_line.startswith("kafka-shim listeners: PLAINTEXT://127.0.0.1:")
    sasl_ssl = listeners_line.split(",")[1]
    assert sasl_ssl.startswith("SASL_SSL://localhost:")  # advertised host, bound port
    c = KafkaPython(Security(sasl_ssl.removeprefix("SASL_SSL://"), "SASL_SSL", "SCRAM-SHA-256", "bob", "bob-pw",
                             str(tmp_path / "certs" / "ca.pem")))
    t = topic()
    c.produce(t, [b"from the command line"])
    assert c.consume(t, 1) == [b"from the command line"]


def test_serve_refuses_a_listener_without_a_protocol(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    out = subprocess.run([str(Path(sys.executable).parent / "kafka-shim"), "serve", "--data-dir", str(tmp_path / "d"),
                          "--listeners", "CUSTOM://127.0.0.1:0"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 2 and "listener.security.protocol.map" in out.stderr


def test_serve_refuses_a_tls_listener_without_a_keystore(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    out = subprocess.run([str(Path(sys.executable).parent / "kafka-shim"), "serve", "--data-dir", str(tmp_path / "d"),
                          "--listeners", "SSL://127.0.0.1:0"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 2 and "ssl.keystore.location" in out.stderr and "Traceback" not in out.stderr


def test_java_client_over_sasl_ssl_scram(secure, java_drivers):
    """kafka-clients 3.9.1 with its production settings (SCRAM-SHA-512 over SASL_SSL, a PEM
    truststore, hostname verification on): compat/java/KafkaDriver.java's produce/consume, the
    txn.seed and open-transaction scenarios and a consumer group, and a wrong password as Java
    reports it."""
    user, password = SECURE_USER
    jaas = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="{}" password="{}";'

    def run(pw: str, scenarios: list[str]) -> dict:
        return java_drivers.run("KafkaDriver", scenarios, secure.bootstrap("SASL_SSL"), timeout=180,
                                prefix=f"java-sec-{uuid.uuid4().hex[:6]}", parallel=2, timeout_s=60, **{
                                    "client.security.protocol": "SASL_SSL", "client.sasl.mechanism": "SCRAM-SHA-512",
                                    "client.sasl.jaas.config": jaas.format(user, pw),
                                    "client.ssl.truststore.type": "PEM",
                                    "client.ssl.truststore.location": secure.certs["ca"]})["results"]

    results = run(password, ["produce_consume.none", "txn.seed", "txn.open_lso_commit", "consumer.group_commit"])
    for name, result in results.items():
        assert result["ok"], f"{name}: {result['error']}\n{result['trace']}"
    assert results["produce_consume.none"]["observed"]["offsets"] == [0, 1, 2, 3, 4]
    assert results["produce_consume.none"]["observed"]["position"] == 5
    seed = results["txn.seed"]["observed"]
    assert [(r["o"], r["v"]) for r in seed["read_committed"]] == [(3, "plain-1"), (4, "b-1"), (5, "b-2")]
    assert [r["v"] for r in seed["read_uncommitted"]] == ["a-1", "a-2", "plain-1", "b-1", "b-2"]
    group = results["consumer.group_commit"]["observed"]
    assert (group["first_member"], group["committed"], group["second_member"]) == (["g-0", "g-1", "g-2"], 3,
                                                                                    ["g-3", "g-4"])
    failed = run("not-the-password", ["produce_consume.none"])["produce_consume.none"]
    assert not failed["ok"]
    assert "SaslAuthenticationException" in failed["error"] + failed["trace"]
    assert WRONG_PASSWORD_MESSAGE["SCRAM-SHA-512"] in failed["error"] + failed["trace"]


def test_reauthentication_kip368_with_librdkafka(tmp_path):
    """connections.max.reauth.ms: librdkafka re-authenticates on its connection before the session
    ends (the broker counts completed re-authentications per connection), and nothing is lost."""
    from confluent_kafka import Producer

    with secure_broker(tmp_path, connections_max_reauth_ms=1000) as broker:
        errors: list = []
        producer = Producer({**{"bootstrap.servers": broker.bootstrap("SASL_PLAINTEXT"),
                                "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512",
                                "sasl.username": SECURE_USER[0], "sasl.password": SECURE_USER[1]},
                             "error_cb": errors.append})
        t, sent = topic(), []

        def reauthenticated() -> bool:
            producer.produce(t, f"r{len(sent)}".encode(), partition=0)
            sent.append(f"r{len(sent)}".encode())
            assert producer.flush(10) == 0
            counts = broker.call(lambda: [s.reauthentications for s in broker.broker.sessions()
                                          if s.listener == "SASL_PLAINTEXT"])
            return max(counts, default=0) >= 2

        from compat.support import wait_for
        wait_for(reauthenticated, 30, message="two re-authentications on one connection")
        assert errors == []
        consumer = ConfluentKafka(settings(broker, "SASL_PLAINTEXT", "SCRAM-SHA-512"))
        assert consumer.consume(t, len(sent)) == sent


def test_java_client_over_mutual_tls(secure, java_drivers):
    """kafka-clients 3.9.1 on the SSL listener that requires a certificate, with PEM key and trust
    stores (ssl.keystore.type=PEM: one file with the key and the certificate)."""
    keystore = Path(secure.certs["client-key"]).with_name("client-keystore.pem")
    keystore.write_text(Path(secure.certs["client-key"]).read_text() + Path(secure.certs["client-cert"]).read_text())
    results = java_drivers.run("KafkaDriver", ["produce_consume.none"], secure.bootstrap("SSL"), timeout=180,
                               prefix=f"java-mtls-{uuid.uuid4().hex[:6]}", parallel=1, timeout_s=60, **{
                                   "client.security.protocol": "SSL", "client.ssl.truststore.type": "PEM",
                                   "client.ssl.truststore.location": secure.certs["ca"],
                                   "client.ssl.keystore.type": "PEM", "client.ssl.keystore.location": str(keystore)})
    result = results["results"]["produce_consume.none"]
    assert result["ok"], f"{result['error']}\n{result['trace']}"
    assert result["observed"]["offsets"] == [0, 1, 2, 3, 4]


def test_java_admin_delegation_tokens_over_sasl_find_them_disabled(secure, java_drivers):
    """Over an authenticated SASL_SSL connection the delegation-token calls pass the broker's
    listener check and reach the controller, which has no token secret: DELEGATION_TOKEN_AUTH_DISABLED,
    DelegationTokenDisabledException in Java (over PLAINTEXT they are refused earlier, see
    compat/test_java_cluster_admin.py)."""
    user, password = SECURE_USER
    jaas = f'org.apache.kafka.common.security.scram.ScramLoginModule required username="{user}" password="{password}";'
    out = java_drivers.run("ClusterAdminDriver", ["admin.delegation_tokens"], secure.bootstrap("SASL_SSL"),
                           timeout=180, prefix=f"java-tok-{uuid.uuid4().hex[:6]}", parallel=1, timeout_s=60, **{
                               "client.security.protocol": "SASL_SSL", "client.sasl.mechanism": "SCRAM-SHA-512",
                               "client.sasl.jaas.config": jaas, "client.ssl.truststore.type": "PEM",
                               "client.ssl.truststore.location": secure.certs["ca"]})
    result = out["results"]["admin.delegation_tokens"]
    assert result["ok"], f"{result['error']}\n{result['trace']}"
    errors = {k: v["chain"][0].rsplit(".", 1)[-1] for k, v in result["observed"].items()}
    assert errors == dict.fromkeys(("create", "describe", "renew", "expire"), "DelegationTokenDisabledException")
