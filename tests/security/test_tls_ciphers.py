"""``ssl.cipher.suites``: a listener agrees only the suites listed (Java/IANA names), as Kafka's
server SSLEngine does; with no TLS 1.3 suite listed only TLS 1.2 is agreed, with TLS 1.3 suites only
only TLS 1.3; TLS 1.3 handshakes agree only the TLS 1.3 suites listed; a name kafka-shim does not
serve refuses the start. Raw handshakes with Python ssl client contexts and openssl s_client, then
confluent-kafka served with a listed suite and refused without one."""

from __future__ import annotations

import shutil
import subprocess
import threading

import pytest

from shim.broker import BrokerThread
from shim.security import ciphers
from tests.security.test_tls_protocols import V12, V13, certs, handshake, pinned  # noqa: F401 (certs: a fixture)

pytest.importorskip("cryptography")


def suite_of(bootstrap: str, ctx) -> str:
    import socket
    import ssl
    host, port = bootstrap.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as raw:
        try:
            with ctx.wrap_socket(raw) as tls:
                return tls.cipher()[0]
        except ssl.SSLError as exc:
            return exc.reason


def offering(certs, *suites: str):
    ctx = pinned(certs, V12, V12)
    ctx.set_ciphers(":".join(suites))
    return ctx


def suites_broker(tmp_path, certs, suites: str):
    return BrokerThread(data_dir=tmp_path / "d", listeners="SSL://127.0.0.1:0",
                   ssl_keystore_location=str(certs["broker.pem"]), extra={"ssl.cipher.suites": suites})


def test_only_the_listed_tls12_suite_is_agreed(tmp_path, certs):
    with suites_broker(tmp_path, certs, "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384") as b:
        at = b.bootstrap("SSL")
        assert suite_of(at, pinned(certs, V12, V12)) == "ECDHE-ECDSA-AES256-GCM-SHA384"
        assert suite_of(at, offering(certs, "ECDHE-ECDSA-AES128-GCM-SHA256")) == "SSLV3_ALERT_HANDSHAKE_FAILURE"
        assert handshake(at, pinned(certs, V13, V13)) == "TLSV1_ALERT_PROTOCOL_VERSION"  # no TLS 1.3 suite
        assert handshake(at, pinned(certs, V12, V13)) == "TLSv1.2"


def test_tls13_suites_only_agree_tls13_only(tmp_path, certs):
    with suites_broker(tmp_path, certs, "TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384") as b:
        at = b.bootstrap("SSL")
        assert handshake(at, pinned(certs, V12, V12)) == "TLSV1_ALERT_PROTOCOL_VERSION"
        assert handshake(at, pinned(certs, V13, V13)) == "TLSv1.3"


def test_only_the_listed_tls13_suite_is_agreed(tmp_path, certs):
    # a client's default order puts TLS_AES_256_GCM_SHA384 first: agreeing the other is the broker's choice
    with suites_broker(tmp_path, certs, "TLS_AES_128_GCM_SHA256") as b:
        assert suite_of(b.bootstrap("SSL"), pinned(certs, V13, V13)) == "TLS_AES_128_GCM_SHA256"


