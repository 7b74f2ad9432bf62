"""``ssl.enabled.protocols`` and ``ssl.cipher.suites`` with kafka-clients 3.9.1: a client is served
over the version and suite a broker lists, and one offering only TLS 1.2 to a TLS 1.3-only broker fails
with SslAuthenticationException (the protocol_version alert), as against Kafka. tests/security has
the raw handshakes and the Python clients."""

from __future__ import annotations

import uuid

import pytest

from shim.broker import BrokerThread

pytestmark = pytest.mark.shim_only("starts kafka-shims with TLS settings of their own")
pytest.importorskip("cryptography")


def run_java(java_drivers, tmp_path, broker_extra: dict, client: dict) -> dict:
    from shim.security.certs import make_certs
    certs = make_certs(tmp_path / "certs")
    with BrokerThread(data_dir=tmp_path / "d", listeners="SSL://127.0.0.1:0",
                      ssl_keystore_location=str(certs["broker.pem"]), extra=broker_extra) as broker:
        props = {"client.security.protocol": "SSL", "client.ssl.truststore.type": "PEM",
                 "client.ssl.truststore.location": str(certs["ca.pem"]), **client}
        results = java_drivers.run("KafkaDriver", ["produce_consume.none"], broker.bootstrap("SSL"), timeout=180,
                                   prefix=f"java-tls-{uuid.uuid4().hex[:6]}", parallel=1, timeout_s=60, **props)
    return results["results"]["produce_consume.none"]


def test_java_client_over_the_listed_version_and_suite(java_drivers, tmp_path):
    result = run_java(java_drivers, tmp_path, {"ssl.enabled.protocols": "TLSv1.2",
                                               "ssl.cipher.suites": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}, {})
    assert result["ok"], f"{result['error']}\n{result['trace']}"
    assert result["observed"]["offsets"] == [0, 1, 2, 3, 4]


def test_java_client_offering_no_listed_version_is_refused(java_drivers, tmp_path):
    result = run_java(java_drivers, tmp_path, {"ssl.enabled.protocols": "TLSv1.3"},
                      {"client.ssl.enabled.protocols": "TLSv1.2"})
    assert not result["ok"]
    assert "SslAuthenticationException" in result["error"] + result["trace"], result["error"]


def test_java_client_over_a_listed_tls13_suite(java_drivers, tmp_path):
    result = run_java(java_drivers, tmp_path, {"ssl.cipher.suites": "TLS_AES_256_GCM_SHA384"},
                      {"client.ssl.cipher.suites": "TLS_AES_256_GCM_SHA384"})
    assert result["ok"], f"{result['error']}\n{result['trace']}"
    assert result["observed"]["offsets"] == [0, 1, 2, 3, 4]


def test_java_client_offering_no_listed_tls13_suite_is_refused(java_drivers, tmp_path):
    # the JDK offers TLS 1.3 with these suites only; the broker lists another (Kafka: the handshake_failure alert)
    result = run_java(java_drivers, tmp_path, {"ssl.cipher.suites": "TLS_AES_256_GCM_SHA384"},
                      {"client.ssl.cipher.suites": "TLS_AES_128_GCM_SHA256,TLS_CHACHA20_POLY1305_SHA256"})
    assert not result["ok"]
    assert "SslAuthenticationException" in result["error"] + result["trace"], result["error"]
