"""A production TLS setup of Kafka's, unchanged, against kafka-shim (README.md, Security): the broker's
key store and trust store are PKCS12 files with passwords (the key store typed ``JKS``, as Kafka's
default type reads the PKCS12 files keytool writes), ``ssl.client.auth=required``, and
``ssl.principal.mapping.rules`` that name ``CN=client,OU=test,O=kafka-shim`` ``CLIENT`` and leave other
certificates their full distinguished name (``DEFAULT``). With StandardAuthorizer, ACLs on the mapped
name decide: confluent-kafka (PEM, or a PKCS12 key store of its own), kafka-python, aiokafka and the
Java client (PKCS12 and JKS trust stores, a PKCS12 key store) produce and consume where
``User:CLIENT`` may, are refused where it may not, and a certificate the first rule does not match
is known by its distinguished name.
"""

from __future__ import annotations

import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from compat.security_clients import CLIENTS, ConfluentKafka, Security
from shim.broker import STANDARD_AUTHORIZER, BrokerThread
from shim.security.acls import acl

pytestmark = pytest.mark.shim_only("starts a kafka-shim with TLS stores of its own")
pytest.importorskip("cryptography")

PASSWORD = "store-secret"
RULES = "RULE:^CN=([^,]+),OU=test,O=kafka-shim$/$1/U, DEFAULT"
MAPPED = "User:CLIENT"
OTHER_DN = "User:CN=other,OU=ops,O=kafka-shim"
KEYTOOL = shutil.which("keytool")


def _pem(path: Path):
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    data = path.read_bytes()
    if b"PRIVATE KEY" in data:
        return serialization.load_pem_private_key(data, None)
    return x509.load_pem_x509_certificate(data)


def pkcs12_key_store(path: Path, key_pem: Path, cert_pem: Path, ca_pem: Path) -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.serialization import pkcs12
    path.write_bytes(pkcs12.serialize_key_and_certificates(
        b"kafka", _pem(key_pem), _pem(cert_pem), [_pem(ca_pem)],
        serialization.BestAvailableEncryption(PASSWORD.encode())))
    return str(path)


def pkcs12_trust_store(path: Path, ca_pem: Path) -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.serialization import pkcs12
    path.write_bytes(pkcs12.serialize_java_truststore([pkcs12.PKCS12Certificate(_pem(ca_pem), b"ca")],
                                                     serialization.BestAvailableEncryption(PASSWORD.encode())))
    return str(path)