def test_the_listed_order_is_the_brokers_preference(tmp_path, certs):
    # JDK 13+ servers prefer their own enabled order (JDK-8219657); a client's default puts AES-256 first
    with suites_broker(tmp_path, certs, "TLS_CHACHA20_POLY1305_SHA256,TLS_AES_256_GCM_SHA384,"
                                        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384") as b:
        at = b.bootstrap("SSL")
        assert suite_of(at, pinned(certs, V13, V13)) == "TLS_CHACHA20_POLY1305_SHA256"
        assert suite_of(at, pinned(certs, V12, V12)) == "ECDHE-ECDSA-AES128-GCM-SHA256"


def test_a_mixed_list_restricts_each_version_to_its_own(tmp_path, certs):
    with suites_broker(tmp_path, certs, "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_CHACHA20_POLY1305_SHA256") as b:
        at = b.bootstrap("SSL")
        assert suite_of(at, pinned(certs, V13, V13)) == "TLS_CHACHA20_POLY1305_SHA256"
        assert suite_of(at, pinned(certs, V12, V12)) == "ECDHE-ECDSA-AES128-GCM-SHA256"


def s_client(bootstrap: str, certs, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["openssl", "s_client", "-connect", bootstrap, "-CAfile", str(certs["ca.pem"]), *args],
                          input="", capture_output=True, text=True, timeout=30)


@pytest.mark.skipif(not shutil.which("openssl"), reason="the openssl command")
def test_a_tls13_client_offering_no_listed_suite_is_refused(tmp_path, certs):
    with suites_broker(tmp_path, certs, "TLS_AES_256_GCM_SHA384,TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256") as b:
        at = b.bootstrap("SSL")
        refused = s_client(at, certs, "-tls1_3", "-ciphersuites", "TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256")
        assert refused.returncode != 0 and "alert handshake failure" in refused.stderr, refused.stderr
        served = s_client(at, certs, "-tls1_3", "-ciphersuites", "TLS_CHACHA20_POLY1305_SHA256:TLS_AES_256_GCM_SHA384")
        assert "Cipher is TLS_AES_256_GCM_SHA384" in served.stdout, served.stdout + served.stderr


@pytest.mark.parametrize("suites, message", [
    ("TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA385", "Unsupported CipherSuite: TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA385"),
    ("ECDHE-RSA-AES256-GCM-SHA384", "Unsupported CipherSuite: ECDHE-RSA-AES256-GCM-SHA384"),  # OpenSSL's name
])
def test_a_suite_not_served_refuses_the_start(tmp_path, certs, suites, message):
    thread = suites_broker(tmp_path, certs, suites)
    with pytest.raises(ValueError, match=f"Invalid ssl.cipher.suites: .*{message}"):
        thread.start()
    thread.stop()


def test_tls13_suites_with_tls12_only_refuse_the_start(tmp_path, certs):
    thread = BrokerThread(
        data_dir=tmp_path / "d", listeners="SSL://127.0.0.1:0", ssl_keystore_location=str(certs["broker.pem"]),
        extra={"ssl.cipher.suites": "TLS_AES_128_GCM_SHA256", "ssl.enabled.protocols": "TLSv1.2"})
    with pytest.raises(ValueError, match="No appropriate protocol"):
        thread.start()
    thread.stop()


@pytest.mark.skipif(not shutil.which("openssl"), reason="the openssl command")
def test_the_name_map_is_openssls_own():
    out = subprocess.run(["openssl", "ciphers", "-stdname", "ALL:@SECLEVEL=0"], capture_output=True, text=True,
                         check=True).stdout
    standard = dict(line.split()[0:3:2] for line in out.splitlines() if " - " in line)  # IANA - OpenSSL ...
    assert {iana: standard.get(iana) for iana in ciphers.OPENSSL} == ciphers.OPENSSL


def test_confluent_kafka_with_and_without_a_listed_suite(tmp_path, certs):
    confluent_admin = pytest.importorskip("confluent_kafka.admin")
    with suites_broker(tmp_path, certs, "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256") as b:
        conf = {"bootstrap.servers": b.bootstrap("SSL"), "security.protocol": "SSL",
                "ssl.ca.location": str(certs["ca.pem"]), "ssl.endpoint.identification.algorithm": "none"}
        served = confluent_admin.AdminClient({**conf, "ssl.cipher.suites": "ECDHE-ECDSA-CHACHA20-POLY1305"})
        assert served.list_topics(timeout=30).brokers
        failed, reasons = threading.Event(), []
        refused = confluent_admin.AdminClient({**conf, "ssl.cipher.suites": "ECDHE-ECDSA-AES128-GCM-SHA256",
                                               "error_cb": lambda err: (reasons.append(err.str()), failed.set())})
        for _ in range(60):  # the client's own thread reports the failed handshake
            refused.poll(0.5)
            if failed.is_set():
                break
        assert failed.is_set()
        assert "handshake failure" in reasons[0], reasons  # the broker's alert, not a bare close


def test_where_tls13_suites_cannot_be_chosen_all_three_are_served_with_a_warning(monkeypatch, caplog):
    import ssl

    from shim.security import tls13

    def unavailable():
        raise tls13.Unavailable("no SSL_CTX_set_ciphersuites")
    monkeypatch.setattr(tls13, "_libssl", unavailable)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version, ctx.maximum_version = V12, V13
    ciphers.apply(ctx, {"ssl.cipher.suites": "TLS_AES_128_GCM_SHA256"})
    assert sorted(tls13.suites(ctx)) == sorted(ciphers.TLS13)
    assert "cannot restrict TLS 1.3 suites (no SSL_CTX_set_ciphersuites)" in caplog.text
