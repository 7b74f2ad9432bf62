"""A broker whose key store holds several private keys, two RSA and two EC, as a Kafka broker's
may: real clients are served the key Java's key manager chooses (asked of the JDK itself) and no
other. A client trusting only one certificate proves which was presented: confluent-kafka
(librdkafka) offering ECDSA gets Java's EC key, and restricted to RSA signature schemes gets Java's
RSA key; kafka-clients 3.9.1 likewise over TLS 1.3, and over TLS 1.2 with an ECDHE_RSA suite.
"""

from __future__ import annotations

import shutil
import subprocess
import time
import uuid

import pytest

from shim.broker import BrokerThread

pytestmark = pytest.mark.shim_only("starts a kafka-shim with a key store of its own")
pytest.importorskip("cryptography")
confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka.admin import AdminClient  # noqa: E402
if shutil.which("javac") is None or shutil.which("keytool") is None:
    pytest.skip("a JDK (javac, keytool) is needed", allow_module_level=True)

from tests.security.java_key_manager import java_key_manager, java_merged_store  # noqa: E402
from tests.security.test_key_choice import self_signed  # noqa: E402

STORE_PW = "store-secret"
KEYS = {"kafka": "RSA", "broker-rsa": "RSA", "kafka-ec": "EC", "broker-ec": "EC"}
RSA_ONLY = "rsa_pss_rsae_sha256:rsa_pss_rsae_sha384:RSA+SHA256:RSA+SHA384"  # librdkafka's ssl.sigalgs.list


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    """The broker, and per key type Java's alias (``RSA``, ``EC``) and the other one (``RSA-other``...),
    each naming the PEM file of that key's certificate."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.serialization import pkcs12
    d = tmp_path_factory.mktemp("key-choice-clients")
    sources = {}
    for alias, kind in KEYS.items():
        key, cert = self_signed(alias, kind)
        sources[alias] = d / f"{alias}.p12"
        sources[alias].write_bytes(pkcs12.serialize_key_and_certificates(
            alias.encode(), key, cert, None, serialization.BestAvailableEncryption(STORE_PW.encode())))
        (d / f"{alias}.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    store = d / "broker.jks"
    java_merged_store(store, "JKS", sources, STORE_PW, STORE_PW)
    javas = dict(pair.split("=") for pair in java_key_manager(store, "JKS", STORE_PW).split())
    certs = {}
    for kind in ("RSA", "EC"):
        certs[kind] = d / f"{javas[kind]}.pem"
        certs[f"{kind}-other"] = d / f"{next(a for a, k in KEYS.items() if k == kind and a != javas[kind])}.pem"
    with BrokerThread(data_dir=d / "data", listeners="SSL://127.0.0.1:0", ssl_keystore_type="JKS",
                      ssl_keystore_location=str(store), ssl_keystore_password=STORE_PW) as thread:
        thread.certs, thread.dir = certs, d
        yield thread


def librdkafka_connects(broker, trusted: str, **extra) -> str:
    """'ok' if confluent-kafka, trusting only the certificate ``trusted``, reads the broker's metadata;
    else its error: the first error event (a failed handshake is reported at once, where
    list_topics alone would retry until its timeout), or list_topics' own after 15 s."""
    errors: list = []
    admin = AdminClient({"bootstrap.servers": broker.bootstrap("SSL"), "security.protocol": "SSL",
                         "ssl.ca.location": str(broker.certs[trusted]), "error_cb": errors.append, **extra})
    deadline = time.monotonic() + 15
    while True:
        try:
            admin.list_topics(timeout=0.5)
            return "ok"
        except confluent_kafka.KafkaException as e:
            admin.poll(0)  # serves the error events
            if errors or time.monotonic() >= deadline:
                return str(errors[0] if errors else e)


@pytest.mark.parametrize("trusted, extra, served", [
    ("EC", {}, True),  # librdkafka offers ECDSA first: Java's EC key
    ("EC-other", {}, False),
    ("RSA", {}, False),
    ("RSA", {"ssl.sigalgs.list": RSA_ONLY}, True),  # RSA signatures only: Java's RSA key
    ("RSA-other", {"ssl.sigalgs.list": RSA_ONLY}, False),
])
def test_confluent_kafka_is_served_the_key_java_chooses(broker, trusted, extra, served):
    result = librdkafka_connects(broker, trusted, **extra)
    if served:
        assert result == "ok", result
    else:  # the client's own check of the certificate presented refused it
        assert "certificate verify failed" in result, result


def java_trust_store(broker, trusted: str) -> str:
    path = broker.dir / f"trust-{trusted}.jks"
    if not path.exists():
        made = subprocess.run(["keytool", "-importcert", "-noprompt", "-alias", "server", "-file",
                               str(broker.certs[trusted]), "-keystore", str(path), "-storetype", "JKS", "-storepass",
                               STORE_PW], capture_output=True, text=True, timeout=120)
        assert made.returncode == 0, made.stderr
    return str(path)


@pytest.mark.parametrize("trusted, extra, served", [
    ("EC", {}, True),  # TLS 1.3, ECDSA schemes first: Java's EC key
    ("RSA", {"client.ssl.enabled.protocols": "TLSv1.2",
             "client.ssl.cipher.suites": "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"}, True),
    ("RSA-other", {"client.ssl.enabled.protocols": "TLSv1.2",
                   "client.ssl.cipher.suites": "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"}, False),
])
def test_java_client_is_served_the_key_java_chooses(broker, java_drivers, trusted, extra, served):
    results = java_drivers.run("KafkaDriver", ["produce_consume.none"], broker.bootstrap("SSL"), timeout=180,
                               prefix=f"key-choice-{uuid.uuid4().hex[:6]}", parallel=1, timeout_s=30 if served else 15,
                               **{"client.security.protocol": "SSL", "client.ssl.truststore.type": "JKS",
                                  "client.ssl.truststore.location": java_trust_store(broker, trusted),
                                  "client.ssl.truststore.password": STORE_PW, **extra})
    result = results["results"]["produce_consume.none"]
    if served:
        assert result["ok"], f"{result['error']}\n{result['trace']}"
        assert result["observed"]["offsets"] == [0, 1, 2, 3, 4]
    else:
        assert not result["ok"]
        assert "SslAuthenticationException" in result["error"] + result["trace"], result["error"]