def other_client(certs: dict, out: Path) -> tuple[str, str]:
    """A second client certificate from the same CA: CN=other,OU=ops,O=kafka-shim."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    ca, ca_key, key = _pem(Path(certs["ca"])), _pem(Path(certs["ca-key"])), ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "kafka-shim"),
                      x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, "ops"),
                      x509.NameAttribute(NameOID.COMMON_NAME, "other")])
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(ca.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1)).sign(ca_key, hashes.SHA256()))
    (out / "other-cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (out / "other-key.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                          serialization.NoEncryption()))
    return str(out / "other-cert.pem"), str(out / "other-key.pem")


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    from shim.security.certs import make_certs

    d = tmp_path_factory.mktemp("tlsstores")
    pem = make_certs(d / "certs")
    stores = d / "stores"
    stores.mkdir()
    keystore = pkcs12_key_store(stores / "kafka.keystore.jks", pem["broker-key.pem"], pem["broker-cert.pem"],
                                pem["ca.pem"])
    with BrokerThread(data_dir=d / "kafka-shim", listeners="SSL://127.0.0.1:0", ssl_client_auth="required",
                      ssl_keystore_type="JKS", ssl_keystore_location=keystore, ssl_keystore_password=PASSWORD,
                      ssl_truststore_type="PKCS12", ssl_truststore_password=PASSWORD,
                      ssl_truststore_location=pkcs12_trust_store(stores / "kafka.truststore.p12", pem["ca.pem"]),
                      ssl_principal_mapping_rules=RULES, authorizer_class_name=STANDARD_AUTHORIZER,
                      group_initial_rebalance_delay_ms=0) as thread:
        thread.certs = {name.removesuffix(".pem"): str(path) for name, path in pem.items()}
        thread.dir = d
        thread.add_acls(acl(MAPPED, "ALL", topic="mapped-", prefixed=True), acl(MAPPED, "ALL", group="*"))
        yield thread


def client(broker, cert: str | None = None, key: str | None = None) -> ConfluentKafka:
    return ConfluentKafka(Security(broker.bootstrap("SSL"), "SSL", cafile=broker.certs["ca"],
                                   certfile=cert or broker.certs["client-cert"], keyfile=key or broker.certs["client-key"]))


def topic(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def produce_error(c: ConfluentKafka, t: str) -> str:
    """What confluent-kafka reports for a refused produce (the delivery report's error)."""
    from confluent_kafka import Producer
    reports: list = []
    producer = Producer({**{"bootstrap.servers": c.s.bootstrap, "security.protocol": "SSL", "ssl.ca.location": c.s.cafile,
                            "ssl.certificate.location": c.s.certfile, "ssl.key.location": c.s.keyfile},
                         "message.timeout.ms": 20000})
    producer.produce(t, b"refused", partition=0, on_delivery=lambda err, msg: reports.append(err))
    producer.flush(30)
    assert len(reports) == 1 and reports[0] is not None, reports
    return reports[0].name()


def test_the_mapped_principal_may_produce_and_consume_where_its_acls_allow(broker):
    from confluent_kafka import Producer

    c, t = client(broker), topic("mapped")
    c.produce(t, [b"one", b"two"])
    assert c.consume(t, 2) == [b"one", b"two"]
    producer = Producer({"bootstrap.servers": c.s.bootstrap, "security.protocol": "SSL", "ssl.ca.location": c.s.cafile,
                         "ssl.certificate.location": c.s.certfile, "ssl.key.location": c.s.keyfile})
    producer.produce(t, b"three", partition=0)
    assert producer.flush(30) == 0
    assert MAPPED in broker.principals("SSL")  # the connection open now is known by the mapped name
    assert "User:CN=client,OU=test,O=kafka-shim" not in broker.principals("SSL")


@pytest.mark.parametrize("kind", [k for k in CLIENTS if k is not ConfluentKafka], ids=lambda k: k.name)
def test_python_clients_produce_and_consume_as_the_mapped_principal(broker, kind):
    c, t = kind(client(broker).s), topic("mapped")
    c.produce(t, [b"py-1", b"py-2"])
    assert c.consume(t, 2) == [b"py-1", b"py-2"]


def test_confluent_kafka_with_a_pkcs12_key_store_of_its_own(broker):
    """librdkafka's ssl.keystore.location/ssl.keystore.password (PKCS12) for the client certificate."""
    from confluent_kafka import Consumer, Producer, TopicPartition

    d = broker.dir / "librdkafka"
    d.mkdir(exist_ok=True)
    keystore = pkcs12_key_store(d / "client.p12", Path(broker.certs["client-key"]), Path(broker.certs["client-cert"]),
                                Path(broker.certs["ca"]))
    conf = {"bootstrap.servers": broker.bootstrap("SSL"), "security.protocol": "SSL", "ssl.ca.location": broker.certs["ca"],
            "ssl.keystore.location": keystore, "ssl.keystore.password": PASSWORD}
    t = topic("mapped")
    producer = Producer(conf)
    producer.produce(t, b"via pkcs12", partition=0)
    assert producer.flush(30) == 0
    consumer = Consumer({**conf, "group.id": f"g-{uuid.uuid4()}", "auto.offset.reset": "earliest"})
    consumer.assign([TopicPartition(t, 0, 0)])
    try:
        message = consumer.poll(30)
    finally:
        consumer.close()
    assert message is not None and message.error() is None and message.value() == b"via pkcs12"


def test_the_mapped_principal_is_refused_where_no_acl_allows(broker):
    assert produce_error(client(broker), topic("elsewhere")) == "TOPIC_AUTHORIZATION_FAILED"


def test_a_certificate_no_rule_maps_keeps_its_distinguished_name(broker):
    """CN=other,OU=ops falls through the first rule to DEFAULT: the ACLs of User:CLIENT are not its
    own; an ACL on its full distinguished name lets it in."""
    cert, key = other_client(broker.certs, broker.dir / "certs")
    t = topic("mapped")
    assert produce_error(client(broker, cert, key), t) == "TOPIC_AUTHORIZATION_FAILED"
    broker.add_acls(acl(OTHER_DN, "ALL", topic=t), acl(OTHER_DN, "ALL", group="*"))
    other = client(broker, cert, key)
    other.produce(t, [b"from other"])
    assert other.consume(t, 1) == [b"from other"]


def java_stores(broker, kind: str) -> dict:
    """The Java client's own key store (PKCS12) and trust store of ``kind``: PKCS12 made with
    cryptography, or a JKS-format store made by keytool."""
    d = broker.dir / f"java-{kind}"
    d.mkdir(exist_ok=True)
    keystore = pkcs12_key_store(d / "client.p12", Path(broker.certs["client-key"]), Path(broker.certs["client-cert"]),
                                Path(broker.certs["ca"]))
    if kind == "PKCS12":
        truststore = pkcs12_trust_store(d / "trust.p12", Path(broker.certs["ca"]))
    else:
        truststore = str(d / "trust.jks")
        made = subprocess.run([KEYTOOL, "-importcert", "-noprompt", "-alias", "ca", "-file", broker.certs["ca"],
                               "-keystore", truststore, "-storetype", "JKS", "-storepass", PASSWORD],
                              capture_output=True, text=True, timeout=60)
        assert made.returncode == 0, made.stderr
        assert Path(truststore).read_bytes()[:4] == b"\xfe\xed\xfe\xed"  # the JKS format itself
    return {"client.security.protocol": "SSL", "client.ssl.truststore.type": kind,
            "client.ssl.truststore.location": truststore, "client.ssl.truststore.password": PASSWORD,
            "client.ssl.keystore.type": "PKCS12", "client.ssl.keystore.location": keystore,
            "client.ssl.keystore.password": PASSWORD}


@pytest.mark.parametrize("kind", ["PKCS12", pytest.param("JKS", marks=pytest.mark.skipif(
    KEYTOOL is None, reason="keytool (a JDK) is not installed"))])
def test_java_client_with_its_key_and_trust_stores(broker, java_drivers, kind):
    """kafka-clients 3.9.1 with PKCS12/JKS stores: produce and consume under the mapped principal's
    ACLs (the driver creates its topic under the mapped- prefix)."""
    results = java_drivers.run("KafkaDriver", ["produce_consume.none"], broker.bootstrap("SSL"), timeout=180,
                               prefix=f"mapped-java-{uuid.uuid4().hex[:6]}", parallel=1, timeout_s=60,
                               **java_stores(broker, kind))
    result = results["results"]["produce_consume.none"]
    assert result["ok"], f"{result['error']}\n{result['trace']}"
    assert result["observed"]["offsets"] == [0, 1, 2, 3, 4]


def test_java_client_is_refused_outside_the_mapped_principals_acls(broker, java_drivers):
    results = java_drivers.run("KafkaDriver", ["produce_consume.none"], broker.bootstrap("SSL"), timeout=180,
                               prefix=f"elsewhere-{uuid.uuid4().hex[:6]}", parallel=1, timeout_s=60,
                               **java_stores(broker, "PKCS12"))
    result = results["results"]["produce_consume.none"]
    assert not result["ok"]
    assert "TopicAuthorizationException" in result["error"] + result["trace"]


def serve(tmp_path, *args: str) -> subprocess.CompletedProcess:
    import sys
    return subprocess.run([str(Path(sys.executable).parent / "kafka-shim"), "serve", "--data-dir", str(tmp_path / "d"),
                           "--listeners", "SSL://127.0.0.1:0", *args], capture_output=True, text=True, timeout=60)


def test_serve_refuses_a_wrong_store_password_and_a_malformed_rule(broker, tmp_path):
    keystore = str(broker.dir / "stores" / "kafka.keystore.jks")
    wrong = serve(tmp_path, "--ssl-keystore-type", "PKCS12", "--ssl-keystore-location", keystore,
                  "--ssl-keystore-password", "not-it")
    assert wrong.returncode == 2 and "Traceback" not in wrong.stderr
    assert f"Failed to load SSL keystore {keystore} of type PKCS12: keystore password was incorrect" in wrong.stderr
    malformed = serve(tmp_path, "--ssl-keystore-type", "PKCS12", "--ssl-keystore-location", keystore,
                      "--ssl-keystore-password", PASSWORD, "--ssl-principal-mapping-rules", "RULE:^CN=(.*)$/$1/X")
    assert malformed.returncode == 2 and "Traceback" not in malformed.stderr
    assert "Invalid rule: `RULE:^CN=(.*)$/$1/X`, unmatched substring: `X`" in malformed.stderr


@pytest.mark.skipif(KEYTOOL is None, reason="keytool (a JDK) is not installed")
def test_serve_a_keytool_keystore_from_a_server_properties_without_store_types(tmp_path, shim_process):
    """Kafka's documented recipe: `keytool -genkeypair` into kafka.server.keystore.jks (PKCS12, keytool's
    default format since JDK 9), the certificate exported for the clients, and a server.properties
    that names no ssl.keystore.type (Kafka's default, JKS); librdkafka trusts the export."""
    keystore, cert = tmp_path / "kafka.server.keystore.jks", tmp_path / "broker-cert.pem"
    for args in (["-genkeypair", "-alias", "localhost", "-keyalg", "EC", "-groupname", "secp256r1", "-validity", "2",
                  "-dname", "CN=localhost", "-ext", "SAN=DNS:localhost,IP:127.0.0.1"],
                 ["-exportcert", "-rfc", "-alias", "localhost", "-file", str(cert)]):
        made = subprocess.run([KEYTOOL, *args, "-keystore", str(keystore), "-storepass", PASSWORD], capture_output=True,
                              text=True, timeout=60)
        assert made.returncode == 0, made.stderr
    assert keystore.read_bytes()[:1] == b"\x30"  # a DER SEQUENCE: PKCS12, not the JKS format
    properties = tmp_path / "server.properties"
    properties.write_text(f"ssl.keystore.location={keystore}\nssl.keystore.password={PASSWORD}\n"
                          f"ssl.key.password={PASSWORD}\n")
    broker = shim_process(tmp_path / "data", 0, console_script=True,
                          args=["--config", str(properties), "--listeners", "SSL://127.0.0.1:0"])
    broker.wait_ready(timeout=30)
    listeners = broker.proc.stdout.readline().strip()
    assert listeners.startswith("kafka-shim listeners: SSL://127.0.0.1:"), listeners
    bootstrap = listeners.removeprefix("kafka-shim listeners: SSL://")
    c, t = ConfluentKafka(Security(bootstrap, "SSL", cafile=str(cert))), topic("keytool")
    c.produce(t, [b"from keytool's store"])
    assert c.consume(t, 1) == [b"from keytool's store"]
